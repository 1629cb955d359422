"""Tests of sdsl.model.throughput: Eq. 1, the FLOP model, Eq. 9, the optimal draft length (closed form with
Lambert W against brute force over the whole domain) and the optimal draft size against the
paper's Tables 5 and 6 (values loaded from data/)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdsl import data
from sdsl.model.laws import BESIROGLU_2024, HOFFMANN_2022, PAPER_EQ5, perplexity
from sdsl.model.optimum import DraftOptimum, optimal_draft_size, throughput_curve
from sdsl.model.throughput import (
    expected_tokens,
    flops_per_iteration,
    optimal_gamma,
    optimal_tokens_per_flop,
    tokens_per_flop,
)

OPT13B_M = 12_853_473_280  # method notes s.6, models.csv


# --- brute force ----------------------------------------------------------------------------------


def log_h(g, alpha: float, r: float):
    """``ln[(1 - alpha**(g+1)) / (g + r)]`` = ``ln T + ln(2 N (1 - alpha))``: Eq. 9 up to a factor
    that does not depend on ``gamma``, in log space (no underflow for tiny alpha, no cancellation
    next to alpha = 1)."""
    g = np.asarray(g, dtype=float)
    with np.errstate(divide="ignore"):
        return np.log(-np.expm1((g + 1.0) * math.log(alpha))) - np.log(g + r)


def brute_gamma(alpha: float, r: float, points: int = 4001, rounds: int = 6) -> tuple[float, float]:
    """Dense search of the best real gamma >= 0: a log-spaced grid from 1e-12 to
    ``100 max(r, 1/-ln alpha)`` (beyond, T only falls: ``T <= 1/(2N(1-alpha)(g + r))``) plus
    gamma = 0, then six zooms of 401 points around the best. Returns (gamma, log_h(gamma))."""
    gmax = 100.0 * max(r, 1.0 / -math.log(alpha), 1.0)
    g = np.concatenate([[0.0], np.geomspace(1e-12, gmax, points)])
    v = log_h(g, alpha, r)
    k = int(np.argmax(v))
    for _ in range(rounds):
        g = np.linspace(g[max(k - 1, 0)], g[min(k + 1, g.size - 1)], 401)
        v = log_h(g, alpha, r)
        k = int(np.argmax(v))
    return float(g[k]), float(v[k])


def brute_integer_gamma(alpha: float, r: float) -> tuple[int, float]:
    """Exhaustive search over the integers 0, 1, 2, ... in chunks, stopping once no larger integer
    can win: ``h(g) < 1/(g + r)``, so every ``g`` with ``1/(g + r) <= best`` loses."""
    best_g, best_v, start, chunk = 0, -np.inf, 0, 1 << 20
    while True:
        g = np.arange(start, start + chunk, dtype=float)
        v = log_h(g, alpha, r)
        k = int(np.argmax(v))
        if v[k] > best_v:
            best_g, best_v = int(g[k]), float(v[k])
        start += chunk
        if -math.log(start + r) < best_v:
            return best_g, best_v


def check_against_brute(alpha: float, r: float, *, gamma_rtol: float = 1e-3) -> None:
    """The closed form is at least as good as the best brute-force gamma (T within 1e-13,
    relative) and, where T is not flat to double precision, lands at the same gamma."""
    gc = float(optimal_gamma(alpha, 1.0, r))
    assert np.isfinite(gc) and gc >= 0.0, (alpha, r, gc)
    gb, vb = brute_gamma(alpha, r)
    vc = float(log_h(gc, alpha, r))
    assert vc >= vb - 1e-13, (
        f"alpha={alpha!r} r={r!r}: closed form {gc!r} is worse than brute force {gb!r} (d ln T = {vc - vb:.3g})"
    )
    if abs(gc - gb) > gamma_rtol * max(1.0, gb):
        # a different gamma may only tie within rounding (T flat to double precision)
        assert abs(vc - vb) <= 1e-13, (alpha, r, gc, gb, vc - vb)


EDGE_ALPHAS = [
    1e-300,
    1e-100,
    1e-12,
    1e-6,
    1e-3,
    0.05,
    0.3,
    0.5,
    0.65,
    0.8,
    0.9,
    0.99,
    0.999,
    1 - 1e-6,
    1 - 1e-9,
    1 - 1e-12,
    float(np.nextafter(1.0, 0.0)),
]
EDGE_RATIOS = [1.0, 1 + 1e-12, 1 + 1e-6, 1.2, 1.5, 2.0, 10.0, 350.0, 1e4, 1e6, 1e8]


# --- Eq. 1: expected tokens -----------------------------------------------------------------------


def test_expected_tokens_known_values():
    assert expected_tokens(0.5, 1) == pytest.approx(1.5, rel=1e-15)
    assert expected_tokens(0.5, 2) == pytest.approx(1.75, rel=1e-15)
    assert expected_tokens(0.8, 4) == pytest.approx((1 - 0.8**5) / 0.2, rel=1e-14)
    for a in (0.1, 0.37, 0.9, 0.999):
        for g in range(0, 12):
            assert expected_tokens(a, g) == pytest.approx(sum(a**k for k in range(g + 1)), rel=1e-12)


def test_expected_tokens_limits():
    for g in (0.0, 0.5, 3.0, 17.0, 1e6):
        assert expected_tokens(1.0, g) == g + 1.0
        assert expected_tokens(1 - 1e-12, g) == pytest.approx(g + 1.0, rel=1e-6)
        # exactly 1 in exact arithmetic; the expm1/log1p of the closed form may round by an ulp
        assert expected_tokens(0.0, g) == pytest.approx(1.0, rel=4 * np.finfo(float).eps)
    for a in (0.0, 1e-300, 0.3, 0.999999, 1.0):
        assert expected_tokens(a, 0) == pytest.approx(1.0, rel=1e-15)


def test_expected_tokens_monotone_in_alpha_and_gamma():
    a = np.linspace(0, 1, 101)
    e = expected_tokens(a, 5.0)
    assert np.all(np.diff(e) > 0) and e[-1] == 6.0
    g = np.linspace(0, 50, 101)
    assert np.all(np.diff(expected_tokens(0.7, g)) > 0)
    assert expected_tokens(0.7, 1e9) == pytest.approx(1 / 0.3, rel=1e-12)


# --- FLOPs and Eq. 9 ------------------------------------------------------------------------------


def test_flops_and_tokens_per_flop():
    assert flops_per_iteration(1e8, 1e10, 4) == 2 * 1e8 * 4 + 2 * 1e10
    assert flops_per_iteration(3, 7, 0) == 14
    t = tokens_per_flop(0.6, 2e8, 7e10, 5)
    assert t == pytest.approx(expected_tokens(0.6, 5) / (2 * 2e8 * 5 + 2 * 7e10), rel=1e-15)
    # plain decoding: one token per target pass
    assert tokens_per_flop(0.6, 2e8, 7e10, 0) == pytest.approx(1 / (2 * 7e10), rel=1e-15)


# --- optimal gamma --------------------------------------------------------------------------------


def test_optimal_gamma_known_value():
    """Method notes s.3: alpha = 0.65, N = 2e8, M = 7e10 -> 10.72839 (closed form), 10.72841
    (their brute force)."""
    g = float(optimal_gamma(0.65, 2e8, 7e10))
    assert abs(g - 10.72839) <= 5e-6
    gb, _ = brute_gamma(0.65, 7e10 / 2e8)
    assert abs(gb - g) <= 2e-5
    assert abs(gb - 10.72841) <= 5e-5


def test_optimal_gamma_is_a_stationary_point():
    """dT/dgamma = 0 at gamma*, checked by central differences of Eq. 9."""
    for a, n, m in ((0.65, 2e8, 7e10), (0.8, 1e9, 1.3e10), (0.95, 1e8, 1e11)):
        g = float(optimal_gamma(a, n, m))
        h = 1e-4 * g
        d = (tokens_per_flop(a, n, m, g + h) - tokens_per_flop(a, n, m, g - h)) / (2 * h)
        assert abs(d) * g / tokens_per_flop(a, n, m, g) < 1e-6


@pytest.mark.parametrize("alpha", EDGE_ALPHAS)
def test_optimal_gamma_matches_brute_force_on_edges(alpha):
    """The whole domain 0 < alpha < 1, 1 <= M/N <= 1e8, including its corners: underflow of
    alpha**(M/N-1) (alpha tiny, ratio huge) and the branch point of W (alpha -> 1, M/N -> 1)."""
    for r in EDGE_RATIOS:
        check_against_brute(alpha, r)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    alpha=st.floats(min_value=1e-6, max_value=1 - 1e-6),
    log10_ratio=st.floats(min_value=0.0, max_value=8.0),
)
def test_optimal_gamma_matches_brute_force_hypothesis(alpha, log10_ratio):
    check_against_brute(alpha, 10.0**log10_ratio)


def test_optimal_gamma_near_branch_point():
    """alpha -> 1 with M/N -> 1: eps = (M/N - 1)(-ln alpha) is tiny and gamma* ~ sqrt(2 eps)/(-ln
    alpha) - 1. Regression for a failure where lambertw next to -1/e returned a wrong root or nan."""
    for a, r in ((1 - 1e-9, 1.2), (1 - 1e-9, 2.0), (1 - 1e-12, 10.0), (1 - 1e-6, 1 + 1e-12), (0.999, 1 + 1e-12)):
        g = float(optimal_gamma(a, 1.0, r))
        assert np.isfinite(g), (a, r)
        eps = (r - 1) * -math.log(a)
        u = math.sqrt(2 * eps)
        u -= (math.expm1(u) - u - eps) / math.expm1(u) if u > 1e-4 else 0.0
        expected = max(u / -math.log(a) - 1.0, 0.0)
        assert g == pytest.approx(expected, rel=1e-3, abs=1e-9), (a, r, g, expected)


def test_optimal_gamma_against_the_printed_formula_in_high_precision():
    """gamma* = (1 + W_{-1}(-alpha**(M/N - 1)/e))/ln(alpha) - M/N (method notes s.3) evaluated
    literally with 60-digit mpmath (no underflow, no cancellation at that precision) over the
    edges of the domain: the float implementation agrees to 1e-9."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    for a in EDGE_ALPHAS:
        for r in EDGE_RATIOS:
            am, rm = mpmath.mpf(a), mpmath.mpf(r)
            w = mpmath.lambertw(-mpmath.power(am, rm - 1) / mpmath.e, -1)
            ref = max(float((1 + mpmath.re(w)) / mpmath.log(am) - rm), 0.0)
            g = float(optimal_gamma(a, 1.0, r))
            assert abs(g - ref) <= 1e-9 * max(1.0, ref), (a, r, g, ref)


