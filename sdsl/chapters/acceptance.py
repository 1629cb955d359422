"""Acceptance rate against perplexity: the paper's Eq. 5 plane and per-target curves.

The chapter ``notebooks/acceptance.md`` regenerates Tables 1 to 4 and Figures 1 and 3 of
Bozorgkhoo and Molybog (2026, arXiv 2603.11053) through the functions of this module, one per
table or figure (book chapter "Method", sections on Eq. 5 and on the per-target fits; method
notes, sections 5 and 7).

* :func:`fit_plane` (Eq. 5 by OLS: Table 3) and :func:`fit_per_target` (linear and logarithmic
  forms by OLS, the power law by nonlinear least squares in the original space: Table 4), from
  :mod:`sdsl.model.alpha_fits`, which documents their conventions (``MoE = t(0.975, n - k) SE``,
  ``MSE = SSR / n``: the convention that reproduces Table 4).
* :func:`table1`, :func:`table2`, :func:`table3`, :func:`table4`, :func:`table4_vs_paper`,
  :func:`figure1`, :func:`figure1_sections`, :func:`figure3`: the paper's tables and figures (and
  a 2-D companion view of Figure 1); the figures are drawn at the end of this module.
* :func:`measurements`, :func:`tables12`, :func:`coefficients`, :func:`eq5_table`,
  :func:`table4_agreement`: the chapter's other steps; :func:`summary`: every number the chapter's prose cites.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from sdsl import data as _data
from sdsl.book.outputs import declare
from sdsl.book.style import family_color
from sdsl.model.alpha_fits import (
    CurveFit,
    PlaneFit,
    check_frame,
    fit_per_target,
    fit_plane,
    fit_power_loglog,
    fit_targets,
    implied_residual_df,
    pair_matrix,
    targets_in_order,
)
from sdsl.model.laws import AcceptanceCoefficients
from sdsl.tolerance import equal_to_printed

__all__ = [
    "CHAPTER",
    "EXTRAPOLATE",
    "has_table",
    "acceptance_matrix",
    "paper_sample",
    "TABLE4_QUANTITIES",
    "table1",
    "table2",
    "table3",
    "table4",
    "table4_vs_paper",
    "figure1",
    "figure1_sections",
    "figure3",
    "measurements",
    "tables12",
    "coefficients",
    "eq5_table",
    "table4_agreement",
    "summary",
]

#: Chapter name: notebook stem and artifacts folder.
CHAPTER = "acceptance"


#: Quantities of one Table 4 row, in the paper's column order.
TABLE4_QUANTITIES: tuple[str, ...] = (
    "p1",
    "moe1",
    "ci1_lower",
    "ci1_upper",
    "p2",
    "moe2",
    "ci2_lower",
    "ci2_upper",
    "mse",
    "r2",
)


@declare(
    "Table 4",
    "per-target linear, logarithmic and power-law fits",
    data=("acceptance", "paper_table4"),
    also=("table4_vs_paper",),
)
def table4(df: pd.DataFrame, targets: Iterable[str] | None = None) -> pd.DataFrame:
    """The paper's Table 4 for every target of ``df``: linear, logarithmic and power-law fits of
    alpha on draft perplexity (method notes, section 7), one row per (target, function) with the
    paper's columns ``p1, moe1, ci1_lower, ci1_upper, p2, moe2, ci2_lower, ci2_upper, mse, r2``
    plus ``n`` (drafts per target). The paper prints only Qwen1.5-14B and Qwen1.5-32B."""
    return pd.DataFrame([f.row() for f in fit_targets(df, targets)])


def table4_vs_paper(ours: pd.DataFrame, paper: pd.DataFrame, tolerance: pd.DataFrame) -> pd.DataFrame:
    """Every printed cell of Table 4 beside our value (long form).

    Parameters
    ----------
    ours : :func:`table4` output.
    paper : ``sdsl.data.load("paper_table4")``.
    tolerance : ``sdsl.data.printed_tolerance("paper_table4")``: half a unit in the last printed
        digit of each cell.

    Returns one row per (target, function, quantity) printed by the paper, for the targets
    present in ``ours``: ``ours``, ``paper``, ``difference = ours - paper``, ``tolerance``,
    ``last_digits = |difference| / (2 tolerance)`` (the deviation in units of the last printed
    digit) and ``equal_to_printed`` (``|difference| <= tolerance``, with a relative slack of 1e-9
    for binary floating point).
    """
    for name, frame in (("ours", ours), ("paper", paper), ("tolerance", tolerance)):
        missing = [c for c in ("target", "function", *TABLE4_QUANTITIES) if c not in frame.columns]
        if missing:
            raise ValueError(f"{name} is missing Table 4 column(s) {missing}")
    key = ["target", "function"]
    long = [
        f.melt(id_vars=key, value_vars=list(TABLE4_QUANTITIES), var_name="quantity", value_name=name)
        for f, name in ((paper, "paper"), (ours, "ours"), (tolerance, "tolerance"))
    ]
    rows = paper[key].reset_index(drop=True).reset_index(names="_row")
    out = rows.merge(long[0], on=key).merge(long[1], on=[*key, "quantity"])
    out = out.merge(long[2], on=[*key, "quantity"], how="left")
    out = out.assign(_q=out["quantity"].map(TABLE4_QUANTITIES.index)).sort_values(["_row", "_q"])
    out["difference"] = out["ours"] - out["paper"]
    out["last_digits"] = out["difference"].abs() / (2.0 * out["tolerance"])
    out["equal_to_printed"] = equal_to_printed(out["ours"], out["paper"], out["tolerance"]).astype(bool)
    cols = [
        "target",
        "function",
        "quantity",
        "ours",
        "paper",
        "difference",
        "tolerance",
        "last_digits",
        "equal_to_printed",
    ]
    return out[cols].reset_index(drop=True).astype({c: float for c in cols[3:8]})


# ---------------------------------------------------------------------------------------------
# Tables 1 to 3


def _rows_of(df: pd.DataFrame, number: int) -> np.ndarray:
    if "source_table" not in df.columns:
        return np.zeros(len(df), dtype=bool)
    return pd.to_numeric(df["source_table"], errors="coerce").astype(float).to_numpy() == number


def _by_table(df: pd.DataFrame, number: int) -> pd.DataFrame:
    sub = df[_rows_of(df, number)]
    if sub.empty:
        which = "the OPT drafts" if number == 1 else "the Qwen drafts"
        raise ValueError(f"no rows with source_table == {number}: Table {number} lists {which}")
    return pair_matrix(sub)


def has_table(df: pd.DataFrame, number: int) -> bool:
    """Whether ``df`` has rows of the paper's Table ``number`` (column ``source_table``); a
    user's own measurements leave ``source_table`` empty."""
    return bool(np.any(_rows_of(df, number)))


