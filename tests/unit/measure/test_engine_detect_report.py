"""Format detection (sdsl.measure.engines.detect) and ``sdsl alpha`` through its entry point: text
and JSON, exit statuses, --delta, and the plan implications checked against sdsl.model.throughput."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from engine_fixtures import ENG, ROOT

from sdsl.measure.engines.detect import detect_format
from sdsl.measure.implications import implications, resolve_context
from sdsl.measure.report import build_report
from sdsl.model.throughput import optimal_gamma, tokens_per_flop

EXE = Path(sys.executable).parent / "sdsl"
CMD = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "sdsl.cli"]

EXPECTED = {
    "vllm_dp_idle.prom": "vllm-prometheus",
    "vllm_pr24049_table.txt": "vllm-prometheus",
    "vllm_fresh.prom": "vllm-prometheus",
    "vllm_short_drafts.prom": "vllm-prometheus",
    "llamacpp.prom": "llamacpp-prometheus",
    "llamacpp_fresh.prom": "llamacpp-prometheus",
    "sglang.prom": "sglang-prometheus",
    "sglang_gauges_only.prom": "sglang-prometheus",
    "trtllm.prom": "trtllm-prometheus",
    "trtllm_fresh.prom": "trtllm-prometheus",
    "vllm_log_v1.txt": "vllm-log",
    "vllm_log_v0.txt": "vllm-log",
    "vllm_log_short.txt": "vllm-log",
    "vllm_requests_summary.json": "vllm-requests",
    "vllm_requests_detailed.jsonl": "vllm-requests",
    "vllm_requests_stream.txt": "vllm-requests",
}


@pytest.mark.parametrize("name, fmt", sorted(EXPECTED.items()))
def test_every_fixture_is_detected(name, fmt):
    assert detect_format((ENG / name).read_text(), name)[0] == fmt


def test_unknown_files_are_refused():
    with pytest.raises(ValueError, match="not a recognised source"):
        detect_format("hello world\n", "x.txt")
    with pytest.raises(ValueError, match="without speculative-decoding metrics"):
        detect_format("process_cpu_seconds_total 3.0\n", "m.prom")


class _Out:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


@pytest.fixture
def run(capsys):
    """``sdsl alpha ARGS`` in-process (the entry point itself is run once, by subprocess, below)."""
    from sdsl.cli import main

    def call(*args):
        code = main(["alpha", *map(str, args)])
        cap = capsys.readouterr()
        return _Out(code, cap.out, cap.err)

    return call


def test_the_console_script_runs():
    out = subprocess.run(CMD + ["alpha", str(ENG / "vllm_dp_idle.prom")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "engine all: alpha = " in out.stdout and "skipped engine=7" in out.stdout


def test_cli_text_json_and_exit_statuses(tmp_path, run):
    js = run(ENG / "vllm_dp_idle.prom", ENG / "llamacpp.prom", "--json")
    assert js.returncode == 0 and js.stdout.count("\n") == 1
    res = json.loads(js.stdout)
    assert [f["format"] for f in res["files"]] == ["vllm-prometheus", "llamacpp-prometheus"]
    reading = res["files"][1]["readings"][0]
    assert reading["k"] == 8 and reading["ci"][0] <= reading["alpha"] <= reading["ci"][1]
    assert reading["short_drafts"]["missing_tokens"] > 0
    fresh = run(ENG / "vllm_fresh.prom")
    assert fresh.returncode == 1 and "no alpha" in fresh.stdout
    bad = run(tmp_path / "missing.txt")
    assert bad.returncode == 2 and bad.stderr.startswith("sdsl alpha: error: ") and bad.stderr.count("\n") == 1
    assert run(ENG / "vllm_dp_idle.prom", "--level", "1.5").returncode == 2
    assert "--delta applies to /metrics" in run(ENG / "vllm_log_v1.txt", ENG / "vllm_log_v1.txt", "--delta").stderr
    assert "needs the target" in run(ENG / "vllm_log_v1.txt", "--draft-params", "1e8").stderr


def test_cli_delta_and_the_hint_without_it(run):
    d = run(ROOT / "vllm_before.txt", ROOT / "vllm_after.txt", "--delta", "--json")
    (x,) = json.loads(d.stdout)["files"][0]["readings"]
    assert x["num_drafts"] == 2000
    both = run(ROOT / "vllm_before.txt", ROOT / "vllm_after.txt")
    assert "use --delta" in both.stdout


def test_plan_implications_match_the_theory():
    ctx = resolve_context("qwen1.5-14b", draft_params="463987712")
    rep = build_report([ENG / "vllm_short_drafts.prom"], context=ctx)
    (x,) = rep.reads[0].readings
    imp = rep.implications[(0, 0)]
    n, m = 463987712.0, ctx.target_params
    assert imp.gamma_star == int(optimal_gamma(x.estimate.alpha, n, m, integer=True))
    assert imp.speedup_engine == pytest.approx(float(tokens_per_flop(x.estimate.alpha, n, m, 5)) * 2 * m)
    lo, hi = imp.gamma_star_range
    assert lo <= imp.gamma_star <= hi
    assert imp.n_star is not None and imp.n_star_range[0] <= imp.n_star <= imp.n_star_range[1]
    # the recalibrated plane passes through the measurement at the measured draft
    from sdsl.model.laws import BESIROGLU_2024, PAPER_EQ5, perplexity

    x_ppl = float(perplexity(n, ctx.draft_tokens, BESIROGLU_2024))
    y_ppl = float(perplexity(m, ctx.target_tokens, BESIROGLU_2024))
    assert PAPER_EQ5.A * x_ppl + PAPER_EQ5.B * y_ppl + imp.plane_intercept == pytest.approx(x.estimate.alpha)


def test_plan_without_tokens_gives_gamma_only():
    ctx = resolve_context(target_params="70e9", draft_params="1e9")
    imp = implications(0.7, (0.65, 0.75), 4, ctx)
    assert imp.n_star is None and "D'" in imp.note
    assert imp.gamma_star == int(optimal_gamma(0.7, 1e9, 70e9, integer=True))
    with pytest.raises(ValueError, match="below the target size"):
        resolve_context(target_params="1e9", draft_params="2e9")
