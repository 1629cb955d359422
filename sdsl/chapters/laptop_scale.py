"""Tables and figures of the chapter ``notebooks/laptop_scale.md``: the paper's central claim
tested on a family of small GPT-2 models trained on this machine.

One function per table and per figure; every one reads the committed raw results
(:func:`sdsl.experiment.results.load_results`) through the analysis of
:mod:`sdsl.experiment.analysis`. The predictions from the smaller drafts (:func:`predicted_alpha`,
:func:`prediction_curve`) live in :mod:`sdsl.experiment.predict`, the numbers the prose cites about
the measurement, the laws, the prediction and the wall clock (:func:`summary_alpha` to
:func:`summary_wallclock`) in :mod:`sdsl.experiment.numbers`; :func:`summary` merges them with the
numbers of the chapter's own tables (:func:`summary_family`, :func:`summary_loss`).
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd
from matplotlib import cm, colors
from matplotlib.artist import Artist
from matplotlib.figure import Figure

from sdsl.book.style import fix_layout
from sdsl.experiment.lossfit import LossFit
from sdsl.experiment.numbers import (
    finite_or_na,
    summary_alpha,
    summary_laws,
    summary_prediction,
    summary_wallclock,
)
from sdsl.experiment.predict import predicted_alpha, prediction_curve
from sdsl.model.laws import BESIROGLU_2024, HOFFMANN_2022
from sdsl.model.throughput import optimal_tokens_per_flop

__all__ = [
    "CHAPTER",
    "check_parameters",
    "fig_loss_curves",
    "fig_loss_law",
    "fig_alpha_overlap",
    "fig_alpha_laws",
    "fig_alpha_predicted",
    "fig_throughput",
    "fig_wallclock",
    "predicted_alpha",
    "prediction_curve",
    "summary",
    "summary_alpha",
    "summary_family",
    "summary_laws",
    "summary_loss",
    "summary_prediction",
    "summary_wallclock",
    "table_alpha",
    "table_loss_law",
    "table_runs",
]

CHAPTER = "laptop_scale"
_TARGET_COLORS = ("#0072B2", "#D55E00", "#009E73")


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (the cell after the parameters
    cell): one ``ValueError`` naming the parameter and what is allowed. ``results_dir`` must be an
    existing folder holding a ``runs.csv`` (the runner's results), ``temperature`` one of the
    temperatures the runner measured (:class:`sdsl.experiment.config.Measurement`)."""
    from pathlib import Path

    from sdsl import validation as V
    from sdsl.experiment.config import Measurement

    p = V.check_parameters(
        CHAPTER,
        params,
        {
            "results_dir": V.optional(
                V.rule(V.folder, must_exist=True, what="raw results of python -m sdsl.experiment run")
            ),
            "temperature": V.rule(V.choice, options=list(Measurement().temperatures), what="temperatures measured"),
            "seed": V.rule(V.seed),
            "loss_resamples": V.rule(V.draws, what="bootstrap refits of the loss law; 0: no intervals"),
            "alpha_resamples": V.rule(V.draws, allow_zero=False, what="cluster-bootstrap resamples of each alpha"),
            "law_resamples": V.rule(V.draws, allow_zero=False, what="bootstrap resamples of each held-out RMSE"),
            "artifacts_dir": V.optional(V.rule(V.folder)),
        },
    )
    folder = p.get("results_dir")
    if folder is not None and not (Path(folder) / "runs.csv").is_file():
        raise ValueError(f"results_dir must hold the runner's results (runs.csv): {str(folder)!r} has no runs.csv")


