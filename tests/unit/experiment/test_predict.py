"""The prediction of N* from calibration runs and the empirical optimum on a test grid, on
synthetic families with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdsl.experiment import predict
from sdsl.model.throughput import optimal_tokens_per_flop

LAW = {"E": 2.0, "A": 40.0, "B": 50.0, "a": 0.3, "b": 0.3}
PLANE = {"A": -0.004, "B": 0.002, "C": 0.95}  # alpha = A x + B y + C, x and y perplexities
D = 2e6


def _loss(n, d):
    return LAW["E"] + LAW["A"] * n ** -LAW["a"] + LAW["B"] * d ** -LAW["b"]


def _alpha(n, d, m):
    return PLANE["A"] * np.exp(_loss(n, d)) + PLANE["B"] * np.exp(_loss(m, D)) + PLANE["C"]


def _run(name, n, d, role):
    return {
        "run": name,
        "shape": name.split("-")[0],
        "params": n,
        "non_embedding_params": n / 2,
        "tokens": d,
        "val_loss": _loss(n, d),
        "val_ppl": float(np.exp(_loss(n, d))),
        "role": role,
    }


@pytest.fixture(scope="module")
def family():
    rows = []
    for name, n in {"s1": 2e4, "s2": 4e4, "s3": 8e4}.items():
        for d in (5e5, 1e6, 2e6):
            rows.append(_run(f"{name}-d{int(d / 1e3)}k", n, d, "calibration"))
    rows += [_run("t1", 2e6, D, "target"), _run("t2", 1e6, D, "target"), _run("h1", 1.5e6, D, "held_out_target")]
    runs = pd.DataFrame(rows)
    r = runs.set_index("run")
    pairs = pd.DataFrame(
        [
            {"draft": d, "target": t, "alpha": _alpha(r.loc[d, "params"], r.loc[d, "tokens"], r.loc[t, "params"])}
            for t in ("t1", "t2")
            for d in runs.loc[runs["role"] == "calibration", "run"]
        ]
    ).assign(half_width=0.0)
    return runs, pairs


def _brute(m):
    n = np.geomspace(2e3, m * (1 - 1e-12), 200001)
    a = _alpha(n, D, m)
    n, a = n[(a > 0) & (a < 1)], a[(a > 0) & (a < 1)]
    return float(n[np.argmax(optimal_tokens_per_flop(a, n, m))])


def test_an_exact_family_is_predicted_at_its_optimum_held_out_target_included(family):
    runs, pairs = family
    rows, draws, curves = predict.predict(
        runs, pairs, laws=("plane",), count="with_embeddings", rng=np.random.default_rng(0), n_resamples=12
    )
    rows = rows.set_index("target")
    assert rows.loc["h1", "role"] == "held_out_target"
    for t, m in (("t1", 2e6), ("t2", 1e6), ("h1", 1.5e6)):
        # the loss law and the plane are exact on the calibration runs; the held-out target enters
        # through M and D' only. Tolerance: the loss law is refitted by L-BFGS (its optimum agrees
        # with the true constants to about 1e-4 relative) and the brute force's grid step is 1e-5 in ln N
        assert rows.loc[t, "n_star_predicted"] == pytest.approx(_brute(m), rel=2e-2), t
        assert rows.loc[t, "predicted_low"] <= rows.loc[t, "n_star_predicted"] * 1.02
        assert rows.loc[t, "predicted_high"] >= rows.loc[t, "n_star_predicted"] * 0.98
    assert set(draws["law"]) == {"plane"} and len(draws) == 3 * 12
    assert set(curves["curve"]) == {"predicted"}


def test_a_held_out_target_is_predicted_by_laws_across_targets_only(family):
    runs, pairs = family
    _, draws, _ = predict.predict(
        runs, pairs, laws=("plane", "log_x"), count="with_embeddings", rng=np.random.default_rng(1), n_resamples=20
    )
    assert set(draws.loc[draws["target"] == "h1", "law"]) == {"plane"}
    assert set(draws.loc[draws["target"] == "t1", "law"]) == {"plane", "log_x"}
    with pytest.raises(ValueError, match="can predict a held_out_target"):
        predict.predict(
            runs, pairs, laws=("log_x",), count="with_embeddings", rng=np.random.default_rng(1), n_resamples=2
        )


def _test_family(m, coef):
    n = np.geomspace(1e4, 1.2e5, 12)
    runs = pd.DataFrame(
        [
            {
                "run": f"d{i}",
                "params": v,
                "non_embedding_params": v / 2,
                "tokens": D,
                "val_ppl": 1.0,
                "role": "test",
            }
            for i, v in enumerate(n)
        ]
        + [{"run": "t", "params": m, "non_embedding_params": m / 2, "tokens": D, "val_ppl": 1.0, "role": "target"}]
    )
    alpha = np.polyval(coef, np.log(n))
    pairs = pd.DataFrame({"draft": runs["run"][:-1], "target": "t", "alpha": alpha, "half_width": 0.0})
    return runs, pairs


def test_the_empirical_optimum_is_the_maximum_of_the_smooth_curve_and_nothing_is_lost_there():
    m = 2e6
    coef = (-0.02, 0.5, -2.3)  # alpha = -0.02 ln^2 N + 0.5 ln N - 2.3: exactly the smooth fit's form
    runs, pairs = _test_family(m, coef)
    g = np.linspace(np.log(1e4), np.log(1.2e5), 100001)
    truth = float(np.exp(g[np.argmax(optimal_tokens_per_flop(np.polyval(coef, g), np.exp(g), m))]))
    committed = pd.DataFrame(
        [
            {
                "target": "t",
                "role": "target",
                "params": m,
                "n_star_predicted": truth,
                "predicted_low": 1.0,
                "predicted_high": 1e9,
            }
        ]
    )
    draws = pd.DataFrame({"target": ["t"] * 3, "n_star": [truth] * 3})
    table, curves = predict.empirical(
        runs, pairs, committed, draws, count="with_embeddings", rng=np.random.default_rng(0), n_resamples=50
    )
    row = table.iloc[0]
    # the fit is exact; the curve is evaluated on 400 points over a decade (step 0.6 % in N)
    assert row["n_star_empirical"] == pytest.approx(truth, rel=1e-2)
    assert row["empirical_low"] <= row["n_star_empirical"] <= row["empirical_high"]
    assert row["lost_at_predicted"] == pytest.approx(0.0, abs=1e-4)
    assert set(curves["curve"]) == {"empirical"}
    far = committed.assign(n_star_predicted=1e4)
    lost = predict.empirical(
        runs,
        pairs,
        far,
        draws.assign(n_star=1e4),
        count="with_embeddings",
        rng=np.random.default_rng(0),
        n_resamples=20,
    )[0].iloc[0]
    assert lost["lost_at_predicted"] > 0.01 and lost["lost_low"] > 0.01
    assert (
        predict.verdict(table).iloc[0]["passed"]
        and not predict.verdict(lost.to_frame().T.assign(predicted_low=9e3, predicted_high=1.1e4)).iloc[0]["passed"]
    )


def test_unknown_law_and_count_are_named():
    with pytest.raises(ValueError, match="law must be one of"):
        predict.law_by_name("nope")
    with pytest.raises(ValueError, match="count must be one of"):
        predict.law_frame(pd.DataFrame(), pd.DataFrame({"draft": [], "target": [], "alpha": []}), "all")
