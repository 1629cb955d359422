"""Least squares in a well-conditioned form (sdsl.model.fitting)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.regression.linear_model import OLS

from sdsl.model.fitting import fit_power_law, ols


def _table8_design(seed: int = 0):
    rng = np.random.default_rng(seed)
    m = rng.choice(np.geomspace(13e9, 110e9, 8), 288)
    d = rng.choice(np.geomspace(1e12, 1e14, 6), 288)
    p = rng.choice(np.geomspace(1e12, 1e14, 6), 288)
    return pd.DataFrame({"mu": 1.0, "M0": 1 / m, "g": np.log(d), "g_prime": np.log(p)})


def test_ill_conditioned_design_is_solved_to_full_precision():
    """Table 8's design (condition number ~1e12): exact data y = X beta must give beta back. The
    design as given loses ~12 of 16 digits; the centred, scaled solve keeps them."""
    x = _table8_design()
    beta = np.array([4.9e-3, 7.2e7, -6.1e-5, 1.2e-6])
    y = x.to_numpy() @ beta
    fit = ols(y, x, cov_type="HC3")
    assert fit.condition > 1e11 and fit.condition_solved < 10
    assert np.allclose(fit.params.to_numpy(), beta, rtol=1e-10, atol=0)
    naive = OLS(y, x).fit().params.to_numpy()
    assert np.max(np.abs(naive / beta - 1)) > 1e-9  # the failure the reparameterisation prevents


def test_matches_statsmodels_where_the_design_is_well_conditioned():
    rng = np.random.default_rng(4)
    x = pd.DataFrame({"const": 1.0, "a": rng.normal(size=40), "b": rng.normal(size=40)})
    y = 1 + 2 * x["a"] - x["b"] + rng.normal(scale=0.3, size=40)
    for cov in ("nonrobust", "HC3"):
        ours = ols(y, x, cov_type=cov)
        ref = OLS(y, x).fit(cov_type=cov)
        assert np.allclose(ours.params, ref.params, rtol=1e-12)
        assert np.allclose(ours.bse, ref.bse, rtol=1e-10)
        assert np.allclose(ours.conf_int(0.05), ref.conf_int(0.05), rtol=1e-10)
        assert ours.rsquared == pytest.approx(ref.rsquared, rel=1e-12)


def test_recovers_known_coefficients_from_simulated_data():
    rng = np.random.default_rng(7)
    x = pd.DataFrame({"Intercept": 1.0, "x": rng.uniform(10, 30, 500), "y": rng.uniform(8, 15, 500)})
    beta = np.array([0.64, -0.0067, 0.013])
    y = x.to_numpy() @ beta + rng.normal(scale=0.01, size=500)
    fit = ols(y, x)
    z = (fit.params.to_numpy() - beta) / fit.bse.to_numpy()
    assert np.all(np.abs(z) < 4)


def test_power_law_is_polished_to_the_stationary_point():
    x = np.array([12.6, 15.1, 18.3, 22.0, 29.8])
    y = 1.38 * x**-0.247
    fit = fit_power_law(x, y)
    assert np.allclose(fit.p, [1.38, -0.247], rtol=1e-13)
    noisy = y + np.array([0.01, -0.004, 0.003, -0.008, 0.005])
    p = fit_power_law(x, noisy).p
    # the gradient of the sum of squares vanishes there, to rounding (|J| |r| eps ~ 1e-17; a
    # Levenberg-Marquardt stop on the sum of squares leaves it near sqrt(eps) |J| |r| ~ 3e-10)
    r = noisy - p[0] * x ** p[1]
    j = np.column_stack([x ** p[1], p[0] * x ** p[1] * np.log(x)])
    assert np.max(np.abs(j.T @ r)) < 1e-12 * np.linalg.norm(j) * np.linalg.norm(r)


def test_power_law_refuses_bad_data():
    with pytest.raises(ValueError, match="at least 3"):
        fit_power_law([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="x > 0 and y > 0"):
        fit_power_law([1.0, 2.0, 3.0], [1.0, -2.0, 1.0])
