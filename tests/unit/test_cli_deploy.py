"""The deployment side of the `sdsl` command (issue 15), through its real entry point."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from sdsl import plan as P
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
