"""The plan chapter's figure: the throughput curve of a target with the optimum, its interval and
the candidate drafts marked (the planning itself is :mod:`sdsl.plan`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a DataFrame is made: `sdsl plan` runs without it
    import pandas as pd

from sdsl.model.optimal_draft import throughput_curve
from sdsl.plan import PlanInputs

__all__ = ["CHAPTER", "throughput_curves", "figure_throughput"]

#: Name of the notebook chapter (and of its artifacts folder).
CHAPTER = "plan_draft"


def throughput_curves(inputs: PlanInputs, table: pd.DataFrame, points: int = 400) -> pd.DataFrame:
    """The curves of :func:`figure_throughput`: ``T(N)`` (Eq. 9 at ``gamma*``) on ``points``
    log-spaced draft sizes of ``inputs.n_range``, one curve per draft-token count ``D`` of
    ``table``."""
    import pandas as pd

    lo, hi = inputs.n_range
    n = np.exp(np.linspace(np.log(lo), np.log(hi), points))
    frames = []
    for d in table["d_draft"].astype(float):
        cur = throughput_curve(n, inputs.target.params, d, inputs.target.tokens, inputs.constants,
                               inputs.alpha.coefficients, inputs.integer)
        frames.append(pd.DataFrame({"d_draft": d, "n": cur["n"], "alpha": cur["alpha"],
                                    "gamma": cur["gamma"], "tokens_per_flop": cur["tokens_per_flop"]}))
    return pd.concat(frames, ignore_index=True)


def figure_throughput(inputs: PlanInputs, table: pd.DataFrame, candidates: pd.DataFrame | None = None,
                      points: int = 400):
    """Throughput ``T(N)`` (Eq. 9 with ``gamma*``) against draft size for each ``D``, the optimum
    ``N*`` (star) with its bootstrap interval (shaded), and the candidate drafts (dots) annotated
    with their share of the optimum."""
    import matplotlib.pyplot as plt

    from sdsl.book.style import family_color

    fig, ax = plt.subplots()
    curves = throughput_curves(inputs, table, points)
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, row in table.reset_index(drop=True).iterrows():
        d = float(row["d_draft"])
        colour = (family_color(inputs.target.draft_family)
                  if inputs.target.draft_family and len(table) == 1 else palette[i % len(palette)])
        cur = curves[curves["d_draft"] == d]
        ax.plot(cur["n"], cur["tokens_per_flop"], color=colour, label=f"D = {d:.3g} tokens")
        ax.plot([row["n_star"]], [row["tokens_per_flop"]], marker="*", markersize=14, color=colour,
                markeredgecolor="black", linestyle="none")
        if "n_star_ci_low" in row and np.isfinite(row.get("n_star_ci_low", np.nan)):
            ax.axvspan(row["n_star_ci_low"], row["n_star_ci_high"], color=colour, alpha=0.15, linewidth=0)
        if candidates is not None and len(candidates):
            sub = candidates[candidates["d_draft"] == d]
            ax.plot(sub["params"], sub["tokens_per_flop"], marker="o", color="black", linestyle="none")
            for _, c in sub.iterrows():
                ax.annotate(f"{c['candidate']}: {100 * c['share_of_optimum']:.0f} %",
                            (c["params"], c["tokens_per_flop"]), textcoords="offset points",
                            xytext=(6, 6), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("draft parameters N")
    ax.set_ylabel(r"tokens per FLOP $\mathcal{T}(N)$")
    ax.legend(loc="lower left")
    return fig


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (issue 13; the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed, by :func:`sdsl.plan.check_inputs` (the checks and
    messages of ``sdsl plan``)."""
    from sdsl import _validate as V
    from sdsl import plan as P

    names = ("preset", "target_params", "target_tokens", "draft_tokens", "constants", "alpha_source", "integer_gamma",
             "n_range", "candidates", "n_boot", "seed")
    V.unknown_names(params, (*names, "artifacts_dir"), "parameter", "of notebook 'plan_draft'")
    if params.get("artifacts_dir") is not None:
        V.folder(params["artifacts_dir"], "artifacts_dir")
    P.check_inputs(**{k: v for k, v in params.items() if k in names})
