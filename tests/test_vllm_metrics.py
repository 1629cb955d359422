"""vLLM /metrics scrapes (sdsl.measure.vllm_metrics) into alpha: parsing, label sets, the bonus-token
convention, and recovery of the alpha the fixture counts were simulated with
(tests/fixtures/vllm_*.txt, seed 20260225)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sdsl.measure.estimators import alpha_from_position_counts
from sdsl.model.throughput import expected_tokens
from sdsl.measure.vllm_metrics import (
    combine_counters,
    counters_delta,
    parse_prometheus_text,
    read_spec_decode_counters,
    spec_decode_counters,
)

FIX = Path(__file__).resolve().parent / "fixtures"


def test_parser_handles_escapes_comments_special_values_and_timestamps():
    text = (
        "# a free comment\n"
        "# TYPE x counter\n"
        'x_total{a="q\\"uote",b="back\\\\slash",c="new\\nline",} 3 1700000000000\n'
        "\n"
        "y NaN\n"
        'z{le="+Inf"} +Inf\n'
        "w -Inf\n"
        "# EOF\n"
    )
    samples, types = parse_prometheus_text(text)
    assert types == {"x": "counter"}
    x = samples[0]
    assert x.label_dict == {"a": 'q"uote', "b": "back\\slash", "c": "new\nline"}
    assert x.value == 3.0 and x.timestamp == 1.7e12
    assert np.isnan(samples[1].value) and samples[2].value == np.inf and samples[3].value == -np.inf
    with pytest.raises(ValueError, match="line 1"):
        parse_prometheus_text('bad{a="unterminated} 1\n')
    with pytest.raises(ValueError, match="line 2"):
        parse_prometheus_text("ok 1\nnot_a_number abc\n")


def test_single_model_scrape_recovers_alpha():
    (c,) = read_spec_decode_counters(FIX / "vllm_single.txt")
    assert c.model_name == "facebook/opt-13b" and c.engine == "0"
    assert (c.num_drafts, c.num_draft_tokens, c.num_accepted_tokens) == (4000, 12000, 6957)
    assert c.accepted_per_pos == (3014, 2256, 1687) and c.gamma == 3
    est = c.alpha()
    assert est.ci_low <= 0.75 <= est.ci_high
    # MLE by hand: sum(a) / (drafts + a0 + a1)
    assert est.alpha == pytest.approx(6957 / (4000 + 3014 + 2256))
    # vLLM's conventions: accepted excludes the bonus token, mean acceptance length includes it
    assert c.mean_acceptance_length == pytest.approx(1 + 6957 / 4000)
    assert c.draft_acceptance_rate == pytest.approx(6957 / 12000)
    assert c.draft_acceptance_rate < est.ci_low  # accepted/drafted is not alpha for gamma > 1
    # the mean acceptance length is E(alpha, gamma) of method notes section 1
    mean_est = c.alpha_from_mean_length()
    assert float(expected_tokens(mean_est.alpha, 3)) == pytest.approx(c.mean_acceptance_length, rel=1e-9)
    assert mean_est.ci_low <= 0.75 <= mean_est.ci_high
    assert not c.constant_alpha_test().rejects()


def test_multi_model_engines_and_escaped_labels():
    cs = read_spec_decode_counters(FIX / "vllm_multi.txt")
    assert [(c.model_name, c.engine) for c in cs] == [
        ("Qwen/Qwen1.5-14B", "0"), ("Qwen/Qwen1.5-14B", "1"), ('my "tuned" model\\v2', "0")]
    for c in cs[:2]:
        est = c.alpha()
        assert est.ci_low <= 0.6 <= est.ci_high
    pooled = combine_counters(cs)
    qwen = next(c for c in pooled if c.model_name == "Qwen/Qwen1.5-14B")
    assert qwen.num_drafts == 5500 and qwen.engine is None
    assert qwen.accepted_per_pos == tuple(a + b for a, b in zip(cs[0].accepted_per_pos, cs[1].accepted_per_pos))
    assert qwen.alpha().ci_low <= 0.6 <= qwen.alpha().ci_high
    # the falling-alpha model: the constant-alpha test rejects, per-position rates show the fall
    tuned = next(c for c in pooled if c.model_name.startswith("my"))
    test = tuned.constant_alpha_test()
    assert test.rejects(1e-6)
    assert test.rates == pytest.approx((0.9, 0.8, 0.7, 0.6, 0.5), abs=0.04)


def test_delta_between_two_scrapes_isolates_the_new_traffic():
    before = read_spec_decode_counters(FIX / "vllm_before.txt")
    after = read_spec_decode_counters(FIX / "vllm_after.txt")
    (d,) = counters_delta(before, after)
    assert d.num_drafts == 2000 and d.num_draft_tokens == 8000
    est = d.alpha()
    assert est.ci_low <= 0.8 <= est.ci_high
    # the cumulative counters mix the two regimes and miss 0.8
    assert not after[0].alpha().ci_low <= 0.8 <= after[0].alpha().ci_high
    with pytest.raises(ValueError, match="decreased"):
        counters_delta(after, before)


def _scrape(drafts=10, draft_tokens=30, accepted=12, per_pos=(6, 4, 2), extra=""):
    lab = 'model_name="m",engine="0"'
    lines = [
        f"vllm:spec_decode_num_drafts_total{{{lab}}} {drafts}",
        f"vllm:spec_decode_num_draft_tokens_total{{{lab}}} {draft_tokens}",
        f"vllm:spec_decode_num_accepted_tokens_total{{{lab}}} {accepted}",
    ]
    lines += [f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{lab},position="{i}"}} {v}'
              for i, v in enumerate(per_pos)]
    return "\n".join(lines) + "\n" + extra


def test_minimal_scrape_matches_estimator():
    (c,) = spec_decode_counters(_scrape())
    assert c.alpha().alpha == alpha_from_position_counts([6, 4, 2], 10).alpha


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"per_pos": (4, 6, 2), "accepted": 12}, "accepted at position 1 \\(6\\) > accepted at position 0 \\(4\\)"),
        ({"accepted": 13}, "sums to 12 but num_accepted_tokens is 13"),
        ({"drafts": 0}, "num_drafts is 0"),
        ({"accepted": 40, "per_pos": (10, 10, 10, 10), "draft_tokens": 30}, "num_accepted_tokens \\(40\\) > num_draft_tokens"),
        ({"drafts": -1}, "non-negative"),
        ({"extra": 'vllm:spec_decode_num_drafts_total{model_name="m",engine="0"} 3\n'}, "duplicate"),
    ],
)
def test_invalid_scrapes_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        spec_decode_counters(_scrape(**kwargs))


def test_no_spec_decode_counters_and_short_drafts():
    with pytest.raises(ValueError, match="no vllm:spec_decode"):
        spec_decode_counters("vllm:num_requests_running 0\n")
    with pytest.warns(UserWarning, match="shorter than gamma"):
        (c,) = spec_decode_counters(_scrape(draft_tokens=25))
    assert c.notes
