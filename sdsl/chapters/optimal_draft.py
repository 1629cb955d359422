"""The throughput-optimal draft: the paper's Table 5, Figure 2 and what they depend on.

Chapter ``optimal_draft`` of the book (method notes, sections 1 to 3 and 6). Every table and
figure of the chapter comes from one function here:

* :func:`configurations`   the (target, draft family) settings of Table 5, from ``data/models``
* :func:`table5`           ``N*``, ``gamma*``, ``alpha`` and ``T(N*)`` beside the paper's values
* :func:`implied_d_target` the target pre-training tokens ``D'`` that reproduce each printed ``N*``
* :func:`variants`         continuous or integer ``gamma``, Besiroglu 2024 or Hoffmann 2022 constants
* :func:`speedup_table`    ``T(N*) * 2M``: throughput over plain decoding at equal FLOPs
* :func:`gamma_check`      the Lambert-W closed form of ``gamma*`` against a brute-force grid
* :func:`throughput_curves`, :func:`experiment_drafts` and :func:`figure2`: Figure 2
* :func:`brute_force_optimum` and :func:`paper_n_grid`: the grid solver of the benchmark

Equations: tokens per iteration ``E = (1 - alpha**(gamma+1)) / (1 - alpha)`` (Leviathan et al. 2023),
cost ``C = 2 N gamma + 2 M``, throughput ``T = E / C`` (the paper's Eq. 9), acceptance
``alpha = A exp(L(N, D)) + B exp(L(M, D')) + C`` (Eq. 5) with ``L`` the Chinchilla loss law.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from scipy.optimize import brentq

from sdsl import data as _data
from sdsl._validate import as_in_range, as_open_unit, as_positive
from sdsl.book.style import family_color
from sdsl.model.compare import equal_to_printed
from sdsl.model.laws import (
    BESIROGLU_2024,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    acceptance_rate,
    perplexity,
    resolve_constants,
)
from sdsl.model.optimal_draft import DraftOptimum, optimal_draft_size, throughput_curve
from sdsl.model.throughput import optimal_gamma, tokens_per_flop

__all__ = [
    "CHAPTER",
    "TABLE5_TARGETS",
    "TABLE5_FAMILIES",
    "family_tokens",
    "configurations",
    "table5",
    "implied_d_target",
    "variants",
    "deviation_hypotheses",
    "speedup_table",
    "gamma_grid_search",
    "gamma_check",
    "throughput_curves",
    "experiment_drafts",
    "figure2",
    "paper_n_grid",
    "brute_force_optimum",
]

#: Chapter name: notebook stem and artifacts folder.
CHAPTER = "optimal_draft"
#: Targets and draft families of the paper's Table 5.
TABLE5_TARGETS: tuple[str, ...] = ("Qwen1.5-14B", "Qwen1.5-32B")
TABLE5_FAMILIES: tuple[str, ...] = ("OPT", "Qwen1.5", "Qwen2.5")


def family_tokens(family: str, models: pd.DataFrame | None = None) -> float:
    """Pre-training tokens ``D`` of a draft family: the tokens of its drafts in ``data/models``
    (all drafts of a family share them: OPT 180e9, Qwen1.5 2.4e12, Qwen2.5 18e12)."""
    models = _data.load("models") if models is None else models
    drafts = models[(models["family"] == family) & (models["role"] == "draft")]
    if drafts.empty:
        known = sorted(models.loc[models["role"] == "draft", "family"].unique())
        raise ValueError(f"family must be one of the draft families {known}, got {family!r}")
    tokens = drafts["tokens"].unique()
    if tokens.size != 1:
        raise ValueError(f"the drafts of family {family!r} disagree on their pre-training tokens: {tokens}")
    return float(tokens[0])


def configurations(
    targets: Sequence[str] = TABLE5_TARGETS,
    families: Sequence[str] = TABLE5_FAMILIES,
    d_target: Mapping[str, float] | None = None,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The (target, draft family) settings of Table 5: ``target, m, d_target, draft_family, d_draft``.

    ``M`` and ``D'`` are the target's parameters and tokens in ``data/models``, ``D`` the family's
    tokens (:func:`family_tokens`). ``d_target`` overrides ``D'`` per target, e.g.
    ``{"Qwen1.5-14B": 4e12}`` (see :func:`implied_d_target`).
    """
    models = _data.load("models") if models is None else models
    by_name = models.set_index("model")
    overrides = dict(d_target or {})
    unknown = [t for t in overrides if t not in list(targets)]
    if unknown:
        raise ValueError(f"d_target overrides name targets {unknown} that are not in targets {list(targets)}")
    rows = []
    for t in targets:
        if t not in by_name.index:
            raise ValueError(f"targets must be models of data/models, got {t!r}")
        dp = float(as_positive(overrides.get(t, by_name.loc[t, "tokens"]), f"d_target[{t!r}]"))
        for f in families:
            rows.append(
                {"target": t, "m": float(by_name.loc[t, "params"]), "d_target": dp,
                 "draft_family": f, "d_draft": family_tokens(f, models)}
            )
    return pd.DataFrame(rows, columns=["target", "m", "d_target", "draft_family", "d_draft"])


