"""Competing acceptance laws, held-out validation and the sensitivity of ``N*`` (chapter "beyond").

How far can the SDSL law be trusted with the 50 (target, draft) pairs of the paper's Tables 1 and 2?
This module puts the paper's own laws beside the log-linear law of Scylla ("Scaling Laws for
Speculative Decoding", arXiv 2505.07858: acceptance grows log-linearly with draft capacity and
pre-training tokens) and compares them by held-out prediction error, then follows each law to the
throughput-optimal draft size ``N*`` (method notes, section 6) and measures how sensitive ``N*`` is
to every constant it is built from.

Laws (:data:`LAWS`), all ``alpha`` as a function of the data of one (target, draft) pair:

===================  ==============================================  ==========  ============
name                 form                                            fitted      across targets
===================  ==============================================  ==========  ============
``plane_paper``      ``A x + B y + C``, Table 3 coefficients (Eq. 5)  not refit   yes (``y``)
``plane``            ``A x + B y + C`` (Eq. 5), OLS                   pooled      yes (``y``)
``linear_x``         ``p1 x + p2`` (Table 4)                          per target  no
``log_x``            ``p1 ln x + p2`` (Table 4)                       per target  no
``power_x``          ``p1 x**p2`` (Table 4, nonlinear LS)             per target  no
``linear_x_pooled``  ``a_target + p1 x``, target as a factor         pooled      no
``loglin_n``         ``a + b ln N`` (Scylla)                          per target  no
``loglin_n_pooled``  ``a_target + b ln N``, target as a factor        pooled      no
``loglin_nd_pooled`` ``a_target + b ln N + c ln D``                   pooled      no
``loglin_n_y``       ``a + b ln N + c y``                             pooled      yes (``y``)
``loglin_nd_y``      ``a + b ln N + c ln D + e y``                    pooled      yes (``y``)
``target_mean``      ``a_target`` (baseline: no draft dependence)     per target  no
===================  ==============================================  ==========  ============

``x``, ``y``: the draft's and the target's perplexities; ``N``, ``D``: the draft's parameters and
tokens. Leave-one-target-out is defined only for laws that carry the target through ``y``.
Propagation to ``N*``: ``x = exp(L(N, D))``, ``y = exp(L(M, D'))`` (method notes, section 4);
``T(N)`` (Eq. 9) is maximised over ``log N`` by the kernel :func:`sdsl.model.optimum.solve`; a
maximum at the end of the range or where ``alpha`` leaves (0, 1) is reported as such (status).

The figures, and the names of the laws in the text (:data:`LAW_NAMES`, :data:`CONSTANT_NAMES`), are
:mod:`sdsl.chapters.figures.beyond`'s; this module re-exports them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdsl.chapters.figures.beyond import (
    CONSTANT_NAMES,
    LAW_NAMES,
    figure_n_star,
    figure_predicted_observed,
    figure_ratio,
    figure_tornado,
    law_name,
)
from sdsl.model.alpha_laws import (
    LAWS,
    FittedLaw,
    Law,
    fit_laws,
    law_data,
    law_table,
    parameter_table,
)
from sdsl.model.configurations import configurations
from sdsl.model.crossval import (
    bootstrap_rmse,
    compare_laws,
    cross_validate,
    cv_predictions,
)
from sdsl.model.law_variants import (
    elasticity_table,
    n_star_spread,
    n_star_variants,
    ratio_rule_range,
    ratio_sweep,
    table4_check,
    table5_check,
)
from sdsl.model.optimum import (
    LawOptimum,
    law_optimal_draft_size,
    law_optimal_draft_sizes,
)
from sdsl.model.sensitivity import (
    LOSS_PARAMETERS,
    PLANE_PARAMETERS,
    elasticities,
    log_elasticity,
)

__all__ = [
    "Law",
    "FittedLaw",
    "LAWS",
    "LOSS_PARAMETERS",
    "PLANE_PARAMETERS",
    "LAW_NAMES",
    "CONSTANT_NAMES",
    "law_data",
    "law_table",
    "fit_laws",
    "parameter_table",
    "table4_check",
    "table4_judged",
    "cross_validate",
    "bootstrap_rmse",
    "compare_laws",
    "cv_predictions",
    "configurations",
    "LawOptimum",
    "law_optimal_draft_size",
    "law_optimal_draft_sizes",
    "n_star_variants",
    "table5_check",
    "n_star_spread",
    "ratio_sweep",
    "ratio_rule_range",
    "family_tokens",
    "elasticity_configurations",
    "elasticity_matrix",
    "table4_counts",
    "log_elasticity",
    "elasticities",
    "elasticity_table",
    "figure_predicted_observed",
    "figure_n_star",
    "figure_ratio",
    "figure_tornado",
    "summary",
]


def table4_judged(fitted: Mapping[str, FittedLaw], data: pd.DataFrame, paper4: pd.DataFrame) -> pd.DataFrame:
    """:func:`table4_check` with each cell's ``tolerance`` (half a unit in the last printed digit,
    :func:`sdsl.data.printed_tolerance`) and whether ours is ``within_printed_digits`` of the
    paper's (:func:`sdsl.tolerance.equal_to_printed`)."""
    from sdsl import data as _data
    from sdsl.tolerance import equal_to_printed

    t4 = table4_check(fitted, data, paper4)
    tol = _data.printed_tolerance("paper_table4").set_index([paper4["target"], paper4["function"]])
    t4["tolerance"] = [float(tol.loc[(r.target, r.function), r.quantity]) for r in t4.itertuples()]
    t4["within_printed_digits"] = equal_to_printed(t4["ours"], t4["paper"], t4["tolerance"])
    return t4


