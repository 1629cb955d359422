"""Tables and figures of the chapter ``notebooks/laptop_scale.md``: the paper's central claim
tested on a family of small GPT-2 models trained on this machine (issue 17).

One function per table and per figure; every one reads the committed raw results
(:func:`sdsl.experiment.results.load_results`) through the analysis of
:mod:`sdsl.experiment.analysis`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import cm, colors
from matplotlib.figure import Figure
from scipy.interpolate import PchipInterpolator

from sdsl.book.style import fix_layout
from sdsl.experiment.lossfit import LossFit
from sdsl.experiment.predict import small_half
from sdsl.model.laws import BESIROGLU_2024, HOFFMANN_2022, PAPER_EQ5
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
    """The notebook's parameters checked before anything runs (issue 13; the cell after the parameters
    cell): one ``ValueError`` naming the parameter and what is allowed. ``results_dir`` must be an
    existing folder holding a ``runs.csv`` (the runner's results), ``temperature`` one of the
    temperatures the runner measured (:class:`sdsl.experiment.config.Measurement`)."""
    from pathlib import Path

    from sdsl import _validate as V
    from sdsl.experiment.config import Measurement

    p = V.check_parameters(CHAPTER, params, {
        "results_dir": V.optional(V.rule(V.folder, must_exist=True, what="raw results of python -m sdsl.experiment run")),
        "temperature": V.rule(V.choice, options=list(Measurement().temperatures), what="temperatures measured"),
        "seed": V.rule(V.seed),
        "loss_resamples": V.rule(V.draws, what="bootstrap refits of the loss law; 0: no intervals"),
        "alpha_resamples": V.rule(V.draws, allow_zero=False, what="cluster-bootstrap resamples of each alpha"),
        "law_resamples": V.rule(V.draws, allow_zero=False, what="bootstrap resamples of each held-out RMSE"),
        "artifacts_dir": V.optional(V.rule(V.folder))})
    folder = p.get("results_dir")
    if folder is not None and not (Path(folder) / "runs.csv").is_file():
        raise ValueError(f"results_dir must hold the runner's results (runs.csv): {str(folder)!r} has no runs.csv")


def table_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The training runs: shape, parameter counts, tokens, tokens per parameter (under-trained:
    fewer than Chinchilla's 20), epochs, validation loss and perplexity, wall time, throughput."""
    cols = ["run", "role", "width", "layers", "params", "non_embedding_params", "tokens", "tokens_per_param",
            "epochs", "steps", "peak_lr", "val_loss", "val_loss_se", "val_ppl", "train_s", "tokens_per_s", "flops_per_s"]
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
    cols = ["target", "draft", "temperature", "n", "d", "draft_ppl", "n_prompts", "evaluated", "alpha",
            "alpha_hw95", "boot_hw95", "min_pq_on_policy", "min_pq_teacher_forced"]
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
        ax.errorbar(sub["params"], sub["val_loss"], yerr=1.96 * sub["val_loss_se"], fmt="o", color=c,
                    label=f"D = {d / 1e6:.2f}M tokens")
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
        handles, labels = leg.legend_handles, [t.get_text() for t in leg.texts]
        labels = ["trained drafts (95 % interval)" if lab in ("laptop", "laptop drafts") else lab for lab in labels]
        leg.remove()
        fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize="small")
    return fig


def predicted_alpha(frame: pd.DataFrame, runs: pd.DataFrame, law: str, loss: LossFit) -> pd.DataFrame:
    """Every pair's alpha as the recipe predicts it from the smaller drafts: the law fitted on the
    pairs of the smaller half, evaluated at ``x = exp(L(N, D))`` and ``y = exp(L(M, D'))`` of the
    loss law fitted on the smaller half; ``held_out`` marks the larger drafts."""
    from sdsl.experiment.predict import law_by_name

    shapes = small_half(runs)
    shape_of = runs.set_index("run")["shape"]
    fit_rows = frame["draft"].map(shape_of).isin(shapes).to_numpy()
    fitted = law_by_name(law).fit(frame[fit_rows].reset_index(drop=True))
    f = frame.copy()
    f["x"] = np.exp(loss.predict(f["n"], f["d"]))
    f["y"] = np.exp(loss.predict(f["m"], f["d_target"]))
    f["ln_x"] = np.log(f["x"])
    out = frame[["target", "draft", "n", "d", "alpha"]].copy()
    out["predicted"] = fitted.predict(f)
    out["held_out"] = ~fit_rows
    return out