def _paper5() -> pd.DataFrame:
    return _data.load("paper_table5")[["target", "draft_family", "n_star", "tokens_per_flop"]].rename(
        columns={"n_star": "paper_n_star", "tokens_per_flop": "paper_tokens_per_flop"}
    )


def table5(
    configs: pd.DataFrame | None = None,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    integer: bool = False,
) -> pd.DataFrame:
    """The paper's Table 5 recomputed (method notes, section 6), beside the printed values.

    For each configuration: ``N* = argmax_N T(N, M, alpha(N), gamma*)`` with
    :func:`sdsl.optimal_draft_size`, ``gamma*`` and ``alpha`` at ``N*``, ``T(N*)`` and the speedup
    ``T(N*) 2M``; then the paper's ``N*`` and ``T(N*)`` where it printed them, the relative
    deviations ``ours / paper - 1`` and whether the difference is within half a unit of the
    paper's last printed digit (``*_within_print``).
    """
    configs = configurations() if configs is None else configs
    c = resolve_constants(constants)
    rows = []
    for r in configs.itertuples(index=False):
        o = optimal_draft_size(r.m, r.d_draft, r.d_target, c, coefficients, integer=integer)
        rows.append(
            {"target": r.target, "m": r.m, "d_target": r.d_target, "draft_family": r.draft_family,
             "d_draft": r.d_draft, "n_star": o.n_star, "gamma_star": o.gamma_star, "alpha": o.alpha,
             "tokens_per_flop": o.tokens_per_flop, "speedup": o.speedup}
        )
    out = pd.DataFrame(rows)
    tol = _data.printed_tolerance("paper_table5")[["target", "draft_family", "n_star", "tokens_per_flop"]]
    tol = tol.rename(columns={"n_star": "tol_n_star", "tokens_per_flop": "tol_tokens_per_flop"})
    out = out.merge(_paper5(), on=["target", "draft_family"], how="left").merge(
        tol, on=["target", "draft_family"], how="left"
    )
    out["n_star_rel_dev"] = out["n_star"] / out["paper_n_star"] - 1.0
    out["tokens_per_flop_rel_dev"] = out["tokens_per_flop"] / out["paper_tokens_per_flop"] - 1.0
    out["n_star_within_print"] = equal_to_printed(out["n_star"], out["paper_n_star"], out["tol_n_star"])
    out["tokens_per_flop_within_print"] = equal_to_printed(out["tokens_per_flop"], out["paper_tokens_per_flop"],
                                                           out["tol_tokens_per_flop"])
    return out.drop(columns=["tol_n_star", "tol_tokens_per_flop"])


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
        rows.append({"target": r.target, "draft_family": r.draft_family,
                     "d_target_printed": float(r.d_target), "d_target_implied": math.exp(root)})
    return pd.DataFrame(rows)


def variants(
    configs: pd.DataFrame | None = None,
    constants: Iterable[LossConstants | str] = ("besiroglu2024", "hoffmann2022"),
    integer: Iterable[bool] = (False, True),
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
) -> pd.DataFrame:
    """Table 5 under each combination of loss-law constants and continuous / integer ``gamma``.

    Long format: one row per (target, draft_family, constants, integer) with ``n_star``,
    ``gamma_star``, ``alpha``, ``tokens_per_flop``, ``speedup`` and the relative deviations from
    the paper's ``N*`` and ``T(N*)``.
    """
    frames = []
    for c in constants:
        cc = resolve_constants(c)
        for i in integer:
            t = table5(configs, cc, coefficients, integer=bool(i))
            t.insert(2, "constants", cc.name)
            t.insert(3, "integer", bool(i))
            frames.append(t)
    cols = ["target", "draft_family", "constants", "integer", "n_star", "gamma_star", "alpha",
            "tokens_per_flop", "speedup", "n_star_rel_dev", "tokens_per_flop_rel_dev"]
    return pd.concat(frames, ignore_index=True)[cols]


