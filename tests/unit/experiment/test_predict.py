"""The prediction of N* and the empirical optimum on synthetic families with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdsl.experiment import predict
from sdsl.experiment.lossfit import fit_loss_law
from sdsl.model.throughput import optimal_tokens_per_flop

LAW = {"E": 2.0, "A": 40.0, "B": 500.0, "a": 0.3, "b": 0.3}
SHAPES = {"s1": 3e4, "s2": 6e4, "s3": 1.2e5, "s4": 2.4e5, "s5": 5e5, "s6": 1e6, "s7": 2e6}
TARGETS = ("s7", "s6")
D = 2e6
SLOPE = 0.1  # alpha = SLOPE * ln(N / N0[target])
N0 = {"s7-d2000k": 8e3, "s6-d2000k": 6e3}


def _loss(n, d):
    return LAW["E"] + LAW["A"] * n ** -LAW["a"] + LAW["B"] * d ** -LAW["b"]


@pytest.fixture(scope="module")
def family():
    rows = []
    for shape, n in SHAPES.items():
        budgets = (5e5, 1e6, 2e6) if shape in ("s1", "s2", "s3") else (2e6,)
        for d in budgets:
            rows.append(
                {
                    "run": f"{shape}-d{int(d / 1e3)}k",
                    "shape": shape,
                    "params": n,
                    "tokens": d,
                    "val_loss": _loss(n, d),
                    "val_ppl": float(np.exp(_loss(n, d))),
                    "role": "target" if shape in TARGETS and d == D else "draft",
                }
            )
    runs = pd.DataFrame(rows)
    pairs = []
    for t in ("s7-d2000k", "s6-d2000k"):
        m = float(runs.set_index("run").loc[t, "params"])
        for _, r in runs[runs["params"] < m].iterrows():
            pairs.append({"draft": r["run"], "target": t, "alpha": SLOPE * np.log(r["params"] / N0[t])})
    small = runs[runs["shape"].isin(["s1", "s2", "s3"])]
    loss = fit_loss_law(small["params"], small["tokens"], small["val_loss"])
    return runs, predict.law_frame(runs, pd.DataFrame(pairs)), loss


def _brute(target, m):
    n = np.geomspace(1.5e4, m, 200001)  # ends at m exactly (exp(log(m)) may not, by an ulp)
    t = optimal_tokens_per_flop(SLOPE * np.log(n / N0[target]), n, m)
    return float(n[np.argmax(t)])


def test_small_half_is_the_smaller_draft_shapes(family):
    runs, _, _ = family
    assert predict.small_half(runs) == ["s1", "s2", "s3"]


def test_empirical_optimum_is_the_best_trained_draft(family):
    _, frame, _ = family
    for t in N0:
        emp = predict.empirical_optimum(frame, t, D)
        sub = frame[(frame["target"] == t) & (frame["d"] == D)]
        tt = optimal_tokens_per_flop(sub["alpha"], sub["n"], sub["m"])
        assert emp["best_draft"] == sub["draft"].iloc[int(np.argmax(tt))]
        # the smooth curve through 5-6 exact points: within 15 % of the true optimum (PCHIP is not
        # the log-linear law; the points are a factor 2 apart)
        assert emp["n_smooth"] == pytest.approx(_brute(t, emp["m"]), rel=0.15)
        assert not emp["smooth_at_edge"]


def test_loglinear_law_from_the_smaller_drafts_predicts_the_true_optimum(family):
    runs, frame, loss = family
    for t in N0:
        p = predict.predict_n_star(runs, frame, t, "loglin_n", fit_shapes=predict.small_half(runs), loss=loss)
        assert p.status == "interior"
        m = float(runs.set_index("run").loc[t, "params"])
        # the law is exact on the fitted drafts, so the prediction is the brute-force optimum up to
        # the grid step of the brute force (1e-5 in ln N) and the solver's tolerance
        assert p.n_star == pytest.approx(_brute(t, m), rel=1e-3)


def test_the_loss_law_is_fitted_on_the_smaller_drafts_only(family):
    runs, frame, loss = family
    # exact synthetic losses of the 9 runs of the three smaller shapes identify the law
    assert loss.n_runs == 9
    assert loss.values["a"] == pytest.approx(LAW["a"], abs=0.02)
    p = predict.predict_n_star(runs, frame, "s7-d2000k", "plane", fit_shapes=["s1", "s2", "s3"], loss=loss)
    assert p.constants == loss.constants()


def test_throughput_lost_is_zero_at_the_best_draft_and_positive_elsewhere(family):
    _, frame, _ = family
    emp = predict.empirical_optimum(frame, "s7-d2000k", D)
    assert predict.throughput_lost(frame, "s7-d2000k", D, emp["n_best"])["lost"] == 0.0
    far = predict.throughput_lost(frame, "s7-d2000k", D, 3e4)
    assert far["nearest_draft"] == "s1-d2000k" and far["lost"] > 0


def test_unknown_law_and_target_are_named(family):
    runs, frame, _ = family
    with pytest.raises(ValueError, match="law must be one of"):
        predict.law_by_name("nope")
    with pytest.raises(ValueError, match="target 'x' is not a run"):
        predict.predict_n_star(runs, frame, "x", "plane", fit_shapes=["s1"])
