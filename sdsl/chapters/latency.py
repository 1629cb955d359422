"""Latency validation of the optimal draft size: the paper's Table 6 and Figure 4.

Chapter ``latency`` of the book (method notes, section 6). The paper measured TTFT, TTOT and
TPOT of speculative decoding with an OPT-13B target and six drafts (four OPT, two Qwen1.5) and
claims that latency grows with the normalised distance ``|N - N*| / M`` of the draft from the
throughput-optimal size. Functions:

* :func:`table6`            ``N*`` per draft family, ``|N - N*|/M`` beside the paper's, measured latencies
* :func:`figure4`           each latency metric against ``|N - N*|/M`` with 95 % error bars
* :func:`rank_correlations` Spearman and Kendall rank correlations, exact permutation p-values,
  a bootstrap over drafts and a measurement-noise interval, per family and pooled (the statistics
  of one sample: :func:`trend_evidence`, with :func:`spearman` and :func:`kendall`)
* :func:`stratified_trend_test` one exact test of "latency grows with distance within each family"
* :func:`family_gap`, :func:`closest_cross_family_pair`, :func:`discordant_pairs`: what the table
  shows across and within families; :func:`summary`: every number the chapter's prose cites
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter
from scipy import stats

from sdsl import data as _data
from sdsl.book.outputs import declare
from sdsl.book.style import family_color
from sdsl.model.configurations import family_tokens, resolve_coefficients
from sdsl.model.laws import (
    BESIROGLU_2024,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    resolve_constants,
)
from sdsl.model.optimum import optimal_draft_size
from sdsl.tolerance import equal_to_printed
from sdsl.validation import as_positive

__all__ = [
    "CHAPTER",
    "METRICS",
    "METRIC_LABELS",
    "table6",
    "figure4",
    "rank_correlations",
    "stratified_trend_test",
    "format_millions",
    "family_gap",
    "closest_cross_family_pair",
    "discordant_pairs",
    "summary",
    "spearman",
    "spearman_rows",
    "kendall",
    "kendall_s",
    "trend_evidence",
]


#: Chapter name: notebook stem and artifacts folder.
CHAPTER = "latency"
#: Latency metrics of Table 6 (columns ``<metric>_s`` and ``<metric>_moe_s`` of ``data/latency``).
METRICS: tuple[str, ...] = ("ttft", "ttot", "tpot")
METRIC_LABELS: dict[str, str] = {
    "ttft": "time to first token, TTFT (s)",
    "ttot": "total generation time, TTOT (s)",
    "tpot": "time per output token, TPOT (s)",
}


def format_millions(n: float) -> str:
    """``N`` as the paper prints it in Table 6: whole millions, ``117313807 -> '117M'``."""
    return f"{int(round(float(n) / 1e6))}M"


@declare(
    "Table 6",
    "latencies of the OPT-13B target's drafts and their distance from N*",
    data=("paper_table6", "latency", "models"),
)
def table6(
    target: str = "OPT-13B",
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    integer: bool = False,
    latency: pd.DataFrame | None = None,
    models: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The paper's Table 6 recomputed: for each measured draft of ``target``, its family's ``N*``
    (with ``D`` the family's pre-training tokens, ``M`` and ``D'`` the target's), the normalised
    distance ``|N - N*| / M``, the paper's printed ``N*`` and distance, their difference and whether
    it is within half a unit of the last printed digit, and the measured latencies with their
    95 % margins of error.
    """
    models = _data.load("models") if models is None else models
    latency = _data.load("latency") if latency is None else latency
    by_name = models.set_index("model")
    if target not in by_name.index:
        raise ValueError(f"target must be a model of data/models, got {target!r}")
    lat = latency[latency["target"] == target]
    if lat.empty:
        raise ValueError(
            f"no latency measurements for target {target!r}; measured: {sorted(latency['target'].unique())}"
        )
    m = float(by_name.loc[target, "params"])
    d_target = float(by_name.loc[target, "tokens"])
    c = resolve_constants(constants)
    optima = {}
    rows = []
    for r in lat.itertuples(index=False):
        fam = r.draft_family
        if fam not in optima:
            optima[fam] = optimal_draft_size(m, family_tokens(fam, models), d_target, c, coefficients, integer=integer)
        o = optima[fam]
        n = float(as_positive(by_name.loc[r.draft, "params"], f"params of {r.draft}"))
        rows.append(
            {
                "target": target,
                "draft": r.draft,
                "draft_family": fam,
                "n": n,
                "d_draft": family_tokens(fam, models),
                "n_star": o.n_star,
                "gamma_star": o.gamma_star,
                "alpha_star": o.alpha,
                "n_star_printed": format_millions(o.n_star),
                "distance": abs(n - o.n_star) / m,
            }
        )
    out = pd.DataFrame(rows)
    paper = _data.load("paper_table6").rename(
        columns={"n_star_printed": "paper_n_star_printed", "distance": "paper_distance"}
    )
    tol = _data.printed_tolerance("paper_table6")[["draft", "distance"]].rename(columns={"distance": "tol_distance"})
    out = out.merge(paper.drop(columns=["draft_family"]), on="draft", how="left").merge(tol, on="draft", how="left")
    out["distance_diff"] = out["distance"] - out["paper_distance"]
    out["distance_within_print"] = equal_to_printed(out["distance"], out["paper_distance"], out["tol_distance"])
    out["n_star_printed_equal"] = out["n_star_printed"] == out["paper_n_star_printed"]
    cols = ["draft"] + [f"{k}{s}" for k in METRICS for s in ("_s", "_moe_s")]
    out = out.merge(lat[cols], on="draft", how="left")
    return out


