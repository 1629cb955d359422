"""The figure of the optimal-draft chapter: the paper's Figure 2, throughput against draft size
(:mod:`sdsl.chapters.optimal_draft` re-exports :func:`figure2` and makes its data:
:func:`~sdsl.chapters.optimal_draft.throughput_curves`, :func:`~sdsl.chapters.optimal_draft.experiment_drafts`
and :func:`~sdsl.chapters.optimal_draft.table5`)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from sdsl.book.style import family_color

__all__ = ["figure2"]


def figure2(curves: pd.DataFrame, drafts: pd.DataFrame, optima: pd.DataFrame) -> Figure:
    """Figure 2: tokens per FLOP against draft size ``N``, one panel per draft family (its colour),
    one curve per target labelled at the curve's right end; the drafts used in the experiments as
    black markers on the curves, ``N*`` as a star.

    ``curves`` from :func:`throughput_curves`, ``drafts`` from :func:`experiment_drafts`,
    ``optima`` from :func:`table5`. The plotted artists carry ids (``gid``): ``curve|T|F``,
    ``drafts|T|F`` and ``star|T|F`` for target ``T`` and family ``F``, so that tests can read back
    what was drawn (``N`` is plotted in billions).
    """
    families = list(dict.fromkeys(curves["draft_family"]))
    targets = list(dict.fromkeys(curves["target"]))
    styles = ["-", "--", ":", "-."]
    fig = Figure(figsize=(3.6 * len(families) + 0.8, 4.2), layout="constrained")
    axes = fig.subplots(1, len(families), squeeze=False, sharey=True)[0]
    for ax, fam in zip(axes, families):
        col = family_color(fam)
        for k, target in enumerate(targets):
            c = curves[(curves["target"] == target) & (curves["draft_family"] == fam)]
            if c.empty:
                continue
            x, y = c["n"].to_numpy() / 1e9, c["tokens_per_flop"].to_numpy()
            (line,) = ax.plot(x, y, color=col, lw=1.8, ls=styles[k % len(styles)])
            line.set_gid(f"curve|{target}|{fam}")
            ax.annotate(
                target,
                xy=(x[-1], y[-1]),
                xytext=(3, 0),
                textcoords="offset points",
                color=col,
                fontsize=8,
                va="center",
                ha="left",
            )
            d = drafts[(drafts["target"] == target) & (drafts["draft_family"] == fam)]
            (pts,) = ax.plot(d["n"] / 1e9, d["tokens_per_flop"], ls="none", marker="o", ms=5, color="black", zorder=3)
            pts.set_gid(f"drafts|{target}|{fam}")
            o = optima[(optima["target"] == target) & (optima["draft_family"] == fam)]
            (star,) = ax.plot(
                o["n_star"] / 1e9,
                o["tokens_per_flop"],
                ls="none",
                marker="*",
                ms=14,
                color=col,
                markeredgecolor="black",
                zorder=4,
            )
            star.set_gid(f"star|{target}|{fam}")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_title(f"{fam} drafts", fontsize=10)
        ax.set_xlabel("draft size $N$ (billions of parameters)")
        lo, hi = curves["n"].min() / 1e9, curves["n"].max() / 1e9
        ax.set_xlim(lo, hi * 8.0)  # room for the labels at the right end of the curves
    # the unit in the label, plain numbers on the ticks (no "1e-11" offset text)
    axes[0].set_ylabel("throughput $\\mathcal{T}$ ($10^{-11}$ tokens per FLOP)")
    axes[0].yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v * 1e11:g}"))
    axes[0].legend(
        handles=[
            Line2D([], [], ls="none", marker="o", ms=5, color="black"),
            Line2D([], [], ls="none", marker="*", ms=12, color="0.7", markeredgecolor="black"),
        ],
        labels=["drafts of the paper's experiments", "optimal draft size $N^*$ (Table 5)"],
        loc="upper right",
        fontsize=8,
    )
    return fig