def fig_alpha_predicted(pred: pd.DataFrame) -> Figure:
    """Predicted against measured alpha; open markers: drafts the fits never saw."""
    fig, ax = _subplots(figsize=(4.8, 4.4))
    for i, (t, g) in enumerate(pred.groupby("target", sort=False)):
        c = _TARGET_COLORS[i % len(_TARGET_COLORS)]
        seen, held = g[~g["held_out"]], g[g["held_out"]]
        ax.plot(seen["alpha"], seen["predicted"], "o", color=c, label=f"target {str(t).split('-d')[0]}: drafts fitted on")
        ax.plot(held["alpha"], held["predicted"], "o", mfc="none", color=c, label=f"target {str(t).split('-d')[0]}: drafts held out")
    lo = float(min(pred["alpha"].min(), pred["predicted"].min())) - 0.02
    hi = float(max(pred["alpha"].max(), pred["predicted"].max())) + 0.02
    ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8, ls="--")
    ax.set_xlabel(r"measured $\alpha$")
    ax.set_ylabel(r"predicted $\alpha$")
    ax.legend(fontsize="x-small")
    return _finish(fig)


def prediction_curve(frame: pd.DataFrame, runs: pd.DataFrame, target: str, law: str, loss: LossFit,
                     d: float, points: int = 200) -> pd.DataFrame:
    """``2 M T(N)`` of the recipe fitted on the smaller drafts, and of a PCHIP curve through the
    measured alpha of the trained drafts at budget ``d``, on a grid of ``N``."""
    from sdsl.experiment.predict import law_by_name
    from sdsl.model.law_optimum import _features_at

    shapes = small_half(runs)
    shape_of = runs.set_index("run")["shape"]
    fitted = law_by_name(law).fit(frame[frame["draft"].map(shape_of).isin(shapes)].reset_index(drop=True))
    sub = frame[(frame["target"] == target) & np.isclose(frame["d"], d)].sort_values("n")
    m, dt = float(sub["m"].iloc[0]), float(sub["d_target"].iloc[0])
    n = np.minimum(np.exp(np.linspace(np.log(0.5 * runs["params"].min()), np.log(m), points)), m)
    a_pred = fitted.alpha(_features_at(n, m, d, dt, loss.constants()), target)
    ok = (a_pred > 0) & (a_pred < 1)
    t_pred = np.full(n.shape, np.nan)
    t_pred[ok] = 2 * m * optimal_tokens_per_flop(a_pred[ok], n[ok], m)
    inside = (n >= sub["n"].min()) & (n <= sub["n"].max())
    t_smooth = np.full(n.shape, np.nan)
    a_s = PchipInterpolator(np.log(sub["n"]), sub["alpha"])(np.log(n[inside]))
    t_smooth[inside] = 2 * m * optimal_tokens_per_flop(np.clip(a_s, 1e-9, 1 - 1e-9), n[inside], m)
    return pd.DataFrame({"target": target, "n": n, "alpha_predicted": a_pred, "speedup_predicted": t_pred,
                         "speedup_smooth": t_smooth})


