"""Why our Table 5 differs from the printed one for the Qwen1.5-14B target, and which reading of the
paper's inputs reproduces it (the scorecard's reading ``D' = 4e12``, :data:`sdsl.audit.rules.D_TARGET_4E12`).

* :func:`implied_d_target`: the target pre-training tokens ``D'`` at which each printed ``N*`` is ours;
* :func:`deviation_hypotheses` and :func:`hypotheses_summary`: the candidate explanations, each
  applied to every printed row of the target;
* :func:`flatness`: how flat ``T`` is at the optimum (``T`` at the paper's ``N*`` over ``T`` at ours).

The optimal-draft chapter (:mod:`sdsl.chapters.optimal_draft`) shows them.
Equations: ``T = E / C`` (the paper's Eq. 9) at ``gamma*``, ``alpha`` from the Eq. 5 plane with the
Chinchilla loss law (method notes, sections 1 to 3 and 6).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from sdsl import data as _data
from sdsl.audit.rules import D_TARGET_4E12
from sdsl.model.grid import n_grid
from sdsl.model.laws import (
    BESIROGLU_2024,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    acceptance_rate,
    perplexity,
    resolve_constants,
)
from sdsl.model.optimum import DraftOptimum, optimal_draft_size, throughput_curve
from sdsl.model.throughput import optimal_tokens_per_flop
from sdsl.tolerance import equal_to_printed
from sdsl.validation import as_positive

__all__ = ["implied_d_target", "deviation_hypotheses", "hypotheses_summary", "flatness"]


def implied_d_target(
    paper: pd.DataFrame | None = None,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    bracket: tuple[float, float] = (1e12, 1e13),
) -> pd.DataFrame:
    """For each row of the paper's Table 5, the target pre-training tokens ``D'`` at which our
    ``N*`` equals the printed one (root of ``N*(D') - N*_paper`` by Brent's method in ``bracket``).

    A larger ``D'`` lowers the target's perplexity ``y`` and, since ``B > 0`` in Eq. 5, the
    acceptance rate at every ``N``; ``N*`` then grows monotonically with ``D'``, so the root is unique. Returns ``target, draft_family, d_target_printed,
    d_target_implied``.
    """
    paper = _data.load("paper_table5") if paper is None else paper
    c = resolve_constants(constants)
    lo, hi = (float(v) for v in as_positive(bracket, "bracket"))
    rows = []
    for r in paper.itertuples(index=False):

        def gap(log_dp: float) -> float:
            return optimal_draft_size(r.m, r.d_draft, math.exp(log_dp), c, coefficients).n_star / r.n_star - 1.0

        if gap(math.log(lo)) * gap(math.log(hi)) > 0:
            raise ValueError(
                f"no D' in bracket [{lo:.3g}, {hi:.3g}] reproduces N* = {r.n_star} for {r.target}/{r.draft_family}"
            )
        root = brentq(gap, math.log(lo), math.log(hi), xtol=1e-12)
        rows.append(
            {
                "target": r.target,
                "draft_family": r.draft_family,
                "d_target_printed": float(r.d_target),
                "d_target_implied": math.exp(root),
            }
        )
    return pd.DataFrame(rows)


def _grid_optimum(m, d_draft, d_target, n_grid, constants, coefficients):
    cur = throughput_curve(n_grid, m, d_draft, d_target, constants, coefficients)
    k = int(np.argmax(cur["tokens_per_flop"]))
    return float(cur["n"][k]), float(cur["tokens_per_flop"][k])


def deviation_hypotheses(
    target: str = "Qwen1.5-14B",
    d_target_alternative: float = D_TARGET_4E12.default["Qwen1.5-14B"],
    m_alternative: float = 14e9,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
) -> pd.DataFrame:
    """Candidate explanations of a target's deviations from the paper's Table 5, each applied to
    every printed row of that target: the method as specified; integer ``gamma``; ``N*`` taken on
    the 10,000-point grid of Table 7, spaced logarithmically or linearly; the target's nominal size
    ``m_alternative`` instead of its parameter count; its pre-training tokens ``D'`` set to
    ``d_target_alternative``.

    Returns one row per (hypothesis, draft family) with ``n_star``, ``tokens_per_flop`` and their
    relative deviations from the paper, and whether ``T(N*)`` agrees with every printed digit.
    """
    paper = _data.load("paper_table5")
    tol = _data.printed_tolerance("paper_table5")
    sel = paper["target"] == target
    if not sel.any():
        raise ValueError(f"target must be one of Table 5's {sorted(paper['target'].unique())}, got {target!r}")
    c = BESIROGLU_2024
    rows = []
    for r, t in zip(paper[sel].itertuples(index=False), tol[sel].itertuples(index=False)):
        cases = {
            "as specified": lambda: optimal_draft_size(r.m, r.d_draft, r.d_target, c, coefficients),
            "integer gamma": lambda: optimal_draft_size(r.m, r.d_draft, r.d_target, c, coefficients, integer=True),
            "Table 7 N grid, log": lambda: _grid_optimum(r.m, r.d_draft, r.d_target, n_grid("log"), c, coefficients),
            "Table 7 N grid, linear": lambda: _grid_optimum(
                r.m, r.d_draft, r.d_target, n_grid("linear"), c, coefficients
            ),
            f"M = {m_alternative:.3g}": lambda: optimal_draft_size(
                m_alternative, r.d_draft, r.d_target, c, coefficients
            ),
            f"D' = {d_target_alternative:.3g}": lambda: optimal_draft_size(
                r.m, r.d_draft, d_target_alternative, c, coefficients
            ),
        }
        for name, fn in cases.items():
            o = fn()
            n_star, tpf = (o.n_star, o.tokens_per_flop) if isinstance(o, DraftOptimum) else o
            rows.append(
                {
                    "hypothesis": name,
                    "target": target,
                    "draft_family": r.draft_family,
                    "n_star": n_star,
                    "tokens_per_flop": tpf,
                    "n_star_rel_dev": n_star / r.n_star - 1.0,
                    "tokens_per_flop_rel_dev": tpf / r.tokens_per_flop - 1.0,
                    "tokens_per_flop_within_print": bool(equal_to_printed(tpf, r.tokens_per_flop, t.tokens_per_flop)),
                }
            )
    return pd.DataFrame(rows)


def hypotheses_summary(hyp: pd.DataFrame) -> pd.DataFrame:
    """:func:`deviation_hypotheses` per hypothesis: the largest ``|N*|`` and ``|T(N*)|`` relative
    deviations over the target's rows and whether every ``T(N*)`` agrees with every printed digit."""
    return (
        hyp.groupby("hypothesis", sort=False)
        .agg(
            max_abs_n_dev=("n_star_rel_dev", lambda v: v.abs().max()),
            max_abs_t_dev=("tokens_per_flop_rel_dev", lambda v: v.abs().max()),
            t_every_digit=("tokens_per_flop_within_print", "all"),
        )
        .reset_index()
    )


def flatness(
    table: pd.DataFrame,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
) -> pd.Series:
    """How flat ``T`` is at the optimum: for each printed row of ``table``
    (:func:`sdsl.chapters.optimal_draft.table5`), ``T`` at the paper's ``N*`` over ``T`` at ours,
    minus 1, with our model (Eq. 9 at ``gamma*``)."""
    c = resolve_constants(constants)
    r = table.dropna(subset=["paper_n_star"])
    alpha = acceptance_rate(
        perplexity(r["paper_n_star"].to_numpy(), r["d_draft"].to_numpy(), c),
        perplexity(r["m"].to_numpy(), r["d_target"].to_numpy(), c),
        coefficients,
    )
    t = optimal_tokens_per_flop(alpha, r["paper_n_star"].to_numpy(), r["m"].to_numpy())
    return pd.Series(np.asarray(t, dtype=float) / r["tokens_per_flop"].to_numpy() - 1.0, index=r.index)
