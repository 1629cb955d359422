"""llama.cpp's log lines (sdsl.measure.engines.llamacpp_log): the statistics and print_timing lines
of llama.cpp PR #24536, the older statistics of docs/speculative.md and llama-speculative's
printout of PR #3006 (verbatim), read against the exact estimator on the counts they pin down, and
a simulated server log against the alpha it was drawn at."""

from __future__ import annotations

import pytest
from engine_fixtures import ENG

from sdsl.measure.engines.detect import detect_format, read_files, read_text
from sdsl.measure.engines.llamacpp_log import parse_llamacpp_log
from sdsl.measure.estimators import alpha_from_position_counts, alpha_from_trial_bounds

PR = ENG / "llamacpp_server_pr24536.log"


def test_the_statistics_line_is_used_and_covers_the_exact_counts():
    text = PR.read_text()
    assert detect_format(text, "log")[0] == "llamacpp-log"
    stats, timing, block = parse_llamacpp_log(text)
    (s,) = stats
    assert (s.impl, s.verified, s.acc_drafts, s.gen_tokens, s.acc_tokens) == ("draft-eagle3", 87, 70, 259, 167)
    assert len(timing) == 1 and block is None
    (x,) = read_files([PR])[0].readings
    # 0.805, 0.632, 0.483 x 87 = 70.0, 55.0, 42.0: accepted per position 70, 55, 42 (sum 167)
    ref = alpha_from_position_counts([70, 55, 42], 87)
    assert x.gamma == 3 and x.estimate.alpha == pytest.approx(ref.alpha, abs=2e-4)
    assert x.estimate.ci_low <= ref.ci_low + 1e-12 and x.estimate.ci_high >= ref.ci_high
    # 259 draft tokens of 3 x 87 = 261: two drafts may have been a token short
    assert x.short_drafts.missing_tokens == 2 and x.short_drafts.alpha_upper > x.short_drafts.alpha_full


def test_the_print_timing_line_alone():
    text = "".join(ln for ln in PR.read_text().splitlines(keepends=True) if "statistics" not in ln)
    (x,) = read_text(text, "log").readings
    assert x.gamma == 3 and dict(x.labels) == {"lines": "print_timing"}
    assert x.estimate.ci_low <= 167 / 212 <= x.estimate.ci_high


def test_older_statistics_without_rates_are_bounded():
    """docs/speculative.md: ngram_simple, 5 drafts (all with a first token accepted), 187 draft
    tokens, 73 accepted: 1 to 5 drafts ended in a rejection, so the evaluated positions lie in
    [74, 78]."""
    r = read_files([ENG / "llamacpp_docs_statistics.txt"])[0]
    ngram, draft = r.readings
    ref = alpha_from_trial_bounds(73, 76, 74, 78, n=5)
    assert dict(ngram.labels)["implementation"] == "ngram_simple"
    assert (ngram.estimate.alpha, ngram.estimate.ci_low, ngram.estimate.ci_high) == pytest.approx(
        (ref.alpha, ref.ci_low, ref.ci_high)
    )
    assert draft.estimate.ci_low < 98 / 108 and draft.estimate.ci_high > 98 / 99


def test_llama_speculative_printout():
    """PR #3006: n_draft 16, 266 tokens predicted, 254 drafted, 223 accepted: 16 to 43 drafts."""
    (x,) = read_files([ENG / "llamacpp_speculative_pr3006.txt"])[0].readings
    assert x.gamma == 16
    ref = alpha_from_trial_bounds(223, 239, 224, 254, n=16)
    assert (x.estimate.ci_low, x.estimate.ci_high) == pytest.approx((ref.ci_low, ref.ci_high))
    with pytest.raises(ValueError, match="conflicts with n_draft = 16"):
        read_files([ENG / "llamacpp_speculative_pr3006.txt"], gamma=8)


def test_a_simulated_server_log_covers_its_alpha():
    (x,) = read_files([ENG / "llamacpp_server.log"])[0].readings
    assert x.gamma == 4 and x.estimate.ci_low <= 0.62 <= x.estimate.ci_high  # seed 18, a quarter short
    assert x.short_drafts.missing_tokens > 0
    # the print_timing lines alone (summed over the 20 requests) cover it too
    text = "".join(ln for ln in (ENG / "llamacpp_server.log").read_text().splitlines(True) if "statistics" not in ln)
    (y,) = read_text(text, "log").readings
    assert y.estimate.ci_low <= 0.62 <= y.estimate.ci_high and y.num_drafts == x.num_drafts


def test_a_restart_sums_the_counts_before_and_after():
    line = (
        "statistics draft: #calls(b,g,a) = 1 {d} {d}, #gen drafts = {d}, #acc drafts = {a0}, #gen tokens = {g}, "
        "#acc tokens = {s}, #mean acc len = 2.00, #acc rate/pos = ({r0}, {r1})\n"
    )
    text = line.format(d=100, a0=60, g=200, s=100, r0="0.600", r1="0.400") + line.format(
        d=50, a0=30, g=100, s=50, r0="0.600", r1="0.400"
    )
    (x,) = read_text(text, "log").readings
    assert x.num_drafts == 150 and any("restart" in n for n in x.notes)
