"""The ``sdsl`` console script, through its real entry point (subprocess): planning, its deployment
(integer draft length, wall clock, hardware, engine settings), ``speedup`` and ``presets``."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import sdsl
from sdsl import plan as P
from sdsl.model import deploy as D
from sdsl.model import hardware as H
from sdsl.model import speedup as S

EXE = Path(sys.executable).parent / "sdsl"
CMD = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "sdsl.cli"]
KEYS = {"n_star", "gamma_star", "alpha", "tokens_per_flop", "tokens_per_flop_ratio"}
#: what the deployment options add: integer draft length, wall-clock speedup, engine settings, interval sources
DEPLOY_KEYS = {
    "gamma_star_continuous",
    "gamma_star_integer",
    "rounding_loss",
    "n_star_integer_gamma",
    "rounding_loss_reoptimised",
    "wall_clock",
    "suggested_draft",
    "num_speculative_tokens",
    "engines",
    "interval",
    "published_accuracy",
    "warnings",
}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(CMD + list(args), capture_output=True, text=True, timeout=60)


def test_python_dash_m_works_too():
    out = subprocess.run(
        [sys.executable, "-m", "sdsl.cli", "plan", "--preset", "opt-13b", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert KEYS <= set(json.loads(out.stdout))


def test_json_keys_and_values_match_the_library():
    out = run("plan", "--target-params", "70.6e9", "--target-tokens", "15e12", "--draft-tokens", "15e12", "--json")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("\n") == 1  # one JSON object on one line
    res = json.loads(out.stdout)
    assert set(res) == KEYS | DEPLOY_KEYS
    assert "speedup" not in res  # the FLOP ratio is no longer shown as a speedup
    core = sdsl.optimal_draft_size(70.6e9, 15e12, 15e12, n_bounds=(1e7, 70.6e9 / 2))
    for k in KEYS:
        assert res[k] == pytest.approx(getattr(core, k) if k != "tokens_per_flop_ratio" else core.speedup, rel=1e-12), k
    assert res["tokens_per_flop_ratio"] == pytest.approx(res["tokens_per_flop"] * 2 * 70.6e9, rel=1e-12)


def test_preset_table_is_readable():
    out = run("plan", "--preset", "llama-3-70b")
    assert out.returncode == 0, out.stderr
    o = P.plan(P.check_inputs("llama-3-70b"))
    text = out.stdout
    for label in (
        "N* (optimal draft size)",
        "gamma* (draft length)",
        "alpha at N*",
        "T(N*)",
        "tokens per FLOP ratio",
        "wall-clock speedup",
    ):
        assert label in text
    assert "speedup over plain decoding" not in text
    assert f"{o.n_star:.4g} parameters" in text
    assert f"tokens per FLOP ratio        {o.speedup:.3f}x" in text
    assert out.stderr == ""


def test_preset_and_explicit_values_agree():
    """The plan is the same; only what needs the preset's name differs (repository ids in the engine
    settings, the suggested draft of its tokenizer group)."""
    a = json.loads(run("plan", "--preset", "qwen1.5-14b", "--json").stdout)
    b = json.loads(
        run(
            "plan", "--target-params", "14167290880", "--target-tokens", "4e12", "--draft-tokens", "2.4e12", "--json"
        ).stdout
    )
    named = {"engines", "suggested_draft", "num_speculative_tokens"}
    assert {k: v for k, v in a.items() if k not in named} == {k: v for k, v in b.items() if k not in named}


def test_options_change_the_answer_as_documented():
    base = json.loads(run("plan", "--preset", "opt-13b", "--json").stdout)
    hoff = json.loads(run("plan", "--preset", "opt-13b", "--constants", "hoffmann2022", "--json").stdout)
    five = json.loads(run("plan", "--preset", "opt-13b", "--constants", "1.69,406.4,410.7,0.34,0.28", "--json").stdout)
    integ = json.loads(run("plan", "--preset", "opt-13b", "--integer-gamma", "--json").stdout)
    assert hoff == five
    assert hoff["n_star"] < base["n_star"]  # method notes s.4: Hoffmann gives N* 4 to 10 % lower
    assert integ["gamma_star"] == int(integ["gamma_star"])
    # method notes s.3: integer gamma moves OPT-13B's N* from 117.3M to about 118.0M
    assert base["n_star"] == pytest.approx(117.3e6, rel=1e-3)
    assert integ["n_star"] == pytest.approx(118.0e6, rel=2e-3)


def test_bootstrap_and_candidates():
    args = (
        "plan",
        "--preset",
        "llama-3-70b",
        "--draft-params",
        "1.24e9",
        "--draft-params",
        "8.03e9",
        "--bootstrap",
        "200",
        "--seed",
        "4",
        "--json",
    )
    a = json.loads(run(*args).stdout)
    b = json.loads(run(*args).stdout)
    assert a == b  # seeded
    lo, hi = a["n_star_ci95"]
    assert lo < a["n_star"] < hi
    shares = [c["tokens_per_flop_share"] for c in a["candidates"]]
    assert 0 < shares[1] < shares[0] < 1
    assert [c["draft_params"] for c in a["candidates"]] == [1.24e9, 8.03e9]
    assert all({"alpha", "gamma", "speedup"} <= set(c) for c in a["candidates"])
    inp = P.check_inputs("llama-3-70b", n_boot=200, seed=4)
    ci = P.n_star_interval(P.bootstrap_n_star(inp))
    assert [ci["low"], ci["high"]] == [lo, hi]  # CLI and library: same interval for the same seed


def test_help_explains_every_option_with_units():
    top = run("--help")
    assert top.returncode == 0 and "plan" in top.stdout and "presets" in top.stdout
    h = run("plan", "--help")
    assert h.returncode == 0
    text = " ".join(h.stdout.split())
    for opt in (
        "--preset",
        "--target-params",
        "--target-tokens",
        "--draft-tokens",
        "--constants",
        "--alpha-source",
        "--integer-gamma",
        "--n-range",
        "--draft-params",
        "--bootstrap",
        "--seed",
        "--json",
    ):
        assert opt in text, opt
    for unit in ("in parameters", "in tokens", "tokens per FLOP"):
        assert unit in text, unit


def test_presets_command_lists_presets():
    out = run("presets")
    assert out.returncode == 0
    assert "llama-3-70b" in out.stdout and "qwen1.5-110b" in out.stdout


ERRORS = [
    (["--preset", "lama-3-70b"], "unknown --preset 'lama-3-70b'; did you mean 'llama-3-70b'"),
    (
        ["--target-params", "-5", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        "--target-params must be a number > 0 (parameters M of the target), got '-5'",
    ),
    (
        ["--target-params", "abc", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        "--target-params must be a number > 0 (parameters M of the target), got 'abc'",
    ),
    (["--target-params", "7e10", "--target-tokens", "1e12"], "--draft-tokens (pre-training tokens D"),
    (["--target-params", "7e10"], "no target: give a preset (--preset) or both --target-params"),
    (["--preset", "llama-3-70b", "--n-range", "1e9", "1e8"], "--n-range must be two increasing numbers"),
    (["--preset", "llama-3-70b", "--n-range", "1e8", "1e12"], "exceeds the target size"),
    (["--preset", "llama-3-70b", "--constants", "1,-2,3,0.3,0.3"], "loss-law constant A must be > 0"),
    (["--preset", "llama-3-70b", "--constants", "1,2,x,0.3,0.3"], "loss-law constants must be numbers"),
    (
        ["--preset", "opt-13b", "--n-range", "1e5", "1e9"],
        "the acceptance rate leaves (0, 1) at draft size n = 100000 inside --n-range",
    ),
    (["--preset", "llama-3-70b", "--alpha-source", "/no/such/file.csv"], "does not exist"),
    (["--preset", "llama-3-70b", "--bootstrap", "ten"], "--bootstrap must be 0 (none) or an integer in [100, 10000]"),
]


@pytest.mark.parametrize("args, message", ERRORS)
def test_errors_one_line_exit_2_same_message_as_library(args, message):
    out = run("plan", *args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert message in lines[0]
    assert lines[0].startswith("sdsl plan: error: ")


def test_error_message_is_the_notebooks_value_error():
    """One message serves both: the library's, with the parameter named by the flag typed."""
    out = run("plan", "--preset", "lama-3-70b")
    with pytest.raises(ValueError) as err:
        P.check_inputs(preset="lama-3-70b")
    assert out.stderr.strip() == f"sdsl plan: error: {err.value}".replace("unknown preset", "unknown --preset")


