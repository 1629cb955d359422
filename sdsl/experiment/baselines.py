"""The rules the prediction must beat: draft sizes a practitioner could choose without the paper's
laws, judged on the same measured throughput curve as the prediction.

A test of the central claim is worth what it singles out. The prediction (:mod:`sdsl.experiment.predict`)
passes the criterion of :data:`sdsl.experiment.predict.CRITERION` only if, besides landing within
2 % of the measured optimum, it loses less throughput than each of these rules on a majority of
the targets:

* ``m_over_200``: ``N = M / 200``, the rule of thumb quoted with the paper's result;
* ``m_over_100``: ``N = M / 100``;
* ``best_calibration``: the calibration draft (at the common token budget) with the largest
  measured throughput ``T(N, M, alpha, gamma*)`` (Eq. 9): no law at all. A held-out target has no
  measured pair: each draft's alpha is the mean of its alphas with the fit targets;
* ``ln_n_fit``: ``alpha = a + b ln N`` fitted by least squares on the calibration pairs at the
  common budget (for a held-out target, ``alpha = a + b ln N + c ln M`` on the pairs of every fit
  target), then ``N`` maximising ``T`` on the range the prediction searches: no loss law, no
  perplexity.

The rules see what the prediction sees (the calibration runs and pairs) and nothing of the test
drafts; their sizes can be, and from the third run on are, written down with the prediction
(:func:`rule_sizes`). Each rule's spread comes from redrawing every calibration alpha from its
measurement interval (and, for ``ln_n_fit``, resampling the drafts), as the prediction's does.

The throughput a size loses (:func:`lost_table`) is read off the smooth fit to the measured alpha
of the test drafts, ``1 - T(N) / max T`` (:class:`sdsl.experiment.predict.SmoothCurves`), with the
same bootstrap draws of that fit as the prediction's loss, each paired with a draw of the rule;
the row ``sdsl`` is the prediction's own loss, recomputed with those draws. A size outside the
test grid is evaluated at the grid's nearest end, which makes its loss a lower bound (column
``grid``).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from sdsl.experiment.predict import COUNTS, SmoothCurves, empirical_curves, law_frame, search_floor
from sdsl.model.throughput import optimal_tokens_per_flop

__all__ = [
    "BASELINES",
    "RULES",
    "from_results",
    "judge",
    "lost_table",
    "pair_alphas",
    "rule_sizes",
    "table_name",
    "write_baselines",
]

#: The rules, in the order of the tables: the prediction first, then the baselines.
RULES: dict[str, str] = {
    "sdsl": "the prediction from the calibration runs (the paper's laws)",
    "m_over_200": "M / 200 (the rule of thumb quoted with the paper)",
    "m_over_100": "M / 100",
    "best_calibration": "the calibration draft with the largest measured throughput",
    "ln_n_fit": "alpha = a + b ln N on the calibration pairs, its throughput optimum",
}
#: The baselines the prediction must beat on a majority of targets.
BASELINES = tuple(r for r in RULES if r != "sdsl")
#: Points of the log grid over the searched range on which ``ln_n_fit`` maximises ``T``.
_GRID_POINTS = 2000


def table_name(count: str) -> str:
    """``baselines`` (``N`` with embeddings) or ``baselines_non_embedding``."""
    if count not in COUNTS:
        raise ValueError(f"count must be one of {list(COUNTS)}, got {count!r}")
    return "baselines" if count == "with_embeddings" else "baselines_non_embedding"


def _throughput(alpha: np.ndarray, n: np.ndarray, m: float) -> np.ndarray:
    return optimal_tokens_per_flop(np.clip(alpha, 1e-9, 1 - 1e-9), n, m)


def _line(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares coefficients of ``y`` on ``[1, x...]`` (columns of ``x``)."""
    design = np.column_stack([np.ones(len(y)), x])
    return np.linalg.lstsq(design, y, rcond=None)[0]


