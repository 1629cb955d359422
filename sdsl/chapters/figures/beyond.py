"""The figures of the "beyond" chapter, and what the acceptance laws and the loss-law constants are
called in its text and figures (:mod:`sdsl.chapters.beyond` re-exports them all).

* :func:`figure_predicted_observed`: held-out predicted against observed ``alpha``, one panel per law;
* :func:`figure_n_star`: ``N*`` of every variant (law, loss-law constants, gamma) per target;
* :func:`figure_ratio`: ``M / N*`` against ``M`` for the cross-target laws;
* :func:`figure_tornado`: the elasticities of ``N*`` and ``T(N*)`` as a tornado chart.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from sdsl.book.style import fix_layout

__all__ = [
    "LAW_NAMES",
    "CONSTANT_NAMES",
    "law_name",
    "figure_predicted_observed",
    "figure_n_star",
    "figure_ratio",
    "figure_tornado",
]

#: What the laws are called in the text and the figures.
LAW_NAMES: dict[str, str] = {
    "plane_paper": "Eq. 5 plane, Table 3 coefficients",
    "plane": "Eq. 5 plane, refitted",
    "linear_x": "linear in x, per target",
    "log_x": "logarithmic in x, per target",
    "power_x": "power law in x, per target",
    "linear_x_pooled": "linear in x, target level",
    "loglin_n": "Scylla ln N, per target",
    "loglin_n_pooled": "Scylla ln N, target level",
    "loglin_nd_pooled": "Scylla ln N + ln D, target level",
    "loglin_n_y": "Scylla ln N + y",
    "loglin_nd_y": "Scylla ln N + ln D + y",
    "target_mean": "per-target mean (no draft)",
}

#: What the loss-law constant sets are called in the text and the figures.
CONSTANT_NAMES: dict[str, str] = {"besiroglu2024": "Besiroglu et al. 2024", "hoffmann2022": "Hoffmann et al. 2022"}


def law_name(law: str) -> str:
    """What ``law`` (a name of :data:`sdsl.model.alpha_laws.LAWS`) is called in the text: :data:`LAW_NAMES`, else
    its own name."""
    return LAW_NAMES.get(law, law)


def figure_predicted_observed(predictions: pd.DataFrame, laws: Sequence[str], labels: Mapping[str, str] | None = None):
    """Held-out predicted against observed ``alpha``: one panel per law; filled markers
    leave-one-draft-out, open markers leave-one-target-out; colour = draft family."""
    import matplotlib.pyplot as plt

    from sdsl.book.style import family_color

    ncol = min(4, len(laws))
    nrow = int(np.ceil(len(laws) / ncol))
    fig, axes = plt.subplots(
        nrow, ncol, figsize=(2.6 * ncol, 2.6 * nrow + 0.4), sharex=True, sharey=True, squeeze=False
    )
    lo = float(min(predictions["alpha"].min(), predictions["predicted"].min())) - 0.01
    hi = float(max(predictions["alpha"].max(), predictions["predicted"].max())) + 0.01
    for ax, name in zip(axes.flat, laws):
        sub = predictions[predictions["law"] == name]
        for scheme, filled in (("draft", True), ("target", False)):
            s = sub[sub["scheme"] == scheme]
            for fam, g in s.groupby("draft_family"):
                col = family_color(fam)
                ax.scatter(
                    g["alpha"],
                    g["predicted"],
                    s=14,
                    marker="o" if filled else "D",
                    facecolors=col if filled else "none",
                    edgecolors=col,
                    linewidths=0.8,
                    label=f"{fam} drafts, {'draft' if filled else 'target'} held out",
                )
        ax.plot([lo, hi], [lo, hi], color="0.4", lw=0.8, ls="--")
        # the law's name as the panel's title, wrapped to the panel's width (the layout makes room)
        ax.set_title(textwrap.fill((labels or LAW_NAMES).get(name, name), 24), fontsize="medium")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    for ax in axes.flat[len(laws) :]:
        ax.set_visible(False)
    for ax in axes[-1, :]:
        ax.set_xlabel(r"observed $\alpha$")
    for ax in axes[:, 0]:
        ax.set_ylabel("held-out prediction")
    handles, lab = [], []
    for ax in axes.flat:
        for hnd, l_ in zip(*ax.get_legend_handles_labels()):
            if l_ not in lab:
                handles.append(hnd)
                lab.append(l_)
    fig.legend(handles, lab, loc="outside lower center", ncol=3, fontsize=7.5)
    return fix_layout(fig)


def figure_n_star(variants: pd.DataFrame, targets: Sequence[str], law_order: Sequence[str]):
    """``N*`` of every variant: one panel per target, one row per law; colour = draft family,
    filled = Besiroglu constants, open = Hoffmann; circle = continuous, square = integer gamma.
    Variants without an interior optimum are marked with a cross at the left edge."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from sdsl.book.style import family_color

    ncol = min(3, len(targets))
    nrow = int(np.ceil(len(targets) / ncol))
    fig, axes = plt.subplots(
        nrow, ncol, figsize=(3.0 * ncol + 1.2, (0.26 * len(law_order) + 0.9) * nrow + 0.6), sharey=True, squeeze=False
    )
    ypos = {n: i for i, n in enumerate(law_order)}
    fams = sorted(variants["draft_family"].unique())
    offs = {f: (i - (len(fams) - 1) / 2) * 0.22 for i, f in enumerate(fams)}
    xmin = variants.loc[variants["status"] == "interior", "n_star"].min()
    for ax, target in zip(axes.flat, targets):
        sub = variants[(variants["target"] == target) & variants["law"].isin(law_order)]
        sub = sub.assign(
            ypos=sub["law"].map(ypos)
            + sub["draft_family"].map(offs)
            + np.where(sub["gamma"] == "integer", 0.06, -0.06),
            interior=sub["status"] == "interior",
        )
        # one scatter per marker shape (not per point): the same marks, far fewer artists to draw
        cols = [family_color(f) for f in sub["draft_family"]]
        sub = sub.assign(
            edge=cols, face=[c if k == "besiroglu2024" else "none" for c, k in zip(cols, sub["constants"])]
        )
        for gam, g in sub[sub["interior"]].groupby("gamma", sort=True):
            ax.scatter(
                g["n_star"],
                g["ypos"],
                s=16,
                marker="o" if gam == "continuous" else "s",
                facecolors=list(g["face"]),
                edgecolors=list(g["edge"]),
                linewidths=0.8,
            )
        none = sub[~sub["interior"]]
        if len(none):
            ax.scatter(
                np.full(len(none), xmin / 1.6), none["ypos"], s=16, marker="x", color=list(none["edge"]), linewidths=0.8
            )
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1e6:.0f}M"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(f"{target}\nN* (parameters)")
        ax.axvline(xmin / 1.35, color="0.7", lw=0.6)
    for ax in axes.flat[len(targets) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_yticks(range(len(law_order)), [law_name(n) for n in law_order])
    axes[0, 0].invert_yaxis()
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls="", marker="o", color=family_color(f), label=f"{f} drafts") for f in fams]
    handles += [
        Line2D([], [], ls="", marker="o", color="0.3", label="Besiroglu et al. 2024, continuous γ"),
        Line2D([], [], ls="", marker="o", mfc="none", color="0.3", label="Hoffmann et al. 2022"),
        Line2D([], [], ls="", marker="s", color="0.3", label="integer γ"),
        Line2D([], [], ls="", marker="x", color="0.3", label="no interior optimum"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=7.5)
    return fix_layout(fig)


def figure_ratio(
    sweep: pd.DataFrame,
    low: float = 150.0,
    high: float = 300.0,
    draft_family: str | None = None,
    gamma: str = "continuous",
):
    """``M / N*`` against ``M`` for the cross-target laws; the band ``[low, high]`` shaded.
    Solid: Besiroglu constants, dashed: Hoffmann."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.0))
    sub = sweep[sweep["gamma"] == gamma]
    if draft_family is not None:
        sub = sub[sub["draft_family"] == draft_family]
    colors = dict(zip(sorted(sub["law"].unique()), ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00"]))
    for (law, const), g in sub.groupby(["law", "constants"], sort=True):
        g = g.sort_values("m")
        ax.plot(
            g["m"],
            g["ratio"],
            color=colors[law],
            ls="-" if const == "besiroglu2024" else "--",
            lw=1.4,
            label=f"{law_name(law)}, {CONSTANT_NAMES.get(const, const)}",
        )
    ax.axhspan(low, high, color="0.85", zorder=0, label=f"M/N* in [{low:g}, {high:g}]")
    ax.axhline(200, color="0.5", lw=0.7, ls=":")
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(FixedLocator([20, 50, 100, 150, 200, 300, 500, 1000]))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("target size M (parameters)")
    ax.set_ylabel(r"target size over optimal draft size $M/N^*$")
    fig.legend(loc="outside right center", fontsize=7.5)
    return fix_layout(fig)


def figure_tornado(elast: pd.DataFrame, reference: tuple[str, str]):
    """Tornado chart: elasticities of ``N*`` (left) and ``T(N*)`` (right) at the reference
    configuration ``(target, draft_family)`` as horizontal bars sorted by size, with the range
    over all configurations of ``elast`` as a whisker."""
    import matplotlib.pyplot as plt

    ref = elast[(elast["target"] == reference[0]) & (elast["draft_family"] == reference[1])].set_index("parameter")
    order = ref["elasticity_n_star"].abs().sort_values().index
    rng_ = (
        elast.groupby("parameter")
        .agg(
            n_lo=("elasticity_n_star", "min"),
            n_hi=("elasticity_n_star", "max"),
            t_lo=("elasticity_t", "min"),
            t_hi=("elasticity_t", "max"),
        )
        .loc[order]
    )
    from matplotlib.ticker import NullLocator

    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6), sharey=True)
    for ax, col, lo, hi, xlabel in (
        (axes[0], "elasticity_n_star", "n_lo", "n_hi", r"elasticity of $N^*$"),
        (axes[1], "elasticity_t", "t_lo", "t_hi", r"elasticity of $T(N^*)$"),
    ):
        v = ref.loc[order, col].to_numpy()
        y = np.arange(len(order))
        ax.barh(y, v, color=np.where(v >= 0, "#0072B2", "#D55E00"), height=0.6)
        ax.hlines(y, rng_[lo].to_numpy(), rng_[hi].to_numpy(), color="0.2", lw=1.2)
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_xscale("symlog", linthresh=0.1)
        # room beyond the longest bar or whisker (a symlog axis pads in log space): nothing touches the frame
        reach = max(float(np.nanmax(np.abs(v))), float(np.nanmax(np.abs(rng_[[lo, hi]].to_numpy()))))
        ax.set_xlim(-2.0 * reach, 2.0 * reach)
        # ticks at the decades that fit, one in two when many, written plainly (not 10^0): no label overlaps
        decades = [10.0**k for k in range(-1, 3) if 10.0**k <= 2.0 * reach]
        decades = decades[::2] if len(decades) > 3 else decades
        ticks = [-d for d in reversed(decades)] + [0.0] + decades
        ax.set_xticks(ticks, [f"{t:g}".replace("-", "\u2212") for t in ticks])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel(xlabel)
    names = {
        "E": "E (loss floor)",
        "A_loss": "A (loss, N term)",
        "B_loss": "B (loss, D term)",
        "a": "a (loss, exponent of N)",
        "b": "b (loss, exponent of D)",
        "A": "A (plane, draft perplexity)",
        "B": "B (plane, target perplexity)",
        "C": "C (plane, intercept)",
    }
    axes[0].set_yticks(np.arange(len(order)), [names.get(p, p) for p in order])
    return fix_layout(fig)