def test_gamma_zero_exactly_when_speculation_does_not_pay():
    """dT/dgamma at 0 has the sign of -alpha ln(alpha) r - (1 - alpha): speculation pays iff
    r > (1 - alpha) / (-alpha ln alpha); otherwise gamma* is exactly 0 and T = 1/(2M)."""
    rng = np.random.default_rng(20260225)
    alpha = rng.uniform(0.001, 0.999, 4000)
    threshold = (1 - alpha) / (-alpha * np.log(alpha))
    r = np.maximum(threshold * rng.uniform(0.5, 2.0, alpha.size), 1.0)
    g = optimal_gamma(alpha, 1.0, r)
    margin = np.abs(r / threshold - 1) > 1e-9
    assert np.all(g[(r < threshold) & margin] == 0.0)
    assert np.all(g[(r > threshold) & margin] > 0.0)
    m = 1e9
    t0 = optimal_tokens_per_flop(alpha[g == 0], m / r[g == 0], m)
    assert np.allclose(t0, 1 / (2 * m), rtol=1e-15, atol=0)
    # M/N = 1: never pays; tiny alpha: never pays
    assert np.all(optimal_gamma(np.linspace(0.01, 0.99, 99), 5.0, 5.0) == 0.0)
    assert optimal_gamma(1e-200, 1.0, 1e8) == 0.0


