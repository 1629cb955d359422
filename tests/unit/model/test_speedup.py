"""sdsl.model.speedup: Leviathan et al. (2023) Theorem 3.8 against brute force and simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdsl.model import speedup as S
from sdsl.model.throughput import optimal_tokens_per_flop


def test_theorem_38_formula_by_hand():
    # alpha 0.8, gamma 5, c 0.05: (1 - 0.8^6) / (0.2 * 1.25)
    assert S.expected_speedup(0.8, 5, 0.05) == pytest.approx((1 - 0.8**6) / (0.2 * 1.25), rel=1e-15)
    assert S.expected_speedup(0.5, 0, 0.3) == pytest.approx(1.0)  # gamma 0 is plain decoding
    assert S.expected_speedup(1.0, 3, 0.0) == pytest.approx(4.0)  # alpha 1: gamma + 1 tokens per step


def test_theorem_38_against_a_simulation_of_speculative_sampling():
    """Seeded simulation: per iteration the draft's gamma tokens are accepted one by one with
    probability alpha until the first rejection, plus one token from the target; the iteration costs
    gamma c + v. Tokens per unit time over plain decoding's 1 agrees with Theorem 3.8 within 4
    standard errors of the simulation."""
    rng = np.random.default_rng(7)
    for alpha, gamma, c, k in ((0.6, 3, 0.1, 0.0), (0.85, 7, 0.02, 0.01), (0.3, 1, 0.4, 0.0)):
        iters = 200_000
        u = rng.random((iters, gamma))
        accepted = np.argmax(np.concatenate([u >= alpha, np.ones((iters, 1), bool)], axis=1), axis=1)
        tokens = accepted + 1.0
        per_time = tokens / (gamma * c + 1 + k * gamma)
        se = per_time.std() / math.sqrt(iters)
        assert abs(per_time.mean() - S.expected_speedup(alpha, gamma, c, 1 + k * gamma)) < 4 * se


@pytest.mark.parametrize("alpha", [0.05, 0.3, 0.6, 0.8, 0.95, 0.995])
@pytest.mark.parametrize("c", [0.0005, 0.01, 0.1, 0.5, 0.9])
@pytest.mark.parametrize("k", [0.0, 0.02])
def test_best_gamma_against_brute_force(alpha, c, k):
    gc, gi = S.best_gamma(alpha, c, k)
    ints = np.arange(0, 20001)
    s_int = S.expected_speedup(alpha, ints, c, 1 + k * ints)
    assert gi == int(np.argmax(s_int))
    if c + k < 1 and gc > 0:
        grid = np.linspace(max(gc - 1, 0), gc + 1, 200001)
        s = S.expected_speedup(alpha, grid, c, 1 + k * grid)
        assert gc == pytest.approx(grid[np.argmax(s)], abs=2e-5)


def test_best_gamma_is_the_papers_closed_form_at_n_over_m():
    """Theorem 3.8 with c = N/M is the paper's Eq. 9 (tokens per FLOP times 2M)."""
    n, m, a = 2e8, 7e10, 0.65
    gc, gi = S.best_gamma(a, n / m)
    assert gc == pytest.approx(10.72839, abs=1e-5)  # method notes s.3
    assert float(S.expected_speedup(a, gc, n / m)) == pytest.approx(float(optimal_tokens_per_flop(a, n, m)) * 2 * m)


def test_free_and_too_expensive_drafts():
    assert S.best_gamma(0.7, 0.0) == (math.inf, S.DEFAULT_GAMMA_MAX)
    assert S.best_gamma(0.7, 1.2) == (0.0, 0)


@pytest.mark.parametrize("c, k", [(0.05, 0.0), (0.3, 0.0), (0.1, 0.05), (0.0, 0.0), (0.6, 0.3)])
def test_break_even_alpha_is_c_plus_k_and_brute_force_agrees(c, k):
    """Corollary 3.9: speculation pays for some gamma exactly when alpha > c (+ k with a measured
    verification); a grid of alpha and gamma finds the same edge."""
    be = S.break_even_alpha(c, verify_slope=k)
    assert be == pytest.approx(c + k, abs=1e-12)
    alphas = np.linspace(0.001, 0.999, 999)
    g = np.arange(1, 65)
    s = S.expected_speedup(alphas[:, None], g[None, :], c, 1 + k * g[None, :])
    pays = (s > 1 + 1e-12).any(axis=1)
    first = alphas[np.argmax(pays)] if pays.any() else 1.0
    assert first == pytest.approx(c + k, abs=1.5e-3)


def test_break_even_with_a_measured_verification_curve():
    """A non-affine verification (cheap up to 4 tokens, then linear): brute force over alpha."""
    v = np.array([1.0, 1.0, 1.0, 1.6, 2.2, 2.8])  # v(gamma) for gamma = 1 .. 6
    be = S.break_even_alpha(0.2, verify_cost=v)
    alphas = np.linspace(0, 0.999, 99901)
    g = np.arange(1, 7)
    s = S.expected_speedup(alphas[:, None], g[None, :], 0.2, v[None, :])
    assert be == pytest.approx(alphas[np.argmax((s >= 1).any(axis=1))], abs=2e-5)
    assert S.break_even_alpha(2.0) == 1.0


def test_cost_from_latencies():
    c, k = S.cost_from_latencies(0.002, 0.02, 0.024, 5)
    assert c == pytest.approx(0.1) and k == pytest.approx(0.05)
    assert S.cost_from_latencies(1, 4) == (0.25, 0.0)
    with pytest.raises(ValueError, match="verify_tokens must be an integer >= 2"):
        S.cost_from_latencies(1, 4, 5, 1)
    with pytest.raises(ValueError, match="below t_target"):
        S.cost_from_latencies(1, 4, 3, 4)
    with pytest.raises(ValueError, match="t_verify needs verify_tokens"):
        S.cost_from_latencies(1, 4, 5)


def test_report_and_bad_input():
    r = S.speedup_report(0.8, 0.05, 5)
    assert r.speedup == pytest.approx(2.95142, abs=1e-5)
    assert (r.gamma_integer, round(r.speedup_at_best, 4), r.break_even_alpha) == (8, 3.0921, pytest.approx(0.05))
    with pytest.raises(ValueError, match="alpha"):
        S.speedup_report(1.2, 0.05)
    with pytest.raises(ValueError, match="gamma must be an integer >= 0"):
        S.speedup_report(0.5, 0.1, 2.5)
    with pytest.raises(ValueError, match="c \\(cost coefficient"):
        S.expected_speedup(0.5, 2, -1)