def family_tokens(models: pd.DataFrame) -> dict[str, float]:
    """Pre-training tokens ``D`` of each draft family of ``data/models.csv`` (one value per family)."""
    drafts = models[models["role"] == "draft"]
    out = {}
    for fam, g in drafts.groupby("family"):
        if g["tokens"].nunique() != 1:
            raise ValueError(
                f"draft family {fam!r} has {g['tokens'].nunique()} token counts in the models table; need one"
            )
        out[str(fam)] = float(g["tokens"].iloc[0])
    return out


def elasticity_configurations(configs: pd.DataFrame) -> pd.DataFrame:
    """The configurations of the sensitivity analysis: the six of Table 5 (Qwen1.5-14B and -32B
    targets) and OPT-13B with OPT and Qwen1.5 drafts (Table 6), from :func:`configurations`."""
    return pd.concat(
        [
            configs[configs["target"].isin(["Qwen1.5-14B", "Qwen1.5-32B"])],
            configs[(configs["target"] == "OPT-13B") & configs["draft_family"].isin(["OPT", "Qwen1.5"])],
        ],
        ignore_index=True,
    )


def table4_counts(t4: pd.DataFrame) -> pd.DataFrame:
    """Per target and function of :func:`table4_judged`: printed cells and those reproduced to
    every printed digit."""
    return (
        t4.groupby(["target", "function"], sort=False)
        .agg(printed_cells=("quantity", "size"), within_printed_digits=("within_printed_digits", "sum"))
        .reset_index()
    )


def elasticity_matrix(elast: pd.DataFrame, value: str = "elasticity_n_star") -> pd.DataFrame:
    """:func:`elasticity_table`'s ``value`` as a flat matrix: one row per constant, one column per
    configuration (``target / draft family``)."""
    wide = elast.pivot_table(index="parameter", columns=["target", "draft_family"], values=value, sort=False)
    wide.columns = [f"{t} / {f} drafts" for t, f in wide.columns]
    return wide.reset_index()


# ---------------------------------------------------------------------------------------------
# the numbers of the text


def _data_summary(d: pd.DataFrame) -> dict[str, Any]:
    from sdsl.model.laws import BESIROGLU_2024, perplexity

    per_target, per_draft = d.groupby("target").size(), d.groupby("draft").size()
    by_target = d.groupby("target").agg(y=("y", "first"), alpha=("alpha", "mean"))
    x_law = perplexity(d["n"].to_numpy(), d["d"].to_numpy(), BESIROGLU_2024)
    return {
        "n_pairs": len(d),
        "rows_per_target": int(per_target.iloc[0]),
        "rows_per_draft": int(per_draft.iloc[0]),
        "lodo_train": int(len(d) - per_draft.iloc[0]),
        "lodo_train_per_target": int(per_target.iloc[0] - 1),
        "d_min": float(d["d"].min()),
        "d_max": float(d["d"].max()),
        "x_meas_min": float(d["x"].min()),
        "x_meas_max": float(d["x"].max()),
        "x_law_min": float(np.min(x_law)),
        "x_law_max": float(np.max(x_law)),
        "rho_y_alpha": float(by_target["y"].corr(by_target["alpha"], method="spearman")),
        "top_y_target": str(by_target["y"].idxmax()),
        "low_alpha_target": str(by_target["alpha"].idxmin()),
        "n_targets": int(d["target"].nunique()),
        "n_drafts": int(d["draft"].nunique()),
    }


