"""How the optimal draft scales with the target and the data: the paper's Tables 7, 8, 9 and
Figure 5 (method notes, section 8; book chapter "scaling").

* :func:`optimal_draft_sizes`: ``N*`` for many configurations ``(M, D, D')`` at once on Table 7's
  grid of draft sizes, as a table: the kernel :func:`sdsl.model.optimal_draft.optimal_draft_sizes`
  (Eq. 9 with Eq. 5 and the Lambert W ``gamma*``; the grid argmax refined by the root of the
  derivative in ``log N``).
* :func:`table7_grid`: the 288 configurations of the paper's Table 7 (8 target sizes ``M``,
  6 draft data sizes ``D``, 6 target data sizes ``D'``), spaced logarithmically or linearly (the
  paper does not say which), optionally with another upper end of the data ranges.
* :func:`fit_table8`, :func:`fit_table9`, :func:`table8`, :func:`table9`: the scaling-law
  regressions by OLS with HC3 standard errors (:func:`sdsl.model.fitting.ols`: statsmodels on a
  centred, scaled design, reported in the paper's units),
  Table 8 ``N*/M = mu + M0/M + g ln D + g' ln D'`` and Table 9 ``N* = mu M + M0``.
* :func:`variants`: the regressions for every reading of the grid (spacing, data range, N grid,
  refinement), each beside the paper.
* :func:`figure5`: N* and N*/M against M, D and D'.
* :func:`size_ratio`, :func:`ratio_band`, :func:`data_effects`: what the law means in numbers.

Confidence intervals are statsmodels' defaults for a robust covariance: normal quantiles,
``estimate +- 1.96 SE(HC3)``; the margin of error is the half-width.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib import cm
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter
from numpy.typing import ArrayLike

from sdsl import data as _data
from sdsl._validate import as_positive
from sdsl.book.style import fix_layout
from sdsl.model import optimal_draft as _optimal_draft
from sdsl.model import optimum as _optimum
from sdsl.model.compare import equal_to_printed
from sdsl.model.laws import (
    BESIROGLU_2024,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
)
from sdsl.model.scaling_law import (
    TABLE8_TERMS,
    TABLE9_TERMS,
    _check_solution,
    coefficient_table,
    fit_table8,
    fit_table9,
)

__all__ = [
    "SPACINGS",
    "TABLE8_TERMS",
    "TABLE9_TERMS",
    "axis",
    "n_grid",
    "table7_grid",
    "table7",
    "optimal_draft_sizes",
    "solve_table7",
    "fit_table8",
    "fit_table9",
    "coefficient_table",
    "beside_paper",
    "table8",
    "table9",
    "fit_metrics",
    "variants",
    "figure5",
    "size_ratio",
    "ratio_band",
    "data_effects",
]

#: Grid spacings: ``"log"`` (``numpy.geomspace``) and ``"linear"`` (``numpy.linspace``).
SPACINGS = ("log", "linear")


# --------------------------------------------------------------------------------------------
# grids


def axis(low: float, high: float, points: int, spacing: str = "log", name: str = "axis") -> np.ndarray:
    """``points`` values from ``low`` to ``high`` (both included), log or linear spacing.

    Raises ``ValueError`` for a spacing other than :data:`SPACINGS`, fewer than one point,
    non-positive or non-finite ends, ``low > high``, or ``low == high`` with more than one point.
    """
    if spacing not in SPACINGS:
        raise ValueError(f"spacing of {name} must be one of {SPACINGS}, got {spacing!r}")
    if isinstance(points, bool) or not float(points).is_integer() or int(points) < 1:
        raise ValueError(f"points of {name} must be an integer >= 1, got {points!r}")
    points = int(points)
    lo = float(as_positive(low, f"low end of {name}"))
    hi = float(as_positive(high, f"high end of {name}"))
    if lo > hi or (lo == hi and points > 1):
        raise ValueError(f"{name} must satisfy low < high (or one point), got ({lo:.6g}, {hi:.6g})")
    values = np.geomspace(lo, hi, points) if spacing == "log" else np.linspace(lo, hi, points)
    values[0], values[-1] = lo, hi  # exact ends (geomspace can be off by an ulp)
    return values


def _table7_row(table7: pd.DataFrame | None, parameter: str) -> tuple[float, float, int]:
    t7 = _data.load("paper_table7") if table7 is None else table7
    rows = t7.set_index("parameter")
    if parameter not in rows.index:
        raise ValueError(f"Table 7 has no row {parameter!r}; rows: {list(rows.index)}")
    row = rows.loc[parameter]
    return float(row["low"]), float(row["high"]), int(row["points"])


def n_grid(spacing: str = "log", points: int | None = None, low: float | None = None,
           high: float | None = None, table7: pd.DataFrame | None = None) -> np.ndarray:
    """The draft-size grid of Table 7 (10,000 points in [1e8, 1e10]; ends and count from
    ``data/paper_table7.csv`` unless given), log or linear spacing (the paper does not say)."""
    t_lo, t_hi, t_k = _table7_row(table7, "N")
    return axis(t_lo if low is None else low, t_hi if high is None else high,
                t_k if points is None else points, spacing, "the draft-size grid N")


def table7_grid(spacing: str = "log", d_high: float | None = None, d_target_high: float | None = None,
                table7: pd.DataFrame | None = None) -> pd.DataFrame:
    """The configurations of Table 7: every ``(M, D, D')`` of the product of three axes
    (8 x 6 x 6 = 288 rows), columns ``m, d_draft, d_target``, ``M`` slowest.

    ``spacing`` applies to all three axes. ``d_high`` and ``d_target_high`` replace the upper
    end of the ``D`` and ``D'`` axes (the printed Table 7 says 1e13; the paper's Tables 8 and 9
    are reproduced with 1e14, see :func:`variants`).
    """
    m_lo, m_hi, m_k = _table7_row(table7, "M")
    d_lo, d_hi, d_k = _table7_row(table7, "D")
    p_lo, p_hi, p_k = _table7_row(table7, "D_prime")
    ms = axis(m_lo, m_hi, m_k, spacing, "M (target parameters)")
    ds = axis(d_lo, d_hi if d_high is None else d_high, d_k, spacing, "D (draft tokens)")
    ps = axis(p_lo, p_hi if d_target_high is None else d_target_high, p_k, spacing, "D' (target tokens)")
    m, d, p = np.meshgrid(ms, ds, ps, indexing="ij")
    return pd.DataFrame({"m": m.ravel(), "d_draft": d.ravel(), "d_target": p.ravel()})


def table7(spacing: str = "log", n_spacing: str = "log", d_high: float | None = None,
           d_target_high: float | None = None, table7: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 7 as used here, beside the printed one: parameter, low, high, points, spacing,
    paper_low, paper_high, paper_points, as_printed."""
    t7 = _data.load("paper_table7") if table7 is None else table7
    rows = []
    for parameter, sp, high in (("N", n_spacing, None), ("M", spacing, None),
                                ("D", spacing, d_high), ("D_prime", spacing, d_target_high)):
        lo, hi, k = _table7_row(t7, parameter)
        used_hi = hi if high is None else float(high)
        rows.append({"parameter": parameter, "low": lo, "high": used_hi, "points": k, "spacing": sp,
                     "paper_low": lo, "paper_high": hi, "paper_points": k, "as_printed": used_hi == hi})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# the vectorised solver


