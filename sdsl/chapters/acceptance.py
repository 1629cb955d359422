"""Acceptance rate against perplexity: the paper's Eq. 5 plane and per-target curves.

The chapter ``notebooks/acceptance.md`` regenerates Tables 1 to 4 and Figures 1 and 3 of
Bozorgkhoo and Molybog (2026, arXiv 2603.11053) through the functions of this module, one per
table or figure (book chapter "Method", sections on Eq. 5 and on the per-target fits; method
notes, sections 5 and 7).

* :func:`fit_plane`: ordinary least squares of the paper's Eq. 5, ``alpha = A x + B y + C``
  (``x`` draft perplexity, ``y`` target perplexity), with standard errors, margins of error
  ``t(0.975, n - 3) * SE``, 95 % confidence intervals, ``MSE = SSR / n`` and ``R^2`` (Table 3).
* :func:`fit_per_target`: for one target, alpha against draft perplexity in three forms
  (Table 4, Figure 3; method notes, section 7):

  - linear ``alpha = p1 x + p2`` and logarithmic ``alpha = p1 ln x + p2`` by OLS;
  - power law ``alpha = p1 x ** p2`` by nonlinear least squares in the original space
    (``scipy.optimize.curve_fit``), margins of error ``t(0.975, n - 2) * SE`` from the covariance
    of the estimates, ``R^2`` in the original space.

  Every form reports ``MSE = SSR / n`` (not ``SSR / (n - k)``): this is the convention that
  reproduces the MSE column of the paper's Table 4.
* :func:`table1`, :func:`table2`, :func:`table3`, :func:`table4`, :func:`table4_vs_paper`,
  :func:`figure1`, :func:`figure3`: the paper's tables and figures.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from sdsl.book.style import family_color
from sdsl.model.alpha_fits import (
    FORMS,
    CurveFit,
    PlaneFit,
    check_frame,
    fit_per_target,
    fit_plane,
    fit_power_loglog,
    fit_targets,
    implied_residual_df,
    targets_in_order,
)
from sdsl.model.compare import equal_to_printed
from sdsl.model.laws import AcceptanceCoefficients

__all__ = [
    "FORMS",
    "PlaneFit",
    "CurveFit",
    "fit_plane",
    "fit_per_target",
    "fit_targets",
    "fit_power_loglog",
    "has_table",
    "acceptance_matrix",
    "TABLE4_QUANTITIES",
    "implied_residual_df",
    "table1",
    "table2",
    "table3",
    "table4",
    "table4_vs_paper",
    "figure1",
    "figure3",
]


#: Quantities of one Table 4 row, in the paper's column order.
TABLE4_QUANTITIES: tuple[str, ...] = (
    "p1", "moe1", "ci1_lower", "ci1_upper", "p2", "moe2", "ci2_lower", "ci2_upper", "mse", "r2",
)

_FORM_STYLE: dict[str, dict[str, object]] = {
    "linear": {"color": "0.15", "linestyle": "-"},
    "logarithmic": {"color": "0.35", "linestyle": "--"},
    "power": {"color": "0.55", "linestyle": ":"},
}


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
    merged = paper.merge(ours, on=key, suffixes=("_paper", "_ours"), how="inner").merge(
        tolerance.rename(columns={q: f"{q}_tol" for q in TABLE4_QUANTITIES}), on=key, how="left"
    )
    rows = []
    for _, r in merged.iterrows():
        for q in TABLE4_QUANTITIES:
            o, p, tol = float(r[f"{q}_ours"]), float(r[f"{q}_paper"]), float(r[f"{q}_tol"])
            d = o - p
            rows.append(
                {
                    "target": r["target"], "function": r["function"], "quantity": q,
                    "ours": o, "paper": p, "difference": d, "tolerance": tol,
                    "last_digits": abs(d) / (2.0 * tol),
                    "equal_to_printed": bool(equal_to_printed(o, p, tol)),
                }
            )
    return pd.DataFrame(
        rows,
        columns=["target", "function", "quantity", "ours", "paper", "difference", "tolerance",
                 "last_digits", "equal_to_printed"],
    )


# ---------------------------------------------------------------------------------------------
# Tables 1 to 3


def _fmt_alpha(alpha: float, hw: float | None) -> str:
    if hw is None or not np.isfinite(hw):
        return f"{alpha:g}"
    return f"{alpha:g} ± {hw:g}"


def _paper_layout(df: pd.DataFrame) -> pd.DataFrame:
    check_frame(df, ("target", "draft", "draft_ppl", "target_ppl", "alpha"))
    targets = targets_in_order(df)
    drafts = list(dict.fromkeys(df["draft"].tolist()))
    hw = df["alpha_hw95"] if "alpha_hw95" in df.columns else pd.Series(np.nan, index=df.index)
    header: dict[str, object] = {"target": "Perplexity", "target_ppl": np.nan}
    for d in drafts:
        ppl = df.loc[df["draft"] == d, "draft_ppl"].unique()
        if ppl.size != 1:
            raise ValueError(f"draft {d!r} has {ppl.size} different perplexities {list(ppl)}; expected one")
        header[d] = f"{float(ppl[0]):.10g}"
    rows = [header]
    for t in targets:
        sub = df[df["target"] == t]
        tp = sub["target_ppl"].unique()
        if tp.size != 1:
            raise ValueError(f"target {t!r} has {tp.size} different perplexities {list(tp)}; expected one")
        row: dict[str, object] = {"target": t, "target_ppl": float(tp[0])}
        for d in drafts:
            hit = sub[sub["draft"] == d]
            row[d] = _fmt_alpha(float(hit["alpha"].iloc[0]), float(hw[hit.index[0]])) if len(hit) else ""
        rows.append(row)
    return pd.DataFrame(rows, columns=["target", "target_ppl", *drafts])


def _by_table(df: pd.DataFrame, number: int) -> pd.DataFrame:
    if "source_table" in df.columns:
        sub = df[pd.to_numeric(df["source_table"], errors="coerce").astype(float).to_numpy() == number]
    else:
        sub = df.iloc[0:0]
    if sub.empty:
        raise ValueError(
            f"no rows with source_table == {number}: Table {number} lists "
            + ("the OPT drafts" if number == 1 else "the Qwen drafts")
        )
    return _paper_layout(sub)


def has_table(df: pd.DataFrame, number: int) -> bool:
    """Whether ``df`` has rows of the paper's Table ``number`` (column ``source_table``); a
    user's own measurements leave ``source_table`` empty."""
    if "source_table" not in df.columns:
        return False
    return bool(np.any(pd.to_numeric(df["source_table"], errors="coerce").astype(float).to_numpy() == number))


