"""vLLM's printed summaries (sdsl.measure.engines.vllm_printout): the printout of
examples/offline_inference/spec_decode.py and the Speculative Decoding section of vllm bench serve,
read from the printouts pasted in vLLM PRs #26498 and #48892 (verbatim), against the exact estimator
on the counts the printouts pin down."""

from __future__ import annotations

import pytest
from engine_fixtures import ENG

from sdsl.measure.engines.detect import detect_format, read_files, read_text
from sdsl.measure.engines.vllm_printout import parse_bench_text, parse_spec_decode_example
from sdsl.measure.estimators import alpha_from_mean_tokens, alpha_from_position_counts

EXAMPLE = ENG / "vllm_spec_decode_pr26498.txt"
BENCH = ENG / "vllm_bench_text_pr48892.txt"


def test_the_example_printout_is_detected_and_parsed():
    text = EXAMPLE.read_text()
    assert detect_format(text, "p")[0] == "vllm-spec-decode"
    first, second = parse_spec_decode_example(text)
    assert (first.drafts, first.draft_tokens, first.accepted, first.mean) == (4687, 46870, 12368, 3.64)
    assert first.rates[0] == 0.74 and first.rates[-1] == 0.02 and len(first.rates) == 10
    assert (second.drafts, second.accepted) == (20468, 48266)


def test_the_example_printout_bounds_the_exact_estimate():
    """Drafts and accepted tokens are exact, each rate has 2 decimals: the evaluated positions are
    drafts + accepted - accepted at the last position, known within 0.005 x drafts; the interval
    covers the exact estimator's at both ends of that range (the counts behind the printout are
    consistent with every value in it)."""
    r, _ = read_files([EXAMPLE])[0].readings
    assert r.gamma == 10 and r.num_drafts == 4687 and not r.short_drafts.any
    s, d = 12368, 4687
    for last in (round((0.02 - 0.005) * d) + 1, round((0.02 + 0.005) * d) - 1):
        counts = [round(x * d) for x in (0.74, 0.54, 0.41, 0.30, 0.22, 0.16, 0.12, 0.08, 0.05)]
        counts = [c + (s - last - sum(counts)) * (i == 0) for i, c in enumerate(counts)] + [last]
        ref = alpha_from_position_counts(counts, d)
        assert ref.alpha == pytest.approx(s / (d + s - last))
        assert r.estimate.ci_low <= ref.ci_low + 1e-12 and r.estimate.ci_high >= ref.ci_high - 1e-12
    assert r.estimate.alpha == pytest.approx(s / (d + s - 0.02 * d * s / (2.64 * d)), rel=1e-9)


def test_the_bench_printout_reads_both_sections():
    text = BENCH.read_text()
    assert detect_format(text, "b")[0] == "vllm-bench-text"
    one, eight = parse_bench_text(text)
    assert (one.drafts, one.draft_tokens, one.accepted, one.rates) == (26407, 26407, 22021, (0.8339,))
    assert len(eight.rates) == 8 and eight.draft_tokens == 8 * eight.drafts
    x1, x8 = read_files([BENCH])[0].readings
    # k = 1: every accepted token is at position 0 and the evaluated positions are the drafts: exact
    ref = alpha_from_position_counts([22021], 26407)
    assert x1.gamma == 1 and x1.estimate.alpha == pytest.approx(ref.alpha)
    assert (x1.estimate.ci_low, x1.estimate.ci_high) == pytest.approx((ref.ci_low, ref.ci_high))
    assert x8.gamma == 8 and x8.estimate.ci_low < x8.estimate.alpha < x8.estimate.ci_high


def test_a_printout_without_positions_inverts_the_mean_length():
    """Copies of spec_decode.py that print 'Number of drafts:' and no positions: k from
    draft tokens / drafts when whole, else --gamma."""
    text = (
        "Number of drafts:                        1200      \n"
        "Draft tokens generated:                  3600      \n"
        "Draft utilization rate:                  58.3      \n"
        "Accepted tokens:                         2100      \n"
        "Mean acceptance length:                  2.75      \n"
    )
    (x,) = read_text(text, "p").readings
    ref = alpha_from_mean_tokens(1 + 2100 / 1200, 3, 1200)
    assert x.gamma == 3 and x.estimate.alpha == pytest.approx(ref.alpha) and x.chain_only
    (y,) = read_text(text.replace("3600", "3500"), "p", gamma=3).readings
    assert y.gamma == 3
    with pytest.raises(ValueError, match="give (--)?gamma K"):
        read_text(text.replace("3600", "3500"), "p")


def test_contradicting_printouts_are_refused():
    text = EXAMPLE.read_text()
    with pytest.raises(ValueError, match=r"line 4: the mean acceptance length 3.64 is not"):
        read_text(text.replace("num_accepted_tokens: 12368", "num_accepted_tokens: 15368"), "p")
    with pytest.raises(ValueError, match="conflicts with k = 10"):
        read_text(text, "p", gamma=4)
    with pytest.raises(ValueError, match="no draft_tokens line"):
        read_text("num_drafts: 10\nnum_accepted_tokens: 5\n", "p")


def test_positions_past_the_drafts_and_an_early_printout():
    """A printout from the script run with --num-spec-tokens 6 against an engine drafting 3 (the
    positions past 3 print 0.00 and draft tokens / drafts = 3): k is 3. An early copy of the script
    printed only the mean length and the rates: the point of the MLE, no interval."""
    text = (
        "--------------------------------------------------\ntotal_num_output_tokens: 1000\nnum_drafts: 597\n"
        "num_draft_tokens: 1791\nnum_accepted_tokens: 402\nmean acceptance length: 1.67\n"
        "--------------------------------------------------\n"
        + "".join(
            f"acceptance at token {i}: {r}\n" for i, r in enumerate(["0.59", "0.08", "0.00", "0.00", "0.00", "0.00"])
        )
    )
    (x,) = read_text(text, "p").readings
    assert x.gamma == 3 and not x.short_drafts.any and any("k = 3" in n for n in x.notes)
    ref = alpha_from_position_counts([352, 50, 0], 597)  # 0.59 x 597 = 352, 402 - 352 = 50
    assert x.estimate.ci_low <= ref.alpha <= x.estimate.ci_high
    early = "mean acceptance length: 2.31\nacceptance at token 0:0.71\nacceptance at token 1:0.41\nacceptance at token 2:0.19\n"
    assert detect_format(early, "e")[0] == "vllm-spec-decode"
    (y,) = read_text(early, "e").readings
    assert y.estimate.alpha == pytest.approx((0.71 + 0.41 + 0.19) / (1 + 0.71 + 0.41))
    assert y.estimate.ci_low != y.estimate.ci_low  # NaN: no interval without the drafts (printed as n/a)
