"""sdsl.model.deploy: the integer draft length and the engines' settings."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest

from sdsl.model import deploy as D
from sdsl.model.throughput import tokens_per_flop


@pytest.mark.parametrize(
    "alpha, n, m",
    [(0.65, 2e8, 7e10), (0.6574, 2.836e8, 7.055e10), (0.5, 1e9, 1.3e10), (0.9, 1e7, 4e11), (0.2, 5e9, 1e10)],
)
def test_integer_length_is_the_brute_force_best_and_loss_is_exact(alpha, n, m):
    r = D.integer_draft_length(alpha, n, m)
    g = np.arange(0, 2000)
    t = tokens_per_flop(alpha, n, m, g)
    assert r.gamma_integer == int(np.argmax(t))
    assert r.rounding_loss == pytest.approx(
        1 - t.max() / float(tokens_per_flop(alpha, n, m, r.gamma_continuous)), abs=1e-15
    )
    assert 0 <= r.rounding_loss < 0.05


def test_vllm_config_is_the_documented_json():
    cfg = D.vllm_speculative_config(7, "meta-llama/Llama-3.2-1B")
    assert cfg == {"method": "draft_model", "model": "meta-llama/Llama-3.2-1B", "num_speculative_tokens": 7}
    cmd = D.vllm_command(7, "meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.2-1B")
    argv = shlex.split(cmd)
    assert argv[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-70B"]
    assert argv[3] == "--speculative-config" and json.loads(argv[4]) == cfg


def test_sglang_flags_verify_gamma_plus_one_tokens():
    f = D.sglang_flags(4, "Qwen/Qwen2.5-0.5B")
    kv = dict(zip(f[::2], f[1::2]))
    assert kv == {
        "--speculative-algorithm": "STANDALONE",
        "--speculative-draft-model-path": "Qwen/Qwen2.5-0.5B",
        "--speculative-num-steps": "4",
        "--speculative-eagle-topk": "1",
        "--speculative-num-draft-tokens": "5",
    }
    argv = shlex.split(D.sglang_command(4))
    assert argv[:5] == ["python", "-m", "sglang.launch_server", "--model-path", D.TARGET_PLACEHOLDER]


def test_no_speculation_and_bad_gamma():
    assert D.engine_settings(0)["vllm"] is None
    with pytest.raises(ValueError, match="num_speculative_tokens must be an integer >= 1"):
        D.vllm_speculative_config(2.5)
