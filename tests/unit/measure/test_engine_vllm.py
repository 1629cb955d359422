"""vLLM /metrics scrapes (sdsl.measure.engines.vllm): the old fixtures' known answers (seed
20260225), and every broken case seen in the wild: an idle data-parallel engine with partial counters
(built in the shape of vLLM PR #24049), a fresh server as the "before" scrape, a restart detected through
_created (PR #41916's label set), drafts shorter than k (ngram, PR #24127)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from engine_fixtures import ENG, ROOT

from sdsl.measure.engines.detect import read_files, read_text
from sdsl.measure.engines.prometheus import parse_scrape
from sdsl.measure.engines.vllm import counters_delta, spec_counters
from sdsl.measure.estimators import alpha_from_position_counts, constant_alpha_test
from sdsl.model.throughput import expected_tokens


def one(path, **kw):
    (r,) = read_files([path], **kw)
    return r


def test_single_model_scrape_recovers_alpha():
    r = one(ROOT / "vllm_single.txt")
    (x,) = r.readings
    assert x.model == "facebook/opt-13b" and x.engine == "0" and x.gamma == 3
    assert (x.num_drafts, x.num_accepted_tokens) == (4000, 6957)
    assert x.estimate.alpha == pytest.approx(6957 / (4000 + 3014 + 2256), rel=1e-12)  # the MLE by hand
    assert x.estimate.ci_low <= 0.75 <= x.estimate.ci_high  # simulated at 0.75
    assert x.mean_acceptance_length == pytest.approx(1 + 6957 / 4000)
    assert float(expected_tokens(x.estimate.alpha, 3)) != pytest.approx(x.mean_acceptance_length)  # MLE, not inversion
    assert not x.short_drafts.any and not x.constant_alpha.rejects()


def test_multi_model_engines_pool_and_the_falling_alpha_is_rejected():
    r = one(ROOT / "vllm_multi.txt")
    by = {(x.model, x.engine): x for x in r.readings}
    assert set(by) == {
        ("Qwen/Qwen1.5-14B", "0"),
        ("Qwen/Qwen1.5-14B", "1"),
        ('my "tuned" model\\v2', "0"),
        ("Qwen/Qwen1.5-14B", "all"),
    }
    pooled = by[("Qwen/Qwen1.5-14B", "all")]
    assert pooled.num_drafts == 5500
    e0, e1 = by[("Qwen/Qwen1.5-14B", "0")], by[("Qwen/Qwen1.5-14B", "1")]
    ref = alpha_from_position_counts(
        [a + b for a, b in zip((1777, 1082, 658, 411, 254), (1507, 884, 536, 340, 198))], 5500
    )
    assert pooled.estimate.alpha == pytest.approx(ref.alpha, rel=1e-12)
    for x in (e0, e1, pooled):
        assert x.estimate.ci_low <= 0.6 <= x.estimate.ci_high
    tuned = by[('my "tuned" model\\v2', "0")]
    assert tuned.constant_alpha.rejects(1e-6)
    assert tuned.position_rates == pytest.approx((0.9, 0.8, 0.7, 0.6, 0.5), abs=0.04)


def test_delta_isolates_the_new_traffic_and_cumulative_counters_miss_it():
    (r,) = read_files([ROOT / "vllm_before.txt", ROOT / "vllm_after.txt"], delta=True)
    (d,) = r.readings
    assert d.num_drafts == 2000 and d.estimate.ci_low <= 0.8 <= d.estimate.ci_high
    (after,) = one(ROOT / "vllm_after.txt").readings
    assert not after.estimate.ci_low <= 0.8 <= after.estimate.ci_high


def test_idle_dp_engine_is_reported_and_the_others_are_read():
    r = one(ENG / "vllm_dp_idle.prom")
    assert [dict(s.labels)["engine"] for s in r.skipped] == ["7"]
    assert "idle: 2 of the 4" in r.skipped[0].reason
    engines = [x.engine for x in r.readings]
    assert engines == ["0", "1", "2", "3", "4", "5", "6", "all"]
    pooled = r.readings[-1]
    assert pooled.num_drafts == 22 + 15 + 29 + 20 + 25 + 24 + 27  # PR #24049's drafts, engine 7 left out
    assert pooled.estimate.ci_low <= 0.35 <= pooled.estimate.ci_high  # simulated at 0.35


def test_pasted_table_reads_like_the_scrape():
    table = one(ENG / "vllm_pr24049_table.txt")
    assert table.detected_by.startswith("Prometheus query-result table")
    assert len(table.readings) == 9 and not table.skipped  # 8 engines and the pool


def test_fresh_server_is_idle_alone_and_a_valid_baseline():
    r = one(ENG / "vllm_fresh.prom")
    assert not r.readings and "every counter is 0" in r.skipped[0].reason
    (d,) = read_files([ENG / "vllm_fresh.prom", ENG / "vllm_fresh_later.prom"], delta=True)
    (later,) = one(ENG / "vllm_fresh_later.prom").readings
    (x,) = d.readings
    assert x.estimate.alpha == later.estimate.alpha and x.num_drafts == 40000
    assert x.estimate.ci_low <= 0.8 <= x.estimate.ci_high


def test_restart_is_detected_through_created():
    before = spec_counters(parse_scrape((ENG / "vllm_fresh_later.prom").read_text()))
    after = spec_counters(parse_scrape((ENG / "vllm_restarted.prom").read_text()))
    (c,) = counters_delta(before, after)
    assert c.num_drafts == 15000 and "_created moved" in c.notes[0]
    # three scrapes: fresh -> later (+40000 drafts) -> restarted (15000 since the restart)
    (r,) = read_files([ENG / "vllm_fresh.prom", ENG / "vllm_fresh_later.prom", ENG / "vllm_restarted.prom"], delta=True)
    (x,) = r.readings
    assert x.num_drafts == 55000 and any("restarted" in n for n in x.notes)
    assert x.estimate.ci_low <= 0.8 <= x.estimate.ci_high


def test_restart_without_created_is_detected_by_a_decrease():
    strip = lambda p: "".join(ln for ln in p.read_text().splitlines(keepends=True) if "_created" not in ln)  # noqa: E731
    before = spec_counters(parse_scrape(strip(ENG / "vllm_fresh_later.prom")))
    after = spec_counters(parse_scrape(strip(ENG / "vllm_restarted.prom")))
    (c,) = counters_delta(before, after)
    assert c.num_drafts == 15000 and "a counter decreased" in c.notes[0]


def test_short_drafts_are_counted_and_bound_the_estimate():
    (x,) = one(ENG / "vllm_short_drafts.prom").readings
    sd = x.short_drafts
    assert sd.missing_tokens == 5 * x.num_drafts - x.num_draft_tokens > 0
    assert sd.alpha_full < 0.7 < sd.alpha_upper  # simulated at 0.7 with 40 % short drafts
    assert x.estimate.ci_low <= 0.7 <= x.estimate.ci_high
    assert x.estimate.alpha == pytest.approx(sd.alpha_full)


def _scrape(drafts=10, draft_tokens=30, accepted=12, per_pos=(6, 4, 2), lab='model_name="m",engine="0"'):
    lines = [
        f"vllm:spec_decode_num_drafts_total{{{lab}}} {drafts}",
        f"vllm:spec_decode_num_draft_tokens_total{{{lab}}} {draft_tokens}",
        f"vllm:spec_decode_num_accepted_tokens_total{{{lab}}} {accepted}",
    ]
    lines += [
        f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{lab},position="{i}"}} {v}' for i, v in enumerate(per_pos)
    ]
    return "\n".join(lines) + "\n"


def test_minimal_scrape_matches_the_estimators():
    (x,) = read_text(_scrape(), "s").readings
    assert x.estimate.alpha == alpha_from_position_counts([6, 4, 2], 10).alpha
    assert x.constant_alpha.p_value == constant_alpha_test(accepted_per_pos=[6, 4, 2], num_drafts=10).p_value


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"per_pos": (4, 6, 2)}, "accepted at position 1 \\(6\\) > accepted at position 0 \\(4\\)"),
        ({"accepted": 13}, "sum to 12 but num_accepted_tokens is 13"),
        ({"drafts": 0}, "num_drafts is 0 but other counters are not"),
        ({"draft_tokens": 31}, "num_draft_tokens \\(31\\) > k x num_drafts"),
    ],
)
def test_inconsistent_series_are_skipped_with_the_reason(kwargs, reason):
    r = read_text(_scrape(**kwargs) + _scrape(lab='model_name="m",engine="1"'), "s")
    assert [x.engine for x in r.readings] == ["1"]  # the other engine is still read
    assert r.skipped[0].labels == (("engine", "0"), ("model_name", "m"))
    assert re.search(reason, r.skipped[0].reason)


def test_structural_errors_raise_one_line():
    with pytest.raises(ValueError, match="duplicate sample"):
        read_text(_scrape() + 'vllm:spec_decode_num_drafts_total{model_name="m",engine="0"} 3\n', "s")
    with pytest.raises(ValueError, match="must be a whole count"):
        read_text(_scrape(drafts="10.5"), "s")
    with pytest.raises(ValueError, match="positions must be 0..k-1"):
        read_text(_scrape().replace('position="2"', 'position="5"'), "s")


def test_series_without_per_position_counters_inverts_the_mean_length():
    text = "".join(
        ln
        for ln in _scrape(drafts=1000, draft_tokens=3000, accepted=1500).splitlines(keepends=True)
        if "per_pos" not in ln
    )
    (x,) = read_text(text, "s").readings
    assert x.chain_only and x.gamma == 3
    assert float(expected_tokens(x.estimate.alpha, 3)) == pytest.approx(2.5, rel=1e-9)


def test_changing_k_without_restart_is_an_error():
    a = spec_counters(parse_scrape(_scrape()))
    b = spec_counters(parse_scrape(_scrape(drafts=20, draft_tokens=80, accepted=30, per_pos=(12, 9, 6, 3))))
    with pytest.raises(ValueError, match="draft length changed"):
        counters_delta(a, b)
    assert np.isfinite(a[0].num_drafts)