def acceptance_matrix(df: pd.DataFrame) -> pd.DataFrame:
    """All rows of ``df`` in the layout of Tables 1 and 2 (targets as rows with their perplexity,
    drafts as columns with theirs, cells ``alpha ± half-width``): for measurements that are not
    the paper's."""
    return _paper_layout(df)


def table1(df: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 1 (OPT drafts): targets as rows with their perplexity, drafts as columns,
    cells ``alpha ± 95 % half-width``; the first row ("Perplexity") holds each draft's perplexity.
    Rows of ``df`` with ``source_table == 1``."""
    return _by_table(df, 1)


def table2(df: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 2 (Qwen2.5 and Qwen1.5 drafts), in the layout of :func:`table1`.
    Rows of ``df`` with ``source_table == 2``."""
    return _by_table(df, 2)


def table3(
    fit: PlaneFit, paper: pd.DataFrame, paper_metrics: pd.DataFrame | None = None
) -> pd.DataFrame:
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
# Figures 1 and 3


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
    if isinstance(fit, PlaneFit):
        a, b, c = (float(fit.estimate[k]) for k in ("A", "B", "C"))
    elif isinstance(fit, AcceptanceCoefficients):
        a, b, c = fit.A, fit.B, fit.C
    else:
        raise ValueError(f"fit must be a PlaneFit or AcceptanceCoefficients, got {type(fit).__name__}")
    fig = plt.figure(figsize=(7.0, 5.6))
    ax = fig.add_subplot(projection="3d")
    x, y = df["draft_ppl"].to_numpy(dtype=float), df["target_ppl"].to_numpy(dtype=float)
    gx, gy = np.meshgrid(np.linspace(x.min(), x.max(), 20), np.linspace(y.min(), y.max(), 20))
    ax.plot_surface(gx, gy, a * gx + b * gy + c, color="0.6", alpha=0.35, linewidth=0, shade=False)
    ax.plot_wireframe(gx, gy, a * gx + b * gy + c, color="0.45", linewidth=0.3, rstride=4, cstride=4)
    for fam in dict.fromkeys(df["draft_family"].tolist()):
        s = df[df["draft_family"] == fam]
        ax.scatter(
            s["draft_ppl"], s["target_ppl"], s["alpha"], color=family_color(fam), s=22,
            depthshade=False, label=f"{fam} drafts",
        )
    ax.set_xlabel("draft perplexity $x$")
    ax.set_ylabel("target perplexity $y$")
    ax.set_zlabel(r"acceptance rate $\alpha$")
    ax.view_init(elev=elev, azim=azim)
    ax.legend(loc="upper left")
    return fig


def figure3(df: pd.DataFrame, fits: Sequence[CurveFit] | Mapping[object, CurveFit]) -> Figure:
    """The paper's Figure 3: alpha against draft perplexity, one panel per target, observations
    coloured by draft family (with their 95 % half-widths when ``alpha_hw95`` is present) and the
    fitted linear, logarithmic and power-law curves of ``fits`` (from :func:`fit_targets`)."""
    check_frame(df, ("target", "draft_family", "draft_ppl", "alpha"))
    fits = list(fits.values()) if isinstance(fits, Mapping) else list(fits)
    if not fits or not all(isinstance(f, CurveFit) for f in fits):
        raise ValueError("fits must be a non-empty sequence of CurveFit (from fit_targets)")
    targets = targets_in_order(df)
    ncols = min(3, len(targets))
    nrows = int(np.ceil(len(targets) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.4 * ncols, 2.9 * nrows), sharex=True, sharey=True, squeeze=False)
    xs = np.linspace(df["draft_ppl"].min() * 0.97, df["draft_ppl"].max() * 1.03, 200)
    for ax, t in zip(axes.flat, targets):
        sub = df[df["target"] == t]
        for fam in dict.fromkeys(sub["draft_family"].tolist()):
            s = sub[sub["draft_family"] == fam]
            err = s["alpha_hw95"] if "alpha_hw95" in s.columns else None
            ax.errorbar(
                s["draft_ppl"], s["alpha"], yerr=err, fmt="o", ms=4, color=family_color(fam),
                label=f"{fam} drafts", capsize=0,
            )
        for f in fits:
            if f.target == t:
                ax.plot(xs, f.predict(xs), label=f.form, linewidth=1.3, **_FORM_STYLE[f.form])
        ax.text(0.97, 0.95, t, transform=ax.transAxes, ha="right", va="top", fontsize="small")
    used = list(axes.flat)[: len(targets)]
    for i, ax in enumerate(used):
        below = i + ncols
        if below >= len(targets):  # lowest panel of its column: show the x axis
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel("draft perplexity $x$")
    for ax in axes[:, 0]:
        ax.set_ylabel(r"$\alpha$")
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    spare = list(axes.flat)[len(targets):]
    if spare:
        for ax in spare:
            ax.axis("off")
        spare[0].legend(handles, labels, loc="center")
    else:
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 6))
    return fig


