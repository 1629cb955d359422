"""llama.cpp scrapes (sdsl.measure.engines.llamacpp): totals rounded to 6 significant digits by
the exporter (tools/server to_metrics), read within the stated tolerance; the fixture's accepted
total is the issue's example (2370367 printed as 2.37037e+06)."""

from __future__ import annotations

import pytest
from engine_fixtures import ENG

from sdsl.measure.engines.detect import read_files, read_text
from sdsl.measure.engines.llamacpp import REL_TOLERANCE


def test_rounded_totals_are_read_within_the_tolerance():
    text = (ENG / "llamacpp.prom").read_text()
    assert "llamacpp:spec_decode_num_accepted_tokens_total 2.37037e+06" in text
    (r,) = read_files([ENG / "llamacpp.prom"])
    (x,) = r.readings
    assert x.num_accepted_tokens == 2370367  # the exact sum of the per-position counts, not 2370370
    assert x.gamma == 8 and x.labels == ()
    assert x.estimate.ci_low <= 0.62 <= x.estimate.ci_high  # simulated at 0.62, 30 % of drafts shorter than 8
    assert x.short_drafts.any and x.short_drafts.alpha_full < 0.62
    assert any("6 significant digits" in n for n in r.notes)


def test_a_sum_beyond_the_tolerance_is_refused():
    bad = (
        (ENG / "llamacpp.prom")
        .read_text()
        .replace("accepted_tokens_total 2.37037e+06", "accepted_tokens_total 2.38037e+06")
    )
    r = read_text(bad, "bad")
    assert not r.readings
    assert "sum to 2370367 but num_accepted_tokens is 2380370 (tolerance" in r.skipped[0].reason
    assert REL_TOLERANCE * 2380370 < 2380370 - 2370367


def test_before_the_first_speculative_request_is_idle():
    (r,) = read_files([ENG / "llamacpp_fresh.prom"])
    assert not r.readings and r.skipped[0].reason.startswith("idle: 3 of the 4")


def test_vllm_prefix_is_not_llamacpp():
    (r,) = read_files([ENG / "llamacpp.prom"])
    assert r.source == "llamacpp-prometheus"
    with pytest.raises(ValueError, match="no vllm:spec_decode"):
        read_text((ENG / "llamacpp.prom").read_text(), "x", fmt="vllm-prometheus")