def optimal_draft_sizes(
    m: ArrayLike,
    d_draft: ArrayLike,
    d_target: ArrayLike,
    n: ArrayLike | None = None,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    integer: bool = False,
    refine: bool = True,
    exhaustive: bool = False,
) -> pd.DataFrame:
    """``N*`` for many configurations on a shared draft-size grid, as a table: the kernel
    :func:`sdsl.model.optimal_draft.optimal_draft_sizes` (the paper's Eq. 9 with Eq. 5 and the closed-form
    ``gamma*``; grid argmax refined by the root of the derivative in ``log N``).

    Parameters
    ----------
    m, d_draft, d_target : target parameters ``M``, draft tokens ``D``, target tokens ``D'``;
        scalars or 1-D arrays that broadcast together (one entry per configuration).
    n : the draft-size grid, strictly increasing, at least 3 points, never above ``M``; 1-D
        (shared) or 2-D (one row per configuration). Default: Table 7's grid, log spacing.
    constants, coefficients : loss-law constants and Eq. 5 coefficients.
    integer : integer draft length instead of its continuous relaxation.
    refine : refine the grid argmax; if False, ``n_star`` is the raw grid argmax.
    exhaustive : evaluate ``T`` at every grid point (default: coarse-to-fine, the same argmax
        whenever ``T`` is unimodal in ``N``; ``tests`` check it against ``exhaustive``).

    Returns
    -------
    DataFrame
        One row per configuration: ``m, d_draft, d_target, n_star, n_star_grid`` (the grid
        argmax), ``grid_index``, ``gamma_star, alpha, tokens_per_flop`` (at ``n_star``) and
        ``on_edge`` (the grid argmax is an end of the grid: ``N*`` may lie outside it; ``n_star`` is
        then that end).

    Raises ``ValueError`` for invalid configurations or grids, and when the acceptance plane
    leaves (0, 1) at an end of the grid (alpha grows with ``N``, so the ends bound it).
    """
    grid_n = n_grid("log") if n is None else n
    if np.shape(grid_n)[-1] < 3:
        raise ValueError(f"n (draft-size grid) needs at least 3 points, got {np.shape(grid_n)[-1]}")
    o = _optimal_draft.optimal_draft_sizes(m, d_draft, d_target, grid_n, constants, coefficients, integer,
                                     refine=refine, exhaustive=exhaustive)
    k = len(o)
    mm, dd, pp = (np.broadcast_to(np.atleast_1d(np.asarray(v, dtype=float)), (k,)) for v in (m, d_draft, d_target))
    g = np.broadcast_to(np.asarray(grid_n, dtype=float), (k, np.shape(grid_n)[-1]))
    ends = _optimum.plane_alpha(mm, dd, pp, constants, coefficients)(g[:, [0, -1]], np.arange(k))
    bad = (ends <= 0) | (ends >= 1)
    if np.any(bad):
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"the acceptance rate leaves (0, 1) on the draft-size grid: configuration {i} "
            f"(m = {mm[i]:.6g}, d_draft = {dd[i]:.6g}, d_target = {pp[i]:.6g}) has alpha = "
            f"{ends[i, j]:.6g} at n = {g[i, -j]:.6g}; narrow the grid"
        )
    return pd.DataFrame({
        "m": o.m, "d_draft": np.asarray(dd, dtype=float), "d_target": np.asarray(pp, dtype=float),
        "n_star": o.n_at_max, "n_star_grid": o.n_grid, "grid_index": o.grid_index,
        "gamma_star": o.gamma_star, "alpha": o.alpha, "tokens_per_flop": o.tokens_per_flop,
        "on_edge": (o.grid_index == 0) | (o.grid_index == g.shape[1] - 1),
    })


