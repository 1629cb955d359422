"""vLLM log lines (sdsl.measure.engines.vllm_log): the lines users paste, verbatim (eugr/
spark-vllm-docker PR #200, vLLM PR #24127, vLLM issue #7301), and a simulated log with drafts
shorter than k."""

from __future__ import annotations

import pytest
from engine_fixtures import ENG

from sdsl.measure.engines.detect import read_files, read_text
from sdsl.measure.engines.vllm_log import parse_log
from sdsl.measure.estimators import alpha_from_mean_tokens, alpha_from_position_counts


def test_v1_lines_recover_the_exact_counts():
    lines = parse_log((ENG / "vllm_log_v1.txt").read_text())
    assert [(x.accepted, x.drafted, x.rates) for x in lines] == [(419, 434, (0.982, 0.949)), (69, 104, (0.808, 0.519))]
    (r,) = read_files([ENG / "vllm_log_v1.txt"])
    (x,) = r.readings
    assert x.num_drafts == 434 / 2 + 104 / 2  # Drafted / k, consistent with the rounded mean lengths
    assert x.engine == "0" and x.gamma == 2 and not x.short_drafts.any
    # per-position counts: rates x drafts (0.982 x 217 = 213.1, ...), rescaled to the exact accepted total
    counts = [0.982 * 217 + 0.808 * 52, 0.949 * 217 + 0.519 * 52]
    counts = [c * 488 / sum(counts) for c in counts]
    assert x.estimate.alpha == pytest.approx(488 / (269 + counts[0]), rel=1e-12)
    ref = alpha_from_position_counts([round(c) for c in counts], 269)
    assert x.estimate.ci_low <= ref.ci_low and x.estimate.ci_high >= ref.ci_high  # rounding only widens


def test_old_v1_format_is_read():
    (r,) = read_files([ENG / "vllm_log_v1_old.txt"])
    (x,) = r.readings
    assert x.gamma == 5 and x.num_drafts == 59 and x.num_accepted_tokens == 262  # 295 drafted / 5


def test_v0_line_inverts_the_emitted_tokens_per_draft():
    (r,) = read_files([ENG / "vllm_log_v0.txt"])
    (x,) = r.readings
    ref = alpha_from_mean_tokens(34244 / (53716 / 4), 4, 53716 // 4)
    assert x.estimate.alpha == pytest.approx(ref.alpha) and x.chain_only
    assert any("not the prefix acceptance" in n for n in x.notes)


def test_short_drafts_in_a_log_bound_the_estimate():
    (r,) = read_files([ENG / "vllm_log_short.txt"])
    (x,) = r.readings
    assert x.short_drafts.missing_tokens > 0 and x.short_drafts.alpha_full < 0.6
    assert x.estimate.ci_low <= 0.6 <= x.estimate.ci_high  # simulated at 0.6, a third of the drafts shorter


def test_malformed_lines_name_the_line():
    with pytest.raises(ValueError, match="log line 2: no 'Drafted'"):
        read_text(
            "x\nSpecDecoding metrics: Mean acceptance length: 2.0, Accepted: 10 tokens, Per-position "
            "acceptance rate: 0.5\n",
            "log",
        )
    r = read_text(
        "SpecDecoding metrics: Mean acceptance length: 3.90, Accepted: 10 tokens, Drafted: 100 tokens, "
        "Per-position acceptance rate: 0.050, 0.050\n",
        "log",
    )
    assert not r.readings and "log line 1: the counts contradict each other" in r.skipped[0].reason


def test_idle_intervals_are_skipped():
    r = read_text(
        "SpecDecoding metrics: Mean acceptance length: 1.00, Accepted: 0 tokens, Drafted: 0 tokens, "
        "Per-position acceptance rate: 0.000, 0.000, Avg Draft acceptance rate: nan%\n",
        "log",
    )
    assert not r.readings and r.skipped[0].reason.startswith("idle")


def test_lines_without_per_position_rates_invert_the_mean_length():
    """The earliest V1 line format (no per-position rates): drafts from the mean length, k from
    Drafted / drafts."""
    text = (
        "SpecDecoding metrics: Draft acceptance rate: 43.3%, Mean acceptance length: 2.30, Accepted: 1136 tokens, "
        "Drafted: 2622 tokens\n"
    )
    (x,) = read_text(text, "log").readings
    assert x.gamma == 3 and x.chain_only and x.num_drafts == pytest.approx(1136 / 1.3)