def _grid_optimum(m, d_draft, d_target, n_grid, constants, coefficients):
    cur = throughput_curve(n_grid, m, d_draft, d_target, constants, coefficients)
    k = int(np.argmax(cur["tokens_per_flop"]))
    return float(cur["n"][k]), float(cur["tokens_per_flop"][k])


def deviation_hypotheses(
    target: str = "Qwen1.5-14B",
    d_target_alternative: float = 4e12,
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
            "Table 7 N grid, log": lambda: _grid_optimum(r.m, r.d_draft, r.d_target, paper_n_grid("log"), c, coefficients),
            "Table 7 N grid, linear": lambda: _grid_optimum(r.m, r.d_draft, r.d_target, paper_n_grid("linear"), c, coefficients),
            f"M = {m_alternative:.3g}": lambda: optimal_draft_size(m_alternative, r.d_draft, r.d_target, c, coefficients),
            f"D' = {d_target_alternative:.3g}": lambda: optimal_draft_size(r.m, r.d_draft, d_target_alternative, c, coefficients),
        }
        for name, fn in cases.items():
            o = fn()
            n_star, tpf = (o.n_star, o.tokens_per_flop) if isinstance(o, DraftOptimum) else o
            rows.append({"hypothesis": name, "target": target, "draft_family": r.draft_family,
                         "n_star": n_star, "tokens_per_flop": tpf,
                         "n_star_rel_dev": n_star / r.n_star - 1.0,
                         "tokens_per_flop_rel_dev": tpf / r.tokens_per_flop - 1.0,
                         "tokens_per_flop_within_print": bool(equal_to_printed(tpf, r.tokens_per_flop,
                                                                                t.tokens_per_flop))})
    return pd.DataFrame(rows)


def speedup_table(table: pd.DataFrame) -> pd.DataFrame:
    """Throughput at the optimum over plain decoding at equal FLOPs, ``T(N*) * 2M`` (plain
    decoding makes one token per ``2M`` FLOPs), per target and draft family; ``best`` marks the
    family with the highest speedup for each target. ``table`` is the output of :func:`table5`."""
    out = table[["target", "m", "draft_family", "n_star", "gamma_star", "alpha", "tokens_per_flop"]].copy()
    out["speedup"] = out["tokens_per_flop"] * 2.0 * out["m"]
    out["best"] = out["speedup"] == out.groupby("target")["speedup"].transform("max")
    return out.reset_index(drop=True)


def gamma_grid_search(alpha: float, n: float, m: float, gamma_grid: np.ndarray) -> float:
    """The draft length on ``gamma_grid`` that maximises Eq. 9 (brute force, no calculus)."""
    a = float(as_open_unit(alpha, "alpha (acceptance rate)"))
    g = as_in_range(gamma_grid, "gamma_grid", 0.0, np.inf)
    t = tokens_per_flop(a, float(as_positive(n, "n")), float(as_positive(m, "m")), g)
    return float(g[int(np.argmax(t))])


#: Cases of :func:`gamma_check`: (alpha, N, M) covering the method notes' example, Table 5's
#: optima and the edges of the domain (alpha near 0 and 1, M/N from 1 to 1e8).
GAMMA_CASES: tuple[tuple[float, float, float], ...] = (
    (0.65, 2e8, 7e10),
    (0.6383, 1.24e8, 14167290880.0),
    (0.6549, 1.80e8, 32512218112.0),
    (0.05, 1e7, 1e10),
    (0.3, 1e9, 1e9),
    (0.5, 1e3, 1e11),
    (0.9, 1e8, 1e10),
    (0.99, 1e6, 1e12),
    (0.999, 1e9, 1e10),
)


def gamma_check(
    cases: Iterable[tuple[float, float, float]] = GAMMA_CASES,
    step: float = 1e-3,
) -> pd.DataFrame:
    """The Lambert-W closed form of ``gamma*`` (:func:`sdsl.optimal_gamma`) against a brute-force
    grid over ``gamma`` of spacing ``step`` (method notes, section 3).

    The grid runs from 0 to ``2 gamma_closed + 10``: wide enough that a wrong closed form would
    show. Columns: ``alpha, n, m, m_over_n, gamma_closed, gamma_brute, abs_diff, t_closed,
    t_brute, t_rel_diff`` (``T(closed) / T(brute) - 1``, >= 0 up to rounding when the closed form
    is right).
    """
    step = float(as_positive(step, "step"))
    rows = []
    for alpha, n, m in cases:
        g_closed = float(optimal_gamma(alpha, n, m))
        grid = np.arange(0.0, 2.0 * g_closed + 10.0 + step, step)
        g_brute = gamma_grid_search(alpha, n, m, grid)
        t_c = float(tokens_per_flop(alpha, n, m, g_closed))
        t_b = float(tokens_per_flop(alpha, n, m, g_brute))
        rows.append({"alpha": alpha, "n": n, "m": m, "m_over_n": m / n, "gamma_closed": g_closed,
                     "gamma_brute": g_brute, "abs_diff": abs(g_closed - g_brute), "t_closed": t_c,
                     "t_brute": t_b, "t_rel_diff": t_c / t_b - 1.0})
    return pd.DataFrame(rows)


