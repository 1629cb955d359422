"""Alpha with bounded evaluated positions (sdsl.measure.estimators) and the short-draft reduction bound
(sdsl.measure.engines.estimate.reduction_bound): exact against the binomial kernel when the bounds
coincide, brute force for the reduction bound, coverage on seeded simulations with short drafts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from engine_fixtures import per_pos, simulate

from sdsl.measure.engines.estimate import from_position_counts, reduction_bound
from sdsl.measure.estimators import alpha_from_accepted, alpha_from_position_counts, alpha_from_trial_bounds


def test_equal_bounds_give_the_binomial_interval():
    ref = alpha_from_position_counts([60, 36, 21], 100)
    est = alpha_from_trial_bounds(ref.accepted, ref.trials, ref.trials, ref.trials)
    assert est.alpha == pytest.approx(ref.alpha, rel=1e-12)
    assert (est.ci_low, est.ci_high) == pytest.approx((ref.ci_low, ref.ci_high), rel=1e-9)


def test_interval_covers_both_ends():
    s, t = 117, 200
    est = alpha_from_trial_bounds(s, t, 170, 205)
    lo_end = alpha_from_position_counts([117], 205)  # one position: trials = drafts
    hi_end = alpha_from_position_counts([117], 170)
    assert est.ci_low == pytest.approx(lo_end.ci_low, rel=1e-9)
    assert est.ci_high == pytest.approx(hi_end.ci_high, rel=1e-9)
    assert est.extra["alpha_low"] == pytest.approx(s / 205) and est.extra["alpha_high"] == pytest.approx(s / 170)


@pytest.mark.parametrize(
    "args, message",
    [
        ((5, 4, 4, 4), "accepted must be <= trials"),
        ((2, 10, 11, 12), "trials_low <= trials <= trials_high"),
        ((2, 0, 0, 0), "trials must be > 0"),
        ((-1, 10, 10, 10), "accepted must be a finite count"),
    ],
)
def test_invalid_bounds(args, message):
    with pytest.raises(ValueError, match=message):
        alpha_from_trial_bounds(*args)


def test_reduction_bound_is_the_brute_force_maximum():
    """Every assignment of draft lengths g >= max(j, 1) to small sets of drafts with accepted
    counts j: the evaluated positions lost (short drafts accepted in full) never exceed the bound,
    and the bound is attained by some assignment."""
    rng = np.random.default_rng(0)
    k = 4
    for _ in range(40):
        acc = rng.integers(0, k + 1, size=5)
        stopped = [int(np.sum(acc == j)) for j in range(1, k)]
        options = [range(max(j, 1), k + 1) for j in acc]
        best = {}
        for g in itertools.product(*options):
            g = np.array(g)
            m = int(np.sum(k - g))
            lost = int(np.sum((g == acc) & (acc < k)))
            best[m] = max(best.get(m, 0), lost)
        for m in best:
            assert reduction_bound(stopped, k, m) == max(v for mm, v in best.items() if mm <= m)


def test_short_drafts_bounded_estimate_covers_the_truth():
    """Seeded simulations (alpha = 0.65, k = 5, 40 % of drafts shorter): the full-draft estimate
    is biased low and misses alpha, the bounded interval covers it in >= 90 % of 200 runs (nominal
    95 % per end; the tolerance allows for simulation noise)."""
    rng = np.random.default_rng(1)
    covered = naive_covered = 0
    for _ in range(200):
        g, acc = simulate(rng, 0.65, 5, 2000, short=0.4)
        r = from_position_counts(
            source="t",
            path="sim",
            labels=(),
            accepted_per_pos=per_pos(acc, 5),
            num_drafts=len(g),
            num_draft_tokens=int(g.sum()),
            num_accepted_tokens=int(acc.sum()),
        )
        covered += r.estimate.ci_low <= 0.65 <= r.estimate.ci_high
        exact = alpha_from_accepted(acc, g)
        naive_covered += r.short_drafts.alpha_full >= exact.ci_low
        assert r.short_drafts.alpha_full <= exact.alpha + 1e-12 <= r.short_drafts.alpha_upper + 1e-12
    assert covered >= 180
    assert naive_covered < 20
