"""The prediction of the optimal draft size before the drafts it predicts are seen, and the
empirical optimum it is judged against.

* :func:`law_frame`: the (target, draft) pairs of the family with the covariates of every
  acceptance law of :mod:`sdsl.model.alpha_laws` (``x`` draft perplexity, ``y`` target perplexity,
  ``n``, ``d``, ``m``, ``d_target`` and their logs).
* :func:`empirical_optimum`: among the trained drafts of the common budget, the one that maximises
  ``T(N, M, alpha_measured, gamma*)`` (Eq. 9 at the optimal continuous draft length,
  :func:`sdsl.model.throughput.optimal_tokens_per_flop`), and the maximum of a smooth curve through them:
  alpha interpolated in ``ln N`` by PCHIP through the measured points (shape-preserving, not monotone), ``T``
  maximised on a fine grid between the smallest and the largest draft.
* :func:`predict_n_star`: fit the loss law (:mod:`sdsl.experiment.lossfit`) on the runs of the
  smaller drafts (optionally with the targets' own runs) and an acceptance law on the pairs of
  the smaller drafts only, then ``N*`` by :func:`sdsl.model.optimum.law_optimal_draft_size` with
  the fitted loss constants.
* :func:`throughput_lost`: the throughput given up by training the draft nearest (in ``log N``)
  to the prediction instead of the best trained draft.
* :func:`predicted_alpha`, :func:`prediction_curve`: every pair's alpha and the curve ``2 M T(N)``
  as the recipe fitted on the smaller drafts predicts them (the chapter's last figures).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.interpolate import PchipInterpolator

from sdsl.experiment.lossfit import LossFit, fit_loss_law
from sdsl.model.alpha_laws import LAWS, Law
from sdsl.model.laws import LossConstants
from sdsl.model.optimum import _features_at, law_optimal_draft_size
from sdsl.model.throughput import optimal_gamma, optimal_tokens_per_flop

__all__ = [
    "Prediction",
    "empirical_optimum",
    "law_by_name",
    "law_frame",
    "predict_n_star",
    "predicted_alpha",
    "prediction_curve",
    "small_half",
    "throughput_lost",
]


def law_by_name(name: str) -> Law:
    """The acceptance law ``name`` of :data:`sdsl.model.alpha_laws.LAWS`."""
    for law in LAWS:
        if law.name == name:
            return law
    raise ValueError(f"law must be one of {[law.name for law in LAWS]}, got {name!r}")


def law_frame(runs: pd.DataFrame, alpha: pd.DataFrame) -> pd.DataFrame:
    """Pairs with covariates: ``alpha`` has ``draft, target, alpha`` (one temperature); ``runs``
    the runs table (``run, params, tokens, val_ppl``). Returns the columns of
    :func:`sdsl.model.alpha_laws.law_data` with ``draft_family = "laptop"``."""
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
            "x": r.loc[alpha["draft"], "val_ppl"].to_numpy(float),
            "y": r.loc[alpha["target"], "val_ppl"].to_numpy(float),
            "n": r.loc[alpha["draft"], "params"].to_numpy(float),
            "d": r.loc[alpha["draft"], "tokens"].to_numpy(float),
            "m": r.loc[alpha["target"], "params"].to_numpy(float),
            "d_target": r.loc[alpha["target"], "tokens"].to_numpy(float),
        }
    )
    for c in ("x", "n", "d"):
        out[f"ln_{c}"] = np.log(out[c])
    return out


def small_half(runs: pd.DataFrame) -> list[str]:
    """The smaller half of the draft shapes: the shapes other than the largest target's, sorted by
    ``params``, first ``ceil(k / 2)``."""
    largest = runs.loc[runs["params"].idxmax(), "shape"]
    shapes = runs[runs["shape"] != largest].groupby("shape")["params"].first().sort_values()
    return list(shapes.index[: int(np.ceil(len(shapes) / 2))])


def _t(alpha, n, m) -> np.ndarray:
    return optimal_tokens_per_flop(np.clip(alpha, 1e-9, 1 - 1e-9), n, m)


def empirical_optimum(frame: pd.DataFrame, target: str, d_common: float, grid_points: int = 2001) -> dict:
    """The best trained draft of budget ``d_common`` for ``target`` by measured alpha, and the
    maximum of the smooth curve (module docstring). ``T`` in tokens per FLOP, ``speedup = 2 M T``
    (throughput over plain decoding at equal FLOPs)."""
    sub = frame[(frame["target"] == target) & np.isclose(frame["d"], d_common)].sort_values("n")
    if len(sub) < 2:
        raise ValueError(f"target {target!r} has {len(sub)} drafts at D = {d_common:g}; need at least 2")
    m = float(sub["m"].iloc[0])
    t = _t(sub["alpha"].to_numpy(), sub["n"].to_numpy(), m)
    k = int(np.argmax(t))
    ln = np.log(sub["n"].to_numpy())
    curve = PchipInterpolator(ln, sub["alpha"].to_numpy())
    g = np.linspace(ln[0], ln[-1], grid_points)
    tg = _t(curve(g), np.exp(g), m)
    j = int(np.argmax(tg))
    return {
        "target": target,
        "m": m,
        "best_draft": str(sub["draft"].iloc[k]),
        "n_best": float(sub["n"].iloc[k]),
        "alpha_best": float(sub["alpha"].iloc[k]),
        "t_best": float(t[k]),
        "speedup_best": float(2 * m * t[k]),
        "gamma_best": float(optimal_gamma(np.clip(sub["alpha"].iloc[k], 1e-9, 1 - 1e-9), sub["n"].iloc[k], m)),
        "n_smooth": float(np.exp(g[j])),
        "t_smooth": float(tg[j]),
        "smooth_at_edge": bool(j in (0, grid_points - 1)),
        "best_at_edge": bool(k in (0, len(sub) - 1)),
    }


@dataclass(frozen=True)
class Prediction:
    """``N*`` predicted for one target by one acceptance law and one loss-law fit."""

    target: str
    law: str
    loss_fit: str
    n_star: float
    alpha: float
    gamma: float
    tokens_per_flop: float
    status: str
    constants: LossConstants


def predict_n_star(
    runs: pd.DataFrame,
    frame: pd.DataFrame,
    target: str,
    law: str | Law,
    *,
    fit_shapes: list[str],
    with_targets: bool = False,
    d_common: float | None = None,
    loss: LossFit | None = None,
    n_bounds: tuple[float, float] | None = None,
) -> Prediction:
    """``N*`` for ``target`` from fits that see only the drafts of ``fit_shapes``.

    Parameters
    ----------
    runs : the runs table.
    frame : :func:`law_frame` (all pairs; only the rows of drafts of ``fit_shapes`` are used).
    target : target run id.
    law : an acceptance law of :mod:`sdsl.model.alpha_laws` (name or :class:`Law`).
    fit_shapes : shapes whose runs and pairs the fits may use (:func:`small_half`).
    with_targets : also give the loss law the targets' own runs (a target is trained before its
        draft is chosen); the acceptance law never sees the held-out drafts either way.
    d_common : the drafts' token budget (default: the target's).
    loss : an already fitted loss law (skips the fit).
    n_bounds : search range of ``N`` (default: half the smallest run's ``N`` to ``M``).
    """
    lw = law_by_name(law) if isinstance(law, str) else law
    r = runs.set_index("run")
    if target not in r.index:
        raise ValueError(f"target {target!r} is not a run")
    m, d_t = float(r.loc[target, "params"]), float(r.loc[target, "tokens"])
    d_common = d_t if d_common is None else float(d_common)
    if loss is None:
        sel = runs["shape"].isin(fit_shapes) | (with_targets & (runs["role"] == "target"))
        loss = fit_loss_law(runs.loc[sel, "params"], runs.loc[sel, "tokens"], runs.loc[sel, "val_loss"])
    consts = loss.constants()
    shape_of = r["shape"].to_dict()
    train = frame[frame["draft"].map(shape_of).isin(fit_shapes)].reset_index(drop=True)
    if train.empty:
        raise ValueError(f"no pair has a draft of the shapes {fit_shapes}")
    fitted = lw.fit(train)
    lo, hi = n_bounds if n_bounds is not None else (0.5 * float(runs["params"].min()), m)
    opt = law_optimal_draft_size(fitted, target, m, d_common, d_t, consts, n_bounds=(lo, hi))
    return Prediction(
        target=target,
        law=lw.name,
        loss_fit="with targets" if with_targets else "drafts only",
        n_star=opt.n_star if np.isfinite(opt.n_star) else opt.n_at_max,
        alpha=opt.alpha,
        gamma=opt.gamma_star,
        tokens_per_flop=opt.tokens_per_flop,
        status=opt.status,
        constants=consts,
    )


def throughput_lost(frame: pd.DataFrame, target: str, d_common: float, n_pred: float) -> dict:
    """The trained draft of budget ``d_common`` nearest to ``n_pred`` in ``log N``, its measured
    ``T`` and the fraction of the best trained draft's ``T`` given up (``1 - T_near / T_best``)."""
    sub = frame[(frame["target"] == target) & np.isclose(frame["d"], d_common)].reset_index(drop=True)
    if sub.empty:
        raise ValueError(f"target {target!r} has no draft at D = {d_common:g}")
    if not np.isfinite(n_pred) or n_pred <= 0:
        raise ValueError(f"n_pred must be a positive number, got {n_pred!r}")
    t = _t(sub["alpha"].to_numpy(), sub["n"].to_numpy(), float(sub["m"].iloc[0]))
    i = int(np.argmin(np.abs(np.log(sub["n"].to_numpy()) - np.log(n_pred))))
    return {
        "nearest_draft": str(sub["draft"].iloc[i]),
        "n_nearest": float(sub["n"].iloc[i]),
        "t_nearest": float(t[i]),
        "t_best": float(t.max()),
        "lost": float(1.0 - t[i] / t.max()),
    }


def predicted_alpha(frame: pd.DataFrame, runs: pd.DataFrame, law: str, loss: LossFit) -> pd.DataFrame:
    """Every pair's alpha as the recipe predicts it from the smaller drafts: the law fitted on the
    pairs of the smaller half, evaluated at ``x = exp(L(N, D))`` and ``y = exp(L(M, D'))`` of the
    loss law fitted on the smaller half; ``held_out`` marks the larger drafts."""
    shapes = small_half(runs)
    shape_of = runs.set_index("run")["shape"]
    fit_rows = frame["draft"].map(shape_of).isin(shapes).to_numpy()
    fitted = law_by_name(law).fit(frame[fit_rows].reset_index(drop=True))
    f = frame.copy()
    f["x"] = np.exp(loss.predict(f["n"], f["d"]))
    f["y"] = np.exp(loss.predict(f["m"], f["d_target"]))
    f["ln_x"] = np.log(f["x"])
    out = frame[["target", "draft", "n", "d", "alpha"]].copy()
    out["predicted"] = fitted.predict(f)
    out["held_out"] = ~fit_rows
    return out


def prediction_curve(
    frame: pd.DataFrame, runs: pd.DataFrame, target: str, law: str, loss: LossFit, d: float, points: int = 200
) -> pd.DataFrame:
    """``2 M T(N)`` of the recipe fitted on the smaller drafts, and of a PCHIP curve through the
    measured alpha of the trained drafts at budget ``d``, on a grid of ``N``."""
    shapes = small_half(runs)
    shape_of = runs.set_index("run")["shape"]
    fitted = law_by_name(law).fit(frame[frame["draft"].map(shape_of).isin(shapes)].reset_index(drop=True))
    sub = frame[(frame["target"] == target) & np.isclose(frame["d"], d)].sort_values("n")
    m, dt = float(sub["m"].iloc[0]), float(sub["d_target"].iloc[0])
    n = np.minimum(np.exp(np.linspace(np.log(0.5 * runs["params"].min()), np.log(m), points)), m)
    a_pred = fitted.alpha(_features_at(n, m, d, dt, loss.constants()), target)
    ok = (a_pred > 0) & (a_pred < 1)
    t_pred = np.full(n.shape, np.nan)
    t_pred[ok] = 2 * m * optimal_tokens_per_flop(a_pred[ok], n[ok], m)
    inside = (n >= sub["n"].min()) & (n <= sub["n"].max())
    t_smooth = np.full(n.shape, np.nan)
    a_s = PchipInterpolator(np.log(sub["n"]), sub["alpha"])(np.log(n[inside]))
    t_smooth[inside] = 2 * m * optimal_tokens_per_flop(np.clip(a_s, 1e-9, 1 - 1e-9), n[inside], m)
    return pd.DataFrame(
        {"target": target, "n": n, "alpha_predicted": a_pred, "speedup_predicted": t_pred, "speedup_smooth": t_smooth}
    )
