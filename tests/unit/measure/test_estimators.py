"""Estimators of alpha (sdsl.measure.estimators; method notes, section 9) on simulated counts with known
alpha: recovery within the interval at the stated rate, agreement between the estimators, and
clear errors on invalid counts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sdsl.measure.estimators import (
    INTERVALS,
    alpha_bootstrap,
    alpha_from_accepted,
    alpha_from_mean_tokens,
    alpha_from_position_counts,
    constant_alpha_test,
    position_counts,
)
from sdsl.model.throughput import expected_tokens


def simulate(rng, alpha, gamma, n):
    """Accepted counts of ``n`` iterations: each drafted token accepted with probability
    ``alpha`` (scalar or per position) until the first rejection."""
    a = np.broadcast_to(np.asarray(alpha, float), (gamma,))
    ok = rng.random((n, gamma)) < a
    return np.where(ok.all(axis=1), gamma, np.argmin(ok, axis=1))


def test_mle_matches_closed_form_and_brute_force():
    rng = np.random.default_rng(1)
    k = simulate(rng, 0.63, 4, 500)
    est = alpha_from_accepted(k, 4)
    s, r = k.sum(), np.count_nonzero(k < 4)
    assert est.alpha == pytest.approx(s / (s + r), abs=1e-15)
    # brute force: maximise the truncated-geometric log-likelihood on a grid
    grid = np.linspace(0.001, 0.999, 99801)
    ll = np.log(grid)[:, None] * k[None, :] + np.where(k < 4, np.log1p(-grid)[:, None], 0.0)
    assert grid[np.argmax(ll.sum(axis=1))] == pytest.approx(est.alpha, abs=2e-5)

    # SE from the observed Fisher information, by numerical second derivative
    def nll(a):
        return -(s * np.log(a) + r * np.log1p(-a))

    h = 1e-5
    d2 = (nll(est.alpha + h) - 2 * nll(est.alpha) + nll(est.alpha - h)) / h**2
    assert est.se == pytest.approx(1 / np.sqrt(d2), rel=1e-4)
    assert est.n == 500 and est.trials == s + r and est.accepted == s


@pytest.mark.parametrize("interval", INTERVALS)
def test_interval_coverage_at_stated_rate(interval):
    """Over 400 seeded replications the 95 % interval covers the true alpha at a rate
    compatible with 0.95 (binomial test at the 0.001 level)."""
    rng = np.random.default_rng(7)
    hits = 0
    reps = 400
    for j in range(reps):
        alpha = (0.55, 0.75, 0.9)[j % 3]
        est = alpha_from_accepted(simulate(rng, alpha, 5, 60), 5, interval=interval)
        hits += est.ci_low <= alpha <= est.ci_high
    p = stats.binomtest(hits, reps, 0.95).pvalue
    assert p > 1e-3, f"{interval}: coverage {hits / reps:.3f}"


def test_profile_interval_at_the_boundary():
    est = alpha_from_accepted([3, 3, 3, 3], 3)
    assert est.alpha == 1.0 and est.ci_high == 1.0
    # profile bound: 12 ln(a) = -chi2_1(0.95)/2
    assert est.ci_low == pytest.approx(np.exp(-stats.chi2.ppf(0.95, 1) / 2 / 12), rel=1e-8)
    zero = alpha_from_accepted([0, 0], 5)
    assert zero.alpha == 0.0 and zero.ci_low == 0.0 and 0 < zero.ci_high < 1
    # logit falls back to profile at the boundary, Wald degenerates
    assert alpha_from_accepted([3, 3], 3, interval="logit").ci_low < 1.0


def test_varying_gamma_and_zero_gamma_iterations():
    k = [2, 0, 1, 3, 0]
    g = [2, 3, 1, 4, 0]
    est = alpha_from_accepted(k, g)
    # S = 6, R = #(k < gamma) among gamma > 0: iterations 1 and 3 -> 2
    assert est.alpha == pytest.approx(6 / 8)
    assert est.n == 4
    trials, acc = position_counts(k, g)
    assert trials.tolist() == [4, 2, 1, 1] and acc.tolist() == [3, 2, 1, 0]


def test_position_counts_estimator_equals_per_iteration_mle():
    rng = np.random.default_rng(3)
    k = simulate(rng, 0.71, 6, 3000)
    trials, acc = position_counts(k, 6)
    a = alpha_from_accepted(k, 6)
    b = alpha_from_position_counts(acc, 3000)
    assert b.alpha == pytest.approx(a.alpha, abs=1e-15)
    assert (b.ci_low, b.ci_high) == pytest.approx((a.ci_low, a.ci_high), abs=1e-12)
    assert b.ci_low <= 0.71 <= b.ci_high


def test_cluster_bootstrap_recovers_alpha_and_widens_with_prompt_heterogeneity():
    rng = np.random.default_rng(11)
    # 40 prompts whose own alpha varies around 0.7: the cluster bootstrap must be wider than the
    # iid likelihood interval
    prompt_alpha = np.clip(rng.normal(0.7, 0.08, 40), 0.3, 0.97)
    ks, groups = [], []
    for j, a in enumerate(prompt_alpha):
        k = simulate(rng, a, 4, 50)
        ks.append(k)
        groups.append(np.full(k.size, j))
    k, grp = np.concatenate(ks), np.concatenate(groups)
    boot = alpha_bootstrap(k, 4, grp, np.random.default_rng(0), n_resamples=1500)
    mle = alpha_from_accepted(k, 4)
    assert boot.alpha == pytest.approx(mle.alpha)
    assert boot.ci_low < boot.alpha < boot.ci_high
    assert boot.half_width > 1.3 * mle.half_width
    # the bootstrap interval covers the pooled truth: the trial-weighted mean of prompt alphas
    assert boot.ci_low <= float(np.mean(prompt_alpha)) + 0.02 and boot.ci_high >= float(np.mean(prompt_alpha)) - 0.02
    # reproducible with the same generator seed
    again = alpha_bootstrap(k, 4, grp, np.random.default_rng(0), n_resamples=1500)
    assert (again.ci_low, again.ci_high) == (boot.ci_low, boot.ci_high)


def test_bootstrap_degenerate_and_invalid():
    k = np.full(20, 3)
    est = alpha_bootstrap(k, 3, np.repeat([0, 1], 10), np.random.default_rng(0))
    assert est.alpha == 1.0 and est.ci_low == est.ci_high == 1.0
    with pytest.raises(ValueError, match="rng"):
        alpha_bootstrap(k, 3, np.repeat([0, 1], 10), 0)
    with pytest.raises(ValueError, match="groups"):
        alpha_bootstrap(k, 3, [0, 1], np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least 2 prompts"):
        alpha_bootstrap(k, 3, np.zeros(20), np.random.default_rng(0))


def test_mean_tokens_single_gamma_inverts_expected_tokens():
    est = alpha_from_mean_tokens(float(expected_tokens(0.8, 4)), 4, 1000)
    assert est.alpha == pytest.approx(0.8, abs=1e-10)
    rng = np.random.default_rng(5)
    k = simulate(rng, 0.66, 3, 4000)
    est = alpha_from_mean_tokens((k + 1).mean(), 3, k.size)
    assert est.ci_low <= 0.66 <= est.ci_high
    # delta-method SE is never smaller than the MLE's (the mean discards information)
    assert est.se >= alpha_from_accepted(k, 3).se * 0.999


def test_mean_tokens_several_gammas_least_squares():
    rng = np.random.default_rng(9)
    gammas = [2, 4, 7]
    means = [(simulate(rng, 0.58, g, 3000) + 1).mean() for g in gammas]
    est = alpha_from_mean_tokens(means, gammas, [3000, 3000, 3000])
    assert est.method == "least_squares_mean_tokens"
    assert est.ci_low <= 0.58 <= est.ci_high
    # with explicit SEs too
    est2 = alpha_from_mean_tokens(means, gammas, 3000, mean_tokens_se=[0.01, 0.02, 0.03])
    assert abs(est2.alpha - 0.58) < 0.03


def test_mean_tokens_with_a_vanishing_standard_error_pin_alpha_without_a_warning():
    """A standard error so small that its square underflows (as one ulp of noise on sqrt can
    make the model's own variance near alpha = 1) is information near infinity: SE 0, quietly."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = alpha_from_mean_tokens(float(expected_tokens(0.7, 5)), 5, 100, mean_tokens_se=[1e-200])
    assert est.alpha == pytest.approx(0.7, abs=1e-9) and est.se == 0.0


def test_mean_tokens_coverage_single_gamma():
    rng = np.random.default_rng(21)
    hits = sum(
        (lambda e: e.ci_low <= 0.7 <= e.ci_high)(
            alpha_from_mean_tokens((simulate(rng, 0.7, 4, 200) + 1).mean(), 4, 200)
        )
        for _ in range(300)
    )
    assert stats.binomtest(hits, 300, 0.95).pvalue > 1e-3


def test_constant_alpha_test_accepts_constant_and_rejects_falling_alpha():
    rng = np.random.default_rng(13)
    flat = constant_alpha_test(simulate(rng, 0.7, 5, 3000), 5)
    assert not flat.rejects() and flat.dof == 4
    falling = constant_alpha_test(simulate(rng, [0.9, 0.8, 0.7, 0.6, 0.5], 5, 3000), 5)
    assert falling.rejects(1e-6)
    assert falling.rates[0] > falling.rates[-1]
    # the same test from per-position counters
    k = simulate(rng, [0.9, 0.8, 0.7, 0.6, 0.5], 5, 2000)
    trials, acc = position_counts(k, 5)
    a = constant_alpha_test(k, 5)
    b = constant_alpha_test(accepted_per_pos=acc, num_drafts=2000)
    assert a.statistic == pytest.approx(b.statistic) and a.p_value == pytest.approx(b.p_value)
    # null distribution: p-values under the null are roughly uniform -> rejection rate ~ 5 %
    rej = sum(constant_alpha_test(simulate(rng, 0.6, 4, 300), 4).rejects() for _ in range(300))
    assert stats.binomtest(rej, 300, 0.05).pvalue > 1e-3


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: alpha_from_accepted([1, -1], 3), "accepted"),
        (lambda: alpha_from_accepted([4], 3), "accepted must be <= gamma"),
        (lambda: alpha_from_accepted([], 3), "accepted is empty"),
        (lambda: alpha_from_accepted([1, 2], [3, 3, 3]), "gamma"),
        (lambda: alpha_from_accepted([1.5], 3), "whole numbers"),
        (lambda: alpha_from_accepted([0], 0), "nothing was drafted"),
        (lambda: alpha_from_accepted([1], 3, interval="exact"), "interval"),
        (lambda: alpha_from_accepted([1], 3, level=1.5), "level"),
        (lambda: alpha_from_position_counts([5, 3], 4), "accepted_per_pos\\[0\\] must be <= num_drafts"),
        (lambda: alpha_from_position_counts([3, 4], 5), "accepted_per_pos\\[1\\]=4 > accepted_per_pos\\[0\\]=3"),
        (lambda: alpha_from_position_counts([-1], 5), "accepted_per_pos"),
        (lambda: alpha_from_position_counts([], 5), "accepted_per_pos is empty"),
        (lambda: alpha_from_position_counts([1], 0), "num_drafts"),
        (lambda: alpha_from_mean_tokens(6.0, 4, 10), "mean_tokens must lie in"),
        (lambda: alpha_from_mean_tokens([], 4, 10), "mean_tokens is empty"),
        (lambda: alpha_from_mean_tokens(2.0, 4, -1), "n_iterations"),
        (lambda: alpha_from_mean_tokens([2.0, 2.5], [4, 5, 6], 10), "same length"),
        (lambda: constant_alpha_test(), "required"),
    ],
)
def test_invalid_counts_raise_naming_the_field(call, field):
    with pytest.raises(ValueError, match=field):
        call()


def test_estimate_is_frozen_and_row_like():
    est = alpha_from_accepted([1, 2, 3], 3)
    with pytest.raises(AttributeError):
        est.alpha = 0.5
    row = est.as_dict()
    assert row["half_width"] == pytest.approx((est.ci_high - est.ci_low) / 2)