def table_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The training runs: shape, parameter counts, tokens, tokens per parameter (under-trained:
    fewer than Chinchilla's 20), epochs, validation loss and perplexity, wall time, throughput."""
    cols = [
        "run",
        "role",
        "width",
        "layers",
        "params",
        "non_embedding_params",
        "tokens",
        "tokens_per_param",
        "epochs",
        "steps",
        "peak_lr",
        "val_loss",
        "val_loss_se",
        "val_ppl",
        "train_s",
        "tokens_per_s",
        "flops_per_s",
    ]
    out = runs[cols].sort_values(["params", "tokens"], ignore_index=True)
    out.insert(8, "under_trained", out["tokens_per_param"] < 20)
    return out


def table_loss_law(fit: LossFit, fit_non_embedding: LossFit | None = None) -> pd.DataFrame:
    """The loss-law parameters fitted on every run with 95 % bootstrap intervals, beside Hoffmann
    et al. (2022) and Besiroglu et al. (2024) (point values, as :mod:`sdsl.model.laws` holds them)."""
    t = fit.intervals()
    t["hoffmann2022"] = [getattr(HOFFMANN_2022, p) for p in t["parameter"]]
    t["besiroglu2024"] = [getattr(BESIROGLU_2024, p) for p in t["parameter"]]
    t["inside_ci_hoffmann"] = (t["hoffmann2022"] >= t["ci_lower"]) & (t["hoffmann2022"] <= t["ci_upper"])
    t["inside_ci_besiroglu"] = (t["besiroglu2024"] >= t["ci_lower"]) & (t["besiroglu2024"] <= t["ci_upper"])
    if fit_non_embedding is not None:
        t["estimate_non_embedding_n"] = [fit_non_embedding.values[p] for p in t["parameter"]]
    return t


def table_alpha(summary: pd.DataFrame) -> pd.DataFrame:
    """Alpha per pair and temperature with the interval, beside ``E[sum min(p, q)]``."""
    cols = [
        "target",
        "draft",
        "temperature",
        "n",
        "d",
        "draft_ppl",
        "n_prompts",
        "evaluated",
        "alpha",
        "alpha_hw95",
        "boot_hw95",
        "min_pq_on_policy",
        "min_pq_teacher_forced",
    ]
    return summary[cols]


def _target_label(run: str, m: float) -> str:
    """A target's legend name: its shape (width and layers) and its size, ``"target w160l4 (1.57 M parameters)"``."""
    return f"target {str(run).split('-d')[0]} ({m / 1e6:.2f} M parameters)"


def _subplots(*args, figsize: tuple[float, float], **kwargs):
    """A figure outside pyplot (never shown twice by the notebook's inline backend) and its axes."""
    fig = Figure(figsize=figsize)
    return fig, fig.subplots(*args, **kwargs)


def _finish(fig: Figure) -> Figure:
    return fix_layout(fig)


def fig_loss_law(runs: pd.DataFrame, fit: LossFit) -> tuple[Figure, pd.DataFrame]:
    """Validation loss against ``N`` for each token budget, with the fitted law (lines)."""
    fig, ax = _subplots(figsize=(6.4, 4.0))
    budgets = sorted(runs["tokens"].unique())
    grid = np.exp(np.linspace(np.log(runs["params"].min() * 0.8), np.log(runs["params"].max() * 1.25), 100))
    rows = []
    for i, d in enumerate(budgets):
        sub = runs[runs["tokens"] == d]
        c = cm.viridis(i / max(len(budgets) - 1, 1))
        ax.errorbar(
            sub["params"],
            sub["val_loss"],
            yerr=1.96 * sub["val_loss_se"],
            fmt="o",
            color=c,
            label=f"D = {d / 1e6:.2f}M tokens",
        )
        ax.plot(grid, fit.predict(grid, d), color=c, lw=1)
        rows += [{"kind": "run", "tokens": d, "params": n, "loss": v} for n, v in zip(sub["params"], sub["val_loss"])]
        rows += [{"kind": "law", "tokens": d, "params": n, "loss": v} for n, v in zip(grid, fit.predict(grid, d))]
    ax.set_xscale("log")
    ax.set_xlabel("parameters $N$ (non-embedding + tied token table)")
    ax.set_ylabel("validation loss (nats/token)")
    ax.legend(fontsize="small")
    return _finish(fig), pd.DataFrame(rows)


def fig_alpha_laws(frame: pd.DataFrame, fits) -> Figure:
    """Alpha against draft perplexity per target with the three Table 4 forms
    (:func:`sdsl.chapters.acceptance.figure3`)."""
    from sdsl.chapters.acceptance import figure3 as per_target_figure

    fig = per_target_figure(frame, fits)  # constrained layout with the legend outside: kept as drawn
    for leg in list(fig.legends):  # two panels are narrower than the legend row: three columns
        # every entry of the drawn legend has its handle (None only for an artist without a legend handler)
        handles, labels = cast("list[Artist]", leg.legend_handles), [t.get_text() for t in leg.texts]
        labels = ["trained drafts (95 % interval)" if lab in ("laptop", "laptop drafts") else lab for lab in labels]
        leg.remove()
        fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize="small")
    return fig