def _configs(m: ArrayLike, d_draft: ArrayLike, d_target: ArrayLike) -> tuple[np.ndarray, ...]:
    m = as_positive(m, "m (target parameters)")
    d = as_positive(d_draft, "d_draft (draft pre-training tokens)")
    p = as_positive(d_target, "d_target (target pre-training tokens)")
    try:
        m, d, p = np.broadcast_arrays(np.atleast_1d(m), np.atleast_1d(d), np.atleast_1d(p))
    except ValueError as exc:
        raise ValueError(f"m, d_draft and d_target must broadcast together: {exc}") from None
    if m.ndim != 1:
        raise ValueError(f"m, d_draft and d_target must be scalars or 1-D arrays, got shape {m.shape}")
    return np.ascontiguousarray(m, float), np.ascontiguousarray(d, float), np.ascontiguousarray(p, float)


def solve_table7(spacing: str = "log", n_spacing: str = "log", d_high: float | None = None,
                 d_target_high: float | None = None, refine: bool = True,
                 constants: LossConstants | str = BESIROGLU_2024,
                 coefficients: AcceptanceCoefficients = PAPER_EQ5, integer: bool = False,
                 table7: pd.DataFrame | None = None) -> pd.DataFrame:
    """``N*`` for every configuration of Table 7's grid (:func:`table7_grid`) on Table 7's
    ``N`` grid (:func:`n_grid`): :func:`optimal_draft_sizes` on the 288 configurations."""
    cfg = table7_grid(spacing, d_high, d_target_high, table7)
    grid_n = n_grid(n_spacing, table7=table7)
    return optimal_draft_sizes(cfg["m"], cfg["d_draft"], cfg["d_target"], grid_n, constants,
                               coefficients, integer=integer, refine=refine)


# --------------------------------------------------------------------------------------------
# regressions (Tables 8 and 9)