def _ranking_summary(ranking: pd.DataFrame) -> dict[str, Any]:
    lodo = ranking[ranking["scheme"] == "leave one draft out"].set_index("law")
    loto = ranking[ranking["scheme"] == "leave one target out"].set_index("law")
    lodo_ranked = lodo[lodo["rank"].notna()].sort_values("rank")
    loto_ranked = loto[loto["rank"].notna()].sort_values("rank")
    cols = {
        "rmse": "rmse",
        "lo": "rmse_ci_lower",
        "hi": "rmse_ci_upper",
        "ratio": "ratio_to_best",
        "diff_lo": "diff_ci_lower",
        "diff_hi": "diff_ci_upper",
    }
    best, second = lodo_ranked.index[0], lodo_ranked.index[1]
    best_loglin = min(("loglin_n", "loglin_n_pooled", "loglin_nd_pooled"), key=lambda n: lodo.loc[n, "rmse"])
    best_sdsl = min(("plane", "linear_x", "log_x", "power_x"), key=lambda n: lodo.loc[n, "rmse"])
    out: dict[str, Any] = {f"lodo_{n}_rmse": float(lodo.loc[n, "rmse"]) for n in LAW_NAMES}
    for prefix, table, law, keys in (
        ("lodo_best", lodo, best, ("rmse", "lo", "hi")),
        ("lodo_second", lodo, second, ("ratio", "diff_lo", "diff_hi")),
        ("lodo_plane", lodo, "plane", ("lo", "hi")),
        ("lodo_best_loglin", lodo, best_loglin, ("rmse", "lo", "hi", "diff_lo", "diff_hi")),
        ("loto_plane", loto, "plane", ("rmse", "lo", "hi")),
    ):
        out.update({f"{prefix}_{k}": float(table.loc[law, cols[k]]) for k in keys})
    out.update({f"loto_{n}_rmse": float(loto.loc[n, "rmse"]) for n in ("plane_paper", "loglin_n_y", "loglin_nd_y")})
    rank = lodo.loc["plane", "rank"]
    out.update(
        best_lodo_law=law_name(best),
        second_lodo_law=law_name(second),
        best_lodo_rmse=float(lodo.loc[best, "rmse"]),
        lodo_plane_rank="not ranked" if np.isnan(rank) else int(rank),
        best_loglin=law_name(best_loglin),
        loglin_over_sdsl=float(lodo.loc[best_loglin, "rmse"] / lodo.loc[best_sdsl, "rmse"]),
        plane_over_baseline=float(lodo.loc["plane", "rmse"] / lodo.loc["target_mean", "rmse"]),
        best_loto_law=law_name(loto_ranked.index[0]),
        n_loto_others=len(loto_ranked) - 1,
        loto_over_lodo_plane=float(loto.loc["plane", "rmse"] / lodo.loc["plane", "rmse"]),
        loto_spread=float(loto_ranked["rmse"].max() / loto_ranked["rmse"].min() - 1),
    )

    def text(tab: pd.DataFrame) -> str:
        return "; ".join(
            f"{int(r['rank'])}. {law_name(law)} {r['rmse']:.4f} [{r['rmse_ci_lower']:.4f}, {r['rmse_ci_upper']:.4f}]"
            for law, r in tab.iterrows()
        )

    out.update(lodo_ranking_text=text(lodo_ranked), loto_ranking_text=text(loto_ranked), _best=best)
    return out


def _variant_text(row: pd.Series) -> str:
    return (
        f"{law_name(row['law'])}, {row['draft_family']} drafts, {CONSTANT_NAMES.get(row['constants'], row['constants'])}, "
        f"{row['gamma']} γ"
    )