def rule_sizes(
    runs: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    count: str,
    rng: np.random.Generator,
    n_resamples: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The size each baseline picks for every target, from the calibration runs and pairs only.

    Parameters
    ----------
    runs : the runs table (calibration drafts, fit and held-out targets; other rows are ignored).
    pairs : ``draft, target, alpha, half_width`` of the calibration pairs.
    count : ``with_embeddings`` or ``non_embedding``.
    rng : the generator of the draws.
    n_resamples : draws of each rule.

    Returns
    -------
    points : ``count, target, role, rule, n, n_low, n_high`` (the rule on the data as measured, and
        2.5 % and 97.5 % of its draws).
    draws : ``count, target, rule, draw, n``.
    """
    col = "params" if count == "with_embeddings" else "non_embedding_params"
    if count not in COUNTS:
        raise ValueError(f"count must be one of {list(COUNTS)}, got {count!r}")
    frame = law_frame(runs, pairs, count)
    frame = frame[np.isclose(frame["d"], frame["d_target"])]  # the drafts trained like the test drafts
    if frame["draft"].nunique() < 2:
        raise ValueError("the baselines need calibration pairs of at least two drafts at the common budget")
    floor = search_floor(runs, count)
    targets = runs[runs["role"].isin(["target", "held_out_target"])].sort_values(col, ascending=False)
    fit_targets = sorted(frame["target"].unique())
    drafts = sorted(frame["draft"].unique(), key=lambda d: float(frame.loc[frame["draft"] == d, "n"].iloc[0]))
    n_draft = np.array([float(frame.loc[frame["draft"] == d, "n"].iloc[0]) for d in drafts])
    # alpha and its sd per (draft, fit target), drafts in order of size
    a = np.array(
        [
            [float(frame.loc[(frame["draft"] == d) & (frame["target"] == t), "alpha"].iloc[0]) for d in drafts]
            for t in fit_targets
        ]
    )
    sd = np.array(
        [
            [float(frame.loc[(frame["draft"] == d) & (frame["target"] == t), "sd"].fillna(0.0).iloc[0]) for d in drafts]
            for t in fit_targets
        ]
    )
    m_fit = np.array([float(frame.loc[frame["target"] == t, "m"].iloc[0]) for t in fit_targets])
    points, draws = [], []
    for _, t in targets.iterrows():
        tid, m, role = str(t["run"]), float(t[col]), str(t["role"])
        grid = np.exp(np.linspace(np.log(floor), np.log(m * (1 - 1e-9)), _GRID_POINTS))
        row = fit_targets.index(tid) if tid in fit_targets else None

        def best_calibration(alpha: np.ndarray) -> float:
            al = alpha[row] if row is not None else alpha.mean(axis=0)
            return float(n_draft[int(np.argmax(_throughput(al, n_draft, m)))])

        def ln_n_fit(alpha: np.ndarray, pick: np.ndarray) -> float:
            ln_n = np.log(n_draft[pick])
            if np.unique(ln_n).size < 2:
                return np.nan
            if row is not None:
                c = _line(ln_n, alpha[row, pick])
                al = c[0] + c[1] * np.log(grid)
            else:
                k = len(fit_targets)
                x = np.column_stack([np.tile(ln_n, k), np.repeat(np.log(m_fit), pick.size)])
                if np.unique(x[:, 1]).size < 2:  # one fit target: ln M is not identified
                    c = np.append(_line(x[:, :1], alpha[:, pick].ravel()), 0.0)
                else:
                    c = _line(x, alpha[:, pick].ravel())
                al = c[0] + c[1] * np.log(grid) + c[2] * np.log(m)
            return float(grid[int(np.argmax(_throughput(al, grid, m)))])

        every = np.arange(len(drafts))
        point = {
            "m_over_200": m / 200.0,
            "m_over_100": m / 100.0,
            "best_calibration": best_calibration(a),
            "ln_n_fit": ln_n_fit(a, every),
        }
        per_rule: dict[str, list[float]] = {r: [] for r in BASELINES}
        for b in range(int(n_resamples)):
            ab = np.clip(a + rng.normal(0.0, 1.0, a.shape) * sd, 1e-6, 1 - 1e-6)
            pick = rng.integers(0, len(drafts), len(drafts))
            vals = {
                "m_over_200": m / 200.0,
                "m_over_100": m / 100.0,
                "best_calibration": best_calibration(ab),
                "ln_n_fit": ln_n_fit(ab, pick),
            }
            for r in BASELINES:
                per_rule[r].append(vals[r])
                draws.append({"count": count, "target": tid, "rule": r, "draw": b, "n": vals[r]})
        for r in BASELINES:
            v = np.asarray(per_rule[r], float)
            v = v[np.isfinite(v)]
            lo, hi = np.quantile(v, [0.025, 0.975]) if v.size else (np.nan, np.nan)
            points.append(
                {
                    "count": count,
                    "target": tid,
                    "role": role,
                    "rule": r,
                    "n": point[r],
                    "n_low": float(lo),
                    "n_high": float(hi),
                }
            )
    return pd.DataFrame(points), pd.DataFrame(draws)


def _grid_side(sc: SmoothCurves, n: float) -> str:
    ln = np.log(n)
    return "below" if ln < sc.g[0] - 1e-12 else "above" if ln > sc.g[-1] + 1e-12 else "inside"


def lost_table(
    smooth: dict[str, SmoothCurves],
    committed: pd.DataFrame,
    points: pd.DataFrame,
    draws: pd.DataFrame,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """One row per target and rule: the rule's size ``n`` (with ``n_low``, ``n_high``), the
    throughput it loses on the smooth fit (``lost``) and the 95 % interval of that loss
    (``lost_low``, ``lost_high``: each bootstrap draw of the fit paired with a draw of the rule,
    drawn with ``rng``), and ``grid``: ``inside`` the test grid, or ``below`` / ``above`` it (then
    the loss is read at the grid's end: a lower bound). ``smooth`` is :func:`empirical_curves` of
    the test pairs; its ``lost`` draws give the row ``sdsl``, whose interval, as the prediction's,
    holds its point."""
    rows = []
    for _, c in committed.iterrows():
        tid = str(c["target"])
        sc = smooth[tid]
        n_pred = float(c["n_star_predicted"])
        lost = sc.lost_at(n_pred)
        rows.append(
            {
                "target": tid,
                "rule": "sdsl",
                "n": n_pred,
                "n_low": float(c["predicted_low"]),
                "n_high": float(c["predicted_high"]),
                "lost": lost,
                "lost_low": min(float(np.nanquantile(sc.lost, 0.025)), lost),
                "lost_high": float(np.nanquantile(sc.lost, 0.975)),
                "grid": _grid_side(sc, n_pred),
            }
        )
        for r in BASELINES:
            p = points[(points["target"] == tid) & (points["rule"] == r)]
            if len(p) != 1:
                raise ValueError(f"the rule sizes have {len(p)} rows for target {tid!r} and rule {r!r}, expected 1")
            p = p.iloc[0]
            nd = draws.loc[(draws["target"] == tid) & (draws["rule"] == r), "n"].to_numpy(float)
            nd = nd[np.isfinite(nd)]
            n = float(p["n"])
            lost = sc.lost_at(n)
            ld = np.array([sc.lost_at(float(rng.choice(nd)) if nd.size else n, curve) for curve in sc.draws])
            rows.append(
                {
                    "target": tid,
                    "rule": r,
                    "n": n,
                    "n_low": float(p["n_low"]),
                    "n_high": float(p["n_high"]),
                    "lost": lost,
                    "lost_low": min(float(np.nanquantile(ld, 0.025)), lost),
                    "lost_high": max(float(np.nanquantile(ld, 0.975)), lost),
                    "grid": _grid_side(sc, n),
                }
            )
    return pd.DataFrame(rows)


def judge(prediction: pd.DataFrame, baselines: pd.DataFrame) -> pd.DataFrame:
    """The criterion against the baselines: one row per baseline with ``wins`` (targets on which
    the prediction loses strictly less throughput than the baseline), ``targets`` and ``beaten``
    (``yes`` when the wins are a majority of the targets)."""
    sdsl = baselines[baselines["rule"] == "sdsl"].set_index("target")["lost"]
    n_targets = len(prediction)
    rows = []
    for r in BASELINES:
        other = baselines[baselines["rule"] == r].set_index("target")["lost"]
        wins = int((sdsl.reindex(other.index) < other).sum())
        rows.append({"rule": r, "wins": wins, "targets": n_targets, "beaten": "yes" if 2 * wins > n_targets else "no"})
    return pd.DataFrame(rows)


def pair_alphas(res: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """``draft, target, alpha, half_width`` of every pair of a results folder's tables (alpha the
    truncated-geometric MLE of its counts at the first temperature, as the runner computes it)."""
    from sdsl.experiment.pairs import counts_to_iterations
    from sdsl.measure.estimators import alpha_from_accepted

    ap = res["alpha_pairs"]
    temp = float(ap["temperature"].iloc[0])
    ap = ap[ap["temperature"] == temp]
    counts = dict(
        tuple(res["alpha_counts"][res["alpha_counts"]["temperature"] == temp].groupby(["draft", "target"], sort=False))
    )
    rows = []
    for _, p in ap.iterrows():
        it = counts_to_iterations(counts[(p["draft"], p["target"])])
        it = it[it["drafted"] > 0]
        rows.append(
            {
                "draft": p["draft"],
                "target": p["target"],
                "alpha": alpha_from_accepted(it["accepted"], it["drafted"]).alpha,
                "half_width": float(p["half_width"]),
            }
        )
    return pd.DataFrame(rows)


def _runner_order(test: pd.DataFrame, runs: pd.DataFrame, prov: dict) -> pd.DataFrame:
    """The test pairs in the order the runner collected them (targets: the fit targets, then the
    held-out ones, each largest first; drafts: the grid, its extension, the second seeds near the
    measured optima), so that the empirical draws, which resample the pairs by position after a
    sort by size that keeps no order among equal sizes, are the runner's."""
    p = prov["prediction"]
    order = list(p["test_runs"])
    for key in ("grid_extension", "replicates"):
        order += [r for r in ((p.get(key) or {}).get("runs") or []) if r not in order]
    order += [d for d in test["draft"] if d not in order]
    r = runs.set_index("run")
    targets = sorted(test["target"].unique(), key=lambda t: (r.loc[t, "role"] != "target", -float(r.loc[t, "params"])))
    rank_d, rank_t = {d: i for i, d in enumerate(order)}, {t: i for i, t in enumerate(targets)}
    key = test["target"].map(rank_t) * len(order) + test["draft"].map(rank_d)
    return test.assign(_k=key.to_numpy()).sort_values("_k", kind="mergesort").drop(columns="_k").reset_index(drop=True)


def from_results(
    folder: str | os.PathLike, *, n_resamples: int = 300, n_empirical: int = 1000
) -> dict[str, pd.DataFrame]:
    """The baselines of a results folder, recomputed from its tables: the rules' sizes from its
    calibration pairs (seeded as the runner seeds them, ``n_resamples`` draws each) and their losses
    on its test pairs with the empirical draws the runner made (:func:`empirical_curves`, seeded
    as :func:`sdsl.experiment.collect.collect` seeds it, ``n_empirical`` draws). Returns
    ``{table_name(count): table}`` for both counts. For a run whose rules were not written with
    its prediction (the first two), the sizes are computed here, after the fact."""
    from sdsl.experiment.pairs import seed_for
    from sdsl.experiment.results import load_results, provenance

    folder = Path(folder)
    res, prov = load_results(folder), provenance(folder)
    seed = int(prov["seed"])
    runs = res["runs"]
    alphas = pair_alphas(res)
    role = runs.set_index("run")["role"]
    cal = alphas[(alphas["draft"].map(role) == "calibration") & (alphas["target"].map(role) == "target")]
    test = _runner_order(alphas[alphas["draft"].map(role) == "test"], runs, prov)
    out = {}
    for count in COUNTS:
        committed = res["prediction_committed"][res["prediction_committed"]["count"] == count]
        pred_draws = res["prediction_draws"][res["prediction_draws"]["count"] == count]
        points, draws = rule_sizes(
            runs,
            cal,
            count=count,
            rng=np.random.default_rng(seed_for(seed, "baselines", count)),
            n_resamples=n_resamples,
        )
        smooth = empirical_curves(
            runs,
            test,
            committed,
            pred_draws,
            count=count,
            rng=np.random.default_rng(seed_for(seed, "empirical", count)),
            n_resamples=n_empirical,
        )
        out[table_name(count)] = lost_table(
            smooth, committed, points, draws, np.random.default_rng(seed_for(seed, "baselines", "pairing", count))
        )
    return out


def write_baselines(folder: str | os.PathLike, *, after_the_fact: bool = True) -> list[Path]:
    """:func:`from_results` of the results folder ``folder`` written into it as
    ``baselines.csv`` and ``baselines_non_embedding.csv`` (with their schemas); returns the paths.
    ``after_the_fact``: the rules' sizes were computed now, not written with the prediction (the
    tables' description says so)."""
    from sdsl.experiment.results import write_table

    when = (
        "the rules' sizes computed after the run from its calibration pairs (they were not written with its prediction)"
        if after_the_fact
        else "the rules' sizes as written with the prediction, before any test draft was trained"
    )
    extra = {
        "source": "sdsl-companion, python -m sdsl.experiment baselines (sdsl.experiment.baselines.from_results)",
        "description": f"The prediction against rules a practitioner could use without the paper's laws; {when}.",
    }
    return [write_table(t, folder, name, extra) for name, t in from_results(folder).items()]