def beside_paper(ours: pd.DataFrame, paper: pd.DataFrame, tolerance: pd.DataFrame | None = None) -> pd.DataFrame:
    """Our coefficient table beside the paper's (``paper_table8`` / ``paper_table9`` layout):
    adds ``paper_estimate, paper_moe, paper_ci_lower, paper_ci_upper``, the relative deviations
    of estimate and margin of error, ``paper_in_our_ci``, ``ours_in_paper_ci`` and, with
    ``tolerance`` (:func:`sdsl.data.printed_tolerance`), ``printed_digits_equal``."""
    p = paper.set_index("parameter")
    missing = [k for k in ours["parameter"] if k not in p.index]
    if missing:
        raise ValueError(f"the paper's table has no parameter(s) {missing}")
    out = ours.copy()
    pp = p.loc[out["parameter"]]
    out["paper_estimate"] = pp["estimate"].to_numpy()
    out["paper_moe"] = pp["moe"].to_numpy()
    out["paper_ci_lower"] = pp["ci_lower"].to_numpy()
    out["paper_ci_upper"] = pp["ci_upper"].to_numpy()
    out["rel_deviation"] = out["estimate"] / out["paper_estimate"] - 1.0
    out["moe_rel_deviation"] = out["moe"] / out["paper_moe"] - 1.0
    out["deviation_in_moe"] = (out["estimate"] - out["paper_estimate"]) / out["paper_moe"]
    out["paper_in_our_ci"] = (out["ci_lower"] <= out["paper_estimate"]) & (out["paper_estimate"] <= out["ci_upper"])
    out["ours_in_paper_ci"] = (out["paper_ci_lower"] <= out["estimate"]) & (out["estimate"] <= out["paper_ci_upper"])
    if tolerance is not None:
        t = tolerance.set_index("parameter").loc[out["parameter"]]
        out["printed_digits_equal"] = (
            equal_to_printed(out["estimate"], out["paper_estimate"], t["estimate"].to_numpy())
            & equal_to_printed(out["moe"], out["paper_moe"], t["moe"].to_numpy())
        )
    return out