def _n_star_summary(variants: pd.DataFrame, spread: pd.DataFrame, best: str) -> dict[str, Any]:
    laws_only = variants[variants["law"] != "target_mean"]
    out: dict[str, Any] = {
        "no_interior_baseline": int((variants.loc[variants["law"] == "target_mean", "status"] != "interior").sum()),
        "no_interior_laws": int((laws_only["status"] != "interior").sum()),
    }
    sp = spread.set_index("target")
    ok = laws_only[laws_only["status"] == "interior"]
    fixed = ok[(ok["constants"] == "besiroglu2024") & (ok["gamma"] == "continuous") & (ok["draft_family"] == "OPT")]
    for key, target in (("q14", "Qwen1.5-14B"), ("o13", "OPT-13B")):
        for col in ("n_star_min", "n_star_median", "n_star_max", "max_over_min"):
            out[f"{key}_{col}"] = float(sp.loc[target, col])
        if key == "q14":
            out[f"{key}_variants"] = int(sp.loc[target, "interior"])
        t = ok[ok["target"] == target]
        out[f"{key}_min_variant"] = _variant_text(t.loc[t["n_star"].idxmin()])
        out[f"{key}_max_variant"] = _variant_text(t.loc[t["n_star"].idxmax()])
        f = fixed[fixed["target"] == target].set_index("law")["n_star"]
        out.update(
            {
                f"{key}_laws_min": float(f.min()),
                f"{key}_laws_max": float(f.max()),
                f"{key}_laws_min_law": law_name(f.idxmin()),
                f"{key}_laws_max_law": law_name(f.idxmax()),
                f"{key}_best_law_nstar": float(f[best]),
            }
        )
    pp = laws_only[
        (laws_only["law"] == "plane_paper")
        & (laws_only["target"] == "Qwen1.5-14B")
        & (laws_only["draft_family"] == "OPT")
    ].set_index(["constants", "gamma"])["n_star"]
    base = pp[("besiroglu2024", "continuous")]
    out.update(
        q14_hoffmann_shift=float(pp[("hoffmann2022", "continuous")] / base - 1),
        q14_integer_shift=float(pp[("besiroglu2024", "integer")] / base - 1),
    )
    return out


def _rule_summary(sweep: pd.DataFrame, rule: pd.DataFrame, family: str) -> dict[str, Any]:
    out: dict[str, Any] = {"sweep_no_interior": int((sweep["status"] != "interior").sum()), "sweep_n": len(sweep)}
    r = rule.set_index(["law", "draft_family", "constants", "gamma"])
    cited = {
        "plane_paper": ("band_m_low", "band_m_high", "ratio_at_m_min", "ratio_at_m_max"),
        "plane": ("band_m_low", "band_m_high", "ratio_at_m_min", "ratio_at_m_max"),
        "loglin_n_y": ("ratio_min", "ratio_max"),
        "loglin_nd_y": ("ratio_min", "ratio_max"),
    }
    for law, cols in cited.items():
        row = r.loc[(law, family, "besiroglu2024", "continuous")]
        out.update({f"rule_{law}_{c}": float(row[c]) if np.isfinite(row[c]) else "none" for c in cols})
    for law, key, col, fn in (
        ("plane_paper", "all_low", "band_m_low", "min"),
        ("plane_paper", "all_high", "band_m_high", "max"),
        ("loglin_n_y", "all_rmin", "ratio_min", "min"),
        ("loglin_nd_y", "all_rmax", "ratio_max", "max"),
    ):
        v = getattr(rule.loc[rule["law"] == law, col], fn)()
        out[f"rule_{law}_{key}"] = float(v) if np.isfinite(v) else "none"
    return out


