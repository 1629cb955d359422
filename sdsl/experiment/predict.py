"""The prediction of the throughput-optimal draft size from the calibration runs, its interval,
and the empirical optimum on the test grid it is judged against.

The prediction (:func:`predict`) uses the calibration runs only: the loss law
``L(N, D) = E + A / N^a + B / D^b`` (:mod:`sdsl.experiment.lossfit`) fitted on the calibration
drafts and the fit targets, an acceptance law (:mod:`sdsl.model.alpha_laws`) fitted on the
pairs (calibration draft, fit target) with ``x = exp(L(N, D))`` and ``y`` the perplexities, and
``N* = argmax_N T(N, M, alpha(N), gamma*)`` (Eq. 9 at the throughput-optimal continuous draft
length, :func:`sdsl.model.optimum.law_optimal_draft_size`), where ``alpha(N)`` takes
``x = exp(L(N, D))`` and ``y = exp(L(M, D'))`` of the fitted law: a held-out target enters only
through its ``M`` and ``D'``. The point prediction uses the Eq. 5 plane ``alpha = A x + B y + C``.
Its interval: percentile bootstrap, each draw refitting the loss law on calibration runs
resampled with replacement, redrawing every calibration alpha from its measurement interval
(normal, sd = half width / 1.96), resampling the pairs by draft, and drawing the acceptance law
uniformly from those that can predict the target (a held-out target: only the laws across
targets).

The empirical optimum (:func:`empirical`) uses the test drafts only: measured alpha of each test
draft, a smooth fit ``alpha = c0 + c1 ln N + c2 (ln N)^2`` (weighted least squares, weights
``1 / sd^2``), and the maximum of ``T`` on the grid's range. Its band: the same fit on draws that
resample the test drafts (seeds included) with replacement and redraw each alpha from its
interval. The throughput lost at the predicted ``N*`` is ``1 - T(N*_pred) / T(N*_emp)`` on the
smooth curve, its interval from pairing each empirical draw with a prediction draw. The loss is
bounded below by 0, where the percentile bootstrap is biased upward (a point at the bound lies
below every draw; Andrews 2000, Econometrica 68(2)): its interval is widened to hold the point
estimate when the draws' 2.5 % quantile lies above it.

Both are computed with ``N`` counted with embeddings (the paper's count: the tied token table,
which is also the output head) and without (``non_embedding``); under the second count the loss
law, the acceptance law and the FLOP model all use the non-embedding ``N`` and ``M``.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdsl.experiment.lossfit import LossFit, bootstrap_loss_law, fit_loss_law
from sdsl.model.alpha_laws import LAWS, Law
from sdsl.model.optimum import _features_at, law_optimal_draft_size
from sdsl.model.throughput import optimal_tokens_per_flop

__all__ = [
    "COUNTS",
    "CRITERION",
    "POINT_LAW",
    "SEARCH_FLOOR_FRACTION",
    "commit_prediction",
    "design_checks",
    "empirical",
    "empirical_curves",
    "law_by_name",
    "law_frame",
    "predict",
    "search_floor",
    "smooth_optimum",
    "verdict",
]

#: How ``N`` is counted: with the token table (the paper's count) or without.
COUNTS = ("with_embeddings", "non_embedding")
#: The acceptance law of the point prediction: the paper's Eq. 5 plane.
POINT_LAW = "plane"
#: The pass criterion, fixed before any test draft is trained: for every target, the empirical
#: ``N*`` inside the predicted 95 % interval and less than 2 % of the throughput lost at the
#: predicted ``N*``; and against every baseline of :mod:`sdsl.experiment.baselines` (rules a
#: practitioner could use without the paper), less throughput lost than the baseline on a
#: majority of the targets (:func:`sdsl.experiment.baselines.judge`). The first two conditions were
#: the whole criterion of the first two runs; the third was added before the third.
CRITERION: dict[str, Any] = {"inside_interval": True, "max_lost": 0.02, "beat_baselines_on": "a majority of targets"}
#: The lower end of the range searched for ``N*``, as a fraction of the smallest run the loss law
#: is fitted on (:func:`search_floor`). A bootstrap draw whose throughput is largest at that end is
#: counted there, so an interval whose lower end equals it is censored: its lower end is a floor.
SEARCH_FLOOR_FRACTION = 0.2


def law_by_name(name: str) -> Law:
    """The acceptance law ``name`` of :data:`sdsl.model.alpha_laws.LAWS`."""
    for law in LAWS:
        if law.name == name:
            return law
    raise ValueError(f"law must be one of {[law.name for law in LAWS]}, got {name!r}")


def _n_column(count: str) -> str:
    if count not in COUNTS:
        raise ValueError(f"count must be one of {list(COUNTS)}, got {count!r}")
    return "params" if count == "with_embeddings" else "non_embedding_params"


def law_frame(runs: pd.DataFrame, alpha: pd.DataFrame, count: str = "with_embeddings") -> pd.DataFrame:
    """Pairs with the covariates of the acceptance laws: ``alpha`` has ``draft, target, alpha``
    (and ``half_width``); ``runs`` the runs table. ``n`` and ``m`` are counted by ``count``."""
    col = _n_column(count)
    for c in ("draft", "target", "alpha"):
        if c not in alpha.columns:
            raise ValueError(f"alpha lacks column {c!r}")
    r = runs.set_index("run")
    missing = sorted(set(alpha["draft"]).union(alpha["target"]) - set(r.index))
    if missing:
        raise ValueError(f"runs has no row for {missing}")
    out = pd.DataFrame(
        {
            "target": alpha["target"].astype(str).to_numpy(),
            "draft": alpha["draft"].astype(str).to_numpy(),
            "draft_family": "laptop",
            "alpha": alpha["alpha"].to_numpy(float),
            "sd": (alpha["half_width"].to_numpy(float) / 1.96) if "half_width" in alpha else np.nan,
            "x": r.loc[alpha["draft"], "val_ppl"].to_numpy(float),
            "y": r.loc[alpha["target"], "val_ppl"].to_numpy(float),
            "n": r.loc[alpha["draft"], col].to_numpy(float),
            "d": r.loc[alpha["draft"], "tokens"].to_numpy(float),
            "m": r.loc[alpha["target"], col].to_numpy(float),
            "d_target": r.loc[alpha["target"], "tokens"].to_numpy(float),
        }
    )
    for c in ("x", "n", "d"):
        out[f"ln_{c}"] = np.log(out[c])
    return out


def search_floor(runs: pd.DataFrame, count: str = "with_embeddings") -> float:
    """The lower end of the range searched for ``N*``: :data:`SEARCH_FLOOR_FRACTION` of the
    smallest run the loss law is fitted on (calibration drafts and fit targets), ``N`` counted by
    ``count``."""
    col = _n_column(count)
    fit_runs = runs[runs["role"].isin(["calibration", "target"])]
    return SEARCH_FLOOR_FRACTION * float(fit_runs[col].min())


def _laws_for(laws: tuple[str, ...], role: str) -> list[str]:
    """The laws that can predict a target of ``role``: a held-out target only laws across targets."""
    ok = [n for n in laws if role == "target" or law_by_name(n).cross_target]
    if not ok:
        raise ValueError(f"none of the laws {list(laws)} can predict a {role}")
    return ok


def _speedup_curve(fitted, target: str, m: float, d: float, dt: float, loss: LossFit, n: np.ndarray) -> np.ndarray:
    """``2 M T(N)`` on ``n`` for a fitted law and loss law (NaN where alpha leaves (0, 1))."""
    with np.errstate(over="ignore", invalid="ignore"):
        a = fitted.alpha(_features_at(n, m, d, dt, loss.constants()), target)
    out = np.full(n.shape, np.nan)
    ok = np.isfinite(a) & (a > 0) & (a < 1)
    out[ok] = 2 * m * optimal_tokens_per_flop(a[ok], n[ok], m)
    return out


def _n_star(
    fitted, target: str, m: float, d: float, dt: float, loss: LossFit, bounds: tuple[float, float]
) -> tuple[float, str]:
    """``N*`` and its status (``interior``, else where ``T`` is largest on ``bounds``: an edge)."""
    with np.errstate(over="ignore", invalid="ignore"):
        opt = law_optimal_draft_size(fitted, target, m, d, dt, loss.constants(), n_bounds=bounds)
    return (float(opt.n_star), "interior") if np.isfinite(opt.n_star) else (float(opt.n_at_max), str(opt.status))


def predict(
    runs: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    laws: tuple[str, ...],
    count: str,
    rng: np.random.Generator,
    n_resamples: int,
    curve_points: int = 120,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``N*`` of every target from the calibration runs (module docstring).

    Parameters
    ----------
    runs : the calibration runs (``role`` calibration, target or held_out_target).
    pairs : ``draft, target, alpha, half_width`` of the calibration pairs.
    laws : acceptance laws the bootstrap draws from (:data:`sdsl.model.alpha_laws.LAWS` names).
    count : ``with_embeddings`` or ``non_embedding``.
    rng : the bootstrap's generator.
    n_resamples : bootstrap draws.

    Returns
    -------
    rows : one row per target (the columns of ``prediction_committed``).
    draws : ``target, draw, law, n_star`` (NaN: no interior optimum in the draw).
    curves : the predicted ``2 M T(N)`` per target with the 95 % band of the draws.
    """
    with warnings.catch_warnings():
        return _predict(
            runs, pairs, laws=laws, count=count, rng=rng, n_resamples=n_resamples, curve_points=curve_points
        )