def table8(solution: pd.DataFrame, paper: pd.DataFrame | None = None,
           tolerance: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 8 (``N*/M = mu + M0/M + g ln D + g' ln D'``, OLS + HC3) from a grid solution, and
    beside the paper's values if ``paper`` (``sdsl.data.load("paper_table8")``) is given."""
    ours = coefficient_table(fit_table8(solution))
    return ours if paper is None else beside_paper(ours, paper, tolerance)


def table9(solution: pd.DataFrame, paper: pd.DataFrame | None = None,
           tolerance: pd.DataFrame | None = None) -> pd.DataFrame:
    """Table 9 (``N* = mu M + M0``, pooled OLS + HC3) from a grid solution, and beside the
    paper's values if ``paper`` (``sdsl.data.load("paper_table9")``) is given."""
    ours = coefficient_table(fit_table9(solution))
    return ours if paper is None else beside_paper(ours, paper, tolerance)


def fit_metrics(solution: pd.DataFrame, paper_metrics: pd.DataFrame | None = None) -> pd.DataFrame:
    """R^2, adjusted R^2 and observations of Tables 8 and 9: table, metric, ours (and paper,
    difference where ``paper_metrics`` has the metric)."""
    r8, r9 = fit_table8(solution), fit_table9(solution)
    rows = [(8, "r2", r8.rsquared), (8, "adj_r2", r8.rsquared_adj), (8, "observations", r8.nobs),
            (9, "r2", r9.rsquared), (9, "adj_r2", r9.rsquared_adj), (9, "observations", r9.nobs)]
    out = pd.DataFrame(rows, columns=["table", "metric", "ours"])
    if paper_metrics is not None:
        pm = paper_metrics.assign(table=paper_metrics["table"].astype(int))
        out = out.merge(pm.rename(columns={"value": "paper"}), on=["table", "metric"], how="left")
        out["difference"] = out["ours"] - out["paper"]
    return out


def variants(
    paper8: pd.DataFrame,
    paper9: pd.DataFrame,
    spacings: Sequence[str] = SPACINGS,
    d_highs: Sequence[float | None] = (None, 1e14),
    n_spacings: Sequence[str] = ("log",),
    refine: Sequence[bool] = (True,),
    table7: pd.DataFrame | None = None,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
) -> pd.DataFrame:
    """Tables 8 and 9 for every reading of the grid, long format, each parameter beside the
    paper's: spacing (of M, D, D'), d_high (upper end of D and D'; None = as printed),
    n_spacing, refined, table, then the columns of :func:`beside_paper` and ``r2``."""
    t7 = _data.load("paper_table7") if table7 is None else table7
    printed_high = _table7_row(t7, "D")[1]
    frames = []
    for sp in spacings:
        for dh in d_highs:
            for ns in n_spacings:
                for rf in refine:
                    sol = solve_table7(sp, ns, dh, dh, rf, constants, coefficients, table7=t7)
                    for number, fit, paper in ((8, fit_table8, paper8), (9, fit_table9, paper9)):
                        res = fit(sol)
                        tab = beside_paper(coefficient_table(res), paper)
                        tab.insert(0, "table", number)
                        tab.insert(0, "refined", rf)
                        tab.insert(0, "n_spacing", ns)
                        tab.insert(0, "d_high", printed_high if dh is None else float(dh))
                        tab.insert(0, "spacing", sp)
                        tab["r2"] = res.rsquared
                        frames.append(tab)
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------------------------
# Figure 5





def figure5(solution: pd.DataFrame) -> Figure:
    """Figure 5: N* (left) and N*/M (right) against M, D and D' (one row each).

    Row M: one line per draft data size D, averaged over D' (the band: min to max over D').
    Rows D and D': one line per target size M, averaged over the other data size (band: its
    min to max). Log axes for the data sizes; colours from a log-scaled colour map with a
    colour bar per row.
    """
    s = _check_solution(solution).assign(ratio=lambda df: df["n_star"] / df["m"])
    fig, axes = plt.subplots(3, 2, figsize=(10.0, 10.5), layout="constrained")
    rows = (
        ("m", "d_draft", "target size $M$ (parameters)", "draft tokens $D$", "d_target"),
        ("d_draft", "m", "draft tokens $D$", "target size $M$", "d_target"),
        ("d_target", "m", "target tokens $D'$", "target size $M$", "d_draft"),
    )
    for r, (x, hue, xlabel, hue_label, other) in enumerate(rows):
        levels = np.sort(s[hue].unique())
        norm = LogNorm(vmin=levels.min(), vmax=levels.max()) if levels.size > 1 else None
        cmap = plt.get_cmap("viridis")
        for ax, col, ylabel in ((axes[r, 0], "n_star", "$N^*$ (parameters)"),
                                (axes[r, 1], "ratio", "$N^*/M$")):
            for level in levels:
                sub = s[s[hue] == level].groupby(x)[col].agg(["mean", "min", "max"]).sort_index()
                color = cmap(norm(level)) if norm is not None else cmap(0.5)
                ax.plot(sub.index, sub["mean"], marker="o", ms=3, lw=1.2, color=color)
                if sub["max"].gt(sub["min"]).any():
                    ax.fill_between(sub.index, sub["min"], sub["max"], color=color, alpha=0.15, lw=0)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            if x != "m":
                ax.set_xscale("log")
            else:  # target sizes in billions, without an offset text
                ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1e9:g}B"))
        if norm is not None:
            sm_ = cm.ScalarMappable(norm=norm, cmap=cmap)
            fig.colorbar(sm_, ax=axes[r, :].tolist(), label=hue_label, pad=0.01, aspect=25)
    return fix_layout(fig)


# --------------------------------------------------------------------------------------------
# what the law means


def size_ratio(
    m: ArrayLike,
    d_draft: ArrayLike,
    d_target: ArrayLike,
    n_low: float = 1e7,
    points: int = 4000,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
) -> pd.DataFrame:
    """``N*`` and the size ratio ``M / N*`` for arbitrary configurations (e.g. ``M`` from 1e9
    to 1e12), each on its own log grid of ``points`` draft sizes from ``n_low`` to ``M``
    (:func:`optimal_draft_sizes` with a 2-D grid). Columns of :func:`optimal_draft_sizes` plus
    ``ratio = N*/M`` and ``m_over_n = M/N*``."""
    m, d, p = _configs(m, d_draft, d_target)
    lo = float(as_positive(n_low, "n_low (smallest draft size)"))
    if np.any(m <= lo):
        raise ValueError(f"every target size m must exceed n_low = {lo:.6g}, got {m.min():.6g}")
    grid = np.exp(np.linspace(np.log(lo), np.log(m), int(points), axis=1))
    grid[:, -1] = m
    sol = optimal_draft_sizes(m, d, p, grid, constants, coefficients)
    return sol.assign(ratio=sol["n_star"] / sol["m"], m_over_n=sol["m"] / sol["n_star"])