def fig_alpha_predicted(pred: pd.DataFrame) -> Figure:
    """Predicted against measured alpha; open markers: drafts the fits never saw."""
    fig, ax = _subplots(figsize=(4.8, 4.4))
    for i, (t, g) in enumerate(pred.groupby("target", sort=False)):
        c = _TARGET_COLORS[i % len(_TARGET_COLORS)]
        seen, held = g[~g["held_out"]], g[g["held_out"]]
        ax.plot(
            seen["alpha"], seen["predicted"], "o", color=c, label=f"target {str(t).split('-d')[0]}: drafts fitted on"
        )
        ax.plot(
            held["alpha"],
            held["predicted"],
            "o",
            mfc="none",
            color=c,
            label=f"target {str(t).split('-d')[0]}: drafts held out",
        )
    lo = float(min(pred["alpha"].min(), pred["predicted"].min())) - 0.02
    hi = float(max(pred["alpha"].max(), pred["predicted"].max())) + 0.02
    ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8, ls="--")
    ax.set_xlabel(r"measured $\alpha$")
    ax.set_ylabel(r"predicted $\alpha$")
    ax.legend(fontsize="x-small")
    return _finish(fig)


def fig_throughput(frame: pd.DataFrame, curves: pd.DataFrame, preds: pd.DataFrame, d: float) -> Figure:
    """``2 M T(N)`` (throughput over plain decoding at equal FLOPs, Eq. 9 at gamma*) per target:
    trained drafts at measured alpha (points), the smooth curve through them, the recipe's curve
    fitted on the smaller drafts, with the predicted and empirical ``N*``."""
    targets = list(dict.fromkeys(curves["target"]))
    fig, axes = _subplots(1, len(targets), figsize=(4.0 * len(targets), 3.6), squeeze=False)
    for ax, t in zip(axes[0], targets):
        sub = frame[(frame["target"] == t) & np.isclose(frame["d"], d)].sort_values("n")
        m = float(sub["m"].iloc[0])
        ax.plot(
            sub["n"],
            2 * m * optimal_tokens_per_flop(np.clip(sub["alpha"], 1e-9, 1 - 1e-9), sub["n"], m),
            "o",
            color="C0",
            label="trained drafts, measured alpha",
        )
        c = curves[curves["target"] == t]
        ax.plot(c["n"], c["speedup_smooth"], color="C0", lw=1, label="smooth curve")
        ax.plot(c["n"], c["speedup_predicted"], color="C3", lw=1, ls="--", label="predicted (smaller drafts)")
        p = preds[preds["target"] == t].iloc[0]
        ax.axvline(p["n_star_predicted"], color="C3", lw=0.8, ls="--")
        ax.axvline(p["n_smooth"], color="C0", lw=0.8, ls=":")
        ax.set_xscale("log")
        ax.set_xlabel("draft parameters $N$")
        ax.text(0.03, 0.04, _target_label(t, m), transform=ax.transAxes, fontsize="small")
    axes[0][0].set_ylabel(r"$2 M\, T(N)$ (tokens per FLOP over plain decoding, ×)")
    axes[0][-1].legend(fontsize="x-small", loc="upper right")
    return _finish(fig)