def test_no_nan_or_inf_anywhere_in_the_domain():
    alpha = np.array(EDGE_ALPHAS + list(np.linspace(0.01, 0.99, 25)))[:, None]
    ratio = np.concatenate([EDGE_RATIOS, np.geomspace(1, 1e8, 25)])[None, :]
    for n in (1.0, 1e8):
        m = ratio * n
        for integer in (False, True):
            g = optimal_gamma(alpha, n, m, integer=integer)
            assert g.shape == (alpha.size, ratio.size)
            assert np.all(np.isfinite(g)) and np.all(g >= 0), np.argwhere(~np.isfinite(g))
            t = optimal_tokens_per_flop(alpha, n, m, integer=integer)
            assert np.all(np.isfinite(t)) and np.all(t > 0)
            # gamma = 0 is always allowed, so the optimum is never below plain decoding
            assert np.all(t >= (1 - 1e-12) / (2 * m))


@pytest.mark.parametrize(
    "alpha, r",
    [
        (0.65, 350.0),
        (0.5, 1.2),
        (0.5, 2.0),
        (0.8, 10.0),
        (0.9, 1e4),
        (0.99, 1e8),
        (1e-6, 1e8),
        (0.3, 1e8),
        (0.999, 37.0),
        (0.999999, 1e6),
        (0.75, 1.0),
        (0.6, 64.9),
    ],
)
def test_integer_gamma_is_the_best_integer(alpha, r):
    gi = float(optimal_gamma(alpha, 1.0, r, integer=True))
    assert gi == int(gi)
    gb, vb = brute_integer_gamma(alpha, r)
    assert gi == gb or log_h(gi, alpha, r) >= vb - 1e-15 * abs(vb)