def _predict(runs, pairs, *, laws, count, rng, n_resamples, curve_points):
    col = _n_column(count)
    fit_runs = runs[runs["role"].isin(["calibration", "target"])]
    loss = fit_loss_law(fit_runs[col], fit_runs["tokens"], fit_runs["val_loss"])
    frame = law_frame(runs, pairs, count)
    boot = bootstrap_loss_law(
        loss, fit_runs[col], fit_runs["tokens"], fit_runs["val_loss"], rng, n_resamples=int(n_resamples)
    )
    assert boot.boot is not None
    targets = runs[runs["role"].isin(["target", "held_out_target"])].sort_values(col, ascending=False)
    lo_n = search_floor(runs, count)
    fitted_point = law_by_name(POINT_LAW).fit(frame)
    drafts = frame["draft"].unique()
    rows, draws, curves = [], [], []
    for _, t in targets.iterrows():
        tid, m, dt, role = str(t["run"]), float(t[col]), float(t["tokens"]), str(t["role"])
        d = dt  # the drafts' budget: the common budget, the targets'
        bounds = (lo_n, m)
        n_pt, status = _n_star(fitted_point, tid, m, d, dt, loss, bounds)
        grid = np.exp(np.linspace(np.log(lo_n), np.log(min(m, 400 * lo_n)), curve_points))
        grid = np.minimum(grid, m * (1 - 1e-9))
        curve_pt = _speedup_curve(fitted_point, tid, m, d, dt, loss, grid)
        allowed = _laws_for(laws, role)
        sub_rng = np.random.default_rng(rng.integers(2**63))
        stars, curve_draws = [], []
        warnings.simplefilter("ignore")  # rank-deficient resamples and overflowing x far outside the family
        for b in range(int(n_resamples)):
            lf = LossFit(theta=boot.boot[b], objective=np.nan, n_runs=loss.n_runs, starts=0)
            pick = sub_rng.choice(drafts, size=drafts.size, replace=True)
            f = pd.concat([frame[frame["draft"] == p] for p in pick], ignore_index=True)
            f["alpha"] = np.clip(f["alpha"] + sub_rng.normal(0.0, 1.0, len(f)) * f["sd"].fillna(0.0), 1e-6, 1 - 1e-6)
            law = str(sub_rng.choice(allowed))
            try:
                fitted = law_by_name(law).fit(f)
                ns, st = _n_star(fitted, tid, m, d, dt, lf, bounds)
                curve_draws.append(_speedup_curve(fitted, tid, m, d, dt, lf, grid))
            except (ValueError, np.linalg.LinAlgError, RuntimeError):
                ns, st = np.nan, "failed"
            stars.append(ns)
            draws.append({"count": count, "target": tid, "draw": b, "law": law, "n_star": ns, "status": st})
        s = np.asarray(stars, dtype=float)
        ok = np.isfinite(s)
        lo, hi = np.quantile(s[ok], [0.025, 0.975]) if ok.any() else (np.nan, np.nan)
        rows.append(
            {
                "count": count,
                "target": tid,
                "role": role,
                "params": int(m),
                "law": POINT_LAW,
                "n_star_predicted": n_pt,
                "predicted_low": float(lo),
                "predicted_high": float(hi),
                "status": status,
                "draws": int(ok.sum()),
                "draws_interior": int(sum(d["status"] == "interior" for d in draws if d["target"] == tid)),
                "draws_total": int(s.size),
                "m_over_n_star": m / n_pt if np.isfinite(n_pt) else np.nan,
            }
        )
        cd = np.array(curve_draws) if curve_draws else np.full((1, grid.size), np.nan)
        with np.errstate(invalid="ignore"), _quiet_nan():
            band = np.nanquantile(cd, [0.025, 0.975], axis=0)
        curves.append(
            pd.DataFrame(
                {
                    "count": count,
                    "target": tid,
                    "curve": "predicted",
                    "n": grid,
                    "speedup": curve_pt,
                    "low": band[0],
                    "high": band[1],
                }
            )
        )
    return pd.DataFrame(rows), pd.DataFrame(draws), pd.concat(curves, ignore_index=True)


