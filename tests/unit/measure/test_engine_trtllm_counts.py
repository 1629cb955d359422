"""TensorRT-LLM beyond the token totals (sdsl.measure.engines.trtllm, .trtllm_stats): the
per-position counters of GET /prometheus/metrics (exact MLE when every draft had k tokens,
bounded otherwise), the iteration stats of GET /metrics (the delta-method inversion over the
summed steps), and draft tokens that are not a multiple of k read without a NaN."""

from __future__ import annotations

import json

import pytest
from engine_fixtures import ENG

from sdsl.measure.engines.detect import detect_format, read_files, read_text
from sdsl.measure.estimators import alpha_from_mean_tokens, alpha_from_position_counts
from sdsl.measure.report import build_report, report_text

LAB = 'engine_type="trtllm",model_name="m"'


def _scrape(drafted, accepted, info: int | None = 3) -> str:
    lines = ["# TYPE trtllm_spec_decode_drafted_tokens counter"]
    lines += [
        f'trtllm_spec_decode_drafted_tokens_total{{{LAB},token_position="{i}"}} {v}' for i, v in enumerate(drafted)
    ]
    lines += ["# TYPE trtllm_spec_decode_accepted_tokens counter"]
    lines += [
        f'trtllm_spec_decode_accepted_tokens_total{{{LAB},token_position="{i}"}} {v}'
        for i, v in enumerate(accepted)
        if v > 0  # the collector increments by positive values only
    ]
    if info:
        lines.append(f'trtllm_speculative_config_info{{{LAB},max_draft_len="{info}"}} 1.0')
    return "\n".join(lines) + "\n"


def test_full_drafts_give_the_exact_position_mle():
    (x,) = read_text(_scrape([1000, 1000, 1000], [700, 480, 330]), "p").readings
    ref = alpha_from_position_counts([700, 480, 330], 1000)
    assert x.gamma == 3 and x.estimate.alpha == pytest.approx(ref.alpha)
    assert (x.estimate.ci_low, x.estimate.ci_high) == pytest.approx((ref.ci_low, ref.ci_high))
    assert not x.short_drafts.any and x.constant_alpha is not None


def test_an_unaccepted_position_has_no_sample_and_reads_as_zero():
    (x,) = read_text(_scrape([500, 500], [0, 0], info=2), "p").readings
    assert x.estimate.alpha == 0 and x.estimate.ci_high == pytest.approx(
        alpha_from_position_counts([0, 0], 500).ci_high
    )


def test_short_drafts_bound_the_estimate_and_the_fixture_covers_its_alpha():
    text = (ENG / "trtllm_per_position.prom").read_text()
    assert detect_format(text, "p")[0] == "trtllm-prometheus"
    (x,) = read_files([ENG / "trtllm_per_position.prom"])[0].readings
    assert x.num_drafts == 5000 and x.short_drafts.drafts_min == x.short_drafts.drafts_max > 0
    assert x.estimate.ci_low <= 0.66 <= x.estimate.ci_high  # simulated at 0.66, 10 % short (seed 18)
    # a draft whose length ended at position i was either rejected (evaluated there) or accepted in
    # full: the interval is the union over both, so it holds the counts-as-full estimate and its bound
    assert x.estimate.ci_low <= x.short_drafts.alpha_full <= x.short_drafts.alpha_upper <= x.estimate.ci_high


def test_inconsistent_positions_are_skipped_naming_them():
    r = read_text(_scrape([100, 120, 90], [50, 20, 10]), "p")
    assert not r.readings and "drafted at position 1 (120) > drafted at position 0 (100)" in r.skipped[0].reason


def test_iteration_stats_sum_the_steps():
    path = ENG / "trtllm_iteration_stats.json"
    assert detect_format(path.read_text(), "s")[0] == "trtllm-iteration-stats"
    data = json.loads(path.read_text())
    spec = [it["specDecodingStats"] for it in data if it["specDecodingStats"]["numDraftTokens"]]
    steps = sum(s["numRequestsWithDraftTokens"] for s in spec)
    acc = sum(s["numAcceptedTokens"] for s in spec)
    (x,) = read_files([path])[0].readings
    ref = alpha_from_mean_tokens(1 + acc / steps, 3, steps)
    assert x.gamma == 3 and x.estimate.alpha == pytest.approx(ref.alpha) and x.num_drafts == steps
    assert x.estimate.ci_low <= 0.66 <= x.estimate.ci_high  # simulated at 0.66 (seed 18)
    # as JSON strings (some versions) and as JSON lines: the same reading
    as_strings = json.dumps([json.dumps(it) for it in data])
    assert read_text(as_strings, "s").readings[0].estimate.alpha == pytest.approx(x.estimate.alpha)
    as_lines = "\n".join(json.dumps(it) for it in data) + "\n"
    assert read_text(as_lines, "s").readings[0].estimate.alpha == pytest.approx(x.estimate.alpha)


def test_iteration_stats_with_short_drafts_span_both_ends():
    data = json.loads((ENG / "trtllm_iteration_stats.json").read_text())
    data[5]["specDecodingStats"]["numDraftTokens"] -= 4  # four draft tokens fewer than 3 x steps
    (x,) = read_text(json.dumps(data), "s", gamma=3).readings
    sd = x.short_drafts
    assert sd.missing_tokens == 4 and sd.alpha_full < sd.alpha_upper
    assert x.estimate.ci_low <= sd.alpha_full and x.estimate.ci_high >= sd.alpha_upper
    with pytest.raises(ValueError, match="give (--)?gamma K"):
        read_text(json.dumps(data), "s")
    with pytest.raises(ValueError, match="below draft tokens / steps"):
        read_text(json.dumps(data), "s", gamma=2)


def test_draft_tokens_not_a_multiple_of_k_print_no_nan():
    text = (ENG / "trtllm.prom").read_text()
    dt = next(ln for ln in text.splitlines() if ln.startswith("trtllm_spec_decode_num_draft_tokens_total"))
    odd = text.replace(dt, dt.replace(" 60000.0", " 60001.0"))
    (x,) = read_text(odd, "t").readings
    sd = x.short_drafts
    assert sd.missing_tokens == 2 and sd.drafts_min == 1 and sd.drafts_max is None
    assert sd.alpha_full <= x.estimate.alpha <= sd.alpha_upper
    assert x.estimate.ci_low <= sd.alpha_full and x.estimate.ci_high >= sd.alpha_upper


def test_the_report_of_an_odd_total_names_the_bounds(tmp_path):
    text = (ENG / "trtllm.prom").read_text().replace(" 60000.0", " 60001.0")
    f = tmp_path / "odd.prom"
    f.write_text(text)
    out = report_text(build_report([str(f)]))
    assert "nan" not in out.lower().replace("nano", "")
    assert "at least 1 draft(s) shorter than k" in out and "/prometheus/metrics" in out
