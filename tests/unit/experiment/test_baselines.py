"""The baselines the prediction must beat: their sizes on a family with a known answer, their
losses on the prediction's own empirical draws, the judgement, and the committed tables of both
earlier runs recomputed from their raw results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdsl.experiment import baselines as B
from sdsl.experiment import predict
from sdsl.model.throughput import optimal_tokens_per_flop

D = 2e6
M = {"t1": 2e6, "t2": 5e5, "h1": 1e6}
LINE = {"t1": (0.10, 0.05), "t2": (0.20, 0.05)}  # alpha = a + b ln N per fit target


def _alpha(target: str, n):
    a, b = LINE[target]
    return a + b * np.log(n)


def _family(sd: float = 0.0):
    sizes = {"s1": 600.0, "s2": 1200.0, "s3": 2400.0, "s4": 4800.0}
    rows = [
        {"run": k, "params": v, "non_embedding_params": v / 2, "tokens": D, "val_ppl": 30.0, "role": "calibration"}
        for k, v in sizes.items()
    ]
    rows.append(
        {
            "run": "s4-d500k",
            "params": 4800.0,
            "non_embedding_params": 2400.0,
            "tokens": D / 4,
            "val_ppl": 40.0,
            "role": "calibration",
        }
    )
    rows += [
        {
            "run": t,
            "params": m,
            "non_embedding_params": m / 2,
            "tokens": D,
            "val_ppl": 10.0,
            "role": "target" if t != "h1" else "held_out_target",
        }
        for t, m in M.items()
    ]
    runs = pd.DataFrame(rows)
    pairs = pd.DataFrame(
        [
            {"draft": d, "target": t, "alpha": float(_alpha(t, n)), "half_width": 1.96 * sd}
            for t in ("t1", "t2")
            for d, n in sizes.items()
        ]
        # a draft at another budget, far better than the line: the rules must not see it
        + [{"draft": "s4-d500k", "target": t, "alpha": 0.99, "half_width": 0.0} for t in ("t1", "t2")]
    )
    return runs, pairs


def _brute(alpha_of_n, m, lo):
    n = np.geomspace(lo, m * (1 - 1e-9), 400001)
    return float(n[np.argmax(optimal_tokens_per_flop(np.clip(alpha_of_n(n), 1e-9, 1 - 1e-9), n, m))])


def test_the_rules_pick_what_they_say_from_the_common_budget_only():
    runs, pairs = _family()
    points, draws = B.rule_sizes(runs, pairs, count="with_embeddings", rng=np.random.default_rng(0), n_resamples=20)
    p = points.set_index(["target", "rule"])["n"]
    floor = predict.search_floor(runs)
    assert floor == pytest.approx(0.2 * 600)
    for t, m in M.items():
        assert p[(t, "m_over_200")] == m / 200 and p[(t, "m_over_100")] == m / 100
    # the best calibration draft: the argmax of the measured throughput over the four drafts at
    # the common budget (the better draft at 0.5 M tokens is not one of them)
    n = np.array([600.0, 1200.0, 2400.0, 4800.0])
    for t in ("t1", "t2"):
        want = n[np.argmax(optimal_tokens_per_flop(_alpha(t, n), n, M[t]))]
        assert p[(t, "best_calibration")] == want
    held = np.mean([_alpha(t, n) for t in ("t1", "t2")], axis=0)
    assert p[("h1", "best_calibration")] == n[np.argmax(optimal_tokens_per_flop(held, n, M["h1"]))]
    # the ln N line is exact: its optimum is the brute force's, to the 2,000-point grid's step
    # (ln(M / floor) / 2000 < 0.5 % in N)
    for t in ("t1", "t2"):
        assert p[(t, "ln_n_fit")] == pytest.approx(_brute(lambda v, t=t: _alpha(t, v), M[t], floor), rel=5e-3)
    # the held-out target: a + b ln N + c ln M through the two fit targets, exact here
    c = np.polyfit(np.log([M["t1"], M["t2"]]), [LINE["t1"][0], LINE["t2"][0]], 1)
    held_line = lambda v: np.polyval(c, np.log(M["h1"])) + 0.05 * np.log(v)  # noqa: E731
    assert p[("h1", "ln_n_fit")] == pytest.approx(_brute(held_line, M["h1"], floor), rel=5e-3)
    # no spread without measurement noise: an exact line refitted on resampled drafts is the same line
    ln = draws[draws["rule"] == "ln_n_fit"].dropna(subset=["n"])
    assert np.allclose(ln["n"], ln["target"].map(p.xs("ln_n_fit", level="rule")), rtol=1e-9)


def test_noise_spreads_the_rules_that_read_measurements():
    runs, pairs = _family(sd=0.03)
    points, _ = B.rule_sizes(runs, pairs, count="with_embeddings", rng=np.random.default_rng(1), n_resamples=200)
    p = points.set_index(["target", "rule"])
    assert p.loc[("t1", "m_over_200"), "n_low"] == p.loc[("t1", "m_over_200"), "n_high"]
    assert p.loc[("t1", "ln_n_fit"), "n_low"] < p.loc[("t1", "ln_n_fit"), "n_high"]
    with pytest.raises(ValueError, match="count must be one of"):
        B.rule_sizes(runs, pairs, count="all", rng=np.random.default_rng(0), n_resamples=2)


def _test_grid(m: float, coef):
    n = np.geomspace(1e4, 1.2e5, 12)
    runs = pd.DataFrame(
        [
            {"run": f"d{i}", "params": v, "non_embedding_params": v / 2, "tokens": D, "val_ppl": 1.0, "role": "test"}
            for i, v in enumerate(n)
        ]
        + [{"run": "t", "params": m, "non_embedding_params": m / 2, "tokens": D, "val_ppl": 1.0, "role": "target"}]
    )
    pairs = pd.DataFrame(
        {"draft": runs["run"][:-1], "target": "t", "alpha": np.polyval(coef, np.log(n)), "half_width": 0.02}
    )
    return runs, pairs


def test_losses_use_the_prediction_s_own_draws_and_the_judgement_can_fail():
    m, coef = 2e6, (-0.02, 0.5, -2.3)
    runs, pairs = _test_grid(m, coef)
    g = np.linspace(np.log(1e4), np.log(1.2e5), 100001)
    truth = float(np.exp(g[np.argmax(optimal_tokens_per_flop(np.polyval(coef, g), np.exp(g), m))]))

    def committed(n_pred):
        return pd.DataFrame(
            [
                {
                    "target": "t",
                    "role": "target",
                    "params": m,
                    "n_star_predicted": n_pred,
                    "predicted_low": 1.0,
                    "predicted_high": 1e9,
                }
            ]
        )

    def points(n_rule):
        return pd.DataFrame(
            [{"target": "t", "rule": r, "n": n_rule, "n_low": n_rule, "n_high": n_rule} for r in B.BASELINES]
        )

    def draws(n_rule):
        return pd.DataFrame([{"target": "t", "rule": r, "draw": 0, "n": n_rule} for r in B.BASELINES])

    pred_draws = pd.DataFrame({"target": ["t"] * 3, "n_star": [truth] * 3})
    table, _ = predict.empirical(
        runs,
        pairs,
        committed(truth),
        pred_draws,
        count="with_embeddings",
        rng=np.random.default_rng(5),
        n_resamples=200,
    )
    smooth = predict.empirical_curves(
        runs,
        pairs,
        committed(truth),
        pred_draws,
        count="with_embeddings",
        rng=np.random.default_rng(5),
        n_resamples=200,
    )
    # a prediction at the optimum against rules at 1e4 (at the grid's lower end) and below it
    for n_rule, side in ((1e4 * 1.0000001, "inside"), (5e3, "below")):
        lost = B.lost_table(smooth, committed(truth), points(n_rule), draws(n_rule), np.random.default_rng(0))
        s = lost[lost["rule"] == "sdsl"].iloc[0]
        # the row sdsl is the prediction's loss, draw for draw
        assert (
            s[["lost", "lost_low", "lost_high"]].tolist()
            == table.iloc[0][["lost_at_predicted", "lost_low", "lost_high"]].tolist()
        )
        base = lost[lost["rule"] != "sdsl"]
        assert (base["lost"] > 0.01).all() and (base["grid"] == side).all()
        assert (base["lost_low"] <= base["lost"]).all() and (base["lost"] <= base["lost_high"]).all()
        j = B.judge(table, lost)
        assert (j["beaten"] == "yes").all() and (j["wins"] == 1).all()
    # the same rules against a prediction far off: none is beaten
    far = B.lost_table(smooth, committed(1.2e5), points(truth), draws(truth), np.random.default_rng(0))
    assert (B.judge(table, far)["beaten"] == "no").all()


@pytest.mark.parametrize("folder", ["laptop_scale", "laptop_scale_first"])
def test_the_committed_baselines_are_the_recomputation_and_the_sdsl_row_is_the_prediction(folder):
    from sdsl.experiment.results import load_results
    from sdsl.paths import DATA

    path = DATA / folder
    if not (path / "baselines.csv").is_file():
        pytest.skip(f"no baselines in {folder}")
    res = load_results(path)
    again = B.from_results(path)
    for count, pred_name in (("with_embeddings", "prediction"), ("non_embedding", "prediction_non_embedding")):
        name = B.table_name(count)
        committed = res[name].sort_values(["target", "rule"], ignore_index=True)
        fresh = again[name].sort_values(["target", "rule"], ignore_index=True)
        assert committed["rule"].tolist() == fresh["rule"].tolist()
        for col in ("n", "n_low", "n_high", "lost", "lost_low", "lost_high"):
            # the CSV holds 10 significant digits
            assert np.allclose(committed[col], fresh[col], rtol=1e-8, atol=1e-12, equal_nan=True), (name, col)
        s = committed[committed["rule"] == "sdsl"].set_index("target")
        p = res[pred_name].set_index("target").loc[s.index]
        for a, b in (("lost", "lost_at_predicted"), ("lost_low", "lost_low"), ("lost_high", "lost_high")):
            assert np.allclose(s[a], p[b], rtol=1e-8, atol=1e-12), (name, a)
        assert set(committed["rule"]) == set(B.RULES) and len(committed) == len(B.RULES) * len(p)
