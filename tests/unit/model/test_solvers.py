"""sdsl.model.solvers: the numpy-only replacements of scipy's bounded minimiser and Lambert-W start."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.special import lambertw

from sdsl import theory
from sdsl.model.solvers import minimize_bounded, w_minus1_log_start


def _functions(rng):
    c, w = rng.uniform(-5, 5), rng.uniform(0.1, 3)
    return [lambda x: (x - c) ** 2, lambda x: -np.exp(-((x - c) ** 2) / w), lambda x: np.cos(x * w) + 0.1 * x,
            lambda x: abs(x - c) ** 1.5 + np.sin(3 * x)]


def test_minimize_bounded_takes_scipys_steps_bit_for_bit():
    """Same point and same number of evaluations as scipy's method='bounded' on 400 seeded problems
    (smooth, flat-bottomed, multimodal, non-smooth): the planning path kept scipy's answers."""
    rng = np.random.default_rng(0)
    for _ in range(100):
        lo, hi = np.sort(rng.uniform(-6, 6, 2))
        hi = max(hi, lo + 1e-2)
        xatol = 10 ** rng.uniform(-12, -3)
        for f in _functions(rng):
            ref = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": xatol})
            x, fx, nfev = minimize_bounded(f, lo, hi, xatol)
            assert (x, nfev) == (ref.x, ref.nfev)
            assert fx == ref.fun


def test_minimize_bounded_rejects_bad_brackets():
    with pytest.raises(ValueError, match="low < high"):
        minimize_bounded(abs, 1.0, 1.0)
    with pytest.raises(ValueError, match="xatol must be > 0"):
        minimize_bounded(abs, 0.0, 1.0, xatol=0)


def test_start_lies_above_the_root_and_newton_reaches_lambertw():
    eps = np.geomspace(1e-6, 700, 20001)
    u0 = w_minus1_log_start(eps)
    assert np.all(np.expm1(u0) - u0 >= eps * (1 - 1e-12))  # f(u0) >= 0: at or above the root
    u = theory._log_t(eps)
    ref = np.log(-lambertw(-np.exp(-1.0 - eps), k=-1).real)
    # scipy's W_{-1} loses digits next to the branch point (small eps): compare where it is accurate
    ok = eps > 1e-2
    assert np.max(np.abs(u[ok] / ref[ok] - 1)) < 1e-12


def test_optimal_gamma_still_matches_brute_force():
    """Eq. 9's gamma* after the replacement, against a dense grid (method notes s.3 example)."""
    g = float(theory.optimal_gamma(0.65, 2e8, 7e10))
    grid = np.linspace(10.5, 11.0, 500001)
    t = theory.tokens_per_flop(0.65, 2e8, 7e10, grid)
    assert g == pytest.approx(grid[np.argmax(t)], abs=2e-6)
    assert g == pytest.approx(10.72839, abs=1e-5)