def check_parameters(**params: object) -> None:
    """Check the notebook's parameters before anything runs (the cell after its parameters cell;
    issue 13): one ``ValueError`` naming the parameter and what is allowed. ``measurements`` is read
    (``sdsl.data.load`` with the ``acceptance`` schema, its file, line and column named) and must
    hold what the fits need: 4 pairs with two distinct draft and target perplexities (Eq. 5), and
    per target 3 drafts of 2 distinct perplexities (Table 4)."""
    from sdsl import _validate as V
    from sdsl import data as _data

    p = V.check_parameters("acceptance", params, {
        "artifacts_dir": V.optional(V.rule(V.folder)),
        "coefficients_source": V.rule(V.choice, options=("paper", "refit"), what="Eq. 5 coefficients used"),
        "measurements": V.optional(V.rule(V.existing_file, what="a CSV with the columns of data/acceptance.csv")),
    })
    if p.get("measurements") is None:
        return
    df = _data.load(p["measurements"], schema="acceptance")
    where = f"measurements {p['measurements']}"
    if len(df) < 4 or df["draft_ppl"].nunique() < 2 or df["target_ppl"].nunique() < 2:
        raise ValueError(f"{where}: the plane alpha = A x + B y + C needs at least 4 pairs with 2 distinct draft_ppl "
                         f"and 2 distinct target_ppl, got {len(df)} pair(s)")
    for t, g in df.groupby("target", sort=False):
        if len(g) < 3 or g["draft_ppl"].nunique() < 2:
            raise ValueError(f"{where}: target {t!r} has {len(g)} draft(s); its fits of Table 4 need at least 3 drafts "
                             f"with 2 distinct draft_ppl")