def fig_throughput(frame: pd.DataFrame, curves: pd.DataFrame, preds: pd.DataFrame, d: float) -> Figure:
    """``2 M T(N)`` (throughput over plain decoding at equal FLOPs, Eq. 9 at gamma*) per target:
    trained drafts at measured alpha (points), the smooth curve through them, the recipe's curve
    fitted on the smaller drafts, with the predicted and empirical ``N*``."""
    targets = list(dict.fromkeys(curves["target"]))
    fig, axes = _subplots(1, len(targets), figsize=(4.0 * len(targets), 3.6), squeeze=False)
    for ax, t in zip(axes[0], targets):
        sub = frame[(frame["target"] == t) & np.isclose(frame["d"], d)].sort_values("n")
        m = float(sub["m"].iloc[0])
        ax.plot(sub["n"], 2 * m * optimal_tokens_per_flop(np.clip(sub["alpha"], 1e-9, 1 - 1e-9), sub["n"], m),
                "o", color="C0", label="trained drafts, measured alpha")
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
        ax.plot(g["predicted_speedup"], g["speedup"], "o", color=_TARGET_COLORS[i % 3],
                label=_target_label(t, float(g["m"].iloc[0])))
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
        ax.errorbar(s["alpha"], s["min_pq_on_policy"], xerr=np.maximum(s["alpha_hw95"], s["boot_hw95"]), fmt="o",
                    ms=4, color="C0",
                    label="on the evaluated positions")
        ax.plot(s["alpha"], s["min_pq_teacher_forced"], "o", ms=4, mfc="none", color="C1",
                label="teacher-forced, held-out text")
        lo, hi = float(s[["alpha", "min_pq_teacher_forced"]].min().min()) - 0.03, \
            float(s[["alpha", "min_pq_teacher_forced"]].max().max()) + 0.03
        ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8, ls="--")
        ax.set_xlabel(r"$\alpha$, speculative sampling (acceptance rate)")
        ax.text(0.03, 0.93, "temperature 1" if t > 0 else "greedy", transform=ax.transAxes, fontsize="small")
    axes[0][0].set_ylabel(r"$E[\sum_x \min(p, q)]$ (probability)")
    axes[0][0].legend(fontsize="x-small", loc="lower right")
    return _finish(fig)


#: The paper's Table 3 plane, for the chapter's prose.
PAPER_PLANE = PAPER_EQ5


def _num(value: float) -> float | str:
    """A finite float, or ``"n/a"`` (a rerun without bootstrap draws has no interval to cite)."""
    return float(value) if np.isfinite(value) else "n/a"


def _targets(runs: pd.DataFrame) -> list[str]:
    """The target runs, largest first (``target_0`` is the largest)."""
    return list(runs.loc[runs["role"] == "target"].sort_values("params", ascending=False)["run"])


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
        "n_shapes": runs["shape"].nunique(), "n_runs": len(runs),
        "corpus_tokens_m": sum(v["tokens"] for v in splits.values()) / 1e6,
        "duration_min": prov["duration_s"] / 60, "cpus": prov["machine"]["logical_cpus"],
        "cpu": str(prov["machine"]["cpu"]),
        "train_tokens_m": splits["train"]["tokens"] / 1e6, "val_tokens_k": splits["val"]["tokens"] / 1e3,
        "prompt_tokens_k": splits["prompts"]["tokens"] / 1e3, "vocab": scale["vocab_size"],
        "batch": scale["recipe"]["batch_size"], "seq_len": scale["recipe"]["seq_len"],
        "ne_decades": float(np.log10(ne.max() / ne.min())), "n_decades": float(np.log10(nn.max() / nn.min())),
        "d_common_m": d_common / 1e6, "n_multi": int((runs.groupby("shape")["tokens"].nunique() >= 3).sum()),
        "extra_budgets": " and ".join(f"{b / 1e6:g} M" for b in sorted(set(runs["tokens"]) - {d_common})),
        "n_under": int(table_runs(runs)["under_trained"].sum()), "max_epochs": runs["epochs"].max(),
        "train_gflops_median": runs["flops_per_s"].median() / 1e9,
        "train_gflops_max": runs.loc[runs["params"].idxmax(), "flops_per_s"] / 1e9,
        "train_min": runs["train_s"].sum() / 60, "n_min": runs["params"].min(), "n_max": runs["params"].max(),
        "n_budgets": runs["tokens"].nunique(),
    }


def summary_loss(runs: pd.DataFrame, fit: LossFit, loss_resamples: int) -> dict[str, object]:
    """The loss-law exponents with their 95 % interval (``"n/a"`` without bootstrap refits), the
    published ones, and the RMS relative error of the law on the runs (per cent)."""
    t = table_loss_law(fit).set_index("parameter")
    out: dict[str, object] = {"loss_resamples": int(loss_resamples)}
    for p in ("a", "b"):
        out.update({f"loss_{p}": float(t.loc[p, "estimate"]), f"loss_{p}_lo": _num(t.loc[p, "ci_lower"]),
                    f"loss_{p}_hi": _num(t.loc[p, "ci_upper"]), f"hoffmann_{p}": float(t.loc[p, "hoffmann2022"]),
                    f"besiroglu_{p}": float(t.loc[p, "besiroglu2024"])})
    rel = fit.predict(runs["params"], runs["tokens"]) / runs["val_loss"] - 1
    out["loss_rmse_pct"] = 100 * float(np.sqrt(np.mean(rel ** 2)))
    return out


