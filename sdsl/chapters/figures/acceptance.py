"""The figures of the acceptance chapter: the paper's Figures 1 and 3 and a 2-D companion view of
Figure 1 (:mod:`sdsl.chapters.acceptance` re-exports them).

* :func:`figure1`: the observations ``(x, y, alpha)`` as a 3-D scatter with the Eq. 5 plane;
* :func:`figure1_sections`: the same observations and plane without perspective;
* :func:`figure3`: alpha against draft perplexity per target with the fits of Table 4
  (:func:`sdsl.model.alpha_fits.fit_targets`), drawn beyond the measured range by :data:`EXTRAPOLATE`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from sdsl.book.style import family_color
from sdsl.model.alpha_fits import CurveFit, PlaneFit, check_frame, targets_in_order
from sdsl.model.laws import AcceptanceCoefficients

__all__ = ["EXTRAPOLATE", "figure1", "figure1_sections", "figure3"]

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
    ax.set_xlabel("draft perplexity $x$")
    ax.set_ylabel("target perplexity $y$")
    ax.set_zlabel(r"acceptance rate $\alpha$")
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
