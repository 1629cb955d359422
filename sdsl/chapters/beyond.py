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

``x``, ``y`` are the draft's and the target's perplexities, ``N`` and ``D`` the draft's parameters
and pre-training tokens. A law with the target as a factor (or fitted per target) has no level for
a target it has not seen, so leave-one-target-out is defined only for the laws that carry the
target through a covariate (the plane and the ``_y`` log-linear laws, which replace the factor
by the target's perplexity ``y``).

Propagation to ``N*``: the perplexities come from the loss law, ``x = exp(L(N, D))`` and
``y = exp(L(M, D'))`` (method notes, section 4), as the paper does for Eq. 5; ``ln N`` and ``ln D``
enter directly. ``T(N) = T(N, M, alpha(N), gamma*)`` (Eq. 9) is maximised over ``log N`` by a scan
and the root of its derivative, for all variants of a law at once (one call of the kernel
:func:`sdsl.model.optimum.solve`); a maximum at the end of the range or where ``alpha``
leaves (0, 1) is reported as such (status), never as an optimum.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from sdsl.book.style import fix_layout
from sdsl.model.alpha_laws import (
    LAWS,
    FittedLaw,
    Law,
    fit_laws,
    law_data,
    law_table,
    parameter_table,
)
from sdsl.model.crossval import (
    bootstrap_rmse,
    compare_laws,
    cross_validate,
    cv_predictions,
)
from sdsl.model.law_optimum import (
    LawOptimum,
    law_optimal_draft_size,
    law_optimal_draft_sizes,
)
from sdsl.model.laws import (
    BESIROGLU_2024,
    HOFFMANN_2022,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    resolve_constants,
)
from sdsl.model.sensitivity import (
    LOSS_PARAMETERS,
    PLANE_PARAMETERS,
    _elasticity_frame,
    elasticities,
    log_elasticity,
)

__all__ = [
    "Law",
    "FittedLaw",
    "LAWS",
    "LOSS_PARAMETERS",
    "PLANE_PARAMETERS",
    "law_data",
    "law_table",
    "fit_laws",
    "parameter_table",
    "table4_check",
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
    "log_elasticity",
    "elasticities",
    "elasticity_table",
    "figure_predicted_observed",
    "figure_n_star",
    "figure_ratio",
    "figure_tornado",
]


# ---------------------------------------------------------------------------------------------
# laws


def table4_check(fitted: Mapping[str, FittedLaw], data: pd.DataFrame, table4: pd.DataFrame) -> pd.DataFrame:
    """Our per-target fits beside the paper's Table 4 (linear, logarithmic, power): one row per
    printed quantity (``p1, moe1, p2, moe2, mse, r2``) with columns ``target, function, quantity,
    ours, paper, deviation``. Comparing the deviation with the printed precision
    (:func:`sdsl.data.printed_tolerance`) is left to the caller."""
    names = {"linear": "linear_x", "logarithmic": "log_x", "power": "power_x"}
    rows = []
    pt = parameter_table({v: fitted[v] for v in names.values()}, data)
    for _, r in table4.iterrows():
        law = names[r["function"]]
        sub = pt[(pt["law"] == law) & (pt["fit"] == r["target"])]
        est = sub["estimate"].to_numpy()
        # OLS order: Intercept, slope; Table 4: p1 = slope, p2 = intercept. Power: p1, p2.
        p1, p2 = (est[1], est[0]) if law != "power_x" else (est[0], est[1])
        ci = sub[["ci_lower", "ci_upper"]].to_numpy()
        moe1, moe2 = ((ci[1, 1] - ci[1, 0]) / 2, (ci[0, 1] - ci[0, 0]) / 2) if law != "power_x" else (
            (ci[0, 1] - ci[0, 0]) / 2, (ci[1, 1] - ci[1, 0]) / 2)
        ours = {"p1": p1, "moe1": moe1, "p2": p2, "moe2": moe2, "mse": sub["mse"].iloc[0], "r2": sub["r2"].iloc[0]}
        for k, v in ours.items():
            rows.append({"target": r["target"], "function": r["function"], "quantity": k,
                         "ours": float(v), "paper": float(r[k]), "deviation": float(v) - float(r[k])})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# held-out validation


# ---------------------------------------------------------------------------------------------
# propagation to N*


def configurations(models: pd.DataFrame | None = None, targets: Sequence[str] | None = None,
                   families: Sequence[str] = ("OPT", "Qwen1.5", "Qwen2.5")) -> pd.DataFrame:
    """(target, draft family) configurations with ``m``, ``d_target`` and the family's ``d_draft``
    (tokens of the family's drafts in the ``models`` table). Default targets: the five of
    Tables 1 and 2."""
    from sdsl import data as _data

    mod = _data.load("models") if models is None else models
    targets = list(targets) if targets is not None else ["OPT-13B", "OPT-30B", "OPT-66B", "Qwen1.5-14B", "Qwen1.5-32B"]
    idx = mod.set_index("model")
    drafts = mod[mod["role"] == "draft"]
    rows = []
    for t in targets:
        for fam in families:
            toks = drafts.loc[drafts["family"] == fam, "tokens"].unique()
            if len(toks) != 1:
                raise ValueError(f"draft family {fam!r} has {len(toks)} token counts in the models table; need one")
            rows.append({"target": t, "m": float(idx.loc[t, "params"]), "d_target": float(idx.loc[t, "tokens"]),
                         "draft_family": fam, "d_draft": float(toks[0])})
    return pd.DataFrame(rows)


def n_star_variants(
    fitted: Mapping[str, FittedLaw], configs: pd.DataFrame,
    constants: Sequence[LossConstants | str] = (BESIROGLU_2024, HOFFMANN_2022),
    integer: Sequence[bool] = (False, True),
) -> pd.DataFrame:
    """``N*`` for every law x loss-constant set x integer/continuous ``gamma`` x configuration.
    A per-target law is evaluated only at the targets it was fitted on. All variants of one law
    are solved at once (:func:`law_optimal_draft_sizes`)."""
    cs = [resolve_constants(const) for const in constants]
    rows = []
    for name, fl in fitted.items():
        keys = []
        for _, cfg in configs.iterrows():
            if fl.law.per_target and cfg["target"] not in fl.pieces:
                continue
            for c in cs:
                for integ in integer:
                    keys.append((cfg, c, integ))
        if not keys:
            continue
        opts = law_optimal_draft_sizes(
            fl, [k[0]["target"] for k in keys], [k[0]["m"] for k in keys], [k[0]["d_draft"] for k in keys],
            [k[0]["d_target"] for k in keys], [k[1] for k in keys], [k[2] for k in keys])
        for (cfg, c, integ), opt in zip(keys, opts):
            rows.append({
                "law": name, "target": cfg["target"], "draft_family": cfg["draft_family"],
                "m": cfg["m"], "d_target": cfg["d_target"], "d_draft": cfg["d_draft"],
                "constants": c.name, "gamma": "integer" if integ else "continuous",
                "n_star": opt.n_star, "gamma_star": opt.gamma_star, "alpha": opt.alpha,
                "tokens_per_flop": opt.tokens_per_flop, "ratio": opt.ratio, "status": opt.status,
                "n_at_max": opt.n_at_max,
            })
    return pd.DataFrame(rows)


def table5_check(fitted: FittedLaw, paper5: pd.DataFrame,
                 constants: LossConstants | str = BESIROGLU_2024) -> pd.DataFrame:
    """The paper's Table 5 regenerated through :func:`law_optimal_draft_size` with a fitted law
    (the paper's plane by default in the notebook): ours, the paper's and the relative
    deviations of ``N*`` and ``T(N*)``."""
    rows = []
    for _, r in paper5.iterrows():
        o = law_optimal_draft_size(fitted, r["target"], r["m"], r["d_draft"], r["d_target"], constants)
        rows.append({"target": r["target"], "draft_family": r["draft_family"], "n_star": o.n_star,
                     "paper_n_star": float(r["n_star"]), "n_star_rel_dev": o.n_star / float(r["n_star"]) - 1,
                     "tokens_per_flop": o.tokens_per_flop, "paper_tokens_per_flop": float(r["tokens_per_flop"]),
                     "tokens_per_flop_rel_dev": o.tokens_per_flop / float(r["tokens_per_flop"]) - 1})
    return pd.DataFrame(rows)


def n_star_spread(variants: pd.DataFrame, by: Sequence[str] = ("target",)) -> pd.DataFrame:
    """Spread of ``N*`` across variants (laws, constants, gamma, families) per group ``by``:
    count of variants with an interior optimum, min, median, max, max/min, and the law and
    variant at each end."""
    rows = []
    for key, g in variants.groupby(list(by), sort=True):
        ok = g[g["status"] == "interior"]
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row.update({"variants": int(len(g)), "interior": int(len(ok))})
        if len(ok):
            lo, hi = ok.loc[ok["n_star"].idxmin()], ok.loc[ok["n_star"].idxmax()]
            row.update({
                "n_star_min": float(lo["n_star"]), "n_star_median": float(ok["n_star"].median()),
                "n_star_max": float(hi["n_star"]), "max_over_min": float(hi["n_star"] / lo["n_star"]),
                "min_variant": f"{lo['law']} / {lo['draft_family']} / {lo['constants']} / {lo['gamma']}",
                "max_variant": f"{hi['law']} / {hi['draft_family']} / {hi['constants']} / {hi['gamma']}",
            })
        rows.append(row)
    return pd.DataFrame(rows)


def ratio_sweep(
    fitted: Mapping[str, FittedLaw], m_grid: ArrayLike, d_target: float, d_drafts: Mapping[str, float],
    constants: Sequence[LossConstants | str] = (BESIROGLU_2024, HOFFMANN_2022),
    integer: Sequence[bool] = (False, True),
) -> pd.DataFrame:
    """``M / N*`` against the target size ``M`` for the laws with cross-target structure (the
    others have no way to move to another ``M``). ``d_drafts`` maps a draft family to its ``D``."""
    rows = []
    ms = np.asarray(m_grid, float)
    cs = [resolve_constants(const) for const in constants]
    for name, fl in fitted.items():
        if not fl.law.cross_target:
            continue
        keys = [(fam, d, c, integ, m) for fam, d in d_drafts.items() for c in cs for integ in integer for m in ms]
        opts = law_optimal_draft_sizes(fl, "new target", [k[4] for k in keys], [float(k[1]) for k in keys],
                                       float(d_target), [k[2] for k in keys], [k[3] for k in keys])
        for (fam, _, c, integ, m), opt in zip(keys, opts):
            rows.append({"law": name, "draft_family": fam, "constants": c.name,
                         "gamma": "integer" if integ else "continuous", "m": float(m),
                         "n_star": opt.n_star, "ratio": opt.ratio, "alpha": opt.alpha,
                         "status": opt.status})
    return pd.DataFrame(rows)


def ratio_rule_range(sweep: pd.DataFrame, low: float = 150.0, high: float = 300.0) -> pd.DataFrame:
    """Where ``low <= M/N* <= high`` holds in a :func:`ratio_sweep`: per (law, family, constants,
    gamma) the smallest and largest ``M`` of the sweep inside the band, the ratio at both ends
    of the sweep, and whether the band is left above the largest ``M`` (``breaks_above``)."""
    rows = []
    for key, g in sweep.groupby(["law", "draft_family", "constants", "gamma"], sort=True):
        g = g.sort_values("m")
        inside = g[(g["ratio"] >= low) & (g["ratio"] <= high)]
        rows.append({
            **dict(zip(["law", "draft_family", "constants", "gamma"], key)),
            "ratio_at_m_min": float(g["ratio"].iloc[0]), "ratio_at_m_max": float(g["ratio"].iloc[-1]),
            "m_min": float(g["m"].iloc[0]), "m_max": float(g["m"].iloc[-1]),
            "band_m_low": float(inside["m"].min()) if len(inside) else np.nan,
            "band_m_high": float(inside["m"].max()) if len(inside) else np.nan,
            "ratio_min": float(g["ratio"].min()), "ratio_max": float(g["ratio"].max()),
            "no_interior": int((g["status"] != "interior").sum()),
        })
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# sensitivity

#: Coefficients of Eq. 5 and the five loss-law constants, by the names used in the tables.
def elasticity_table(configs: pd.DataFrame, coefficients: AcceptanceCoefficients = PAPER_EQ5,
                     constants: LossConstants | str = BESIROGLU_2024, integer: bool = False,
                     h: float = 1e-3) -> pd.DataFrame:
    """:func:`elasticities` at every configuration of ``configs`` (columns ``target, m, d_target,
    draft_family, d_draft``), all configurations solved at once."""
    cfgs = [(float(r["m"]), float(r["d_draft"]), float(r["d_target"])) for _, r in configs.iterrows()]
    frames = []
    for (_, cfg), e in zip(configs.iterrows(), _elasticity_frame(cfgs, coefficients, constants, integer, h)):
        e.insert(0, "draft_family", cfg["draft_family"])
        e.insert(0, "target", cfg["target"])
        frames.append(e)
    return pd.concat(frames, ignore_index=True)


# ---------------------------------------------------------------------------------------------
# figures


def figure_predicted_observed(predictions: pd.DataFrame, laws: Sequence[str], labels: Mapping[str, str] | None = None):
    """Held-out predicted against observed ``alpha``: one panel per law; filled markers
    leave-one-draft-out, open markers leave-one-target-out; colour = draft family."""
    import matplotlib.pyplot as plt

    from sdsl.book.style import family_color

    ncol = min(4, len(laws))
    nrow = int(np.ceil(len(laws) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(2.6 * ncol, 2.6 * nrow + 0.4), sharex=True, sharey=True,
                             squeeze=False)
    lo = float(min(predictions["alpha"].min(), predictions["predicted"].min())) - 0.01
    hi = float(max(predictions["alpha"].max(), predictions["predicted"].max())) + 0.01
    for ax, name in zip(axes.flat, laws):
        sub = predictions[predictions["law"] == name]
        for scheme, filled in (("draft", True), ("target", False)):
            s = sub[sub["scheme"] == scheme]
            for fam, g in s.groupby("draft_family"):
                col = family_color(fam)
                ax.scatter(g["alpha"], g["predicted"], s=14, marker="o" if filled else "D",
                           facecolors=col if filled else "none", edgecolors=col, linewidths=0.8,
                           label=f"{fam}, {'draft' if filled else 'target'} held out")
        ax.plot([lo, hi], [lo, hi], color="0.4", lw=0.8, ls="--")
        ax.text(0.04, 0.96, (labels or {}).get(name, name), transform=ax.transAxes, va="top", fontsize=7.5)
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    for ax in axes.flat[len(laws):]:
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
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.0 * ncol + 1.2, (0.26 * len(law_order) + 0.9) * nrow + 0.6),
                             sharey=True, squeeze=False)
    ypos = {n: i for i, n in enumerate(law_order)}
    fams = sorted(variants["draft_family"].unique())
    offs = {f: (i - (len(fams) - 1) / 2) * 0.22 for i, f in enumerate(fams)}
    xmin = variants.loc[variants["status"] == "interior", "n_star"].min()
    for ax, target in zip(axes.flat, targets):
        sub = variants[(variants["target"] == target) & variants["law"].isin(law_order)]
        sub = sub.assign(
            ypos=sub["law"].map(ypos) + sub["draft_family"].map(offs) + np.where(sub["gamma"] == "integer", 0.06, -0.06),
            interior=sub["status"] == "interior",
        )
        # one scatter per marker shape (not per point): the same marks, far fewer artists to draw
        cols = [family_color(f) for f in sub["draft_family"]]
        sub = sub.assign(edge=cols, face=[c if k == "besiroglu2024" else "none" for c, k in zip(cols, sub["constants"])])
        for gam, g in sub[sub["interior"]].groupby("gamma", sort=True):
            ax.scatter(g["n_star"], g["ypos"], s=16, marker="o" if gam == "continuous" else "s",
                       facecolors=list(g["face"]), edgecolors=list(g["edge"]), linewidths=0.8)
        none = sub[~sub["interior"]]
        if len(none):
            ax.scatter(np.full(len(none), xmin / 1.6), none["ypos"], s=16, marker="x", color=list(none["edge"]),
                       linewidths=0.8)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1e6:.0f}M"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(f"N* for {target}")
        ax.axvline(xmin / 1.35, color="0.7", lw=0.6)
    for ax in axes.flat[len(targets):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_yticks(range(len(law_order)), law_order)
    axes[0, 0].invert_yaxis()
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls="", marker="o", color=family_color(f), label=f"{f} drafts") for f in fams]
    handles += [
        Line2D([], [], ls="", marker="o", color="0.3", label="Besiroglu 2024, continuous gamma"),
        Line2D([], [], ls="", marker="o", mfc="none", color="0.3", label="Hoffmann 2022"),
        Line2D([], [], ls="", marker="s", color="0.3", label="integer gamma"),
        Line2D([], [], ls="", marker="x", color="0.3", label="no interior optimum"),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=7.5)
    return fix_layout(fig)


