"""The Chinchilla loss-law fit recovers known constants from seeded synthetic runs."""

from __future__ import annotations

import numpy as np
import pytest

from sdsl.experiment import lossfit

TRUE = {"E": 1.9, "A": 60.0, "B": 900.0, "a": 0.36, "b": 0.33}


def _synthetic(rng, noise):
    n = np.repeat(np.geomspace(3e4, 3e6, 5), 4)
    d = np.tile(np.geomspace(3e5, 3e7, 4), 5)
    law = TRUE["E"] + TRUE["A"] * n ** -TRUE["a"] + TRUE["B"] * d ** -TRUE["b"]
    return n, d, law * np.exp(rng.normal(0.0, noise, n.size))


def test_grid_is_hoffmanns():
    g = lossfit.hoffmann_grid()
    assert g.shape == (4500, 5)
    assert set(np.round(g[:, 2], 6)) == {-1.0, -0.5, 0.0, 0.5, 1.0}


def test_recovers_known_constants_from_seeded_synthetic_runs():
    n, d, loss = _synthetic(np.random.default_rng(7), 5e-4)
    fit = lossfit.fit_loss_law(n, d, loss)
    v = fit.values
    # tolerance: 0.05 % log-loss noise on 20 runs spanning 2 decades of N and D moves the
    # exponents by about 0.01 (seen across seeds); 0.03 leaves room and still fails a wrong fit
    assert v["a"] == pytest.approx(TRUE["a"], abs=0.03)
    assert v["b"] == pytest.approx(TRUE["b"], abs=0.03)
    assert v["E"] == pytest.approx(TRUE["E"], rel=0.03)
    assert np.max(np.abs(fit.predict(n, d) / loss - 1)) < 3e-3


def test_exact_data_are_fitted_exactly():
    n, d, loss = _synthetic(np.random.default_rng(0), 0.0)
    fit = lossfit.fit_loss_law(n, d, loss, starts=32)
    assert np.max(np.abs(fit.predict(n, d) / loss - 1)) < 1e-5
    for k in ("a", "b"):
        assert fit.values[k] == pytest.approx(TRUE[k], abs=2e-3)


def test_bootstrap_intervals_cover_the_truth():
    n, d, loss = _synthetic(np.random.default_rng(3), 5e-4)
    fit = lossfit.bootstrap_loss_law(
        lossfit.fit_loss_law(n, d, loss), n, d, loss, np.random.default_rng(1), n_resamples=25, starts=2
    )
    t = fit.intervals().set_index("parameter")
    assert fit.boot.shape == (25, 5)
    for k in ("a", "b", "E"):
        assert t.loc[k, "ci_lower"] <= t.loc[k, "estimate"] <= t.loc[k, "ci_upper"]
        assert t.loc[k, "ci_lower"] - 0.02 <= TRUE[k] <= t.loc[k, "ci_upper"] + 0.02


def test_constants_are_valid_loss_constants():
    n, d, loss = _synthetic(np.random.default_rng(1), 5e-4)
    c = lossfit.fit_loss_law(n, d, loss, starts=8).constants()
    assert c.a > 0 and c.b > 0 and c.E >= 0


@pytest.mark.parametrize(
    "bad, match",
    [
        ({"n": [1e5] * 4, "d": [1e6] * 4, "loss": [3.0] * 4}, "at least 5 runs"),
        ({"n": [1e5, -1, 1, 1, 1], "d": [1e6] * 5, "loss": [3.0] * 5}, "n \\(parameters\\) must be > 0"),
    ],
)
def test_bad_input_is_named(bad, match):
    with pytest.raises(ValueError, match=match):
        lossfit.fit_loss_law(bad["n"], bad["d"], bad["loss"])