def fig_wallclock(wall: pd.DataFrame) -> Figure:
    """Measured wall-clock speedup against Theorem 3.8's prediction from measured alpha and cost
    ratio, one colour per target."""
    fig, ax = _subplots(figsize=(4.8, 4.4))
    for i, (t, g) in enumerate(wall.groupby("target", sort=False)):
        ax.plot(
            g["predicted_speedup"],
            g["speedup"],
            "o",
            color=_TARGET_COLORS[i % 3],
            label=_target_label(t, float(g["m"].iloc[0])),
        )
    lo = float(min(wall["speedup"].min(), wall["predicted_speedup"].min())) * 0.95
    hi = float(max(wall["speedup"].max(), wall["predicted_speedup"].max())) * 1.05
    ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8, ls="--")
    ax.axhline(1.0, color="0.7", lw=0.6)
    ax.set_xlabel("predicted speedup, Theorem 3.8 (×)")
    ax.set_ylabel("measured speedup over the target alone (×)")
    ax.legend(fontsize="small")
    return _finish(fig)


def fig_loss_curves(curves: pd.DataFrame, runs: pd.DataFrame) -> Figure:
    """Training loss against tokens seen for every run (colour: ``N``), validation points marked."""
    fig, ax = _subplots(figsize=(6.4, 4.0))
    lo, hi = np.log(runs["params"].min()), np.log(runs["params"].max())
    for _, r in runs.sort_values(["params", "tokens"]).iterrows():
        c = cm.plasma(0.85 * (np.log(r["params"]) - lo) / max(hi - lo, 1e-9))
        g = curves[curves["run"] == r["run"]]
        ax.plot(g["tokens"], g["train_loss"], color=c, lw=0.9)
        v = g.dropna(subset=["val_loss"])
        ax.plot(v["tokens"], v["val_loss"], "o", ms=2.5, color=c)
    sm = cm.ScalarMappable(cmap="plasma", norm=colors.Normalize(np.exp(lo), np.exp(hi)))
    fig.colorbar(sm, ax=ax, label="parameters $N$")
    ax.set_xscale("log")
    ax.set_xlabel("tokens seen")
    ax.set_ylabel("loss (nats/token)")
    return _finish(fig)


def fig_alpha_overlap(summary: pd.DataFrame) -> Figure:
    """Alpha by speculative sampling against ``E[sum min(p, q)]`` on the evaluated positions
    (filled) and teacher-forced on held-out text (open), temperature 1 and greedy."""
    temps = sorted(summary["temperature"].unique(), reverse=True)
    fig, axes = _subplots(1, len(temps), figsize=(4.2 * len(temps), 3.9), squeeze=False)
    for ax, t in zip(axes[0], temps):
        s = summary[summary["temperature"] == t]
        ax.errorbar(
            s["alpha"],
            s["min_pq_on_policy"],
            xerr=np.maximum(s["alpha_hw95"], s["boot_hw95"]),
            fmt="o",
            ms=4,
            color="C0",
            label="on the evaluated positions",
        )
        ax.plot(
            s["alpha"],
            s["min_pq_teacher_forced"],
            "o",
            ms=4,
            mfc="none",
            color="C1",
            label="teacher-forced, held-out text",
        )
        lo, hi = (
            float(s[["alpha", "min_pq_teacher_forced"]].min().min()) - 0.03,
            float(s[["alpha", "min_pq_teacher_forced"]].max().max()) + 0.03,
        )
        ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8, ls="--")
        ax.set_xlabel(r"$\alpha$, speculative sampling (acceptance rate)")
        ax.text(0.03, 0.93, "temperature 1" if t > 0 else "greedy", transform=ax.transAxes, fontsize="small")
    axes[0][0].set_ylabel(r"$E[\sum_x \min(p, q)]$ (probability)")
    axes[0][0].legend(fontsize="x-small", loc="lower right")
    return _finish(fig)


