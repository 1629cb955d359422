"""The throughput-optimal draft: the paper's Table 5, Figure 2 and what they depend on.

Chapter ``optimal_draft`` of the book (method notes, sections 1 to 3 and 6). Every table and
figure of the chapter comes from one function, here or in the module named beside it:

* :func:`sdsl.model.configurations.configurations`: the (target, draft family) settings of Table 5,
  from ``data/models``
* :func:`table5`           ``N*``, ``gamma*``, ``alpha`` and ``T(N*)`` beside the paper's values
* :func:`sdsl.audit.table5.implied_d_target`: the target pre-training tokens ``D'`` that reproduce
  each printed ``N*``
* :func:`variants`         continuous or integer ``gamma``, Besiroglu 2024 or Hoffmann 2022 constants
* :func:`speedup_table`    ``T(N*) * 2M``: throughput over plain decoding at equal FLOPs
* :func:`gamma_check`      the Lambert-W closed form of ``gamma*`` against a brute-force grid
                           (:func:`sdsl.model.optimum.gamma_grid_search`)
* :func:`throughput_curves`, :func:`experiment_drafts` and :func:`figure2`: Figure 2
* :func:`draft_losses`: the chapter's reading of those tables; :func:`summary`: every number the
  chapter's prose cites

:func:`implied_d_target`, :func:`deviation_hypotheses`, :func:`hypotheses_summary` and :func:`flatness`
(why Table 5's Qwen1.5-14B rows differ) live in :mod:`sdsl.audit.table5`, where the notebook
imports them from; this module uses the last two in :func:`summary`. :func:`figure2` is drawn at the
end of this module.

Equations: tokens per iteration ``E = (1 - alpha**(gamma+1)) / (1 - alpha)`` (Leviathan et al. 2023),
cost ``C = 2 N gamma + 2 M``, throughput ``T = E / C`` (the paper's Eq. 9), acceptance
``alpha = A exp(L(N, D)) + B exp(L(M, D')) + C`` (Eq. 5) with ``L`` the Chinchilla loss law.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from sdsl import data as _data
from sdsl.audit.rules import D_TARGET_4E12
from sdsl.audit.table5 import deviation_hypotheses, flatness, hypotheses_summary, implied_d_target
from sdsl.book.outputs import declare
from sdsl.book.style import family_color
from sdsl.model.configurations import configurations, resolve_coefficients
from sdsl.model.grid import n_grid
from sdsl.model.laws import BESIROGLU_2024, PAPER_EQ5, AcceptanceCoefficients, LossConstants, resolve_constants
from sdsl.model.optimum import gamma_grid_search, optimal_draft_size, throughput_curve
from sdsl.model.throughput import optimal_gamma, tokens_per_flop
from sdsl.tolerance import equal_to_printed
from sdsl.validation import as_positive

__all__ = [
    "CHAPTER",
    "table5",
    "variants",
    "speedup_table",
    "GAMMA_CASES",
    "gamma_check",
    "throughput_curves",
    "experiment_drafts",
    "figure2",
    "draft_losses",
    "summary",
]

#: Chapter name: notebook stem and artifacts folder.
CHAPTER = "optimal_draft"


def _paper5() -> pd.DataFrame:
    return _data.load("paper_table5")[["target", "draft_family", "n_star", "tokens_per_flop"]].rename(
        columns={"n_star": "paper_n_star", "tokens_per_flop": "paper_tokens_per_flop"}
    )


@declare(
    "Table 5",
    "the throughput-optimal draft size N* of the Qwen1.5 targets (Qwen1.5-14B's D' read as 4e12), and as printed",
    data=("paper_table5", "models"),
    also=("table5_as_printed",),
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
            {
                "target": r.target,
                "m": r.m,
                "d_target": r.d_target,
                "draft_family": r.draft_family,
                "d_draft": r.d_draft,
                "n_star": o.n_star,
                "gamma_star": o.gamma_star,
                "alpha": o.alpha,
                "tokens_per_flop": o.tokens_per_flop,
                "speedup": o.speedup,
            }
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
    out["tokens_per_flop_within_print"] = equal_to_printed(
        out["tokens_per_flop"], out["paper_tokens_per_flop"], out["tol_tokens_per_flop"]
    )
    return out.drop(columns=["tol_n_star", "tol_tokens_per_flop"])


@declare("variants", "N* under both loss laws and integer or continuous gamma", data=("paper_table5", "models"))
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
    cols = [
        "target",
        "draft_family",
        "constants",
        "integer",
        "n_star",
        "gamma_star",
        "alpha",
        "tokens_per_flop",
        "speedup",
        "n_star_rel_dev",
        "tokens_per_flop_rel_dev",
    ]
    return pd.concat(frames, ignore_index=True)[cols]


@declare("flop_gain", "tokens per FLOP over plain decoding at N*", data=("paper_table5",))
def speedup_table(table: pd.DataFrame) -> pd.DataFrame:
    """Throughput at the optimum over plain decoding at equal FLOPs, ``T(N*) * 2M`` (plain
    decoding makes one token per ``2M`` FLOPs), per target and draft family; ``best`` marks the
    family with the highest speedup for each target. ``table`` is the output of :func:`table5`."""
    out = table[["target", "m", "draft_family", "n_star", "gamma_star", "alpha", "tokens_per_flop"]].copy()
    out["speedup"] = out["tokens_per_flop"] * 2.0 * out["m"]
    out["best"] = out["speedup"] == out.groupby("target")["speedup"].transform("max")
    return out.reset_index(drop=True)


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
        cur = throughput_curve(
            d["params"].to_numpy(float), r.m, r.d_draft, r.d_target, constants, coefficients, integer
        )
        f = pd.DataFrame(cur)
        f.insert(0, "draft", d["model"].to_list())
        f.insert(0, "draft_family", r.draft_family)
        f.insert(0, "target", r.target)
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


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


@declare("gamma_check", "closed-form gamma* against a brute-force search")
def gamma_check(
    cases: Iterable[tuple[float, float, float]] = GAMMA_CASES,
    step: float = 1e-3,
) -> pd.DataFrame:
    """The Lambert-W closed form of ``gamma*`` (:func:`sdsl.optimal_gamma`) against a brute-force
    grid over ``gamma`` of spacing ``step`` (method notes, section 3): the chapter
    ``optimal_draft``'s table ``gamma_check``.

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
        rows.append(
            {
                "alpha": alpha,
                "n": n,
                "m": m,
                "m_over_n": m / n,
                "gamma_closed": g_closed,
                "gamma_brute": g_brute,
                "abs_diff": abs(g_closed - g_brute),
                "t_closed": t_c,
                "t_brute": t_b,
                "t_rel_diff": t_c / t_b - 1.0,
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# the chapter's readings of its tables


def draft_losses(drafts: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """Each experiment draft of Figure 2 (:func:`experiment_drafts`) with the share of the optimal
    throughput it loses, ``loss = 1 - T(N) / T(N*)`` (``T(N*)`` from :func:`table5`), and whether it
    is the best draft of its (target, family)."""
    opt = table[["target", "draft_family", "tokens_per_flop"]].rename(columns={"tokens_per_flop": "t_opt"})
    out = drafts.merge(opt, on=["target", "draft_family"])
    out["loss"] = 1.0 - out["tokens_per_flop"] / out["t_opt"]
    out["best"] = out["loss"] == out.groupby(["target", "draft_family"])["loss"].transform("min")
    return out


def summary(
    check: pd.DataFrame,
    t5: pd.DataFrame,
    hyp: pd.DataFrame,
    implied: pd.DataFrame,
    t5_alt: pd.DataFrame,
    drafts: pd.DataFrame,
    var: pd.DataFrame,
    speedup: pd.DataFrame,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    gamma_step: float = 1e-3,
    m_alt: float = 14e9,
    d_alt: float = D_TARGET_4E12.default["Qwen1.5-14B"],
) -> dict[str, object]:
    """Every number the chapter's prose cites, by glue name (without the chapter prefix).

    Parameters
    ----------
    check, t5, hyp, implied : :func:`gamma_check` (grid step ``gamma_step``), :func:`table5` with
        every input as printed, :func:`deviation_hypotheses` (with ``m_alt``, ``d_alt``) and
        :func:`implied_d_target`.
    t5_alt : :func:`table5` with Qwen1.5-14B's ``D'`` set to ``d_alt`` (the chapter's default).
    drafts, var, speedup : :func:`experiment_drafts`, :func:`variants` and :func:`speedup_table`.
    constants, coefficients : the loss law and Eq. 5 plane of the run (for :func:`flatness`).

    Returns
    -------
    dict
        Plain values for :func:`sdsl.book.glue.glue_summary`: deviations are ``ours / paper - 1``;
        ``imp*`` are implied ``D'`` in trillions of tokens; ``*_equal`` count rows whose ``T(N*)``
        equals every printed digit.
    """
    ex, pr = check.iloc[0], t5.dropna(subset=["paper_n_star"])
    is14 = (pr["target"] == "Qwen1.5-14B").to_numpy()
    a14, a32 = pr[is14], pr[~is14]
    paper5, tol5 = _data.load("paper_table5"), _data.printed_tolerance("paper_table5")
    half = (tol5["tokens_per_flop"] / paper5["tokens_per_flop"])[paper5["target"] == "Qwen1.5-14B"].max()
    out: dict[str, object] = {
        "ex_alpha": ex["alpha"],
        "ex_n": ex["n"],
        "ex_m": ex["m"],
        "ex_gamma_closed": ex["gamma_closed"],
        "ex_gamma_brute": ex["gamma_brute"],
        "gamma_step": gamma_step,
        "gamma_cases": len(check),
        "gamma_max_abs_diff": check["abs_diff"].max(),
        "gamma_min_t_rel": check["t_rel_diff"].min(),
        "gamma_max_ratio": check["m_over_n"].max(),
        "gamma_min_ratio": check["m_over_n"].min(),
        "gamma_alpha_min": check["alpha"].min(),
        "gamma_alpha_max": check["alpha"].max(),
        "n_dev_max": pr["n_star_rel_dev"].abs().max(),
        "t_dev_max": pr["tokens_per_flop_rel_dev"].abs().max(),
        "n_dev_14_min": a14["n_star_rel_dev"].min(),
        "n_dev_14_max": a14["n_star_rel_dev"].max(),
        "n_abs_14_max": (a14["n_star"] - a14["paper_n_star"]).abs().max(),
        "n_dev_32_max": a32["n_star_rel_dev"].abs().max(),
        "n_abs_32_max": (a32["n_star"] - a32["paper_n_star"]).abs().max(),
        "t_dev_14_min": a14["tokens_per_flop_rel_dev"].min(),
        "t_dev_14_max": a14["tokens_per_flop_rel_dev"].max(),
        "t_dev_32_max": a32["tokens_per_flop_rel_dev"].abs().max(),
        "t_half_unit": half,
        "t_units_14": a14["tokens_per_flop_rel_dev"].min() / half,
        "t_equal_32": int(a32["tokens_per_flop_within_print"].sum()),
        "rows_32": len(a32),
        "m_alt": m_alt,
        "d_alt": d_alt,
        "d_printed": float(paper5.loc[paper5["target"] == "Qwen1.5-14B", "d_target"].iloc[0]),
    }
    hs = hypotheses_summary(hyp).set_index("hypothesis")
    for key, name in (
        ("integer gamma", "int"),
        ("Table 7 N grid, log", "log"),
        ("Table 7 N grid, linear", "lin"),
        (f"M = {m_alt:.3g}", "m14"),
        (f"D' = {d_alt:.3g}", "d4"),
    ):
        out[f"hyp_{name}_n"], out[f"hyp_{name}_t"] = hs.loc[key, "max_abs_n_dev"], hs.loc[key, "max_abs_t_dev"]
    g_log, g_lin = n_grid("log"), n_grid("linear")
    out.update(
        log_step=g_log[1] / g_log[0] - 1,
        lin_step=g_lin[1] - g_lin[0],
        grid_points=g_log.size,
        grid_low=g_log[0],
        grid_high=g_log[-1],
    )
    for tgt, key in (("Qwen1.5-14B", "imp14"), ("Qwen1.5-32B", "imp32")):
        v = implied.loc[implied["target"] == tgt, "d_target_implied"] / 1e12
        out[f"{key}_min"], out[f"{key}_max"] = v.min(), v.max()
    alt = t5_alt.dropna(subset=["paper_n_star"])
    out.update(
        d4_n_dev_max=alt["n_star_rel_dev"].abs().max(),
        d4_n_abs_max=(alt["n_star"] - alt["paper_n_star"]).abs().max(),
        d4_t_equal=int(alt["tokens_per_flop_within_print"].sum()),
        d4_rows=len(alt),
        flat_max=flatness(alt, constants, coefficients).abs().max(),
    )
    loss = draft_losses(drafts, t5)
    smallest = drafts.loc[drafts.groupby("draft_family")["n"].idxmin()].set_index("draft_family")
    ratio = t5["n_star"] / t5["draft_family"].map(smallest["n"])
    out.update(
        draft_loss_min=loss.loc[loss["best"], "loss"].min(),
        draft_loss_max=loss.loc[loss["best"], "loss"].max(),
        worst_loss=loss["loss"].max(),
        nstar_min=t5["n_star"].min(),
        nstar_max=t5["n_star"].max(),
        smallest_drafts=", ".join(f"{r.draft} ({r.n:.3g} parameters)" for r in smallest.itertuples()),
        nstar_over_smallest_min=ratio.min(),
        nstar_over_smallest_max=ratio.max(),
        nstar_above_smallest=int((ratio > 1).sum()),
        nstar_rows=len(ratio),
        nstar_over_smallest_at=(
            f"{t5.loc[ratio.idxmax(), 'target']} with {t5.loc[ratio.idxmax(), 'draft_family']} drafts, "
            f"{ratio.max():.2f} times {smallest.loc[t5.loc[ratio.idxmax(), 'draft_family'], 'draft']}"
        ),
    )
    bi, hc = (
        var[(var["constants"] == "besiroglu2024") & var["integer"]],
        var[(var["constants"] == "hoffmann2022") & ~var["integer"]],
    )
    out.update(
        int_dev_min=bi["n_star_rel_dev"].min(),
        int_dev_max=bi["n_star_rel_dev"].max(),
        int_t_max=bi["tokens_per_flop_rel_dev"].abs().max(),
        hof_dev_min=hc["n_star_rel_dev"].min(),
        hof_dev_max=hc["n_star_rel_dev"].max(),
        speedup_min=speedup["speedup"].min(),
        speedup_max=speedup["speedup"].max(),
    )
    for tgt, d in speedup.groupby("target", sort=False):
        key = tgt.replace(".", "_").replace("-", "_").lower()
        out.update(
            {
                f"speedup_{key}_max": d["speedup"].max(),
                f"speedup_{key}_min": d["speedup"].min(),
                f"speedup_{key}_best": d.loc[d["speedup"].idxmax(), "draft_family"],
            }
        )
    return out


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed, the plane inside (0, 1) on ``[n_min, n_max]`` and an
    interior ``N*`` for every (target, family) included."""
    from sdsl import data
    from sdsl import validation as V
    from sdsl.model.laws import check_coefficients, check_loss_constants
    from sdsl.model.optimum import optimum_inside, plane_inside

    mod = data.load("models")
    tgt, fams = mod[mod["role"] == "target"].set_index("model"), sorted(set(mod.loc[mod["role"] == "draft", "family"]))
    name = V.rule(V.choice, options=list(tgt.index), what="targets of data/models.csv")
    npar = V.rule(V.number, low=V.MODEL_PARAMS[0], high=V.MODEL_PARAMS[1], what="draft parameters")
    p = V.check_parameters(
        "optimal_draft",
        params,
        {
            "targets": V.rule(V.sequence, item=name, unique=True),
            "families": V.rule(V.sequence, item=V.rule(V.choice, options=fams, what="draft families"), unique=True),
            "constants": check_loss_constants,
            "coefficients": V.optional(check_coefficients),
            "integer": V.rule(V.boolean),
            "d_target": V.rule(
                V.mapping, key=name, item=V.rule(V.number, low=V.TOKENS[0], high=V.TOKENS[1], what="D'")
            ),
            "n_min": npar,
            "n_max": npar,
            "n_points": V.rule(V.integer, low=2, high=10_000),
            "gamma_step": V.rule(V.number, low=1e-5, high=1),
            "artifacts_dir": V.optional(V.rule(V.folder)),
        },
    )
    # the checks across parameters need every value they combine: the notebook passes them all (its
    # parameters cell holds the defaults), a caller that passes fewer gets the single-value checks only
    if "targets" in p and "d_target" in p:
        V.unknown_names(p["d_target"], p["targets"], "target", "in d_target: not among targets, it would not be used")
    if "n_min" in p and "n_max" in p and not p["n_min"] < p["n_max"]:
        raise ValueError(f"n_min must be below n_max, got n_min = {p['n_min']:g} and n_max = {p['n_max']:g}")
    if not {"targets", "families", "d_target", "constants", "coefficients", "integer"} <= p.keys():
        return
    coef = resolve_coefficients(p["coefficients"])
    d_of = {f: float(mod.loc[(mod["family"] == f) & (mod["role"] == "draft"), "tokens"].iloc[0]) for f in p["families"]}
    configs = [
        (float(tgt.loc[t, "params"]), d_of[f], float(p["d_target"].get(t, tgt.loc[t, "tokens"])))
        for t in p["targets"]
        for f in p["families"]
    ]
    optimum_inside(configs, p["constants"], coef, p["integer"])
    if "n_min" in p and "n_max" in p:
        plane_inside(configs, (p["n_min"], p["n_max"]), p["constants"], coef, "n_min and n_max")


# ---------------------------------------------------------------------------------------------
# the chapter's figures


@declare(
    "Figure 2",
    "throughput against draft size for the Qwen1.5 targets",
    data=("paper_table5", "models"),
    also=("figure2_curves", "figure2_drafts"),
)
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
    # under the panels, not in one: a legend inside the first panel covers its axis once the
    # book enlarges the text of a figure this wide
    fig.legend(
        handles=[
            Line2D([], [], ls="none", marker="o", ms=5, color="black"),
            Line2D([], [], ls="none", marker="*", ms=12, color="0.7", markeredgecolor="black"),
        ],
        labels=["drafts of the paper's experiments", "optimal draft size $N^*$ (Table 5)"],
        loc="outside lower center",
        ncols=2,
        fontsize=8,
    )
    return fig


# What this chapter shows that a function of another module makes.
declare(
    "hypotheses_14b",
    "candidate explanations of Table 5's Qwen1.5-14B rows",
    data=("paper_table5", "models"),
)(deviation_hypotheses)
declare("implied_d_target", "the target tokens D' each Table 5 row implies", data=("paper_table5",))(implied_d_target)