def figure_ratio(sweep: pd.DataFrame, low: float = 150.0, high: float = 300.0, draft_family: str | None = None,
                 gamma: str = "continuous"):
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
        ax.plot(g["m"], g["ratio"], color=colors[law], ls="-" if const == "besiroglu2024" else "--", lw=1.4,
                label=f"{law}, {const}")
    ax.axhspan(low, high, color="0.85", zorder=0, label=f"M/N* in [{low:g}, {high:g}]")
    ax.axhline(200, color="0.5", lw=0.7, ls=":")
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(FixedLocator([20, 50, 100, 150, 200, 300, 500, 1000]))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("target size M (parameters)")
    ax.set_ylabel(r"$M/N^*$")
    fig.legend(loc="outside right center", fontsize=7.5)
    return fix_layout(fig)


def figure_tornado(elast: pd.DataFrame, reference: tuple[str, str]):
    """Tornado chart: elasticities of ``N*`` (left) and ``T(N*)`` (right) at the reference
    configuration ``(target, draft_family)`` as horizontal bars sorted by size, with the range
    over all configurations of ``elast`` as a whisker."""
    import matplotlib.pyplot as plt

    ref = elast[(elast["target"] == reference[0]) & (elast["draft_family"] == reference[1])].set_index("parameter")
    order = ref["elasticity_n_star"].abs().sort_values().index
    rng_ = elast.groupby("parameter").agg(
        n_lo=("elasticity_n_star", "min"), n_hi=("elasticity_n_star", "max"),
        t_lo=("elasticity_t", "min"), t_hi=("elasticity_t", "max"),
    ).loc[order]
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.6), sharey=True)
    for ax, col, lo, hi, xlabel in (
        (axes[0], "elasticity_n_star", "n_lo", "n_hi", r"elasticity of $N^*$"),
        (axes[1], "elasticity_t", "t_lo", "t_hi", r"elasticity of $\mathcal{T}(N^*)$"),
    ):
        v = ref.loc[order, col].to_numpy()
        y = np.arange(len(order))
        ax.barh(y, v, color=np.where(v >= 0, "#0072B2", "#D55E00"), height=0.6)
        ax.hlines(y, rng_[lo].to_numpy(), rng_[hi].to_numpy(), color="0.2", lw=1.2)
        ax.axvline(0, color="0.3", lw=0.8)
        ax.set_xscale("symlog", linthresh=0.1)
        ax.set_xlabel(xlabel)
    axes[0].set_yticks(np.arange(len(order)), [p.replace("_loss", " (loss)") if p.endswith("_loss") else (f"{p} (plane)" if p in ("A", "B", "C") else p) for p in order])
    return fix_layout(fig)




def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (issue 13; the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed."""
    from sdsl import _validate as V
    from sdsl import data

    mod = data.load("models")
    fams = sorted(set(mod.loc[mod["role"] == "draft", "family"]))
    V.check_parameters("beyond", params, {
        "artifacts_dir": V.optional(V.rule(V.folder)), "seed": V.rule(V.seed),
        "n_resamples": V.rule(V.draws, allow_zero=False, what="bootstrap resamples"),
        "level": V.rule(V.number, low=0, high=1, low_open=True, high_open=True, what="confidence level"),
        "band": V.rule(V.interval, low=1, low_open=True, what="ratios M / N*"),
        "sweep_range": V.rule(V.interval, low=V.TARGET_PARAMS[0], high=V.TARGET_PARAMS[1], what="target sizes M"),
        "sweep_points": V.rule(V.integer, low=2, high=1000, what="target sizes of the sweep"),
        "sweep_d_target": V.rule(V.number, low=V.TOKENS[0], high=V.TOKENS[1], what="target tokens D'"),
        "sweep_family": V.rule(V.choice, options=fams, what="draft families of data/models.csv"),
        "elasticity_step": V.rule(V.number, low=1e-6, high=0.1, what="step h in log space")})
