"""Competing acceptance laws, held-out validation and the sensitivity of ``N*`` (chapter "beyond").

How far can the SDSL law be trusted with the 50 (target, draft) pairs of the paper's Tables 1 and 2?
This module puts the paper's own laws beside the log-linear law of Scylla ("Scaling Laws for
Speculative Decoding", arXiv 2505.07858: acceptance grows log-linearly with draft capacity and
pre-training tokens) and compares them by held-out prediction error, then follows each law to the
throughput-optimal draft size ``N*`` (method notes, section 6) and measures how sensitive ``N*`` is
to every constant it is built from.

Laws (:data:`sdsl.model.alpha_laws.LAWS`), all ``alpha`` as a function of the data of one (target, draft) pair:

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
at the end of this module.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdsl.book.outputs import declare
from sdsl.book.style import fix_layout
from sdsl.model.alpha_laws import FittedLaw, law_data, law_table, parameter_table
from sdsl.model.crossval import compare_laws, cv_predictions
from sdsl.model.law_variants import (
    elasticity_table,
    n_star_spread,
    n_star_variants,
    ratio_rule_range,
    ratio_sweep,
    table4_check,
    table5_check,
)

__all__ = [
    "LAW_NAMES",
    "CONSTANT_NAMES",
    "table4_judged",
    "family_tokens",
    "elasticity_configurations",
    "elasticity_matrix",
    "table4_counts",
    "figure_predicted_observed",
    "figure_n_star",
    "figure_ratio",
    "figure_tornado",
    "summary",
]


@declare(
    "table4_check", "Table 4 regenerated through the law definitions", data=("acceptance", "models", "paper_table4")
)
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
    t5_printed: pd.DataFrame,
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
    :func:`table4_judged`), the held-out ranking, the Table 5 check (``t5`` under the readings of
    :data:`sdsl.audit.rules.READINGS`, ``t5_printed`` with every input as printed), the ``N*``
    variants and their spread, the 200x sweep and its rule ranges, the elasticities, and the run's parameters. Laws
    are named as in :data:`LAW_NAMES`."""
    out = _data_summary(d)
    out.update(
        t4_equal=int(t4["within_printed_digits"].sum()),
        t4_cells=len(t4),
        t5_maxdev=float(t5["n_star_rel_dev"].abs().max()),
        t5_maxdev_printed=float(t5_printed["n_star_rel_dev"].abs().max()),
        t5_d_reading=float(t5.loc[t5["d_target"] != t5_printed["d_target"], "d_target"].iloc[0]),
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


# ---------------------------------------------------------------------------------------------
# the chapter's figures


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


@declare(
    "fig_predicted_observed", "held-out predicted against observed alpha", data=("acceptance", "models"), figure=True
)
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


@declare("fig_n_star", "N* of every variant", data=("acceptance", "models"), figure=True)
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


@declare("fig_ratio", "M/N* against M", data=("acceptance", "models"), figure=True)
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


@declare("fig_tornado", "the elasticities as a tornado chart", data=("models", "paper_table3"), figure=True)
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


# What this chapter shows that a function of another module makes.
declare("law_data", "the measured pairs with sizes and token counts", data=("acceptance", "models"))(law_data)
declare("laws", "the acceptance laws compared")(law_table)
declare("law_parameters", "every law fitted on all pairs", data=("acceptance", "models"))(parameter_table)
declare("cv_predictions", "held-out predictions of every law", data=("acceptance", "models"), shown=False)(
    cv_predictions
)
declare("law_ranking", "the laws ranked by held-out error", data=("acceptance", "models"))(compare_laws)
declare(
    "table5_check",
    "Table 5 through the generic law search, Qwen1.5-14B's D' read as 4e12 and as printed",
    data=("paper_table5",),
    also=("table5_check_as_printed",),
)(table5_check)
declare(
    "n_star_variants",
    "N* of every law, loss law and gamma at the targets of Tables 1 and 2",
    data=("acceptance", "models"),
    shown=False,
)(n_star_variants)
declare("n_star_spread", "the spread of N* across the variants", data=("acceptance", "models"))(n_star_spread)
declare("ratio_sweep", "M/N* over target sizes for the cross-target laws", data=("acceptance", "models"), shown=False)(
    ratio_sweep
)
declare("ratio_rule", "where M/N* stays near 200", data=("acceptance", "models"))(ratio_rule_range)
declare("elasticities", "elasticities of N* and T(N*)", data=("models", "paper_table3"))(elasticity_table)