@declare("Figure 4", "latency against the distance of the draft from N*", data=("latency", "paper_table6", "models"))
def figure4(table: pd.DataFrame, metrics: Sequence[str] = METRICS) -> Figure:
    """Figure 4: each latency metric against ``|N - N*| / M``, one panel per metric, one colour per
    draft family, error bars the 95 % margins of error, the optimum ``N*`` a dashed line at 0.

    ``table`` is the output of :func:`table6`. The data line of each error bar group carries the id
    ``errorbar|<metric>|<family>`` (``gid``) so that tests can read back what was drawn. The y axis
    is logarithmic: the cross-family Qwen1.5 drafts are about ten times slower than the OPT ones.
    """
    unknown = [k for k in metrics if k not in METRICS]
    if unknown:
        raise ValueError(f"metrics must be among {list(METRICS)}, got {unknown}")
    # one panel under the other, at the width of the book's column: side by side, the text of three
    # panels shrunk to the column collides and the shared distance axis is repeated three times
    fig = Figure(figsize=(7.4, 2.6 * len(metrics) + 0.6), layout="constrained")
    axes = fig.subplots(len(metrics), 1, squeeze=False, sharex=True)[:, 0]
    for ax, k in zip(axes, metrics):
        for fam, d in table.groupby("draft_family", sort=False):
            col = family_color(fam)
            cont = ax.errorbar(
                d["distance"],
                d[f"{k}_s"],
                yerr=d[f"{k}_moe_s"],
                ls="none",
                marker="o",
                ms=6,
                capsize=3,
                color=col,
                label=f"{fam} drafts",
            )
            cont.lines[0].set_gid(f"errorbar|{k}|{fam}")
            for i, r in enumerate(d.sort_values("distance").itertuples(index=False)):
                # alternate above and below so that labels of neighbouring drafts do not overlap
                ax.annotate(
                    r.draft,
                    xy=(r.distance, getattr(r, f"{k}_s")),
                    xytext=(4, 4 if i % 2 else -11),
                    textcoords="offset points",
                    fontsize=7,
                    color=col,
                )
        line = ax.axvline(0.0, color="black", ls="--", lw=1)
        line.set_gid("optimum")
        ax.annotate(
            "$N^*$",
            xy=(0.0, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, -12),
            textcoords="offset points",
            fontsize=9,
        )
        ax.set_yscale("log")
        # plain numbers (0.05, 2, 20) rather than a mix of 2x10^0 and 6x10^-2; minor ticks
        # labelled at leading digits 2 and 5 only, so that the labels do not crowd
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else ""))
        ax.set_ylabel(METRIC_LABELS[k])
        ax.set_xlim(-0.01, table["distance"].max() * 1.25)
    axes[-1].set_xlabel("distance from the optimum, $|N - N^*| / M$")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=len(labels), fontsize=8)
    return fig