def ratio_band(ratios: pd.DataFrame, low: float = 150.0, high: float = 300.0) -> dict[str, float]:
    """The range of target sizes over which ``M/N*`` stays in [low, high].

    ``ratios``: the output of :func:`size_ratio` over a range of ``M`` (and any data sizes).
    Returns ``m_all_low, m_all_high``: the smallest and largest ``M`` at which every
    configuration is inside the band; ``m_any_low, m_any_high``: the same for at least one; and
    the overall min and max of ``M/N*``. NaN where no ``M`` qualifies.
    """
    if not 0 < low < high:
        raise ValueError(f"the band must satisfy 0 < low < high, got ({low!r}, {high!r})")
    inside = ratios.assign(inside=(ratios["m_over_n"] >= low) & (ratios["m_over_n"] <= high))
    by_m = inside.groupby("m")["inside"].agg(["all", "any"])
    m_all = by_m.index[by_m["all"]]
    m_any = by_m.index[by_m["any"]]
    nan = float("nan")
    return {
        "low": float(low), "high": float(high),
        "m_all_low": float(m_all.min()) if len(m_all) else nan,
        "m_all_high": float(m_all.max()) if len(m_all) else nan,
        "m_any_low": float(m_any.min()) if len(m_any) else nan,
        "m_any_high": float(m_any.max()) if len(m_any) else nan,
        "ratio_min": float(ratios["m_over_n"].min()), "ratio_max": float(ratios["m_over_n"].max()),
    }


def data_effects(solution: pd.DataFrame) -> pd.DataFrame:
    """How much N* moves across each axis of a full factorial grid, the other two held fixed:
    for ``factor`` in M, D, D', the relative change ``N*(max) / N*(min) - 1`` from the lowest to
    the highest value of that factor, its ``min``, ``median`` and ``max`` over the settings of
    the other two, and the mean elasticity ``d ln N* / d ln factor`` (log-log slope between the
    ends)."""
    s = _check_solution(solution)
    out = []
    for factor, col in (("M", "m"), ("D", "d_draft"), ("D'", "d_target")):
        others = [c for c in ("m", "d_draft", "d_target") if c != col]
        lo_v, hi_v = s[col].min(), s[col].max()
        lo = s[s[col] == lo_v].set_index(others)["n_star"]
        hi = s[s[col] == hi_v].set_index(others)["n_star"]
        change = (hi / lo - 1.0).to_numpy()
        elasticity = (np.log(hi / lo) / np.log(hi_v / lo_v)).to_numpy()
        out.append({"factor": factor, "low": lo_v, "high": hi_v,
                    "change_min": change.min(), "change_median": float(np.median(change)),
                    "change_max": change.max(), "elasticity_min": elasticity.min(),
                    "elasticity_median": float(np.median(elasticity)), "elasticity_max": elasticity.max()})
    return pd.DataFrame(out)


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (issue 13; the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed."""
    from sdsl import _validate as V
    from sdsl._schema import records

    d_low = next(float(r["low"]) for r in records("paper_table7") if r["parameter"] == "D")
    size = V.rule(V.number, low=V.TARGET_PARAMS[0], high=V.TARGET_PARAMS[1], what="target parameters M")
    ratio = V.rule(V.number, low=1, low_open=True, what="a ratio M / N*")
    p = V.check_parameters("scaling", params, {
        "artifacts_dir": V.optional(V.rule(V.folder)), "spacing": V.rule(V.choice, options=("log", "linear")),
        "n_spacing": V.rule(V.choice, options=("log", "linear")),
        "data_high": V.optional(V.rule(V.number, low=d_low, high=V.TOKENS[1], low_open=True, what="tokens")),
        "refine": V.rule(V.boolean), "constants": V.loss_constants, "band_low": ratio, "band_high": ratio,
        "rule_ratio": ratio, "m_low": size, "m_high": size, "m_points": V.rule(V.integer, low=2, high=10_000),
        "m_small": size, "seed": V.rule(V.seed)})
    for lo, hi in (("band_low", "band_high"), ("m_low", "m_high")):
        if lo in p and hi in p and not p[lo] < p[hi]:
            raise ValueError(f"{lo} must be below {hi}, got {lo} = {p[lo]:g} and {hi} = {p[hi]:g}")