@settings(max_examples=40, deadline=None)
@given(
    alpha=st.floats(min_value=1e-6, max_value=0.999),
    log10_ratio=st.floats(min_value=0.0, max_value=8.0),
)
def test_integer_gamma_hypothesis(alpha, log10_ratio):
    r = 10.0**log10_ratio
    gi = float(optimal_gamma(alpha, 1.0, r, integer=True))
    gb, vb = brute_integer_gamma(alpha, r)
    assert gi == gb or log_h(gi, alpha, r) >= vb - 1e-15 * abs(vb), (alpha, r, gi, gb)


def test_broadcasting():
    alpha = np.array([0.5, 0.7, 0.9])[:, None]
    n = np.array([1e7, 1e8, 1e9, 5e9])
    m = 1.3e10
    g = optimal_gamma(alpha, n, m)
    assert g.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            assert g[i, j] == pytest.approx(float(optimal_gamma(alpha[i, 0], n[j], m)), rel=1e-14)
    assert tokens_per_flop(alpha, n, m, g).shape == (3, 4)
    assert expected_tokens(alpha, np.arange(4)).shape == (3, 4)
    assert optimal_tokens_per_flop(alpha, n, m, integer=True).shape == (3, 4)
    assert np.ndim(optimal_gamma(0.6, 1e8, 1e10)) == 0


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: optimal_gamma(0.0, 1e8, 1e10), "alpha"),
        (lambda: optimal_gamma(1.0, 1e8, 1e10), "alpha"),
        (lambda: optimal_gamma(-0.2, 1e8, 1e10), "alpha"),
        (lambda: optimal_gamma(float("nan"), 1e8, 1e10), "alpha"),
        (lambda: optimal_gamma("high", 1e8, 1e10), "alpha"),
        (lambda: optimal_gamma([0.5, 1.5], 1e8, 1e10), "alpha"),
        (lambda: optimal_gamma(0.5, 0.0, 1e10), "n"),
        (lambda: optimal_gamma(0.5, -1e8, 1e10), "n"),
        (lambda: optimal_gamma(0.5, 1e8, float("inf")), "m"),
        (lambda: optimal_gamma(0.5, 1e10, 1e8), "m/n"),
        (lambda: expected_tokens(1.2, 3), "alpha"),
        (lambda: expected_tokens(0.5, -1), "gamma"),
        (lambda: flops_per_iteration(0, 1e9, 2), "n"),
        (lambda: flops_per_iteration(1e8, -1e9, 2), "m"),
        (lambda: flops_per_iteration(1e8, 1e9, -2), "gamma"),
        (lambda: tokens_per_flop(0.5, 1e8, 1e9, -1), "gamma"),
        (lambda: optimal_draft_size(-1.0, 1e11, 1e12), "m"),
        (lambda: optimal_draft_size(1e10, 0.0, 1e12), "d_draft"),
        (lambda: optimal_draft_size(1e10, 1e11, -1.0), "d_target"),
        (lambda: optimal_draft_size(1e10, 1e11, 1e12, n_bounds=(1e9, 1e8)), "n_bounds"),
        (lambda: optimal_draft_size(1e10, 1e11, 1e12, n_bounds=(1e8, 2e10)), "n_bounds"),
        (lambda: optimal_draft_size(1e10, 1e11, 1e12, constants="chinchilla3"), "besiroglu2024"),
        (lambda: throughput_curve([1e8, 2e10], 1e10, 1e11, 1e12), "n"),
    ],
)
def test_invalid_arguments_raise_value_error_naming_the_argument(call, argument):
    with pytest.raises(ValueError) as info:
        call()
    assert argument in str(info.value)