def summary_alpha(res: dict[str, pd.DataFrame], prov: dict, table: pd.DataFrame,
                  alpha_resamples: int) -> dict[str, object]:
    """The measurement (pairs, gamma, tokens, the half-width target, resamples, prompts) and, from
    :func:`sdsl.experiment.analysis.alpha_summary` ``table``: the largest 95 % half width (the wider
    of likelihood and bootstrap) per temperature, the range of alpha at temperature 1 and the
    largest gap between alpha and ``E[sum min(p, q)]`` on the sampled positions there."""
    mp = prov["scale"]["measurement"]
    hw = np.maximum(table["alpha_hw95"], table["boot_hw95"])
    t1 = table[table["temperature"] == 1.0]
    return {
        "n_pairs": len(res["alpha_pairs"]) // len(mp["temperatures"]), "gamma": mp["gamma"],
        "new_tokens": mp["new_tokens"], "prompt_len": mp["prompt_tokens"], "hw_target": mp["half_width"],
        "hw_max_t1": float(hw[table["temperature"] == 1.0].max()),
        "hw_max_greedy": float(hw[table["temperature"] == 0.0].max()),
        "runner_resamples": mp["n_resamples"], "alpha_resamples": int(alpha_resamples),
        "max_prompts_greedy": mp["max_prompts_greedy"], "prompts_min": int(table["n_prompts"].min()),
        "prompts_max": int(table["n_prompts"].max()), "alpha_min_t1": float(t1["alpha"].min()),
        "alpha_max_t1": float(t1["alpha"].max()),
        "gap_on_policy_t1": float((t1["min_pq_on_policy"] - t1["alpha"]).abs().max()),
    }


def summary_laws(frame: pd.DataFrame, plane, laws: pd.DataFrame, temperature: float) -> dict[str, object]:
    """The laws' fit: this family's plane ``R^2``, the RMS error of the paper's Table 3 plane on this
    family's alpha, and the leave-one-draft-out ranking ``laws`` (best law, its RMSE, the plane's
    and Scylla's ``loglin_n``)."""
    paper = PAPER_PLANE.A * frame["x"] + PAPER_PLANE.B * frame["y"] + PAPER_PLANE.C
    t = laws.set_index("law")
    best = str(laws.loc[laws["rank"] == 1, "law"].iloc[0])
    return {"temperature": float(temperature), "plane_r2": float(plane.r2),
            "paper_plane_rmse": float(np.sqrt(np.mean((paper - frame["alpha"]) ** 2))),
            "loo_best": best, "loo_best_rmse": float(t.loc[best, "rmse"]),
            "loo_plane_rmse": float(t.loc["plane", "rmse"]), "loo_loglin_n_rmse": float(t.loc["loglin_n", "rmse"])}


