"""The one N* kernel (sdsl.model.optimum) against brute force, under noise, and at its edges.

Tolerances, and why:
* against the dense-grid brute force: half a grid step of the reference (200,001 log-spaced points
  over up to 3.5 decades: 4e-5 relative in N), since the reference is the grid argmax;
* under one-ulp noise on every evaluation: 1e-10 relative, the precision the kernel claims (a
  minimiser of -T reaches only ~1e-8 there, which is what made N* depend on the CPU).
"""

from __future__ import annotations

import numpy as np
import pytest

import sdsl
from sdsl.model import optimum as O
from sdsl.model.laws import PAPER_EQ5, AcceptanceCoefficients


def _configs(seed: int, k: int):
    rng = np.random.default_rng(seed)
    m = 10 ** rng.uniform(np.log10(13e9), np.log10(110e9), k)
    d = 10 ** rng.uniform(11.5, 13.5, k)
    p = 10 ** rng.uniform(11.5, 13.5, k)
    return m, d, p


@pytest.mark.parametrize("integer", [False, True])
def test_solve_matches_brute_force(integer):
    m, d, p = _configs(1, 12)
    alpha = O.plane_alpha(m, d, p)
    lo, hi = np.full(m.size, 1e7), m
    o = O.solve(alpha, m, O.log_grid(lo, hi, 97), integer)
    assert o.interior.all()
    ref = O.brute_force(alpha, m, O.log_grid(lo, hi, 200_001), integer)["n_star"]
    step = np.log(hi / lo) / 200_000
    assert np.all(np.abs(np.log(o.n_star / ref)) <= step)
    # and T there is at least as large as anywhere on the dense grid
    t_ref = O.scaled_throughput(alpha(ref, np.arange(m.size)), ref, m, integer)[0] / m
    assert np.all(o.tokens_per_flop >= t_ref * (1 - 1e-12))


def test_n_star_is_insensitive_to_one_ulp_noise():
    m, d, p = _configs(2, 8)
    clean = O.plane_alpha(m, d, p)
    rng = np.random.default_rng(3)

    def noisy(n, rows):
        a = clean(n, rows)
        return np.nextafter(a, np.where(rng.random(np.shape(a)) < 0.5, -np.inf, np.inf))

    grid = O.log_grid(np.full(m.size, 1e7), m, 97)
    a, b = O.solve(clean, m, grid), O.solve(noisy, m, grid)
    assert np.max(np.abs(b.n_star / a.n_star - 1)) < 1e-10


def test_scalar_call_is_a_one_row_call_and_reproduces_table5():
    o = sdsl.optimal_draft_size(14_167_290_880, 180e9, 3e12)
    many = O.optimal_draft_sizes([14_167_290_880], 180e9, 3e12)
    assert o.n_star == many.n_star[0] and o.interior
    # D' = 4e12 reproduces the printed N* (method notes, section 8)
    assert sdsl.optimal_draft_size(14_167_290_880, 180e9, 4e12).n_star == pytest.approx(124_039_820.3, rel=1e-6)


def test_edges_are_reported_not_returned():
    m = np.array([1e10])
    low = O.solve(lambda n, r: np.full(np.shape(n), 0.5), m, O.log_grid([1e7], m, 50))
    assert np.isnan(low.n_star[0]) and "lower end" in low.status[0]
    invalid = O.solve(lambda n, r: np.full(np.shape(n), 1.2), m, O.log_grid([1e7], m, 50))
    assert "outside (0, 1) on the whole search range" in invalid.status[0]
    # alpha above 1 from some N on: the largest valid T sits where alpha leaves (0, 1)
    rising = O.solve(lambda n, r: 0.5 + 0.5 * np.log10(n / 1e7), m, O.log_grid([1e7], m, 50))
    assert "alpha leaves (0, 1) just above it" in rising.status[0]
    o = sdsl.optimal_draft_size(70.6e9, 15e12, 15e12, n_bounds=(1e9, 3e10))
    assert not o.interior and "lower end" in o.status and o.n_star == 1e9


def test_per_row_coefficients_drive_the_bootstrap():
    m = np.full(3, 70.6e9)
    coef = np.array([[PAPER_EQ5.A, PAPER_EQ5.B, PAPER_EQ5.C], [-0.007, 0.0129, 0.64], [-0.006, 0.013, 0.65]])
    o = O.solve(O.plane_alpha(m, 15e12, 15e12, "besiroglu2024", coef), m, O.log_grid(np.full(3, 1e7), m / 2, 161))
    for i, c in enumerate(coef):
        ref = sdsl.optimal_draft_size(
            70.6e9, 15e12, 15e12, coefficients=AcceptanceCoefficients(*c), n_bounds=(1e7, 70.6e9 / 2)
        )
        assert o.n_star[i] == pytest.approx(ref.n_star, rel=1e-9)


def test_bad_grids_are_refused():
    with pytest.raises(ValueError, match="at least 3"):
        O.solve(O.plane_alpha([1e10], 1e12, 1e12), [1e10], [1e8, 1e9])
    with pytest.raises(ValueError, match="one row per configuration"):
        O.optimal_draft_sizes([13e9, 20e9], 1e12, 1e12, np.ones((3, 5)))
    with pytest.raises(ValueError, match="step"):
        O.solve(O.plane_alpha([1e10], 1e12, 1e12), [1e10], O.log_grid([1e7], [1e10], 10), step=0.0)
