"""The deployment side of the `sdsl` command, through its real entry point."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from sdsl import plan as P
from sdsl.model import deploy as D
from sdsl.model import hardware as H
from sdsl.model import speedup as S

EXE = Path(sys.executable).parent / "sdsl"
CMD = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "sdsl.cli"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(CMD + list(args), capture_output=True, text=True, timeout=120)


def test_plan_json_has_the_deployment_fields():
    r = json.loads(run("plan", "--preset", "llama-3-70b", "--json").stdout)
    assert r["gamma_star_continuous"] == pytest.approx(10.1988, abs=1e-4)
    assert r["gamma_star_integer"] == 10
    assert r["tokens_per_flop_ratio"] == pytest.approx(2.7785, abs=1e-4)
    cfg = r["engines"]["vllm"]["speculative_config"]
    assert cfg["method"] == "draft_model" and cfg["num_speculative_tokens"] == r["num_speculative_tokens"]
    argv = shlex.split(r["engines"]["vllm"]["command"])
    assert json.loads(argv[argv.index("--speculative-config") + 1]) == cfg
    sg = r["engines"]["sglang"]["flags"]
    assert sg[sg.index("--speculative-num-draft-tokens") + 1] == str(r["num_speculative_tokens"] + 1)
    assert r["wall_clock"]["source"].startswith("Theorem 3.8 with c = N*/M")


def test_plan_with_hardware_prints_gamma_against_batch():
    out = run("plan", "--preset", "llama-3.1-70b", "--hardware", "h100-sxm", "--gpus", "2", "--batch", "1,16,128")
    assert out.returncode == 0, out.stderr
    for b in (1, 16, 128):
        assert f"batch {b}, context 0" in out.stdout
    r = json.loads(
        run(
            "plan",
            "--preset",
            "llama-3.1-70b",
            "--hardware",
            "h100-sxm",
            "--gpus",
            "2",
            "--batch",
            "1,16,128",
            "--json",
        ).stdout
    )
    g = [x["gamma_star"] for x in r["wall_clock"]["by_batch_and_context"]]
    assert g == sorted(g, reverse=True) and g[0] > g[-1]


def test_speedup_command_matches_theorem_38():
    out = run("speedup", "--alpha", "0.8", "--cost-ratio", "0.05", "--gamma", "5", "--json")
    r = json.loads(out.stdout)
    ref = S.speedup_report(0.8, 0.05, 5)
    assert r["speedup"] == pytest.approx(ref.speedup) and r["gamma_integer"] == ref.gamma_integer == 8
    assert r["break_even_alpha"] == pytest.approx(0.05)
    text = run("speedup", "--alpha", "0.8", "--cost-ratio", "0.05", "--gamma", "5").stdout
    assert "2.9514x" in text and "break-even alpha" in text
    lat = json.loads(
        run(
            "speedup",
            "--alpha",
            "0.7",
            "--draft-latency",
            "0.003",
            "--target-latency",
            "0.03",
            "--verify-latency",
            "0.036",
            "--verify-tokens",
            "4",
            "--json",
        ).stdout
    )
    assert lat["c"] == pytest.approx(0.1) and lat["verify_slope"] == pytest.approx(0.2 / 3)


def test_presets_plan_lists_every_dense_target_and_refuses_moe():
    out = run("presets", "--plan")
    assert out.returncode == 0, out.stderr
    r = json.loads(run("presets", "--plan", "--json").stdout)
    by = {x["preset"]: x for x in r}
    o = P.plan(P.check_inputs("llama-3.1-405b"))
    assert by["llama-3.1-405b"]["n_star"] == pytest.approx(o.n_star, rel=1e-12)
    assert "mixture-of-experts" in by["qwen3-235b-a22b"]["refused"]
    assert "not stated" in by["mistral-7b-v0.3"]["refused"]
    assert all(x["preset"] not in ("opt-125m", "qwen2.5-0.5b") for x in r)  # draft-only rows
    assert sum(x["n_star"] is not None for x in r) >= 30
    assert by["mistral-7b-v0.3"]["tokens"] is None and by["mistral-7b-v0.3"]["status"] == "tokens unknown"
    assert by["qwen3-235b-a22b"]["status"] == "refused: mixture of experts" and by["qwen3-235b-a22b"]["n_star"] is None
    from sdsl.plan.lookup import lookup_rows

    assert r == json.loads(json.dumps(lookup_rows()))  # the book's table: the same numbers
    text = out.stdout
    assert "tokens unknown" in text and "refused: mixture of experts" in text and "wall-clock" in text


ERRORS = [
    (["plan", "--preset", "qwen3-30b-a3b"], "is a mixture-of-experts model"),
    (["plan", "--preset", "llama-3-70b", "--batch", "8"], "--batch needs --hardware"),
    (["plan", "--preset", "llama-3-70b", "--hardware", "tpu"], "unknown --hardware 'tpu'"),
    (["plan", "--preset", "llama-3-70b", "--cost-ratio", "0.1", "--hardware", "h200"], "give one source"),
    (["plan", "--preset", "llama-3-70b", "--draft-latency", "1e-3"], "need both --draft-latency and --target-latency"),
    (["speedup", "--alpha", "1.5", "--cost-ratio", "0.1"], "--alpha must be a number in (0, 1) (acceptance rate)"),
    (["speedup", "--alpha", "0.5"], "give the cost of drafting"),
    (["speedup", "--alpha", "0.5", "--cost-ratio", "0.1", "--gamma", "2.5"], "--gamma must be an integer in [0, 1024]"),
]


@pytest.mark.parametrize("args, message", ERRORS)
def test_errors_one_line_exit_2(args, message):
    out = run(*args)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert message in lines[0] and lines[0].startswith(f"sdsl {args[0]}: error: ")


def _plan_json(*args: str) -> dict:
    out = run("plan", *args, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _flag(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_engine_commands_carry_the_deployment_of_a_70b_target_on_4_h100s():
    r = _plan_json("--preset", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "4", "--batch", "1,16")
    e = r["engines"]
    draft = r["suggested_draft"]["hf_id"]
    # the draft length each engine must use at each batch: the roofline's best gamma for that draft
    shape, _ = H.target_shape(70553706496, P.get_preset("llama-3-70b").shape)
    hw = H.get_accelerator("h100-sxm").times(4)
    want = {
        b: H.speedup_at(r["suggested_draft"]["params"], r["suggested_draft"]["alpha"], shape, hw, b, 0)[0]
        for b in (1, 16)
    }
    assert [x["batch"] for x in e["vllm"]["by_batch"]] == [1, 16]
    for x in e["vllm"]["by_batch"]:
        argv = shlex.split(x["command"])
        cfg = json.loads(_flag(argv, "--speculative-config"))
        assert _flag(argv, "--tensor-parallel-size") == "4" and _flag(argv, "--dtype") == "bfloat16"
        assert _flag(argv, "--max-num-seqs") == str(x["batch"])
        assert cfg["model"] == draft and cfg["num_speculative_tokens"] == want[x["batch"]]
        assert cfg["draft_tensor_parallel_size"] == 4 and "tensor_parallel_size" not in cfg  # vLLM refuses it
    for x in e["sglang"]["by_batch"]:
        argv = shlex.split(x["command"])
        assert _flag(argv, "--tp") == "4" and _flag(argv, "--dtype") == "bfloat16"
        assert _flag(argv, "--speculative-draft-model-path") == draft
        assert _flag(argv, "--speculative-num-steps") == str(want[x["batch"]])
        assert _flag(argv, "--max-running-requests") == str(x["batch"])
    t = e["trtllm"]["llm_args"]
    assert t["tensor_parallel_size"] == 4 and t["dtype"] == "bfloat16" and t["max_batch_size"] == 16
    spec = t["speculative_config"]
    assert spec["decoding_type"] == "Draft_Target" and spec["speculative_model"] == draft
    assert spec["draft_len_schedule"] == {"1": max(want.values()), "16": want[16]}
    assert spec["max_draft_len"] == max(want.values())  # TensorRT-LLM: schedule[1] == max_draft_len
    assert "tensor_parallel_size=4" in e["trtllm"]["command"] and "DraftTargetDecodingConfig(" in e["trtllm"]["command"]
    for x in e["llamacpp"]["by_batch"]:
        argv = shlex.split(x["command"])
        assert _flag(argv, "-md") == "Llama-3.2-1B.bf16.gguf" and _flag(argv, "-ts") == "1,1,1,1"
        assert _flag(argv, "--spec-draft-n-max") == str(want[x["batch"]]) and _flag(argv, "-np") == str(x["batch"])
        assert _flag(argv, "-ctk") == "bf16"
    for key in ("vllm", "sglang", "trtllm", "llamacpp"):
        assert e[key]["version"] == D.ENGINES[key]["checked_against"]
    text = run("plan", "--preset", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "4", "--batch", "1,16").stdout
    for name in ("vLLM, batch 16", "SGLang, batch 1", "TensorRT-LLM", "llama.cpp, batch 16", "TensorRT-LLM version"):
        assert name in text


def test_fp8_reaches_the_engine_flags():
    e = _plan_json("--preset", "llama-3-70b", "--hardware", "h200", "--dtype", "fp8")["engines"]
    argv = shlex.split(e["vllm"]["command"])
    assert _flag(argv, "--quantization") == "fp8" and _flag(argv, "--kv-cache-dtype") == "fp8"
    assert json.loads(_flag(argv, "--speculative-config"))["quantization"] == "fp8"
    argv = shlex.split(e["sglang"]["command"])
    assert _flag(argv, "--quantization") == "fp8" and _flag(argv, "--kv-cache-dtype") == "fp8_e4m3"
    assert e["trtllm"]["llm_args"]["kv_cache_config"] == {"dtype": "fp8"} and "FP8" in e["trtllm"]["note"]
    assert _flag(shlex.split(e["llamacpp"]["command"]), "-ctk") == "q8_0"


def test_engine_versions_are_the_ones_recorded_in_the_provenance_file():
    text = (Path(__file__).resolve().parents[2] / "data" / "engines.md").read_text()
    for key, e in D.ENGINES.items():
        assert f"## {e['name']} -- checked against: {e['checked_against']}" in text, key


def test_a_size_that_overrides_the_preset_drops_its_model():
    r = _plan_json("--preset", "llama-3-70b", "--target-params", "8e9")
    assert r["n_star"] < 2e8  # planned for M = 8e9, not 70B
    for key in ("vllm", "sglang"):
        assert "Meta-Llama-3-70B" not in r["engines"][key]["command"]
    assert D.TARGET_PLACEHOLDER in shlex.split(r["engines"]["vllm"]["command"])
    assert "meta-llama/Meta-Llama-3-70B" in r["engines"]["target"]  # said, not silently dropped
    same = _plan_json("--preset", "llama-3-70b", "--target-params", "70553706496")  # the preset's own size
    assert "meta-llama/Meta-Llama-3-70B" in same["engines"]["vllm"]["command"]


DEPLOY_ERRORS = [
    (["plan", "--preset", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "3"], "64 attention heads"),
    (["plan", "--preset", "opt-125m"], "is a draft-only preset"),
    (["plan", "--preset", "llama-3-70b", "--draft-model", "a\nb"], "contains a control character"),
]


@pytest.mark.parametrize("args, message", DEPLOY_ERRORS)
def test_deployment_errors_one_line_exit_2(args, message):
    test_errors_one_line_exit_2(args, message)


def test_a_cost_ratio_of_one_or_more_says_speculation_never_pays():
    for c in ("1", "2", "1e300", "1e308"):  # 1e308: g c overflowed with a warning
        out = run("speedup", "--alpha", "0.8", "--cost-ratio", c)
        assert out.returncode == 0 and out.stderr == ""
        assert f"none: c + k = {float(c):.4g} >= 1" in out.stdout and "0: speedup 1.0000x" in out.stdout