def throughput_curves(
    configs: pd.DataFrame | None = None,
    n: np.ndarray | None = None,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    integer: bool = False,
) -> pd.DataFrame:
    """Figure 2's curves: ``T(N)`` (Eq. 9 with ``gamma`` at its optimum) against draft size ``N``
    for each configuration. ``n`` defaults to 400 log-spaced sizes in [5e7, 5e9]. Long format:
    ``target, draft_family, n, alpha, gamma, tokens_per_flop``."""
    configs = configurations() if configs is None else configs
    n = np.geomspace(5e7, 5e9, 400) if n is None else as_positive(n, "n (draft sizes)")
    frames = []
    for r in configs.itertuples(index=False):
        cur = throughput_curve(n, r.m, r.d_draft, r.d_target, constants, coefficients, integer)
        f = pd.DataFrame(cur)
        f.insert(0, "draft_family", r.draft_family)
        f.insert(0, "target", r.target)
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def experiment_drafts(
    configs: pd.DataFrame | None = None,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    integer: bool = False,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The drafts used in the paper's experiments placed on Figure 2's curves: for each
    configuration, the drafts of its family in ``data/models`` with ``T`` at their size.
    Columns ``target, draft_family, draft, n, alpha, gamma, tokens_per_flop``."""
    configs = configurations() if configs is None else configs
    models = _data.load("models") if models is None else models
    frames = []
    for r in configs.itertuples(index=False):
        d = models[(models["family"] == r.draft_family) & (models["role"] == "draft")].sort_values("params")
        cur = throughput_curve(d["params"].to_numpy(float), r.m, r.d_draft, r.d_target, constants,
                               coefficients, integer)
        f = pd.DataFrame(cur)
        f.insert(0, "draft", d["model"].to_list())
        f.insert(0, "draft_family", r.draft_family)
        f.insert(0, "target", r.target)
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


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
            ax.annotate(target, xy=(x[-1], y[-1]), xytext=(3, 0), textcoords="offset points",
                        color=col, fontsize=8, va="center", ha="left")
            d = drafts[(drafts["target"] == target) & (drafts["draft_family"] == fam)]
            (pts,) = ax.plot(d["n"] / 1e9, d["tokens_per_flop"], ls="none", marker="o", ms=5,
                             color="black", zorder=3)
            pts.set_gid(f"drafts|{target}|{fam}")
            o = optima[(optima["target"] == target) & (optima["draft_family"] == fam)]
            (star,) = ax.plot(o["n_star"] / 1e9, o["tokens_per_flop"], ls="none", marker="*", ms=14,
                              color=col, markeredgecolor="black", zorder=4)
            star.set_gid(f"star|{target}|{fam}")
        ax.set_xscale("log")
        ax.set_xlabel(f"{fam} draft size $N$ (billions)")
        lo, hi = curves["n"].min() / 1e9, curves["n"].max() / 1e9
        ax.set_xlim(lo, hi * 8.0)  # room for the labels at the right end of the curves
    axes[0].set_ylabel("tokens per FLOP $\\mathcal{T}$")
    axes[0].ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
    return fig


def paper_n_grid(spacing: str = "log", table7: pd.DataFrame | None = None) -> np.ndarray:
    """The draft-size grid of the paper's Table 7: 10,000 points in [1e8, 1e10], spaced
    logarithmically (``"log"``) or linearly (``"linear"``); the paper does not say which."""
    t7 = _data.load("paper_table7") if table7 is None else table7
    row = t7.set_index("parameter").loc["N"]
    lo, hi, k = float(row["low"]), float(row["high"]), int(row["points"])
    if spacing == "log":
        return np.geomspace(lo, hi, k)
    if spacing == "linear":
        return np.linspace(lo, hi, k)
    raise ValueError(f"spacing must be 'log' or 'linear', got {spacing!r}")


def brute_force_optimum(
    m: float,
    d_draft: float,
    d_target: float,
    n_grid: np.ndarray,
    gamma_grid: np.ndarray,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    chunk: int = 256,
) -> dict[str, float]:
    """``argmax`` of Eq. 9 over a grid of draft sizes and a grid of draft lengths, by evaluating
    every pair (no closed form, no optimiser): the reference the closed form is benchmarked
    against. Works through ``n_grid`` in chunks of ``chunk`` sizes to bound memory.

    Returns ``n_star, gamma_star, alpha, tokens_per_flop``.
    """
    c = resolve_constants(constants)
    m = float(as_positive(m, "m (target parameters)"))
    n_grid = as_positive(n_grid, "n_grid")
    g = as_in_range(gamma_grid, "gamma_grid", 0.0, np.inf)
    if np.any(n_grid > m):
        raise ValueError(f"n_grid must not exceed the target size m = {m:.6g}, got {n_grid.max():.6g}")
    y = perplexity(m, float(as_positive(d_target, "d_target")), c)
    alpha = acceptance_rate(perplexity(n_grid, float(as_positive(d_draft, "d_draft")), c), y, coefficients)
    if np.any((alpha <= 0) | (alpha >= 1)):
        raise ValueError("the acceptance plane leaves (0, 1) on n_grid; narrow the grid")
    log_a = np.log(alpha)
    best_t, best_i, best_j = -np.inf, 0, 0
    for s in range(0, n_grid.size, chunk):
        la = log_a[s:s + chunk, None]
        nn = n_grid[s:s + chunk, None]
        t = -np.expm1((g[None, :] + 1.0) * la) / (-np.expm1(la)) / (2.0 * nn * g[None, :] + 2.0 * m)
        k = int(np.argmax(t))
        i, j = divmod(k, g.size)
        if t[i, j] > best_t:
            best_t, best_i, best_j = float(t[i, j]), s + i, j
    return {"n_star": float(n_grid[best_i]), "gamma_star": float(g[best_j]),
            "alpha": float(alpha[best_i]), "tokens_per_flop": best_t}



def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (issue 13; the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed, the plane inside (0, 1) on ``[n_min, n_max]`` and an
    interior ``N*`` for every (target, family) included."""
    from sdsl import _validate as V
    from sdsl import data
    from sdsl.model.laws import PAPER_EQ5, AcceptanceCoefficients

    mod = data.load("models")
    tgt, fams = mod[mod["role"] == "target"].set_index("model"), sorted(set(mod.loc[mod["role"] == "draft", "family"]))
    name = V.rule(V.choice, options=list(tgt.index), what="targets of data/models.csv")
    npar = V.rule(V.number, low=V.MODEL_PARAMS[0], high=V.MODEL_PARAMS[1], what="draft parameters")
    p = V.check_parameters("optimal_draft", params, {
        "targets": V.rule(V.sequence, item=name, unique=True),
        "families": V.rule(V.sequence, item=V.rule(V.choice, options=fams, what="draft families"), unique=True),
        "constants": V.loss_constants, "coefficients": V.optional(V.coefficients), "integer": V.rule(V.boolean),
        "d_target": V.rule(V.mapping, key=name, item=V.rule(V.number, low=V.TOKENS[0], high=V.TOKENS[1], what="D'")),
        "n_min": npar, "n_max": npar,
        "n_points": V.rule(V.integer, low=2, high=10_000), "gamma_step": V.rule(V.number, low=1e-5, high=1),
        "artifacts_dir": V.optional(V.rule(V.folder))})
    targets, families, dt = p.get("targets", TABLE5_TARGETS), p.get("families", TABLE5_FAMILIES), p.get("d_target", {})
    V.unknown_names(dt, targets, "target", "in d_target: not among targets, it would not be used")
    lo, hi = p.get("n_min", 5e7), p.get("n_max", 5e9)
    if not lo < hi:
        raise ValueError(f"n_min must be below n_max, got n_min = {lo:g} and n_max = {hi:g}")
    coef = PAPER_EQ5 if p.get("coefficients") is None else AcceptanceCoefficients(*p["coefficients"], source="parameter")
    d_of = {f: float(mod.loc[(mod["family"] == f) & (mod["role"] == "draft"), "tokens"].iloc[0]) for f in families}
    configs = [(float(tgt.loc[t, "params"]), d_of[f], float(dt.get(t, tgt.loc[t, "tokens"]))) for t in targets
               for f in families]
    V.optimum_inside(configs, p.get("constants", "besiroglu2024"), coef, p.get("integer", False))
    V.plane_inside(configs, (lo, hi), p.get("constants", "besiroglu2024"), coef, "n_min and n_max")