def _elasticity_summary(elast: pd.DataFrame, paper3: pd.DataFrame) -> dict[str, Any]:
    ref = elast[(elast["target"] == "Qwen1.5-14B") & (elast["draft_family"] == "OPT")].set_index("parameter")
    top = ref["elasticity_n_star"].abs().sort_values(ascending=False).index
    ttop = ref["elasticity_t"].abs().sort_values(ascending=False).index[0]
    p3 = paper3.set_index("parameter")
    a = elast.loc[elast["parameter"] == "a", "elasticity_n_star"]
    out: dict[str, Any] = {
        "el_ttop": str(ttop),
        "el_ttop_value": float(ref.loc[ttop, "elasticity_t"]),
        "el_range_a_lo": float(a.min()),
        "el_range_a_hi": float(a.max()),
    }
    for i in range(3):
        out[f"el_top{i + 1}"] = str(top[i])
        out[f"el_top{i + 1}_value"] = float(ref.loc[top[i], "elasticity_n_star"])
    for p in ("A", "B", "C"):
        out[f"el_n_{p}"] = float(ref.loc[p, "elasticity_n_star"])
    # where the plane's slope A ranks among all the constants, and the ones before it
    rank_a = list(top).index("A")
    out["el_rank_A"], out["el_n_parameters"] = rank_a + 1, len(top)
    before = [f"{p} ({ref.loc[p, 'elasticity_n_star']:.2f})" for p in top[:rank_a]]
    out["el_before_A"] = (
        ", ".join(before[:-1]) + (" and " if len(before) > 1 else "") + before[-1] if before else "none"
    )
    # what Table 3's margin of error of A (of C) means for N*: its relative half-width times the elasticity
    for p in ("A", "C"):
        out[f"el_{p}_ci_effect"] = float(
            abs(ref.loc[p, "elasticity_n_star"]) * p3.loc[p, "moe"] / abs(p3.loc[p, "estimate"])
        )
    return out


def summary(
    d: pd.DataFrame,
    t4: pd.DataFrame,
    ranking: pd.DataFrame,
    t5: pd.DataFrame,
    variants: pd.DataFrame,
    spread: pd.DataFrame,
    sweep: pd.DataFrame,
    rule: pd.DataFrame,
    elast: pd.DataFrame,
    paper3: pd.DataFrame,
    paper9: pd.DataFrame,
    *,
    n_resamples: int,
    sweep_range: Sequence[float],
    sweep_points: int,
    sweep_d_target: float,
    sweep_family: str,
    band: Sequence[float],
    elasticity_step: float,
) -> dict[str, Any]:
    """The numbers the chapter's text cites, by glue name (without the chapter prefix), from the
    chapter's tables: the data (``d``, :func:`law_data`), the Table 4 check (``t4``,
    :func:`table4_judged`), the held-out ranking, the Table 5 check, the ``N*`` variants and their
    spread, the 200x sweep and its rule ranges, the elasticities, and the run's parameters. Laws
    are named as in :data:`LAW_NAMES`."""
    out = _data_summary(d)
    out.update(
        t4_equal=int(t4["within_printed_digits"].sum()),
        t4_cells=len(t4),
        t5_maxdev=float(t5["n_star_rel_dev"].abs().max()),
        n_resamples=int(n_resamples),
    )
    ranks = _ranking_summary(ranking)
    best = ranks.pop("_best")
    out.update(ranks)
    out.update(_n_star_summary(variants, spread, best))
    out.update(_rule_summary(sweep, rule, sweep_family))
    out.update(_elasticity_summary(elast, paper3))
    out.update(
        sweep_points=int(sweep_points),
        sweep_lo=float(sweep_range[0]),
        sweep_hi=float(sweep_range[1]),
        sweep_dt=float(sweep_d_target),
        sweep_family=str(sweep_family),
        band_lo=float(band[0]),
        band_hi=float(band[1]),
        h=float(elasticity_step),
        t9_m0=float(paper9.set_index("parameter").loc["M0", "estimate"]),
    )
    return out


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed."""
    from sdsl import data
    from sdsl import validation as V

    mod = data.load("models")
    fams = sorted(set(mod.loc[mod["role"] == "draft", "family"]))
    V.check_parameters(
        "beyond",
        params,
        {
            "artifacts_dir": V.optional(V.rule(V.folder)),
            "seed": V.rule(V.seed),
            "n_resamples": V.rule(V.draws, allow_zero=False, what="bootstrap resamples"),
            "level": V.rule(V.level, what="confidence level"),
            "band": V.rule(V.interval, low=1, low_open=True, what="ratios M / N*"),
            "sweep_range": V.rule(V.interval, low=V.TARGET_PARAMS[0], high=V.TARGET_PARAMS[1], what="target sizes M"),
            "sweep_points": V.rule(V.integer, low=2, high=1000, what="target sizes of the sweep"),
            "sweep_d_target": V.rule(V.number, low=V.TOKENS[0], high=V.TOKENS[1], what="target tokens D'"),
            "sweep_family": V.rule(V.choice, options=fams, what="draft families of data/models.csv"),
            "elasticity_step": V.rule(V.number, low=1e-6, high=0.1, what="step h in log space"),
        },
    )
