"""How the optimal draft scales with the target and the data: the paper's Tables 7, 8, 9 and
Figure 5 (method notes, section 8; book chapter "scaling").

* :func:`table7_grid`, :func:`n_grid`, :func:`~sdsl.model.optimum.optimal_draft_table`, :func:`solve_table7`,
  :func:`size_ratio` (from :mod:`sdsl.model.grid`): the 288 configurations of the paper's Table 7
  (8 target sizes ``M``, 6 draft data sizes ``D``, 6 target data sizes ``D'``, spaced
  logarithmically or linearly: the paper does not say which) and ``N*`` on all of them at once.
* :func:`table7`: the grid as used beside the printed one; :func:`solve_checked` (from
  :mod:`sdsl.model.grid`): the grid solved, timed and checked against the scalar optimiser.
* :func:`table8`, :func:`table9`: the scaling-law regressions (:func:`fit_table8`,
  :func:`fit_table9`, beside the paper by :func:`beside_paper`, ``R^2`` by :func:`fit_metrics`, from
  :mod:`sdsl.model.scaling_law`) by OLS with HC3 standard errors (:func:`sdsl.model.fitting.ols`:
  statsmodels on a centred, scaled design, reported in the paper's units),
  Table 8 ``N*/M = mu + M0/M + g ln D + g' ln D'`` and Table 9 ``N* = mu M + M0``.
* :func:`variants`: the regressions for every reading of the grid (spacing, data range, N grid,
  refinement), each beside the paper.
* :func:`figure5`: N* and N*/M against M, D and D'.
* :func:`practical_ratios`, :func:`ratio_by_target`, :func:`ratio_band`, :func:`data_effects`,
  :func:`law_target_size` (from :mod:`sdsl.model.scaling_law`): what the law means in numbers;
  :func:`summary`: every number the chapter's prose cites.

Confidence intervals are statsmodels' defaults for a robust covariance: normal quantiles,
``estimate +- 1.96 SE(HC3)``; the margin of error is the half-width. ``N*`` is a deterministic
function of the configuration, so these intervals measure how far the linear form misses the exact
optimum over the grid (misfit), not noise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import LogNorm
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from sdsl import data as _data
from sdsl.audit.rules import GRID_1E14
from sdsl.book.outputs import declare
from sdsl.book.style import fix_layout
from sdsl.model.grid import SPACINGS, _table7_row, size_ratio, solve_table7
from sdsl.model.laws import BESIROGLU_2024, PAPER_EQ5, AcceptanceCoefficients, LossConstants
from sdsl.model.scaling_law import (
    _check_solution,
    beside_paper,
    beside_paper_values,
    coefficient_table,
    data_effects,
    fit_table8,
    fit_table9,
    law_target_size,
    ratio_band,
)

__all__ = [
    "CHAPTER",
    "table7",
    "table8",
    "table9",
    "variants",
    "figure5",
    "summary",
]

#: Chapter name: notebook stem and artifacts folder.
CHAPTER = "scaling"


# --------------------------------------------------------------------------------------------
# the grid


@declare("Table 7", "the grid of the scaling analysis", data=("paper_table7",))
def table7(
    spacing: str = "log",
    n_spacing: str = "log",
    d_high: float | None = None,
    d_target_high: float | None = None,
    table7: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Table 7 as used here, beside the printed one: parameter, low, high, points, spacing,
    paper_low, paper_high, paper_points, as_printed."""
    t7 = _data.load("paper_table7") if table7 is None else table7
    rows = []
    for parameter, sp, high in (
        ("N", n_spacing, None),
        ("M", spacing, None),
        ("D", spacing, d_high),
        ("D_prime", spacing, d_target_high),
    ):
        lo, hi, k = _table7_row(t7, parameter)
        used_hi = hi if high is None else float(high)
        rows.append(
            {
                "parameter": parameter,
                "low": lo,
                "high": used_hi,
                "points": k,
                "spacing": sp,
                "paper_low": lo,
                "paper_high": hi,
                "paper_points": k,
                "as_printed": used_hi == hi,
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# regressions (Tables 8 and 9)


@declare(
    "Table 8",
    "the regression N*/M = mu + M0/M + g ln D + g' ln D'",
    data=("paper_table7", "paper_table8", "paper_metrics"),
    also=("fit_metrics",),
)
def table8(
    solution: pd.DataFrame, paper: pd.DataFrame | None = None, tolerance: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Table 8 (``N*/M = mu + M0/M + g ln D + g' ln D'``, OLS + HC3) from a grid solution, and
    beside the paper's values if ``paper`` (``sdsl.data.load("paper_table8")``) is given."""
    ours = coefficient_table(fit_table8(solution))
    return ours if paper is None else beside_paper(ours, paper, tolerance)


@declare(
    "Table 9",
    "the regression N* = mu M + M0",
    data=("paper_table7", "paper_table9", "paper_metrics"),
    also=("fit_metrics",),
)
def table9(
    solution: pd.DataFrame, paper: pd.DataFrame | None = None, tolerance: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Table 9 (``N* = mu M + M0``, pooled OLS + HC3) from a grid solution, and beside the
    paper's values if ``paper`` (``sdsl.data.load("paper_table9")``) is given."""
    ours = coefficient_table(fit_table9(solution))
    return ours if paper is None else beside_paper(ours, paper, tolerance)


@declare(
    "variants",
    "Tables 8 and 9 under every grid reading (spacing, data range)",
    data=("paper_table7", "paper_table8", "paper_table9"),
)
@declare(
    "variants_n_grid",
    "Tables 8 and 9 under the spacings of the N grid",
    data=("paper_table7", "paper_table8", "paper_table9"),
)
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


def _billions(v: float, _pos: object = None) -> str:
    return f"{v / 1e9:.3g}B"


@declare("Figure 5", "N* and N*/M against M, D and D'", data=("paper_table7",), also=("grid_solution",))
def figure5(solution: pd.DataFrame) -> Figure:
    """Figure 5: N* (left, millions of parameters) and N*/M (right, per mille) against M, D and D'
    (one row each).

    Row M: one line per draft data size D, averaged over D' (the band: min to max over D').
    Rows D and D': one line per target size M, averaged over the other data size (band: its
    min to max). Log axes for the data sizes; colours from a log-scaled colour map with a
    colour bar per row. Axes carry their units; no offset text.
    """
    s = _check_solution(solution).assign(ratio=lambda df: df["n_star"] / df["m"])
    fig = Figure(figsize=(10.0, 10.5), layout="constrained")
    axes = fig.subplots(3, 2)
    rows = (
        ("m", "d_draft", "target size $M$ (parameters)", "draft pre-training tokens $D$", "d_target"),
        ("d_draft", "m", "draft pre-training tokens $D$", "target size $M$ (parameters)", "d_target"),
        ("d_target", "m", "target pre-training tokens $D'$", "target size $M$ (parameters)", "d_draft"),
    )
    cmap = colormaps["viridis"]
    for r, (x, hue, xlabel, hue_label, _other) in enumerate(rows):
        levels = np.sort(s[hue].unique())
        norm = LogNorm(vmin=levels.min(), vmax=levels.max()) if levels.size > 1 else None
        for ax, col, ylabel, scale in (
            (axes[r, 0], "n_star", "$N^*$ (millions of parameters)", 1e-6),
            (axes[r, 1], "ratio", "$N^*/M$ (per mille)", 1e3),
        ):
            for level in levels:
                sub = s[s[hue] == level].groupby(x)[col].agg(["mean", "min", "max"]).sort_index()
                color = cmap(norm(level)) if norm is not None else cmap(0.5)
                ax.plot(sub.index, sub["mean"] * scale, marker="o", ms=3, lw=1.2, color=color)
                if sub["max"].gt(sub["min"]).any():
                    ax.fill_between(sub.index, sub["min"] * scale, sub["max"] * scale, color=color, alpha=0.15, lw=0)
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            if x != "m":
                ax.set_xscale("log")
            else:  # target sizes in billions, without an offset text
                ax.xaxis.set_major_formatter(FuncFormatter(_billions))
        if norm is not None:
            bar = fig.colorbar(
                ScalarMappable(norm=norm, cmap=cmap), ax=axes[r, :].tolist(), label=hue_label, pad=0.01, aspect=25
            )
            if hue == "m":
                bar.ax.yaxis.set_major_formatter(FuncFormatter(_billions))
                bar.ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
                nice = [
                    v
                    for v in (2e9, 5e9, 1e10, 2e10, 5e10, 1e11, 2e11, 5e11)
                    if levels.min() * 1.2 < v < levels.max() / 1.2
                ]
                bar.set_ticks([levels.min(), *nice, levels.max()])
    return fix_layout(fig)


# --------------------------------------------------------------------------------------------
# the numbers of the prose


def summary(
    grid_table: pd.DataFrame,
    configs: pd.DataFrame,
    n: np.ndarray,
    solution: pd.DataFrame,
    check: pd.DataFrame,
    seconds: dict[str, float],
    t8: pd.DataFrame,
    t9: pd.DataFrame,
    metrics: pd.DataFrame,
    var: pd.DataFrame,
    nvar: pd.DataFrame,
    ratios: pd.DataFrame,
    effects: pd.DataFrame,
    small: pd.DataFrame,
    band: tuple[float, float] = (150.0, 300.0),
    rule_ratio: float = 200.0,
    m_small: float = 7e9,
    paper8: pd.DataFrame | None = None,
) -> dict[str, object]:
    """Every number the chapter's prose cites, by glue name (without the chapter prefix).

    Parameters
    ----------
    grid_table, configs, n : :func:`table7`, :func:`table7_grid` and :func:`n_grid` of the run.
    solution, check, seconds : :func:`solve_checked`.
    t8, t9, metrics : :func:`table8`, :func:`table9` (beside the paper) and :func:`fit_metrics`.
    var, nvar : :func:`variants` over spacings and data ranges, and over ``N`` grids and refinement.
    ratios, effects, small : :func:`practical_ratios`, :func:`data_effects` of ``solution`` and
        :func:`size_ratio` for a target of ``m_small`` parameters with every data size.
    band, rule_ratio : the band of ``M / N*`` and the ratio of the rule of thumb tested.
    paper8 : the paper's Table 8 (default ``data/paper_table8.csv``), for ``1 / mu``.

    Returns
    -------
    dict
        Plain values for :func:`sdsl.book.glue.glue_summary`; ``*_pct`` are percentages, timings
        (``t_*``) seconds of this run, ``v_<spacing>_<printed|wide>_t<table>_<parameter>`` the
        readings of ``var``.
    """
    from scipy import stats

    paper8 = _data.load("paper_table8") if paper8 is None else paper8
    g = grid_table.set_index("parameter")
    stride = max(1, int(np.sqrt(n.size / 2)))
    evals = len(np.unique(np.r_[np.arange(0, n.size, stride), n.size - 1])) + 2 * stride + 1
    out: dict[str, object] = {
        "n_configs": len(configs),
        "n_points": n.size,
        "n_low": n[0],
        "n_high": n[-1],
        "spacing": str(g.loc["M", "spacing"]),
        "n_spacing": str(g.loc["N", "spacing"]),
        "printed_high": g.loc["D", "paper_high"],
        "primary_high": g.loc["D", "high"],
        "n_step_linear": (n[-1] - n[0]) / (n.size - 1),
        "n_step_log": np.expm1(np.log(n[-1] / n[0]) / (n.size - 1)),
        "n_step_linear_pct": 100 * (n[-1] - n[0]) / (n.size - 1) / n[0],
        "eval_pct": 100 * evals / n.size,
        "m_min": configs["m"].min(),
        "m_max": configs["m"].max(),
        "m_factor": configs["m"].max() / configs["m"].min(),
        "t_grid": seconds["grid"],
        "t_scalar": seconds["scalar"],
        "t_loop_est": seconds["scalar"] * len(configs),
        "speedup": seconds["scalar"] * len(configs) / seconds["grid"],
        "check_n": len(check),
        "check_max": check["rel_diff"].abs().max(),
        "on_edge": int(solution["on_edge"].sum()),
        "nstar_min": solution["n_star"].min(),
        "nstar_max": solution["n_star"].max(),
    }
    out.update(beside_paper_values("t8", t8) | beside_paper_values("t9", t9))
    keep8 = t8[t8["parameter"] != "g_prime"]
    in_ci = all(t[c].all() for t in (t8, t9) for c in ("paper_in_our_ci", "ours_in_paper_ci"))
    df9 = int(fit_table9(solution).df_resid)
    out.update(
        t8_max_dev_pct=100 * keep8["rel_deviation"].abs().max(),
        t8_max_moe_dev_pct=100 * t8["moe_rel_deviation"].abs().max(),
        t9_max_dev_pct=100 * t9["rel_deviation"].abs().max(),
        t9_max_moe_dev_pct=100 * t9["moe_rel_deviation"].abs().max(),
        t9_estimates_equal=int(t9["estimate_digits_equal"].sum()),
        t9_moe_equal=int(t9["moe_digits_equal"].sum()),
        t9_rows=len(t9),
        all_in_ci="all" if in_ci else "not all",
        t9_df=df9,
        t_vs_z_pct=100 * (stats.t.ppf(0.975, df9) / stats.norm.ppf(0.975) - 1),
    )
    for r in metrics.itertuples():
        out[f"t{r.table}_{r.metric}"] = r.ours
        if pd.notna(r.paper):
            out[f"t{r.table}_{r.metric}_paper"] = r.paper
    printed, wide = float(g.loc["D", "paper_high"]), GRID_1E14.default

    def pick(sp: str, dh: float, tab: int, par: str) -> pd.Series:
        return var[(var.spacing == sp) & (var.d_high == dh) & (var.table == tab) & (var.parameter == par)].iloc[0]

    for sp in SPACINGS:
        for label, dh in (("printed", printed), ("wide", wide)):
            for tab, par in ((9, "mu"), (9, "M0"), (8, "mu"), (8, "M0"), (8, "g"), (8, "g_prime")):
                r, key = pick(sp, dh, tab, par), f"v_{sp}_{label}_t{tab}_{par}"
                out.update(
                    {
                        key: r.estimate,
                        f"{key}_dev_pct": 100 * r.rel_deviation,
                        f"{key}_moe": r.moe,
                        f"{key}_in_ours": "inside" if r.paper_in_our_ci else "outside",
                        f"{key}_in_paper": "inside" if r.ours_in_paper_ci else "outside",
                    }
                )
            for tab in (8, 9):
                out[f"v_{sp}_{label}_t{tab}_r2"] = pick(sp, dh, tab, "mu").r2
    w = var[(var.spacing == "log") & (var.d_high == wide) & (var.parameter != "g_prime")]
    out["wide_max_dev_pct"] = 100 * max(w.rel_deviation.abs().max(), w.moe_rel_deviation.abs().max())
    for par, key in (("g", "g"), ("mu", "mu"), ("M0", "m0")):
        r = pick("log", printed, 8, par)
        out[f"moe_ratio_{key}"] = r.moe / r.paper_moe
    gr = nvar[(nvar.table == 8) & (nvar.parameter == "g")]
    gp, gw = gr[gr.d_high == printed], gr[gr.d_high == wide]
    out.update(
        gn_printed_min=gp.estimate.min(),
        gn_printed_max=gp.estimate.max(),
        gn_wide_min=gw.estimate.min(),
        gn_wide_max=gw.estimate.max(),
        g_range_shift_pct=100 * abs(gp.estimate.mean() / gw.estimate.mean() - 1),
        gn_shift_pct=100 * (gp.estimate.max() - gp.estimate.min()) / abs(gp.estimate.mean()),
    )
    e9 = t9.set_index("parameter")["estimate"]
    mu9, m09 = float(e9["mu"]), float(e9["M0"])
    by_m = ratios.groupby("m")["m_over_n"].median()
    med_n = ratios.groupby("m")["n_star"].median()
    lo_b, hi_b = band
    bands = ratio_band(ratios, lo_b, hi_b)
    out.update({f"band_{k}": bands[k] for k in ("m_all_low", "m_all_high", "m_any_low", "m_any_high")})
    on_grid = solution.assign(r=solution["n_star"] / solution["m"]).groupby("m")["r"].median()
    out.update(
        inv_mu=1 / mu9,
        inv_mu_t8_paper=1 / float(paper8.set_index("parameter").loc["mu", "estimate"]),
        n_m_vals=by_m.size,
        m_low=by_m.index[0],
        m_high=by_m.index[-1],
        m_small=m_small,
        ratio_small=small["m_over_n"].median(),
        rule_ratio=rule_ratio,
        band_low=lo_b,
        band_high=hi_b,
        law_m_low=law_target_size(lo_b, mu9, m09),
        law_m_high=law_target_size(hi_b, mu9, m09),
        law_m_rule=law_target_size(rule_ratio, mu9, m09),
        law_ratio_at_high=by_m.index[-1] / (mu9 * by_m.index[-1] + m09),
        elast_range=np.log(med_n.iloc[-1] / med_n.iloc[0]) / np.log(med_n.index[-1] / med_n.index[0]),
        direct_m_rule=float(np.exp(np.interp(np.log(rule_ratio), np.log(by_m.to_numpy()), np.log(by_m.index)))),
        ratio_at_low=by_m.iloc[0],
        ratio_at_high=by_m.iloc[-1],
        grid_ratio_min=(solution["m"] / solution["n_star"]).min(),
        grid_ratio_max=(solution["m"] / solution["n_star"]).max(),
        grid_nm_at_min=1e3 * on_grid.iloc[0],
        grid_nm_at_max=1e3 * on_grid.iloc[-1],
    )
    e = effects.set_index("factor")
    for f, key in (("M", "m"), ("D", "d"), ("D'", "dp")):
        out.update(
            {
                f"eff_{key}_change_min": 100 * e.loc[f, "change_min"],
                f"eff_{key}_change_max": 100 * e.loc[f, "change_max"],
                f"eff_{key}_elast": e.loc[f, "elasticity_median"],
                f"eff_{key}_decades": np.log10(e.loc[f, "high"] / e.loc[f, "low"]),
            }
        )
    for f, key in (("D", "d"), ("D'", "dp")):
        out[f"eff_{key}_per_decade"] = 100 * np.expm1(np.log(10) * e.loc[f, "elasticity_median"])
    return out


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed."""
    from sdsl import validation as V
    from sdsl.data import records
    from sdsl.model.laws import check_loss_constants

    d_low = next(float(r["low"]) for r in records("paper_table7") if r["parameter"] == "D")
    size = V.rule(V.number, low=V.TARGET_PARAMS[0], high=V.TARGET_PARAMS[1], what="target parameters M")
    ratio = V.rule(V.number, low=1, low_open=True, what="a ratio M / N*")
    p = V.check_parameters(
        "scaling",
        params,
        {
            "artifacts_dir": V.optional(V.rule(V.folder)),
            "spacing": V.rule(V.choice, options=("log", "linear")),
            "n_spacing": V.rule(V.choice, options=("log", "linear")),
            "data_high": V.optional(V.rule(V.number, low=d_low, high=V.TOKENS[1], low_open=True, what="tokens")),
            "refine": V.rule(V.boolean),
            "constants": check_loss_constants,
            "band_low": ratio,
            "band_high": ratio,
            "rule_ratio": ratio,
            "m_low": size,
            "m_high": size,
            "m_points": V.rule(V.integer, low=2, high=10_000),
            "m_small": size,
            "seed": V.rule(V.seed),
        },
    )
    for lo, hi in (("band_low", "band_high"), ("m_low", "m_high")):
        if lo in p and hi in p and not p[lo] < p[hi]:
            raise ValueError(f"{lo} must be below {hi}, got {lo} = {p[lo]:g} and {hi} = {p[hi]:g}")


# What this chapter shows that a function of another module makes.
declare("size_ratio", "M/N* over target sizes")(size_ratio)
declare("data_effects", "how far N* moves across M, D and D'", data=("paper_table7",))(data_effects)