def summary_family(runs: pd.DataFrame, prov: dict) -> dict[str, object]:
    """The corpus, the tokenizer and the family: counts, token splits, the recipe, the span of ``N``
    in decades, the budgets (``n_multi``: shapes trained on three or more), the run's duration and
    the training throughput (GFLOP/s)."""
    from sdsl.experiment.analysis import common_budget

    splits, scale = prov["corpus"]["splits"], prov["scale"]
    d_common = common_budget(runs)
    ne = runs.groupby("shape")["non_embedding_params"].first()
    nn = runs.groupby("shape")["params"].first()
    return {
        "n_shapes": runs["shape"].nunique(),
        "n_runs": len(runs),
        "corpus_tokens_m": sum(v["tokens"] for v in splits.values()) / 1e6,
        "duration_min": prov["duration_s"] / 60,
        "cpus": prov["machine"]["logical_cpus"],
        "cpu": str(prov["machine"]["cpu"]),
        "train_tokens_m": splits["train"]["tokens"] / 1e6,
        "val_tokens_k": splits["val"]["tokens"] / 1e3,
        "prompt_tokens_k": splits["prompts"]["tokens"] / 1e3,
        "vocab": scale["vocab_size"],
        "batch": scale["recipe"]["batch_size"],
        "seq_len": scale["recipe"]["seq_len"],
        "ne_decades": float(np.log10(ne.max() / ne.min())),
        "n_decades": float(np.log10(nn.max() / nn.min())),
        "d_common_m": d_common / 1e6,
        "n_multi": int((runs.groupby("shape")["tokens"].nunique() >= 3).sum()),
        "extra_budgets": " and ".join(f"{b / 1e6:g} M" for b in sorted(set(runs["tokens"]) - {d_common})),
        "n_under": int(table_runs(runs)["under_trained"].sum()),
        "max_epochs": runs["epochs"].max(),
        "train_gflops_median": runs["flops_per_s"].median() / 1e9,
        "train_gflops_max": runs.loc[runs["params"].idxmax(), "flops_per_s"] / 1e9,
        "train_min": runs["train_s"].sum() / 60,
        "n_min": runs["params"].min(),
        "n_max": runs["params"].max(),
        "n_budgets": runs["tokens"].nunique(),
    }


def summary_alpha_dips(frame: pd.DataFrame, runs: pd.DataFrame) -> dict[str, object]:
    """Where the measured alpha of the common budget falls as the draft grows: the smooth curve of
    the empirical optimum (:func:`sdsl.experiment.predict.empirical_optimum`) interpolates these
    points by PCHIP, which keeps such a dip (it preserves the points' shape, not a trend). The steps
    between neighbouring drafts of one target, those that lower alpha, and the largest such dip in
    words (``"none"`` without one)."""
    from sdsl.experiment.analysis import common_budget

    sub = frame[np.isclose(frame["d"], common_budget(runs))].sort_values(["target", "n"])
    by = sub.groupby("target")
    step, prev_draft, prev_alpha = by["alpha"].diff(), by["draft"].shift(), by["alpha"].shift()
    out: dict[str, object] = {"alpha_steps": int(step.notna().sum()), "alpha_dips": int((step < 0).sum())}
    k = step.idxmin() if out["alpha_dips"] else None
    out["alpha_dip"] = (
        "none"
        if k is None
        else f"for the {sub.loc[k, 'target']} target, {prev_draft[k]} has α = {prev_alpha[k]:.3f} and the "
        f"larger {sub.loc[k, 'draft']} α = {sub.loc[k, 'alpha']:.3f}"
    )
    return out