# --- the optimal draft size (Tables 5 and 6) ------------------------------------------------------


def test_table5_reproduced():
    """Six N* within 0.1 % and T(N*) within 0.5 % of the paper's Table 5 (D and D' from the
    table's columns; Besiroglu et al. 2024 constants, Table 3 coefficients, continuous gamma)."""
    t5 = data.load("paper_table5")
    for row in t5.itertuples():
        opt = optimal_draft_size(row.m, row.d_draft, row.d_target)
        assert opt.n_star == pytest.approx(row.n_star, rel=1e-3), (row.target, row.draft_family)
        assert opt.tokens_per_flop == pytest.approx(row.tokens_per_flop, rel=5e-3), (row.target, row.draft_family)
        assert 0 < opt.alpha < 1 and opt.gamma_star > 0
        assert opt.m == row.m


def test_n_star_is_the_argmax_on_a_dense_grid():
    """N* from the bounded search equals the argmax of T over a dense grid of N (step 5 parameters)
    around it, for Qwen1.5-14B with OPT drafts. (The paper prints 124,039,820.3; ours is
    1.24028e8, 9e-5 lower: T is flat there, T(paper N*) is below T(N*) by only 4e-10.)"""
    row = data.load("paper_table5").iloc[0]
    opt = optimal_draft_size(row.m, row.d_draft, row.d_target)
    n = np.arange(opt.n_star - 5e5, opt.n_star + 5e5, 5.0)
    t = throughput_curve(n, row.m, row.d_draft, row.d_target)["tokens_per_flop"]
    assert abs(n[np.argmax(t)] - opt.n_star) <= 10.0
    assert opt.tokens_per_flop >= t.max() * (1 - 1e-13)
    assert opt.n_star == pytest.approx(row.n_star, rel=1e-4)


def test_n_star_is_a_maximum_of_the_throughput_curve():
    row = data.load("paper_table5").iloc[3]
    opt = optimal_draft_size(row.m, row.d_draft, row.d_target)
    n = opt.n_star * np.array([0.5, 0.9, 0.99, 0.999, 1.001, 1.01, 1.1, 2.0])
    curve = throughput_curve(n, row.m, row.d_draft, row.d_target)
    assert np.all(curve["tokens_per_flop"] <= opt.tokens_per_flop * (1 + 1e-12))
    assert set(curve) == {"n", "alpha", "gamma", "tokens_per_flop"}


def test_opt13b_continuous_and_integer():
    """OPT-13B target and OPT drafts (D = D' = 180e9): N* ~ 117.3M (continuous gamma) and ~ 118.0M
    (integer gamma; method notes s.3)."""
    m = data.load("models").set_index("model").loc["OPT-13B"]
    assert m.params == OPT13B_M
    cont = optimal_draft_size(m.params, m.tokens, m.tokens)
    integ = optimal_draft_size(m.params, m.tokens, m.tokens, integer=True)
    assert round(cont.n_star / 1e6, 1) == 117.3
    assert round(integ.n_star / 1e6, 1) == 118.0
    assert integ.gamma_star == int(integ.gamma_star)
    assert integ.tokens_per_flop <= cont.tokens_per_flop