@declare(
    "rank_correlations",
    "rank correlations of latency with the distance from N*",
    data=("latency", "paper_table6"),
)
def rank_correlations(
    table: pd.DataFrame,
    rng: np.random.Generator,
    metrics: Sequence[str] = METRICS,
    n_boot: int = 4000,
    n_noise: int = 4000,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Rank correlation between ``|N - N*| / M`` and each latency metric, for all drafts pooled
    and for each draft family (method notes, section 6; the paper's claim under Figure 4).

    Columns per (scope, metric):

    * ``n``: drafts; ``spearman``, ``kendall``: the statistics (``scipy.stats``);
    * ``spearman_p``, ``kendall_p``: exact one-sided permutation p-values for "latency grows with
      distance" (``scipy.stats.permutation_test`` over all ``n!`` pairings; ``kendalltau`` with
      ``method="exact"``); the smallest p-value an ``n``-point sample can give is ``1/n!``
      (``min_p``);
    * ``boot_lo``, ``boot_hi``: percentile bootstrap interval of Spearman's rho over drafts
      (resampled with ``rng``; resamples with fewer than two distinct drafts, where rho is
      undefined, are dropped and counted in ``boot_undefined``);
    * ``noise_lo``, ``noise_hi``, ``noise_p_positive``: the interval of rho and the share of
      positive rho when each latency is redrawn from a normal with its measured mean and standard
      error (margin / 1.96): how firm the observed ordering is against measurement noise, for these
      fixed drafts.

    With ``n = 2`` any correlation is +1 or -1 and carries no evidence (``min_p = 0.5``).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if n_boot < 1 or n_noise < 1:
        raise ValueError(f"n_boot and n_noise must be >= 1, got {n_boot}, {n_noise}")
    q = [(1 - confidence) / 2, 1 - (1 - confidence) / 2]
    z = stats.norm.ppf(0.975)
    scopes = [("all drafts", table)] + [(f"{f} drafts", d) for f, d in table.groupby("draft_family", sort=False)]
    rows = []
    for scope, d in scopes:
        x = d["distance"].to_numpy(float)
        n = x.size
        for k in metrics:
            y = d[f"{k}_s"].to_numpy(float)
            se = d[f"{k}_moe_s"].to_numpy(float) / z
            row = {"scope": scope, "metric": k, "n": n, "min_p": 1.0 / math.factorial(n)}
            if n >= 2:  # with fewer points there is no statistic
                row.update(trend_evidence(x, y, se, rng, n_boot, n_noise, q))
            rows.append(row)
    cols = [
        "scope",
        "metric",
        "n",
        "spearman",
        "spearman_p",
        "kendall",
        "kendall_p",
        "min_p",
        "boot_lo",
        "boot_hi",
        "boot_undefined",
        "noise_lo",
        "noise_hi",
        "noise_p_positive",
    ]
    return pd.DataFrame(rows).reindex(columns=cols)


@declare("stratified_trend_test", "a trend test within each draft family", data=("latency", "paper_table6"))
def stratified_trend_test(table: pd.DataFrame, metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """Exact test of "latency grows with distance within each draft family", pooling the families
    without comparing a draft of one family with a draft of another (the families differ in
    vocabulary and cost, which would otherwise dominate).

    Statistic: Kendall's ``S`` summed over families (concordant minus discordant pairs inside each
    family). Null distribution: every permutation of the latencies within each family (``4! 2! = 48``
    for Table 6), enumerated. Returns per metric ``s``, ``pairs`` (within-family pairs),
    ``permutations`` and the exact one-sided ``p`` (share of permutations with ``S`` at least the
    observed one).
    """
    groups = [(d["distance"].to_numpy(float), d) for _, d in table.groupby("draft_family", sort=False)]
    rows = []
    for k in metrics:
        ys = [d[f"{k}_s"].to_numpy(float) for _, d in groups]
        xs = [x for x, _ in groups]
        observed = sum(kendall_s(x, y) for x, y in zip(xs, ys))
        per_group = [[kendall_s(x, y[list(p)]) for p in itertools.permutations(range(y.size))] for x, y in zip(xs, ys)]
        null = np.array([sum(c) for c in itertools.product(*per_group)])
        rows.append(
            {
                "metric": k,
                "s": observed,
                "pairs": sum(x.size * (x.size - 1) // 2 for x in xs),
                "permutations": null.size,
                "p": float(np.mean(null >= observed)),
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# what the table shows across and within the draft families


def family_gap(table: pd.DataFrame, slow: str = "Qwen1.5", fast: str = "OPT") -> pd.DataFrame:
    """How much slower the drafts of family ``slow`` are than those of ``fast``, per metric: the
    smallest ratio (fastest ``slow`` draft over slowest ``fast`` one) and the largest (slowest over
    fastest). ``table`` is the output of :func:`table6`."""
    a, b = table[table["draft_family"] == slow], table[table["draft_family"] == fast]
    if a.empty or b.empty:
        raise ValueError(f"table must have drafts of both families {slow!r} and {fast!r}")
    return pd.DataFrame(
        [
            {
                "metric": k,
                "ratio_min": a[f"{k}_s"].min() / b[f"{k}_s"].max(),
                "ratio_max": a[f"{k}_s"].max() / b[f"{k}_s"].min(),
            }
            for k in METRICS
        ]
    )


def closest_cross_family_pair(table: pd.DataFrame) -> tuple[str, str]:
    """The two drafts of different families whose distances ``|N - N*| / M`` are closest: the
    fairest comparison across families. Returns ``(other, first)``: a draft of another family than
    the first one listed in ``table`` (for Table 6: Qwen1.5), then a draft of that first one (OPT)."""
    first = table["draft_family"].iloc[0]
    a, b = table[table["draft_family"] != first], table[table["draft_family"] == first]
    if a.empty:
        raise ValueError("table has drafts of one family only: no pair across families")
    gap = np.abs(a["distance"].to_numpy()[:, None] - b["distance"].to_numpy()[None, :])
    i, j = np.unravel_index(int(np.argmin(gap)), gap.shape)
    return str(a["draft"].iloc[i]), str(b["draft"].iloc[j])


def discordant_pairs(table: pd.DataFrame, metric: str, family: str) -> list[tuple[str, str]]:
    """Pairs ``(closer, farther)`` of drafts of ``family`` where the draft closer to ``N*`` has the
    higher ``metric``: the exceptions to "latency grows with distance"."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {list(METRICS)}, got {metric!r}")
    d = table[table["draft_family"] == family].sort_values("distance")
    v, names = d[f"{metric}_s"].to_numpy(), d["draft"].to_list()
    return [(names[i], names[j]) for i in range(len(v)) for j in range(i + 1, len(v)) if v[i] > v[j]]


def summary(
    table: pd.DataFrame, rc: pd.DataFrame, strat: pd.DataFrame, acceptance: pd.DataFrame | None = None
) -> dict[str, object]:
    """Every number the chapter's prose cites, by glue name (without the chapter prefix).

    Parameters
    ----------
    table, rc, strat : :func:`table6`, :func:`rank_correlations` and :func:`stratified_trend_test`.
    acceptance : measured acceptance rates (default ``data/acceptance.csv``), for the closest pair
        across families.

    Returns
    -------
    dict
        Plain values for :func:`sdsl.book.glue.glue_summary`: ``<scope>_<metric>_<column>`` of ``rc``
        (scopes ``all``, ``opt``, ``qwen``), ``strat_<metric>_s`` and ``_p``, the family gap
        ``ratio_<metric>_min`` and ``_max``, the closest cross-family pair (``pair_*``), the OPT pair
        whose TTOT runs against distance (``swap_*``) and Table 6's agreement with the paper.
    """
    acceptance = _data.load("acceptance") if acceptance is None else acceptance
    target = str(table["target"].iloc[0])
    t = table.set_index("draft")
    fams = table.groupby("draft_family", sort=False).first()
    out: dict[str, object] = {
        "target": target,
        "m": float(_data.load("models").set_index("model").loc[target, "params"]),
        "d_target": float(_data.load("models").set_index("model").loc[target, "tokens"]),
        "n_drafts": len(table),
        "distance_equal": int(table["distance_within_print"].sum()),
        "n_star_equal": int(table["n_star_printed_equal"].sum()),
        "max_abs_diff": table["distance_diff"].abs().max(),
        "max_diff_over_tol": (table["distance_diff"].abs() / table["tol_distance"]).max(),
    }
    for fam, r in fams.iterrows():
        key = str(fam).replace(".", "_").lower()
        out[f"nstar_{key}"], out[f"d_{key}"] = r["n_star"], r["d_draft"]
    for r in family_gap(table).itertuples():
        out[f"ratio_{r.metric}_min"], out[f"ratio_{r.metric}_max"] = r.ratio_min, r.ratio_max
    q, o = closest_cross_family_pair(table)
    acc = acceptance.set_index(["target", "draft"])["alpha"]
    out.update(
        pair_q=q,
        pair_o=o,
        pair_dist_q=t.loc[q, "distance"],
        pair_dist_o=t.loc[o, "distance"],
        pair_tpot_ratio=t.loc[q, "tpot_s"] / t.loc[o, "tpot_s"],
        pair_alpha_q=float(acc[(target, q)]),
        pair_alpha_o=float(acc[(target, o)]),
    )
    r = rc.set_index(["scope", "metric"])
    for scope, key in (("all drafts", "all"), ("OPT drafts", "opt"), ("Qwen1.5 drafts", "qwen")):
        for k in METRICS:
            row = r.loc[(scope, k)]
            for col in (
                "spearman",
                "spearman_p",
                "kendall",
                "min_p",
                "boot_lo",
                "boot_hi",
                "boot_undefined",
                "noise_lo",
                "noise_hi",
                "noise_p_positive",
            ):
                out[f"{key}_{k}_{col}"] = float(row[col])
        out[f"{key}_n"] = int(r.loc[(scope, "ttot"), "n"])
    st = strat.set_index("metric")
    for k in METRICS:
        out[f"strat_{k}_s"], out[f"strat_{k}_p"] = int(st.loc[k, "s"]), float(st.loc[k, "p"])
    out.update(strat_pairs=int(st["pairs"].iloc[0]), strat_perms=int(st["permutations"].iloc[0]))
    swaps = discordant_pairs(table, "ttot", "OPT")
    out["swaps_opt_ttot"] = len(swaps)
    if swaps:
        near, far = swaps[0]
        out.update(
            swap_near=near,
            swap_far=far,
            swap_near_ttot=t.loc[near, "ttot_s"],
            swap_near_moe=t.loc[near, "ttot_moe_s"],
            swap_far_ttot=t.loc[far, "ttot_s"],
            swap_far_moe=t.loc[far, "ttot_moe_s"],
        )
    opt = table[table["draft_family"] == "OPT"]
    out["ttft_opt_spread"] = opt["ttft_s"].max() / opt["ttft_s"].min() - 1
    out.update(caption_claim(table))
    return out


def caption_claim(table: pd.DataFrame) -> dict[str, object]:
    """The verdict on Figure 4's caption as it states it ("latency increases with distance from
    N*"), by the scorecard's own criterion (:func:`sdsl.audit.rows.latency_claims`: the latency is
    higher at every step to a draft farther from ``N*``, per draft family with two drafts or more
    and latency metric): how many (family, metric) pairs it holds in (``claim_held``) of how many
    (``claim_pairs``), and those it fails in (``claim_fails``, e.g. ``OPT TTFT, OPT TTOT and OPT
    TPOT``; ``none`` when it holds in all)."""
    from sdsl.audit.rows import latency_claims

    claims = latency_claims(table)
    fails = [f"{f} {m}" for f, m in claims.loc[~claims["rises"], ["draft_family", "metric"]].itertuples(index=False)]
    said = "none" if not fails else fails[0] if len(fails) == 1 else ", ".join(fails[:-1]) + " and " + fails[-1]
    return {"claim_held": int(claims["rises"].sum()), "claim_pairs": len(claims), "claim_fails": said}


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (the cell after the parameters cell): one
    ``ValueError`` naming the parameter and what is allowed, and an interior ``N*`` for each draft family measured."""
    from sdsl import data
    from sdsl import validation as V
    from sdsl.model.laws import check_coefficients, check_loss_constants
    from sdsl.model.optimum import optimum_inside

    lat, mod = data.load("latency"), data.load("models").set_index("model")
    p = V.check_parameters(
        "latency",
        params,
        {
            "target": V.rule(V.choice, options=list(dict.fromkeys(lat["target"])), what="targets of data/latency.csv"),
            "constants": check_loss_constants,
            "coefficients": V.optional(check_coefficients),
            "integer": V.rule(V.boolean),
            "n_boot": V.rule(V.draws, allow_zero=False, what="bootstrap resamples over drafts"),
            "n_noise": V.rule(V.draws, allow_zero=False, what="draws of the measurement noise"),
            "confidence": V.rule(V.number, low=0, high=1, low_open=True, high_open=True, what="confidence level"),
            "seed": V.rule(V.seed),
            "artifacts_dir": V.optional(V.rule(V.folder)),
        },
    )
    # needs every value it combines: the notebook passes them all (its parameters cell holds the defaults)
    if not {"target", "constants", "coefficients", "integer"} <= p.keys():
        return
    coef = resolve_coefficients(p["coefficients"])
    drafts = lat.loc[lat["target"] == p["target"], "draft"]
    t = p["target"]
    configs = {(float(mod.loc[t, "params"]), float(mod.loc[d, "tokens"]), float(mod.loc[t, "tokens"])) for d in drafts}
    optimum_inside(sorted(configs), p["constants"], coef, p["integer"])


# --- Rank statistics of a handful of measurements (method notes, section 6; the latency chapter's


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho of ``x`` and ``y`` (``scipy.stats.spearmanr``)."""
    return float(stats.spearmanr(x, y).statistic)


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of ``x`` with the same row of ``y`` (Pearson correlation of
    average ranks, as ``scipy.stats.spearmanr``); NaN where a row is constant."""
    rx = stats.rankdata(x, axis=-1)
    ry = stats.rankdata(y, axis=-1)
    rx = rx - rx.mean(axis=-1, keepdims=True)
    ry = ry - ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((rx * rx).sum(axis=-1) * (ry * ry).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx * ry).sum(axis=-1) / np.where(den > 0, den, 1.0), np.nan)


def kendall(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau of ``x`` and ``y`` (``scipy.stats.kendalltau``)."""
    return float(stats.kendalltau(x, y).statistic)


def kendall_s(x: np.ndarray, y: np.ndarray) -> int:
    """Kendall's ``S`` of ``x`` and ``y``: concordant minus discordant pairs (ties count zero)."""
    i, j = np.triu_indices(x.size, 1)
    return int(np.sum(np.sign(x[j] - x[i]) * np.sign(y[j] - y[i])))


def trend_evidence(
    x: np.ndarray, y: np.ndarray, se: np.ndarray, rng: np.random.Generator, n_boot: int, n_noise: int, q: list[float]
) -> dict[str, float]:
    """How firmly ``y`` grows with ``x`` (at least two points; ``se`` the standard errors of ``y``):
    ``spearman`` and ``kendall``, their exact one-sided permutation p-values ``spearman_p`` (all
    ``n!`` pairings, ``scipy.stats.permutation_test``) and ``kendall_p`` (``kendalltau`` with
    ``method="exact"``), the quantiles ``q`` of rho over ``n_boot`` bootstrap resamples of the points
    (``boot_lo``, ``boot_hi``; resamples where rho is undefined dropped, their share
    ``boot_undefined``), and over ``n_noise`` redraws of ``y`` from normals with standard errors ``se``
    (``noise_lo``, ``noise_hi``, and the share of positive rho ``noise_p_positive``). Draws from
    ``rng`` in that order: permutations, bootstrap, noise (:func:`sdsl.chapters.latency.rank_correlations`)."""
    n = x.size
    row = {"spearman": spearman(x, y), "kendall": kendall(x, y)}
    # one sample, "pairings": every one of the n! orders of y against the fixed x
    perm = stats.permutation_test(
        (y,),
        lambda yy, axis=-1: spearman_rows(np.broadcast_to(x, yy.shape), yy),
        permutation_type="pairings",
        alternative="greater",
        n_resamples=np.inf,
        vectorized=True,
        rng=rng,
    )
    row["spearman_p"] = float(perm.pvalue)
    row["kendall_p"] = float(stats.kendalltau(x, y, method="exact", alternative="greater").pvalue)
    idx = rng.integers(0, n, (n_boot, n))
    boot = spearman_rows(x[idx], y[idx])
    ok = np.isfinite(boot)
    row["boot_lo"], row["boot_hi"] = (float(v) for v in np.quantile(boot[ok], q))
    row["boot_undefined"] = float(1.0 - ok.mean())
    draws = y[None, :] + se[None, :] * rng.standard_normal((n_noise, n))
    rho = spearman_rows(np.broadcast_to(x, draws.shape), draws)
    row["noise_lo"], row["noise_hi"] = (float(v) for v in np.quantile(rho, q))
    row["noise_p_positive"] = float(np.mean(rho > 0))
    return row