class _quiet_nan:
    """No RuntimeWarning for all-NaN columns of a band (a draw's alpha may leave (0, 1))."""

    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


def design_checks(runs: pd.DataFrame, table: pd.DataFrame) -> dict:
    """What the committed prediction says of the design, per count: ``extrapolation``, the
    smallest predicted ``N*`` over the largest calibration draft (the design asks for at least 3:
    the prediction is for drafts three times larger than any the fits saw), and ``m_span``, the
    largest target over the smallest."""
    out = {}
    for count in COUNTS:
        col = _n_column(count)
        t = table[table["count"] == count]
        largest = float(runs.loc[runs["role"] == "calibration", col].max())
        out[count] = {
            "largest_calibration_draft": largest,
            "smallest_n_star_predicted": float(t["n_star_predicted"].min()),
            "extrapolation": float(t["n_star_predicted"].min()) / largest,
            "m_span": float(t["params"].max() / t["params"].min()),
        }
    return out


def commit_prediction(scale, runs: pd.DataFrame, pairs: pd.DataFrame, folder: Path, baselines: pd.DataFrame) -> dict:
    """Predict ``N*`` for every target under both counts from the calibration runs and write,
    before any test draft exists, ``prediction_committed.csv`` (with its schema), the bootstrap
    draws, the predicted curves, ``baselines_committed.csv`` (``baselines``: the sizes the rules of
    :mod:`sdsl.experiment.baselines` pick from the same runs, both counts) and ``prediction.json``:
    the two files' sha256, the UTC time they were written, ``grid_n_stars`` (the with-embeddings
    predictions the test grid is placed around), the test runs and :func:`design_checks`.
    Returns ``prediction.json``'s content."""
    from sdsl.experiment.pairs import seed_for
    from sdsl.experiment.results import atomic_write_text, write_table

    folder = Path(folder)
    rows, draws, curves = [], [], []
    for count in COUNTS:
        rng = np.random.default_rng(seed_for(scale.seed, "prediction", count))
        r, d, c = predict(
            runs, pairs, laws=scale.prediction_laws, count=count, rng=rng, n_resamples=scale.prediction_resamples
        )
        rows.append(r)
        draws.append(d)
        curves.append(c)
    table = pd.concat(rows, ignore_index=True)
    paper = table[table["count"] == "with_embeddings"]
    scale.check_extrapolation([float(v) for v in paper["n_star_predicted"]])  # before anything is written
    csv = write_table(table, folder, "prediction_committed")
    rules = write_table(baselines, folder, "baselines_committed")
    write_table(pd.concat(draws, ignore_index=True), folder, "prediction_draws")
    pd.concat(curves, ignore_index=True).to_csv(folder / "predicted_curves.csv", index=False, float_format="%.10g")
    stars = [float(v) for v in paper["n_star_predicted"] if np.isfinite(v)]
    if not stars:
        raise ValueError("no target has an interior predicted N*: the test grid cannot be placed")
    rec = {
        "file": csv.name,
        "sha256": hashlib.sha256(csv.read_bytes()).hexdigest(),
        "baselines_file": rules.name,
        "baselines_sha256": hashlib.sha256(rules.read_bytes()).hexdigest(),
        "written_utc": datetime.now(tz=UTC).isoformat(timespec="seconds"),
        "grid_n_stars": stars,
        "test_runs": [r.run_id for r in scale.test_runs(stars)],
        "design_checks": design_checks(runs, table),
    }
    atomic_write_text(folder / "prediction.json", json.dumps(rec, indent=1))
    return rec