def test_malformed_measurements_file(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("draft_ppl,target_ppl,alpha\n20,10,0.6\nabc,10,0.6\n21,11,0.6\n22,12,0.7\n")
    out = run("plan", "--preset", "llama-3-70b", "--alpha-source", str(f))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1
    assert "line 3, column 'draft_ppl': non-numeric value 'abc'" in out.stderr


def test_argparse_errors_exit_2():
    assert run("plan", "--n-range", "1e8").returncode == 2
    assert run("frobnicate").returncode == 2
    assert sdsl_main(["plan", "--bogus"]) == 2
    assert sdsl_main(["--help"]) == 0


def sdsl_main(argv):
    from sdsl.cli import main

    return main(argv)


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


DEPLOYMENT_OPTION_ERRORS = [
    (["plan", "--preset", "qwen3-30b-a3b"], "is a mixture-of-experts model"),
    (["plan", "--preset", "llama-3-70b", "--batch", "8"], "--batch needs --hardware"),
    (["plan", "--preset", "llama-3-70b", "--hardware", "tpu"], "unknown --hardware 'tpu'"),
    (["plan", "--preset", "llama-3-70b", "--cost-ratio", "0.1", "--hardware", "h200"], "give one source"),
    (["plan", "--preset", "llama-3-70b", "--draft-latency", "1e-3"], "need both --draft-latency and --target-latency"),
    (["speedup", "--alpha", "1.5", "--cost-ratio", "0.1"], "--alpha must be a number in (0, 1) (acceptance rate)"),
    (["speedup", "--alpha", "0.5"], "give the cost of drafting"),
    (["speedup", "--alpha", "0.5", "--cost-ratio", "0.1", "--gamma", "2.5"], "--gamma must be an integer in [0, 1024]"),
]


@pytest.mark.parametrize("args, message", DEPLOYMENT_OPTION_ERRORS)
def test_deployment_option_errors_one_line_exit_2(args, message):
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
    d = r["suggested_draft"]
    draft_shape, _ = H.target_shape(d["params"], P.get_preset(d["model"].lower()).shape)  # the draft's own shape
    want = {b: H.speedup_at(d["params"], d["alpha"], shape, hw, b, 0, draft=draft_shape)[0] for b in (1, 16)}
    # one vLLM server for both batch sizes: the schedule carries each size's draft length
    assert e["vllm"]["by_batch"] == []
    argv = shlex.split(e["vllm"]["command"])
    cfg = json.loads(_flag(argv, "--speculative-config"))
    assert _flag(argv, "--tensor-parallel-size") == "4" and _flag(argv, "--dtype") == "bfloat16"
    assert _flag(argv, "--max-num-seqs") == "16"
    assert cfg["model"] == draft and cfg["num_speculative_tokens"] == max(want.values())
    assert cfg["num_speculative_tokens_per_batch_size"] == [[1, 1, want[1]], [2, 16, want[16]]]
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
        assert _flag(argv, "-ctk") == "bf16" and _flag(argv, "-ngl") == "all"
    for key in ("vllm", "sglang", "trtllm", "llamacpp"):
        assert e[key]["version"] == D.ENGINES[key]["checked_against"]
        assert (
            e[key]["requires"]
            == D.engine_requirement(key, ["num_speculative_tokens_per_batch_size"] if key == "vllm" else [])[
                "requirement"
            ]
        )
    text = run("plan", "--preset", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "4", "--batch", "1,16").stdout
    for name in (
        "vLLM  ",
        "SGLang, batch 1",
        "TensorRT-LLM",
        "llama.cpp, batch 16",
        "TensorRT-LLM version",
        "vllm>=0.24.0",
    ):
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
    test_deployment_option_errors_one_line_exit_2(args, message)


def test_a_cost_ratio_of_one_or_more_says_speculation_never_pays():
    for c in ("1", "2", "1e300", "1e308"):  # 1e308: g c overflowed with a warning
        out = run("speedup", "--alpha", "0.8", "--cost-ratio", c)
        assert out.returncode == 0 and out.stderr == ""
        assert f"none: c + k = {float(c):.4g} >= 1" in out.stdout and "0: speedup 1.0000x" in out.stdout
    # with a draft length given, gamma c overflows to infinite time per iteration: speedup 0, quietly
    out = run("speedup", "--alpha", "0.7", "--cost-ratio", "1e308", "--gamma", "2")
    assert out.returncode == 0 and out.stderr == "" and "speedup at gamma = 2     0.0000x" in out.stdout