def summary_gpu_scale() -> dict[str, object]:
    """The GPU scale, defined but not run (:data:`sdsl.experiment.config.SCALES`, ``gpu``): its
    shapes, runs and pairs, the span of ``N`` (millions), the common token budget (millions), the
    largest number of epochs it allows, its training FLOPs (:mod:`sdsl.experiment.budget`) and its
    precision, as ``gpu_*``."""
    from sdsl.experiment.budget import budget_table, budget_totals
    from sdsl.experiment.config import get_scale

    scale = get_scale("gpu")
    assert scale.max_epochs is not None  # the GPU scale caps the epochs of its corpus
    tot = budget_totals(scale, budget_table(scale))
    return {
        "gpu_shapes": tot["shapes"],
        "gpu_runs": tot["runs"],
        "gpu_pairs": tot["pairs"],
        "gpu_n_min_m": tot["params_min"] / 1e6,
        "gpu_n_max_m": tot["params_max"] / 1e6,
        "gpu_n_decades": tot["decades_params"],
        "gpu_tokens_m": scale.common_tokens / 1e6,
        "gpu_max_epochs": float(scale.max_epochs),
        "gpu_vocab": scale.vocab_size,
        "gpu_train_pflop": tot["train_flops"] / 1e15,
        "gpu_precision": scale.recipe.precision,
    }


def summary_loss(runs: pd.DataFrame, fit: LossFit, loss_resamples: int) -> dict[str, object]:
    """The loss-law exponents with their 95 % interval (``"n/a"`` without bootstrap refits), the
    published ones, and the RMS relative error of the law on the runs (per cent)."""
    t = table_loss_law(fit).set_index("parameter")
    out: dict[str, object] = {"loss_resamples": int(loss_resamples)}
    for p in ("a", "b"):
        out.update(
            {
                f"loss_{p}": float(t.loc[p, "estimate"]),
                f"loss_{p}_lo": finite_or_na(t.loc[p, "ci_lower"]),
                f"loss_{p}_hi": finite_or_na(t.loc[p, "ci_upper"]),
                f"hoffmann_{p}": float(t.loc[p, "hoffmann2022"]),
                f"besiroglu_{p}": float(t.loc[p, "besiroglu2024"]),
            }
        )
    rel = fit.predict(runs["params"], runs["tokens"]) / runs["val_loss"] - 1
    out["loss_rmse_pct"] = 100 * float(np.sqrt(np.mean(rel**2)))
    return out


def summary(
    res: dict[str, pd.DataFrame],
    prov: dict,
    fit: LossFit,
    alpha_table: pd.DataFrame,
    frame: pd.DataFrame,
    plane,
    laws: pd.DataFrame,
    preds: pd.DataFrame,
    alpha_pred: pd.DataFrame,
    paper: pd.DataFrame,
    wall: pd.DataFrame,
    *,
    temperature: float,
    loss_resamples: int,
    alpha_resamples: int,
) -> dict[str, object]:
    """Every number the chapter's prose cites, by glue name (without the chapter prefix): the
    ``summary_*`` functions merged, from the raw results ``res`` and ``prov``
    (:mod:`sdsl.experiment.results`) and the chapter's tables (the loss law ``fit`` on every run,
    :func:`~sdsl.experiment.analysis.alpha_summary`, :func:`~sdsl.experiment.analysis.pair_frame`,
    its plane, :func:`~sdsl.experiment.analysis.law_comparison`'s ranking,
    :func:`~sdsl.experiment.analysis.predictions`, :func:`predicted_alpha`,
    :func:`~sdsl.experiment.analysis.paper_predictions`, :func:`~sdsl.experiment.analysis.wallclock_summary`).
    Plain values for :func:`sdsl.book.glue.glue_summary`."""
    runs = res["runs"]
    return {
        **summary_family(runs, prov),
        **summary_loss(runs, fit, loss_resamples),
        **summary_alpha(res, prov, alpha_table, alpha_resamples),
        **summary_laws(frame, plane, laws, temperature),
        **summary_alpha_dips(frame, runs),
        **summary_prediction(runs, preds, alpha_pred, paper),
        **summary_wallclock(wall, runs, prov),
        **summary_gpu_scale(),
    }