def _smooth_fit(ln_n: np.ndarray, alpha: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Coefficients (highest power first) of ``alpha = c0 + c1 ln N + c2 (ln N)^2`` by weighted
    least squares (weights ``1 / sd``, as :func:`numpy.polyfit` takes them)."""
    w = 1.0 / np.maximum(sd, 1e-4)
    deg = 2 if np.unique(ln_n).size >= 3 else 1
    return np.polyfit(ln_n, alpha, deg, w=w)


def smooth_optimum(n: np.ndarray, alpha: np.ndarray, sd: np.ndarray, m: float, grid_points: int = 400) -> dict:
    """The maximum of ``2 M T(N)`` on the smooth fit of ``alpha`` against ``ln N`` over the range
    of ``n``: ``n_star``, ``speedup`` and ``where`` (``interior``, or ``upper`` / ``lower`` when
    it lies at an end of the range, so that the measured optimum is not bracketed)."""
    ln = np.log(np.asarray(n, dtype=float))
    g = np.linspace(ln.min(), ln.max(), grid_points)
    al = np.clip(np.polyval(_smooth_fit(ln, np.asarray(alpha, float), np.asarray(sd, float)), g), 1e-9, 1 - 1e-9)
    t = 2 * m * optimal_tokens_per_flop(al, np.exp(g), m)
    j = int(np.argmax(t))
    where = "upper" if j == grid_points - 1 else "lower" if j == 0 else "interior"
    return {"n_star": float(np.exp(g[j])), "speedup": float(t[j]), "where": where}


@dataclass(frozen=True)
class SmoothCurves:
    """The empirical throughput of one target on its test grid (:func:`empirical_curves`): the
    grid ``g`` (``ln N``, ``grid_points`` values over the test drafts' range), ``t`` (``2 M T`` of
    the smooth fit to the measured alpha), ``draws`` (one row per bootstrap draw of the test drafts
    that left at least three distinct sizes) and, for each of those draws, ``n_star`` (its
    maximum) and ``lost`` (the throughput it loses at a prediction draw paired with it)."""

    g: np.ndarray
    t: np.ndarray
    draws: np.ndarray
    n_star: np.ndarray
    lost: np.ndarray

    def lost_at(self, n: float, curve: np.ndarray | None = None) -> float:
        """``1 - T(n) / max T`` on ``curve`` (default: the smooth fit). ``n`` outside the test
        grid is evaluated at the grid's nearest end, so the loss there is a lower bound."""
        if not np.isfinite(n):
            return np.nan
        tc = self.t if curve is None else curve
        v = np.interp(np.clip(np.log(n), self.g[0], self.g[-1]), self.g, tc)
        return float(1.0 - v / tc.max())


def empirical_curves(
    runs: pd.DataFrame,
    pairs: pd.DataFrame,
    committed: pd.DataFrame,
    draws: pd.DataFrame,
    *,
    count: str,
    rng: np.random.Generator,
    n_resamples: int = 1000,
    grid_points: int = 400,
) -> dict[str, SmoothCurves]:
    """Per target of ``committed`` (in its order), the smooth fit to the measured alpha of the test
    drafts and its bootstrap draws (:class:`SmoothCurves`); the arguments are those of
    :func:`empirical`, which tabulates them. The generator is consumed in the same order for the
    same inputs, so a second call with a generator of the same seed returns the same draws."""
    frame = law_frame(runs, pairs, count)
    out: dict[str, SmoothCurves] = {}
    for _, c in committed.iterrows():
        tid = str(c["target"])
        sub = frame[frame["target"] == tid].sort_values("n")
        if len(sub) < 3:
            raise ValueError(f"target {tid!r} has {len(sub)} test drafts; the smooth fit needs at least 3")
        m = float(sub["m"].iloc[0])
        ln = sub["ln_n"].to_numpy()
        a, sd = sub["alpha"].to_numpy(), sub["sd"].to_numpy()
        g = np.linspace(ln.min(), ln.max(), grid_points)
        n = np.exp(g)

        def curve(coef):
            al = np.clip(np.polyval(coef, g), 1e-9, 1 - 1e-9)
            return 2 * m * optimal_tokens_per_flop(al, n, m)

        n_pred = float(c["n_star_predicted"])
        pred_draws = draws.loc[(draws["target"] == tid), "n_star"].to_numpy(float)
        pred_draws = pred_draws[np.isfinite(pred_draws)]
        point = SmoothCurves(g, curve(_smooth_fit(ln, a, sd)), np.empty((0, g.size)), np.empty(0), np.empty(0))
        stars, losts, cds = [], [], []
        k = len(sub)
        for _ in range(int(n_resamples)):
            idx = rng.integers(0, k, k)
            if np.unique(ln[idx]).size < 3:
                continue
            ab = np.clip(a[idx] + rng.normal(0.0, 1.0, k) * sd[idx], 1e-6, 1 - 1e-6)
            tc = curve(_smooth_fit(ln[idx], ab, sd[idx]))
            cds.append(tc)
            stars.append(float(n[int(np.argmax(tc))]))
            losts.append(point.lost_at(float(rng.choice(pred_draws)) if pred_draws.size else n_pred, tc))
        out[tid] = SmoothCurves(g, point.t, np.array(cds), np.asarray(stars, float), np.asarray(losts, float))
    return out


def empirical(
    runs: pd.DataFrame,
    pairs: pd.DataFrame,
    committed: pd.DataFrame,
    draws: pd.DataFrame,
    *,
    count: str,
    rng: np.random.Generator,
    n_resamples: int = 1000,
    grid_points: int = 400,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The empirical ``N*`` of every target on the test grid with its band, and the throughput
    lost at the predicted ``N*`` (module docstring).

    Parameters
    ----------
    runs : the runs table (test drafts and targets).
    pairs : ``draft, target, alpha, half_width`` of the test pairs.
    committed : the rows of ``prediction_committed`` for ``count``.
    draws : the bootstrap draws of the prediction for ``count``.
    count, rng, n_resamples : the count, the generator and the number of draws of the band.

    Returns the prediction table (the columns of ``prediction``) and the empirical curves.
    """
    smooth = empirical_curves(
        runs, pairs, committed, draws, count=count, rng=rng, n_resamples=n_resamples, grid_points=grid_points
    )
    rows, curves = [], []
    for _, c in committed.iterrows():
        tid = str(c["target"])
        sc = smooth[tid]
        n = np.exp(sc.g)
        lost_point = sc.lost_at(float(c["n_star_predicted"]))
        band = np.quantile(sc.draws, [0.025, 0.975], axis=0)
        rows.append(
            {
                "target": tid,
                "role": c["role"],
                "params": int(c["params"]),
                "n_star_predicted": float(c["n_star_predicted"]),
                "predicted_low": float(c["predicted_low"]),
                "predicted_high": float(c["predicted_high"]),
                "n_star_empirical": float(n[int(np.argmax(sc.t))]),
                "empirical_low": float(np.quantile(sc.n_star, 0.025)),
                "empirical_high": float(np.quantile(sc.n_star, 0.975)),
                "lost_at_predicted": lost_point,
                "lost_low": min(float(np.nanquantile(sc.lost, 0.025)), lost_point),
                "lost_high": float(np.nanquantile(sc.lost, 0.975)),
            }
        )
        curves.append(
            pd.DataFrame(
                {
                    "count": count,
                    "target": tid,
                    "curve": "empirical",
                    "n": n,
                    "speedup": sc.t,
                    "low": band[0],
                    "high": band[1],
                }
            )
        )
    return pd.DataFrame(rows), pd.concat(curves, ignore_index=True)


def verdict(prediction: pd.DataFrame) -> pd.DataFrame:
    """Per target, whether the empirical ``N*`` lies inside the predicted 95 % interval, whether
    less than :data:`CRITERION`'s ``max_lost`` is lost at the predicted ``N*``, and ``passed``
    (both)."""
    out = prediction[["target", "role"]].copy()
    out["inside"] = (prediction["n_star_empirical"] >= prediction["predicted_low"]) & (
        prediction["n_star_empirical"] <= prediction["predicted_high"]
    )
    out["lost_ok"] = prediction["lost_at_predicted"] < CRITERION["max_lost"]
    out["passed"] = out["inside"] & out["lost_ok"]
    return out