@declare(
    "measurements",
    "acceptance rates of a reader's measurements that belong to neither of the paper's tables",
    data=("acceptance",),
    regenerated=False,
)
def acceptance_matrix(df: pd.DataFrame) -> pd.DataFrame:
    """All rows of ``df`` in the layout of Tables 1 and 2 (targets as rows with their perplexity,
    drafts as columns with theirs, cells ``alpha ± half-width``): for measurements that are not
    the paper's."""
    return pair_matrix(df)


@declare("Table 1", "acceptance rates of the OPT drafts", data=("acceptance",))
def table1(df: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 1 (OPT drafts): targets as rows with their perplexity, drafts as columns,
    cells ``alpha ± 95 % half-width``; the first row ("Perplexity") holds each draft's perplexity.
    Rows of ``df`` with ``source_table == 1``."""
    return _by_table(df, 1)


@declare("Table 2", "acceptance rates of the Qwen drafts", data=("acceptance",))
def table2(df: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 2 (Qwen2.5 and Qwen1.5 drafts), in the layout of :func:`table1`.
    Rows of ``df`` with ``source_table == 2``."""
    return _by_table(df, 2)


@declare(
    "Table 3",
    "the Eq. 5 plane refitted beside the paper's coefficients",
    data=("acceptance", "paper_table3", "paper_metrics"),
)
def table3(fit: PlaneFit, paper: pd.DataFrame, paper_metrics: pd.DataFrame | None = None) -> pd.DataFrame:
    """The paper's Table 3 (Eq. 5 coefficients and fit quality) beside our refit, long form.

    Parameters
    ----------
    fit : :func:`fit_plane` on the pairs we have.
    paper : ``sdsl.data.load("paper_table3")`` (parameter, estimate, std_error, moe, ci_lower,
        ci_upper).
    paper_metrics : ``sdsl.data.load("paper_metrics")`` (rows of table 3: ``mse``, ``r2``);
        optional.

    Returns columns ``parameter`` (A, B, C or ``model``), ``quantity``, ``paper``, ``refit``,
    ``difference = refit - paper``. The ``model`` rows hold ``mse``, ``r2`` and ``n`` (the paper's
    ``n`` is not printed: its value, 130, is implied by ``moe / std_error``, see
    :func:`implied_residual_df`).
    """
    if not isinstance(fit, PlaneFit):
        raise ValueError(f"fit must be a PlaneFit (from fit_plane), got {type(fit).__name__}")
    cols = ("parameter", "estimate", "std_error", "moe", "ci_lower", "ci_upper")
    missing = [c for c in cols if c not in paper.columns]
    if missing:
        raise ValueError(f"paper is missing column(s) {missing}; expected the paper's Table 3")
    ours = fit.table().set_index("parameter")
    pp = paper.set_index("parameter")
    rows = []
    for p in ("A", "B", "C"):
        for q in cols[1:]:
            a = float(pp.loc[p, q]) if p in pp.index else np.nan
            b = float(ours.loc[p, q])
            rows.append({"parameter": p, "quantity": q, "paper": a, "refit": b, "difference": b - a})
    pm: dict[str, float] = {}
    if paper_metrics is not None:
        sub = paper_metrics[paper_metrics["table"].astype(str) == "3"]
        pm = {str(m): float(v) for m, v in zip(sub["metric"], sub["value"])}
    for q, b in (("mse", fit.mse), ("r2", fit.r2), ("n", float(fit.n))):
        a = pm.get(q, np.nan)
        rows.append({"parameter": "model", "quantity": q, "paper": a, "refit": b, "difference": b - a})
    return pd.DataFrame(rows, columns=["parameter", "quantity", "paper", "refit", "difference"])


# ---------------------------------------------------------------------------------------------
# the chapter's other steps


def measurements(path: str | None = None) -> pd.DataFrame:
    """The (draft, target) measurements of the chapter: ``data/acceptance.csv`` (Tables 1 and 2)
    when ``path`` is None, else the user's CSV at ``path``, validated against the same schema
    (an error names the file, line and column)."""
    return _data.load("acceptance") if path is None else _data.load(path, schema="acceptance")


def tables12(df: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Tables 1 and 2 of ``df`` (the rows of each, where present), by artifact name; for
    measurements of neither table, all rows in their layout as ``{"measurements": ...}``."""
    out = {f"table{k}": fn(df) for k, fn in ((1, table1), (2, table2)) if has_table(df, k)}
    return out or {"measurements": acceptance_matrix(df)}


def coefficients(source: str, plane: PlaneFit, paper: pd.DataFrame) -> AcceptanceCoefficients:
    """The Eq. 5 coefficients the later chapters use: ``"paper"`` (Table 3 as printed, ``paper``
    = ``sdsl.data.load("paper_table3")``) or ``"refit"`` (``plane``, our fit)."""
    if source == "paper":
        e = paper.set_index("parameter")["estimate"]
        return AcceptanceCoefficients(A=float(e["A"]), B=float(e["B"]), C=float(e["C"]), source="paper Table 3")
    if source == "refit":
        return plane.coefficients
    raise ValueError(f"coefficients_source must be 'paper' or 'refit', got {source!r}")


def eq5_table(coef: AcceptanceCoefficients) -> pd.DataFrame:
    """``coef`` as the table ``eq5_coefficients``: parameter, estimate, source."""
    return pd.DataFrame({"parameter": ["A", "B", "C"], "estimate": [coef.A, coef.B, coef.C], "source": coef.source})


def table4_agreement(cmp4: pd.DataFrame) -> pd.DataFrame:
    """:func:`table4_vs_paper` per (target, function): printed numbers, how many agree with every
    printed digit, and the largest deviation in units of the last printed digit."""
    return (
        cmp4.groupby(["target", "function"], sort=False)
        .agg(
            printed=("quantity", "size"),
            equal=("equal_to_printed", "sum"),
            max_last_digits=("last_digits", "max"),
        )
        .reset_index()
    )


def paper_sample(implied: pd.DataFrame | None = None, paper_pairs: pd.DataFrame | None = None) -> dict[str, float]:
    """The observations behind the paper's Table 3, implied by the tightest row of ``implied``
    (:func:`implied_residual_df`; default: of Table 3 as printed): ``dof`` with its MoE/SE
    ``ratio``, ``n = dof + 3``, the ``drafts`` of ``paper_pairs`` (default ``data/acceptance.csv``,
    Tables 1 and 2) and ``targets = n / drafts`` (13.0 for the paper's Table 3)."""
    if implied is None:
        paper3, tol = _data.load("paper_table3"), _data.printed_tolerance("paper_table3")
        implied = implied_residual_df(paper3.assign(std_error_tol=tol["std_error"], moe_tol=tol["moe"]))
    paper_pairs = _data.load("acceptance") if paper_pairs is None else paper_pairs
    tight = implied.dropna(subset=["df_min"])
    tight = tight.loc[(tight["df_max"] - tight["df_min"]).idxmin()]
    n, drafts = int(tight["df_min"]) + 3, int(paper_pairs["draft"].nunique())
    return {
        "dof": int(tight["df_min"]),
        "ratio": float(tight["ratio"]),
        "n": n,
        "drafts": drafts,
        "targets": n / drafts,
    }


def summary(
    df: pd.DataFrame,
    plane: PlaneFit,
    implied: pd.DataFrame,
    t4: pd.DataFrame,
    cmp4: pd.DataFrame,
    paper3: pd.DataFrame,
    paper_metrics: pd.DataFrame,
    coef: AcceptanceCoefficients,
    paper_pairs: pd.DataFrame | None = None,
) -> dict[str, object]:
    """Every number the chapter's prose cites, by glue name (without the chapter prefix).

    Parameters
    ----------
    df, plane, implied, t4, cmp4 : the measurements, :func:`fit_plane`, :func:`implied_residual_df`
        of the paper's Table 3, :func:`table4` and :func:`table4_vs_paper`.
    paper3, paper_metrics : the paper's Table 3 and metrics (``sdsl.data``).
    coef : the plane of Figure 1 (:func:`coefficients`); ``resid_*`` are the targets with the lowest
        and highest mean residual ``alpha - (A x + B y + C)`` and those means.
    paper_pairs : the pairs the paper prints (default ``data/acceptance.csv``).

    Returns
    -------
    dict
        Plain values for :func:`sdsl.book.glue.glue_summary`. ``paper_n``, the paper's observations,
        is implied by the tightest row of ``implied`` (``df_min + 3``): 130 for the paper's Table 3.
    """
    paper_pairs = _data.load("acceptance") if paper_pairs is None else paper_pairs
    est = paper3.set_index("parameter")["estimate"]
    pm = paper_metrics[paper_metrics["table"].astype(str) == "3"].set_index("metric")["value"]
    sample = paper_sample(implied, paper_pairs)
    n_paper, drafts = sample["n"], sample["drafts"]
    se_ratio = plane.std_error / paper3.set_index("parameter")["std_error"]
    inside = [k for k in ("A", "B", "C") if plane.ci_lower[k] <= est[k] <= plane.ci_upper[k]]
    out: dict[str, object] = {
        "n_pairs": len(df),
        "n_targets": df["target"].nunique(),
        "n_drafts": df["draft"].nunique(),
        "paper_r2": float(pm["r2"]),
        "paper_mse": float(pm["mse"]),
        "refit_r2": plane.r2,
        "refit_mse": plane.mse,
        "refit_dof": plane.df_resid,
        "paper_dof": sample["dof"],
        "paper_ratio": sample["ratio"],
        "paper_n": n_paper,
        "paper_drafts": drafts,
        "paper_tables_targets": paper_pairs["target"].nunique(),
        "paper_targets": n_paper / drafts,
        "se_ratio_lo": float(se_ratio.min()),
        "se_ratio_hi": float(se_ratio.max()),
        "paper_in_refit_ci": ", ".join(inside) if inside else "none",
        "t4_cells": len(cmp4),
        "t4_equal": int(cmp4["equal_to_printed"].sum()),
        "t4_rows": len(cmp4.groupby(["target", "function"])),
        "t4_targets": ", ".join(cmp4["target"].unique()) if len(cmp4) else "none",
        "t4_max_digits": float(cmp4["last_digits"].max()) if len(cmp4) else 0.0,
    }
    for k in ("A", "B", "C"):
        out[f"paper_{k}"], out[f"refit_{k}"] = float(est[k]), float(plane.estimate[k])
    resid = (
        (df["alpha"] - (coef.A * df["draft_ppl"] + coef.B * df["target_ppl"] + coef.C))
        .groupby(df["target"], sort=False)
        .mean()
    )
    out.update(
        resid_low_target=resid.idxmin(),
        resid_low=float(resid.min()),
        resid_high_target=resid.idxmax(),
        resid_high=float(resid.max()),
    )
    best = t4.loc[t4.groupby("target", sort=False)["r2"].idxmax(), ["target", "function"]]
    out["best_forms"] = "; ".join(f"{t}: {f}" for t, f in zip(best["target"], best["function"]))
    if "Qwen1.5-14B" in set(df["target"]):
        pw, lg = fit_per_target(df, "Qwen1.5-14B", "power"), fit_per_target(df, "Qwen1.5-14B", "logarithmic")
        ll = fit_power_loglog(df, "Qwen1.5-14B")
        out.update(
            q14_pow_p1=pw.p1,
            q14_pow_p2=pw.p2,
            q14_loglog_p1=ll[0],
            q14_loglog_p2=ll[1],
            q14_pow_r2=pw.r2,
            q14_log_r2=lg.r2,
        )
    return out


def check_parameters(**params: object) -> None:
    """Check the notebook's parameters before anything runs (the cell after its parameters
    cell): one ``ValueError`` naming the parameter and what is allowed. ``measurements`` is read
    (``sdsl.data.load`` with the ``acceptance`` schema, its file, line and column named) and must
    hold what the fits need: 4 pairs with two distinct draft and target perplexities (Eq. 5), and
    per target 3 drafts of 2 distinct perplexities (Table 4)."""
    from sdsl import data as _data
    from sdsl import validation as V

    p = V.check_parameters(
        "acceptance",
        params,
        {
            "artifacts_dir": V.optional(V.rule(V.folder)),
            "coefficients_source": V.rule(V.choice, options=("paper", "refit"), what="Eq. 5 coefficients used"),
            "measurements": V.optional(V.rule(V.existing_file, what="a CSV with the columns of data/acceptance.csv")),
        },
    )
    if p.get("measurements") is None:
        return
    df = _data.load(p["measurements"], schema="acceptance")
    where = f"measurements {p['measurements']}"
    if len(df) < 4 or df["draft_ppl"].nunique() < 2 or df["target_ppl"].nunique() < 2:
        raise ValueError(
            f"{where}: the plane alpha = A x + B y + C needs at least 4 pairs with 2 distinct draft_ppl "
            f"and 2 distinct target_ppl, got {len(df)} pair(s)"
        )
    for t, g in df.groupby("target", sort=False):
        if len(g) < 3 or g["draft_ppl"].nunique() < 2:
            raise ValueError(
                f"{where}: target {t!r} has {len(g)} draft(s); its fits of Table 4 need at least 3 drafts "
                f"with 2 distinct draft_ppl"
            )


# ---------------------------------------------------------------------------------------------
# the chapter's figures


#: Figure 3 draws the fitted curves from 0.8 times the smallest to 1.4 times the largest measured
#: draft perplexity: outside the measured range they are extrapolations, and there they part.
EXTRAPOLATE = (0.8, 1.4)

#: How each fitted form is drawn in Figure 3 and named in its legend: colours apart from the
#: families', dash patterns (and markers on the power law) apart from one another, since the
#: logarithmic and power-law curves nearly coincide over the measured range.
_FORM_STYLE: dict[str, dict[str, object]] = {
    "linear": {"color": "0.1", "linestyle": "-", "linewidth": 1.2, "label": "linear fit"},
    "logarithmic": {"color": "#CC79A7", "linestyle": (0, (6, 2)), "linewidth": 2.2, "label": "logarithmic fit"},
    "power": {
        "color": "#E69F00",
        "linestyle": (0, (1, 1.5)),
        "linewidth": 2.0,
        "marker": "^",
        "ms": 4,
        "markevery": 20,
        "label": "power-law fit",
    },
}


def _plane(fit: PlaneFit | AcceptanceCoefficients) -> tuple[float, float, float]:
    if isinstance(fit, PlaneFit):
        return float(fit.estimate["A"]), float(fit.estimate["B"]), float(fit.estimate["C"])
    if isinstance(fit, AcceptanceCoefficients):
        return fit.A, fit.B, fit.C
    raise ValueError(f"fit must be a PlaneFit or AcceptanceCoefficients, got {type(fit).__name__}")


@declare(
    "Figure 1",
    "acceptance rate against draft and target perplexity, with the Eq. 5 plane",
    data=("acceptance", "paper_table3"),
    also=("figure1_sections",),
)
def figure1(
    df: pd.DataFrame,
    fit: PlaneFit | AcceptanceCoefficients,
    elev: float = 22.0,
    azim: float = -128.0,
) -> Figure:
    """The paper's Figure 1: observations ``(x, y, alpha)`` (draft perplexity, target perplexity,
    acceptance rate) as a 3-D scatter coloured by draft family, with the Eq. 5 plane of ``fit``
    (a :class:`PlaneFit` or :class:`sdsl.AcceptanceCoefficients`) as a surface over the data's
    range. The view angle is fixed (``elev``, ``azim``) so the figure is the same every run."""
    check_frame(df, ("draft_family", "draft_ppl", "target_ppl", "alpha"))
    a, b, c = _plane(fit)
    fig = Figure(figsize=(7.0, 5.6), layout="constrained")
    ax = fig.add_subplot(projection="3d")
    x, y = df["draft_ppl"].to_numpy(dtype=float), df["target_ppl"].to_numpy(dtype=float)
    gx, gy = np.meshgrid(np.linspace(x.min(), x.max(), 20), np.linspace(y.min(), y.max(), 20))
    ax.plot_surface(gx, gy, a * gx + b * gy + c, color="0.6", alpha=0.35, linewidth=0, shade=False)
    ax.plot_wireframe(gx, gy, a * gx + b * gy + c, color="0.45", linewidth=0.3, rstride=4, cstride=4)
    for fam in dict.fromkeys(df["draft_family"].tolist()):
        s = df[df["draft_family"] == fam]
        ax.scatter(
            s["draft_ppl"],
            s["target_ppl"],
            s["alpha"],
            color=family_color(fam),
            s=22,
            depthshade=False,
            label=f"{fam} drafts",
        )
    # the labels set back from the tick labels: at the book's size of text they would touch them
    ax.set_xlabel("draft perplexity $x$", labelpad=14)
    ax.set_ylabel("target perplexity $y$", labelpad=14)
    ax.set_zlabel(r"acceptance rate $\alpha$", labelpad=14)
    ax.view_init(elev=elev, azim=azim)
    ax.legend(loc="upper left")
    return fig


def figure1_sections(df: pd.DataFrame, fit: PlaneFit | AcceptanceCoefficients) -> Figure:
    """A 2-D companion of Figure 1: the same observations and plane, read without perspective.

    Left: ``alpha`` against draft perplexity ``x``, one colour per target, with the plane's
    section at that target's perplexity ``y`` as a line (the plane is a family of parallel lines of
    slope ``A``, shifted by ``B y``). Right: each observation against the plane's prediction, with
    the diagonal, markers by draft family. The lines carry ids (``gid``) ``section|<target>``."""
    check_frame(df, ("target", "draft_family", "draft_ppl", "target_ppl", "alpha"))
    a, b, c = _plane(fit)
    fig = Figure(figsize=(9.0, 5.0), layout="constrained")
    left, right = fig.subplots(1, 2)
    targets = targets_in_order(df)
    colours = dict(zip(targets, ("#332288", "#117733", "#88CCEE", "#CC6677", "#AA4499", "#999933", "#44AA99")))
    xs = np.linspace(df["draft_ppl"].min(), df["draft_ppl"].max(), 50)
    markers = dict(zip(dict.fromkeys(df["draft_family"].tolist()), "os^Dv"))
    for t in targets:
        s = df[df["target"] == t]
        col = colours.get(t, "0.3")
        y = float(s["target_ppl"].iloc[0])
        (line,) = left.plot(xs, a * xs + b * y + c, color=col, lw=1.4, label=f"{t} ($y$ = {y:.2f})")
        line.set_gid(f"section|{t}")
        left.scatter(s["draft_ppl"], s["alpha"], color=col, s=18, zorder=3)
    left.set_xlabel("draft perplexity $x$")
    left.set_ylabel(r"acceptance rate $\alpha$")
    left.legend(
        title="target (the plane at its perplexity $y$)",
        fontsize=8,
        title_fontsize=8,
        ncols=2,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.16),
    )
    pred = a * df["draft_ppl"] + b * df["target_ppl"] + c
    for fam, m in markers.items():
        sel = df["draft_family"] == fam
        right.scatter(pred[sel], df.loc[sel, "alpha"], marker=m, s=20, color=family_color(fam), label=f"{fam} drafts")
    lo, hi = float(min(pred.min(), df["alpha"].min())), float(max(pred.max(), df["alpha"].max()))
    right.plot([lo, hi], [lo, hi], color="0.4", ls="--", lw=1, label=r"measured $=$ plane")
    right.set_xlabel(r"$\alpha$ of the plane, $A x + B y + C$")
    right.set_ylabel(r"measured $\alpha$")
    right.legend(fontsize=8, ncols=2, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    return fig


@declare("Figure 3", "acceptance rate against draft perplexity, with the fits of Table 4", data=("acceptance",))
def figure3(df: pd.DataFrame, fits: Sequence[CurveFit] | Mapping[object, CurveFit]) -> Figure:
    """The paper's Figure 3: alpha against draft perplexity, one panel per target, observations
    coloured by draft family (with their 95 % half-widths when ``alpha_hw95`` is present) and the
    fitted linear, logarithmic and power-law curves of ``fits`` (from :func:`fit_targets`), each
    form in its own colour and dash pattern (legend: "linear fit", "logarithmic fit", "power-law
    fit"); curves carry ids (``gid``) ``fit|<target>|<form>``. The curves run beyond the measured
    perplexities (shaded) by the factors :data:`EXTRAPOLATE`, where the forms part."""
    check_frame(df, ("target", "draft_family", "draft_ppl", "alpha"))
    fits = list(fits.values()) if isinstance(fits, Mapping) else list(fits)
    if not fits or not all(isinstance(f, CurveFit) for f in fits):
        raise ValueError("fits must be a non-empty sequence of CurveFit (from fit_targets)")
    targets = targets_in_order(df)
    ncols = min(3, len(targets))
    nrows = int(np.ceil(len(targets) / ncols))
    fig = Figure(figsize=(3.4 * ncols, 2.9 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
    lo, hi = float(df["draft_ppl"].min()), float(df["draft_ppl"].max())
    xs = np.geomspace(lo * EXTRAPOLATE[0], hi * EXTRAPOLATE[1], 200)
    for ax, t in zip(axes.flat, targets):
        sub = df[df["target"] == t]
        ax.axvspan(lo, hi, color="0.93", zorder=0, lw=0, label="measured range")
        for fam in dict.fromkeys(sub["draft_family"].tolist()):
            s = sub[sub["draft_family"] == fam]
            err = s["alpha_hw95"] if "alpha_hw95" in s.columns else None
            ax.errorbar(
                s["draft_ppl"],
                s["alpha"],
                yerr=err,
                fmt="o",
                ms=4,
                color=family_color(fam),
                label=f"{fam} drafts",
                capsize=0,
            )
        for f in fits:
            if f.target == t:
                (line,) = ax.plot(xs, f.predict(xs), **_FORM_STYLE[f.form])
                line.set_gid(f"fit|{t}|{f.form}")
        ax.text(0.97, 0.95, t, transform=ax.transAxes, ha="right", va="top", fontsize="small")
    used = list(axes.flat)[: len(targets)]
    for i, ax in enumerate(used):
        if i + ncols >= len(targets):  # lowest panel of its column: show the x axis
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel("draft perplexity $x$")
    for ax in axes[:, 0]:
        ax.set_ylabel(r"acceptance rate $\alpha$")
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    spare = list(axes.flat)[len(targets) :]
    if spare:
        for ax in spare:
            ax.axis("off")
        spare[0].legend(handles, labels, loc="center")
    else:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 6))
    return fig


# What this chapter shows that a function of another module makes.
declare("table3_implied_df", "residual degrees of freedom implied by Table 3", data=("paper_table3",))(
    implied_residual_df
)
declare(
    "eq5_coefficients",
    "the Eq. 5 coefficients used downstream, paper's and refitted",
    data=("acceptance", "paper_table3"),
)(fit_plane)
