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


def _flag(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_vllm_config_is_the_documented_json():
    """draft_tensor_parallel_size is written every time: left out, vLLM gives the draft the target's
    and shards its heads with it (vllm/config/speculative.py _verify_and_get_draft_tp)."""
    cfg = D.vllm_speculative_config(7, "meta-llama/Llama-3.2-1B")
    assert cfg == {
        "method": "draft_model",
        "model": "meta-llama/Llama-3.2-1B",
        "num_speculative_tokens": 7,
        "draft_tensor_parallel_size": 1,
    }
    cmd = D.vllm_command(7, "meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.2-1B")
    argv = shlex.split(cmd)
    assert argv[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-70B"]
    assert _flag(argv, "--tensor-parallel-size") == "1"
    assert json.loads(_flag(argv, "--speculative-config")) == cfg


def test_vllm_one_server_carries_the_draft_length_of_every_batch_size():
    """num_speculative_tokens_per_batch_size: [1, b1, g1], [b1 + 1, b2, g2], ... with
    num_speculative_tokens the largest (vllm/v1/spec_decode/dynamic/utils.py: the first range
    starts at 1, ranges sorted and disjoint, K >= 0)."""
    e = D.engine_settings(4, "Qwen/Qwen3-32B", "Qwen/Qwen3-0.6B", 4, "bf16", [(1, 6), (16, 4), (64, 0)], context=8192)
    v = e["vllm"]
    argv = shlex.split(v["command"])
    cfg = json.loads(_flag(argv, "--speculative-config"))
    assert cfg["num_speculative_tokens"] == 6 and cfg["num_speculative_tokens_per_batch_size"] == [
        [1, 1, 6],
        [2, 16, 4],
        [17, 64, 0],
    ]
    assert _flag(argv, "--max-num-seqs") == "64" and _flag(argv, "--max-model-len") == "8192"
    assert v["by_batch"] == [] and "not with draft models" in v["note"]
    assert v["requires"] == "vllm>=0.24.0"  # the schedule's release, above draft_model's 0.15.0
    with pytest.raises(ValueError, match="cover batch 1"):
        D.vllm_speculative_config(4, schedule=[(2, 4, 3)])
    with pytest.raises(ValueError, match=r"lie in \[0, 4\]"):
        D.vllm_speculative_config(4, schedule=[(1, 4, 5)])


def test_llamacpp_puts_every_layer_on_the_gpus_and_sizes_the_context_per_slot():
    """-ngl all (Llama-3.1-405B has 126 layers: 99 would leave 27 on the CPU), --spec-type
    draft-simple (a draft model no longer implies it), -c the context per slot times the slots."""
    argv = shlex.split(
        D.llamacpp_command(5, "meta-llama/Llama-3.1-405B", "meta-llama/Llama-3.2-1B", 8, "bf16", 64, 8192)
    )
    assert _flag(argv, "-ngl") == "all" and _flag(argv, "-ngld") == "all"
    assert _flag(argv, "--spec-type") == "draft-simple" and _flag(argv, "--spec-draft-n-max") == "5"
    assert _flag(argv, "-np") == "64" and _flag(argv, "-c") == str(8192 * 64)
    assert "99" not in argv
    plain = shlex.split(D.llamacpp_command(5, "x/y", "x/z"))
    assert "-c" not in plain and "--kv-unified" in plain  # no planned context: one shared buffer


def test_sglang_and_trtllm_carry_context_and_precision():
    argv = shlex.split(D.sglang_command(4, "Qwen/Qwen3-32B", "Qwen/Qwen3-0.6B", 2, "fp8", 8, 4096))
    assert _flag(argv, "--tp") == "2" and _flag(argv, "--context-length") == "4096"
    assert _flag(argv, "--speculative-draft-model-quantization") == "fp8"
    t = D.trtllm_settings([(1, 4)], "Qwen/Qwen3-32B", "Qwen/Qwen3-0.6B", 2, "fp8", True, 4096)
    llm = t["llm_args"]
    # TensorRT-LLM with fp8 is not given the bf16 checkpoints: its PyTorch backend quantises no weights
    assert llm["model"] == "<FP8 checkpoint of Qwen/Qwen3-32B>" and llm["max_seq_len"] == 4096
    assert llm["speculative_config"]["speculative_model"] == "<FP8 checkpoint of Qwen/Qwen3-0.6B>"
    assert "Qwen/Qwen3-32B'" not in t["command"]


def test_a_refused_engine_gets_its_reason_not_a_command():
    verdicts = {"sglang": {"reasons": ["a reason"], "caveats": [], "settings": {}, "features": []}}
    e = D.engine_settings(4, "a/b", "a/c", verdicts=verdicts)
    assert e["sglang"]["command"] is None and e["sglang"]["refused"] == "a reason"
    assert e["vllm"]["command"] and e["llamacpp"]["command"]
    e = D.engine_settings(4, "a/b", "a/c", refused="does not fit")
    assert all(e[k]["command"] is None and e[k]["refused"] == "does not fit" for k in D.ENGINE_KEYS)


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