def test_table6_distances_to_every_printed_digit():
    """Table 6: |N - N*|/M for an OPT-13B target (D' = 180e9), N* with each draft family's own
    tokens D, equals the printed distance to every printed digit; N* rounds to the printed 117M
    (OPT) and 109M (Qwen1.5)."""
    t6, tol = data.load("paper_table6"), data.printed_tolerance("paper_table6")
    models = data.load("models").set_index("model")
    family_tokens = models[models.role == "draft"].groupby("family")["tokens"].first()
    for i, row in t6.iterrows():
        opt = optimal_draft_size(OPT13B_M, family_tokens[row.draft_family], 180e9)
        assert f"{round(opt.n_star / 1e6)}M" == row.n_star_printed
        dist = abs(models.loc[row.draft, "params"] - opt.n_star) / OPT13B_M
        assert abs(dist - row.distance) <= tol.loc[i, "distance"], (row.draft, dist, row.distance)


def test_draft_optimum_fields():
    opt = optimal_draft_size(OPT13B_M, 180e9, 180e9)
    assert isinstance(opt, DraftOptimum)
    assert opt.speedup == pytest.approx(opt.tokens_per_flop * 2 * OPT13B_M, rel=1e-15)
    assert opt.speedup > 1
    d = opt.as_dict()
    assert set(d) == {"n_star", "gamma_star", "alpha", "tokens_per_flop", "m", "speedup"}
    assert opt.gamma_star == pytest.approx(float(optimal_gamma(opt.alpha, opt.n_star, OPT13B_M)), rel=1e-12)


def test_hoffmann_constants_give_smaller_n_star():
    """Method notes s.4: the original Hoffmann et al. 2022 constants give N* 4 to 10 % too low."""
    t5 = data.load("paper_table5")
    for row in t5.itertuples():
        opt = optimal_draft_size(row.m, row.d_draft, row.d_target, constants=HOFFMANN_2022)
        assert 0.88 < opt.n_star / row.n_star < 0.97, (row.target, row.draft_family, opt.n_star / row.n_star)


def test_throughput_curve_rejects_alpha_outside_unit_interval():
    """Far from the data the Eq. 5 plane leaves (0, 1): the error says where and what to do."""
    y = float(perplexity(1e10, 1e12, BESIROGLU_2024))
    x = float(perplexity(1e3, 1e9, BESIROGLU_2024))
    assert PAPER_EQ5.A * x + PAPER_EQ5.B * y + PAPER_EQ5.C < 0  # a 1000-parameter draft
    with pytest.raises(ValueError, match=r"leaves \(0, 1\).*narrow the range"):
        throughput_curve([1e3, 1e8], 1e10, 1e9, 1e12)


def test_scalar_path_of_log_t_matches_the_array_path():
    """The one-float path (math) runs the same starts and Newton steps as the array path (numpy),
    across the three regimes (tiny eps near the branch point, the Lambert-W start, the asymptotic
    start). The two agree at the accuracy the root allows, not bit for bit: libm's expm1 and numpy's
    vector expm1 (AVX-512 where the CPU has it) differ by a few ulp, and the root ``u`` of
    ``expm1(u) - u = eps`` has relative condition ``eps / (u expm1(u)) <= 1/2``, so an error of a few
    ulp in the residual moves ``u`` by at most as many ulp; 64 ulp leaves room for the final
    Newton step's own rounding (1.4e-14 relative, far below any physical use of ``u``)."""
    from sdsl.model.throughput import _log_t

    eps = np.concatenate(
        [np.geomspace(1e-12, 1e-3, 60), np.geomspace(1e-3, 700, 400), np.geomspace(700, 1e6, 60), [0.0, -1.0]]
    )
    vector = _log_t(eps)
    scalar = np.array([_log_t(np.asarray(e)) for e in eps])
    np.testing.assert_allclose(scalar, vector, rtol=64 * np.finfo(float).eps, atol=0)
    assert np.shape(_log_t(np.asarray(0.5))) == () and np.shape(_log_t(np.array([0.5]))) == (1,)