def summary_prediction(runs: pd.DataFrame, preds: pd.DataFrame, alpha_pred: pd.DataFrame,
                       paper: pd.DataFrame) -> dict[str, object]:
    """The prediction from the smaller drafts (:func:`sdsl.experiment.analysis.predictions`): per
    target (``_0`` the largest) the plane's ``N*`` with the loss law of the drafts only, the best
    trained draft, the ratios, the nearest draft and the throughput lost (per cent); over the
    interior variants the range of the ratio to the smooth optimum and the largest loss; the RMS
    error of the predicted alpha of the held-out drafts; the paper's coefficients (``paper``)."""
    small = small_half(runs)
    largest = runs.loc[runs["params"].idxmax(), "shape"]
    held = [s for s in runs.sort_values("params")["shape"].unique() if s not in small and s != largest]
    main = preds[(preds["law"] == "plane") & (preds["loss_fit"] == "drafts only")].set_index("target")
    out: dict[str, object] = {"small_shapes": ", ".join(small), "held_shapes": ", ".join(held)}
    for i, t in enumerate(_targets(runs)):
        r = main.loc[t]
        out.update({f"target_{i}": str(t), f"pred_{i}": _num(r["n_star_predicted"]), f"best_{i}": str(r["best_draft"]),
                    f"n_best_{i}": float(r["n_best"]), f"ratio_best_{i}": _num(r["ratio_to_best"]),
                    f"ratio_smooth_{i}": _num(r["ratio_to_smooth"]), f"nearest_{i}": str(r["nearest_draft"]),
                    f"lost_pct_{i}": _num(100 * r["throughput_lost"])})
    ok = preds[preds["status"] == "interior"]
    h = alpha_pred[alpha_pred["held_out"]]
    tp = paper.set_index(["target", "recipe"])
    ours = tp.loc[(_targets(runs)[0], "Table 3 + this family's loss law")]
    out.update({
        "n_variants": len(preds), "ratio_smooth_min": _num(ok["ratio_to_smooth"].min()),
        "ratio_smooth_max": _num(ok["ratio_to_smooth"].max()), "lost_pct_max": _num(100 * ok["throughput_lost"].max()),
        "held_rmse": float(np.sqrt(np.mean((h["predicted"] - h["alpha"]) ** 2))),
        "paper_y_besiroglu": float(tp.loc[(_targets(runs)[0], "Table 3 + Besiroglu et al. constants"),
                                          "target_ppl_predicted"]),
        "paper_nstar_ours": _num(ours["n_star"] if np.isfinite(ours["n_star"]) else ours["n_at_max"]),
    })
    return out


def summary_wallclock(wall: pd.DataFrame, runs: pd.DataFrame, prov: dict) -> dict[str, object]:
    """The timing (prompts, rounds) and, from :func:`sdsl.experiment.analysis.wallclock_summary`:
    the ranges of the cost ratio ``c``, of ``N/M`` and of the measured speedup, the median measured
    over predicted speedup, and per target the wall-clock-best draft (and the FLOP-best of the
    largest)."""
    mp = prov["scale"]["measurement"]
    out: dict[str, object] = {
        "timing_prompts": mp["timing_prompts"], "timing_repeats": mp["timing_repeats"],
        "c_min": wall["c"].min(), "c_max": wall["c"].max(), "nm_min": wall["n_over_m"].min(),
        "nm_max": wall["n_over_m"].max(), "speedup_min": wall["speedup"].min(), "speedup_max": wall["speedup"].max(),
        "mp_ratio_median": wall["measured_over_predicted"].median()}
    for i, t in enumerate(_targets(runs)):
        w = wall[wall["target"] == t]
        out[f"wall_best_{i}"] = str(w.loc[w["wallclock_best"], "draft"].iloc[0])
        out[f"flop_best_{i}"] = str(w.loc[w["flop_best"], "draft"].iloc[0])
    return out


def summary(res: dict[str, pd.DataFrame], prov: dict, fit: LossFit, alpha_table: pd.DataFrame, frame: pd.DataFrame,
            plane, laws: pd.DataFrame, preds: pd.DataFrame, alpha_pred: pd.DataFrame, paper: pd.DataFrame,
            wall: pd.DataFrame, *, temperature: float, loss_resamples: int, alpha_resamples: int) -> dict[str, object]:
    """Every number the chapter's prose cites, by glue name (without the chapter prefix): the
    ``summary_*`` functions merged, from the raw results ``res`` and ``prov``
    (:mod:`sdsl.experiment.results`) and the chapter's tables (the loss law ``fit`` on every run,
    :func:`~sdsl.experiment.analysis.alpha_summary`, :func:`~sdsl.experiment.analysis.pair_frame`,
    its plane, :func:`~sdsl.experiment.analysis.law_comparison`'s ranking,
    :func:`~sdsl.experiment.analysis.predictions`, :func:`predicted_alpha`,
    :func:`~sdsl.experiment.analysis.paper_predictions`, :func:`~sdsl.experiment.analysis.wallclock_summary`).
    Plain values for :func:`sdsl.book.glue.glue_summary`."""
    runs = res["runs"]
    return {**summary_family(runs, prov), **summary_loss(runs, fit, loss_resamples),
            **summary_alpha(res, prov, alpha_table, alpha_resamples), **summary_laws(frame, plane, laws, temperature),
            **summary_prediction(runs, preds, alpha_pred, paper), **summary_wallclock(wall, runs, prov)}
