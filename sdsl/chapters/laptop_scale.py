"""Tables and figures of the chapter ``notebooks/laptop_scale.md``: the paper's central claim
tested on a family of small GPT-2 models trained on this machine, with the prediction made and
written before the test drafts it is judged on were trained.

One function per table and per figure; every one reads the committed raw results
(:func:`sdsl.experiment.results.load_results`): the prediction, the empirical optimum and their
bands come computed from the experiment (:mod:`sdsl.experiment.predict`), the rest through the
light analysis of :mod:`sdsl.experiment.analysis`; :func:`summary` collects the numbers the prose
cites.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from matplotlib import cm, colors
from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatterSciNotation, LogLocator

from sdsl.book.outputs import declare
from sdsl.book.style import fix_layout
from sdsl.experiment.analysis import (
    alpha_summary,
    calibration_loss,
    out_of_sample_alpha,
    scale_costs,
    wallclock_optimum,
    wallclock_summary,
)
from sdsl.experiment.baselines import BASELINES, RULES, judge
from sdsl.experiment.config import PHASES, DraftGrid
from sdsl.experiment.lossfit import LossFit
from sdsl.experiment.predict import CRITERION, search_floor, verdict
from sdsl.model.laws import BESIROGLU_2024, HOFFMANN_2022
from sdsl.paths import DATA

__all__ = [
    "CHAPTER",
    "check_parameters",
    "fig_alpha_out_of_sample",
    "fig_loss_curves",
    "fig_loss_law",
    "fig_prediction_draws",
    "fig_throughput",
    "fig_wallclock",
    "summary",
    "summary_gpu_scale",
    "table_committed",
    "table_loss_law",
    "RUN_NAMES",
    "model_name",
    "summary_loss_law",
    "undetermined_endpoints",
    "table_prediction",
    "table_runs",
    "EARLIER_RUNS",
    "PREREGISTERED",
    "preregistered",
    "summary_design_runs",
    "table_baselines",
    "table_runs_of_the_design",
]

#: The earlier runs of the test, oldest first, each in its results folder (the latest is the
#: chapter's ``results_dir``): the first run (token table of 2,048), kept when the second
#: replaced it in ``data/laptop_scale``, and the second (token table of 512, calibration drafts
#: reaching the targets' optima), kept when the third, preregistered, replaced it.
EARLIER_RUNS = {"first": DATA / "laptop_scale_first", "second": DATA / "laptop_scale_second"}
#: The third run's prediction, written from its calibration runs and committed before any of its
#: test drafts was trained (``prediction.json``: sha256, time, the test grid, the design's checks).
PREREGISTERED = DATA / "laptop_scale_preregistered"

CHAPTER = "laptop_scale"
_TARGET_COLORS = ("#0072B2", "#D55E00", "#009E73")
_PRED, _EMP = "#D55E00", "#0072B2"


def check_parameters(**params: object) -> None:
    """The notebook's parameters checked before anything runs (the cell after the parameters
    cell): one ``ValueError`` naming the parameter and what is allowed. ``results_dir`` must be an
    existing folder holding a ``runs.csv`` (the runner's results)."""
    from pathlib import Path

    from sdsl import validation as V

    p = V.check_parameters(
        CHAPTER,
        params,
        {
            "results_dir": V.optional(
                V.rule(V.folder, must_exist=True, what="raw results of python -m sdsl.experiment run")
            ),
            "seed": V.rule(V.seed),
            "loss_resamples": V.rule(V.draws, what="bootstrap refits of the calibration loss law; 0: no intervals"),
            "alpha_resamples": V.rule(V.draws, allow_zero=False, what="cluster-bootstrap resamples of each alpha"),
            "wallclock_resamples": V.rule(
                V.draws, allow_zero=False, what="bootstrap resamples of the rounds for the wall-clock optimum"
            ),
            "artifacts_dir": V.optional(V.rule(V.folder)),
        },
    )
    folder = p.get("results_dir")
    if folder is not None and not (Path(folder) / "runs.csv").is_file():
        raise ValueError(f"results_dir must hold the runner's results (runs.csv): {str(folder)!r} has no runs.csv")


def _short(run: str) -> str:
    return str(run).split("-d")[0]


def model_name(run: str) -> str:
    """A run's name for a reader: its shape ``w<width>l<layers>``, with the token budget when it is
    not the common 2 M and the seed of a test draft (``w11l1-d2000k-r2`` -> ``w11l1, seed 2``;
    ``w8l1-d500k`` -> ``w8l1, 0.5 M tokens``): a test draft of a calibration draft's shape
    (``w16l1-d2000k-r1``, ``w16l1, seed 1``) is another run than it (``w16l1``)."""
    m = re.fullmatch(r"(w\d+l\d+)-d(\d+)k(?:-r(\d+))?", str(run))
    if m is None:
        return str(run)
    shape, budget_k, rep = m.group(1), int(m.group(2)), m.group(3)
    out = shape if budget_k == 2000 else f"{shape}, {budget_k / 1000:g} M tokens"
    return out + (f", seed {rep}" if rep is not None else "")


#: :func:`sdsl.book.tables.show` formats naming runs by :func:`model_name`.
RUN_NAMES = {col: model_name for col in ("run", "target", "draft", "best_draft")}


def _fine_from(scale: dict) -> dict[str, float | int]:
    """The smallest width of the test grid's shapes from which consecutive widths are at most
    ``max_ratio`` apart (``fine_width``), and its ``N`` in thousands (``fine_k``), for the scale
    recorded in the provenance."""
    grid = DraftGrid(**scale["test_grid"])
    widths = range(grid.min_width, grid.max_width + 1)
    n = np.array([grid.shape_of(w).params(int(scale["vocab_size"])) for w in widths], dtype=float)
    coarse = np.flatnonzero(n[1:] / n[:-1] > grid.max_ratio)
    first = int(coarse[-1]) + 1 if coarse.size else 0
    return {"fine_width": widths[first], "fine_k": float(n[first]) / 1e3}


def _target_label(run: str, m: float, role: str = "target") -> str:
    """A target's name in a legend: its shape and size, and ``held out`` for a held-out target."""
    held = ", held out" if role == "held_out_target" else ""
    return f"target {_short(run)} ({m / 1e6:.2f} M{held})"


def _subplots(*args, figsize: tuple[float, float], **kwargs):
    """A figure outside pyplot (never shown twice by the notebook's inline backend) and its axes."""
    fig = Figure(figsize=figsize)
    return fig, fig.subplots(*args, **kwargs)


def _finish(fig: Figure) -> Figure:
    return fix_layout(fig)


@declare("runs", "the trained family by role: sizes with and without embeddings, tokens, losses")
def table_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The training runs by role: shape, both parameter counts, tokens, tokens per parameter
    (under-trained: fewer than Chinchilla's 20), validation loss and perplexity, training time
    and throughput."""
    order = {"target": 0, "held_out_target": 1, "calibration": 2, "test": 3}
    cols = [
        "run",
        "role",
        "replicate",
        "width",
        "layers",
        "params",
        "non_embedding_params",
        "tokens",
        "tokens_per_param",
        "val_loss",
        "val_loss_se",
        "val_ppl",
        "train_s",
        "tokens_per_s",
    ]
    out = runs.assign(_o=runs["role"].map(order)).sort_values(["_o", "params", "tokens", "run"])[cols]
    out = out.reset_index(drop=True)
    out.insert(9, "under_trained", out["tokens_per_param"] < 20)
    return out


def table_loss_law(fit: LossFit, fit_non_embedding: LossFit | None = None) -> pd.DataFrame:
    """The calibration loss law's parameters with 95 % bootstrap intervals, beside Hoffmann et
    al. (2022) and Besiroglu et al. (2024) (point values, as :mod:`sdsl.model.laws` holds them)."""
    t = fit.intervals()
    t["hoffmann2022"] = [getattr(HOFFMANN_2022, p) for p in t["parameter"]]
    t["besiroglu2024"] = [getattr(BESIROGLU_2024, p) for p in t["parameter"]]
    if fit_non_embedding is not None:
        t["estimate_non_embedding_n"] = [fit_non_embedding.values[p] for p in t["parameter"]]
    return t


def summary_loss_law(table: pd.DataFrame) -> dict[str, object]:
    """What the prose says of :func:`table_loss_law`: ``loss_undetermined``, the endpoints the
    bootstrap does not determine (standard error above the endpoint's magnitude) in words."""
    return {"loss_undetermined": undetermined_endpoints(table)}


def undetermined_endpoints(table: pd.DataFrame) -> str:
    """The endpoints of :func:`table_loss_law` whose standard error exceeds their magnitude, in
    words: ``"the upper ends of A and B"``, or ``"none"``."""
    parts = []
    for side, col in (("lower", "ci_lower"), ("upper", "ci_upper")):
        names = table.loc[table[f"{col}_se"] > table[col].abs(), "parameter"].astype(str).tolist()
        if names:
            which = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            parts.append(f"the {side} end{'s' if len(names) > 1 else ''} of {which}")
    return "; ".join(parts) if parts else "none"


@declare("prediction_committed", "N* predicted from the calibration runs, as written before the test")
def table_committed(committed: pd.DataFrame) -> pd.DataFrame:
    """The prediction as it was written before any test draft, under both counts."""
    cols = ["count", "target", "role", "params", "law", "n_star_predicted", "predicted_low", "predicted_high"]
    cols += ["m_over_n_star", "draws_interior", "draws_total"]
    return committed[cols].sort_values(["count", "params"], ascending=[False, False], ignore_index=True)


@declare("prediction", "predicted against empirical N* per target, throughput lost, verdict")
@declare("prediction_non_embedding", "the same test with N counted without embeddings")
def table_prediction(pred: pd.DataFrame) -> pd.DataFrame:
    """Prediction beside measurement per target with the verdict of the pass criterion."""
    v = verdict(pred)
    out = pred.merge(v, on=["target", "role"])
    out["ratio"] = out["n_star_predicted"] / out["n_star_empirical"]
    return out.sort_values("params", ascending=False, ignore_index=True)


@declare("fig_prediction_draws", "bootstrap draws of the predicted N* by acceptance law", figure=True)
def fig_prediction_draws(draws: pd.DataFrame, committed: pd.DataFrame) -> Figure:
    """The bootstrap draws of the predicted ``N*`` per target (with embeddings), stacked by the
    acceptance law drawn, with the point prediction and its 95 % interval."""
    c = committed[committed["count"] == "with_embeddings"].sort_values("params", ascending=False)
    d = draws[draws["count"] == "with_embeddings"]
    laws = sorted(d["law"].unique())
    fig, axes = _subplots(1, len(c), figsize=(4.0 * len(c), 3.2), squeeze=False, sharex=True)
    ok = d["n_star"].dropna()
    bins = np.geomspace(ok.min() * 0.95, ok.max() * 1.05, 40)
    for ax, (_, row) in zip(axes[0], c.iterrows()):
        sub = d[d["target"] == row["target"]]
        ax.hist(
            [sub.loc[sub["law"] == lw, "n_star"].dropna() for lw in laws],
            bins=bins,
            stacked=True,
            label=laws,
            color=[cm.tab10(i) for i in range(len(laws))],
        )
        ax.axvspan(row["predicted_low"], row["predicted_high"], color=_PRED, alpha=0.12, lw=0)
        ax.axvline(row["n_star_predicted"], color=_PRED, lw=1.2)
        ax.set_xscale("log")
        ax.set_title(_target_label(row["target"], row["params"], row["role"]), fontsize="small")
    # one label under the panels: repeated under each, it runs into the next at the book's size
    fig.supxlabel("predicted $N^*$ (parameters, with embeddings)")
    axes[0][0].set_ylabel("bootstrap draws")
    axes[0][-1].legend(fontsize="x-small", title="acceptance law", title_fontsize="x-small")
    return _finish(fig)


@declare("fig_throughput", "2 M T(N) per target: prediction and measurement with their bands", figure=True)
def fig_throughput(curves: pd.DataFrame, points: pd.DataFrame, pred: pd.DataFrame) -> Figure:
    """``2 M T(N)`` per target: the prediction from the calibration runs with its 95 % band, the
    smooth fit to the measured test drafts with its band, the test drafts at their measured
    alpha (bootstrap intervals), and the predicted and empirical ``N*`` with their intervals."""
    c = curves[curves["count"] == "with_embeddings"]
    p = pred.sort_values("params", ascending=False)
    fig, axes = _subplots(1, len(p), figsize=(4.2 * len(p), 4.0), squeeze=False, sharey=True)
    for ax, (_, row) in zip(axes[0], p.iterrows()):
        t = row["target"]
        for curve, color, label in (
            ("predicted", _PRED, "predicted (calibration)"),
            ("empirical", _EMP, "smooth fit (test)"),
        ):
            g = c[(c["target"] == t) & (c["curve"] == curve)].sort_values("n")
            if curve == "predicted":  # show the prediction over the test grid's range and a little beyond
                g = g[(g["n"] >= points["n"].min() / 1.5) & (g["n"] <= points["n"].max() * 1.5)]
            ax.fill_between(g["n"], g["low"], g["high"], color=color, alpha=0.15, lw=0)
            ax.plot(g["n"], g["speedup"], color=color, lw=1.2, ls="--" if curve == "predicted" else "-", label=label)
        pt = points[points["target"] == t]
        ax.errorbar(
            pt["n"],
            pt["speedup"],
            yerr=[pt["speedup"] - pt["speedup_low"], pt["speedup_high"] - pt["speedup"]],
            fmt="o",
            ms=3,
            color=_EMP,
            elinewidth=0.7,
            label="test drafts (measured alpha)",
        )
        ymin = ax.get_ylim()[0]
        ax.errorbar(
            [row["n_star_predicted"]],
            [ymin],
            xerr=[[row["n_star_predicted"] - row["predicted_low"]], [row["predicted_high"] - row["n_star_predicted"]]],
            fmt="v",
            color=_PRED,
            capsize=3,
            label="predicted $N^*$, 95 %",
        )
        ax.errorbar(
            [row["n_star_empirical"]],
            [ymin],
            xerr=[[row["n_star_empirical"] - row["empirical_low"]], [row["empirical_high"] - row["n_star_empirical"]]],
            fmt="^",
            color=_EMP,
            capsize=3,
            label="empirical $N^*$, 95 %",
        )
        ax.set_xscale("log")
        ax.set_title(_target_label(t, row["params"], row["role"]), fontsize="small")
    axes[0][len(p) // 2].set_xlabel("draft parameters $N$ (with embeddings)")  # one label for the row
    axes[0][0].set_ylabel("$2M\\,T(N)$\nover plain decoding (×)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize="x-small", loc="outside lower center", ncol=3, frameon=False)
    return _finish(fig)


@declare("fig_alpha_out_of_sample", "predicted against measured alpha, held-out target included", figure=True)
def fig_alpha_out_of_sample(oos: pd.DataFrame) -> Figure:
    """Alpha of every test pair as the calibration fits predict it against the measured alpha
    (bootstrap intervals), one colour per target, the held-out target open."""
    fig, ax = _subplots(figsize=(4.8, 4.4))
    for i, (t, g) in enumerate(oos.groupby("target", sort=False)):
        held = g["target_role"].iloc[0] == "held_out_target"
        ax.errorbar(
            g["alpha_predicted"],
            g["alpha"],
            yerr=[g["alpha"] - g["boot_ci_low"], g["boot_ci_high"] - g["alpha"]],
            fmt="o",
            mfc="none" if held else _TARGET_COLORS[i % 3],
            color=_TARGET_COLORS[i % 3],
            elinewidth=0.6,
            ms=4,
            label=f"target {_short(t)}" + (" (held out)" if held else ""),
        )
    lo = float(min(oos["alpha"].min(), oos["alpha_predicted"].min())) - 0.02
    hi = float(max(oos["alpha"].max(), oos["alpha_predicted"].max())) + 0.02
    ax.plot([lo, hi], [lo, hi], color="0.5", lw=0.8, ls="--")
    ax.set_xlabel("alpha predicted from the calibration runs")
    ax.set_ylabel("alpha measured (test drafts)")
    ax.legend(fontsize="small")
    return _finish(fig)


@declare("fig_wallclock", "measured wall-clock speedup against N and Theorem 3.8", figure=True)
def fig_wallclock(wall: pd.DataFrame) -> Figure:
    """Measured wall-clock speedup (median over the rounds, order-statistics interval) against
    ``N`` per target, beside Theorem 3.8 at the measured alpha and cost ratio."""
    fig, ax = _subplots(figsize=(6.0, 4.6))
    for i, (t, g) in enumerate(wall.groupby("target", sort=False)):
        col = _TARGET_COLORS[i % 3]
        g = g.sort_values("n")
        ax.errorbar(
            g["n"],
            g["speedup"],
            yerr=[g["speedup"] - g["speedup_low"], g["speedup_high"] - g["speedup"]],
            fmt="o",
            ms=3.5,
            color=col,
            elinewidth=0.7,
            label=f"target {_short(t)}, measured",
        )
        ax.plot(g["n"], g["predicted_speedup"], color=col, lw=0.9, ls="--", label=f"target {_short(t)}, Theorem 3.8")
    ax.axhline(1.0, color="black", lw=1.0, ls=":", label="no speedup (1×)")
    ax.set_xscale("log")
    # across less than two decades matplotlib labels the minor ticks 2 to 9 × 10^k, and 3 and 4 × 10^k
    # collide: label only 2 and 5 × 10^k beside the decades
    ax.xaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))
    ax.xaxis.set_minor_formatter(LogFormatterSciNotation(labelOnlyBase=False, minor_thresholds=(3, 3)))
    ax.set_xlabel("draft parameters $N$ (with embeddings)")
    ax.set_ylabel("wall-clock speedup over\nplain decoding (×)")
    fig.legend(fontsize="x-small", ncol=2, loc="outside lower center", frameon=False)
    return _finish(fig)


@declare("fig_loss_law", "validation loss against N with the calibration loss law", figure=True)
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


@declare("fig_loss_curves", "training loss against tokens seen, every run", figure=True)
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


@declare("baselines", "the prediction against rules without the paper's laws: throughput lost per target")
@declare("baselines_non_embedding", "the same comparison with N counted without embeddings")
def table_baselines(baselines: pd.DataFrame, prediction: pd.DataFrame) -> pd.DataFrame:
    """The throughput each rule loses per target (:mod:`sdsl.experiment.baselines`), the
    prediction first, with ``beaten``: for a baseline, whether the prediction loses less on that
    target."""
    order = {r: i for i, r in enumerate(RULES)}
    sdsl = baselines[baselines["rule"] == "sdsl"].set_index("target")["lost"]
    out = baselines.assign(
        params=baselines["target"].map(prediction.set_index("target")["params"]),
        beaten=[
            "" if r == "sdsl" else ("yes" if sdsl[t] < v else "no")
            for t, r, v in zip(baselines["target"], baselines["rule"], baselines["lost"])
        ],
        _o=baselines["rule"].map(order),
    )
    cols = ["target", "params", "rule", "n", "n_low", "n_high", "lost", "lost_low", "lost_high", "grid", "beaten"]
    return out.sort_values(["params", "_o"], ascending=[False, True])[cols].reset_index(drop=True)


def _run_row(name: str, res: dict[str, pd.DataFrame], prov: dict) -> dict[str, object]:
    """One run of the design in :func:`table_runs_of_the_design`."""
    runs = res["runs"]
    row: dict[str, object] = {
        "run": name,
        "collected_at": str(prov["commit"])[:7],
        "vocab": int(prov["scale"]["vocab_size"]),
        "largest_calibration_draft": int(runs.loc[runs["role"] == "calibration", "params"].max()),
        "search_floor": search_floor(runs),
    }
    for tag, pred_name, bl_name in (
        ("", "prediction", "baselines"),
        ("_ne", "prediction_non_embedding", "baselines_non_embedding"),
    ):
        p = res[pred_name]
        v = verdict(p)
        ratio = p["n_star_empirical"] / p["n_star_predicted"]
        m_over = p["params"] / p["n_star_predicted"]
        j = judge(p, res[bl_name])
        row |= {
            f"m_min{tag}": float(p["params"].min()),
            f"m_max{tag}": float(p["params"].max()),
            f"m_over_n_star_min{tag}": float(m_over.min()),
            f"m_over_n_star_max{tag}": float(m_over.max()),
            f"measured_over_predicted_min{tag}": float(ratio.min()),
            f"measured_over_predicted_max{tag}": float(ratio.max()),
            f"extrapolation{tag}": float(p["n_star_predicted"].min())
            / float(runs.loc[runs["role"] == "calibration", "params" if tag == "" else "non_embedding_params"].max()),
            f"passed{tag}": int(v["passed"].sum()),
            f"baselines_beaten{tag}": int((j["beaten"] == "yes").sum()),
            f"not_beaten{tag}": " and ".join(RULE_WORDS.get(r, r) for r in j.loc[j["beaten"] == "no", "rule"])
            or "none",
        }
    row["targets"] = int(len(res["prediction"]))
    m_over = res["prediction"]["params"] / res["prediction"]["n_star_predicted"]
    row["regime"] = _regime(float(m_over.min()), float(m_over.max()))
    return row


def _regime(lo: float, hi: float) -> str:
    """Where ``M/N*`` from ``lo`` to ``hi`` lies against the paper's targets (100 to 300), in words."""
    if lo >= 100 and hi <= 300:
        return "in the paper's regime of 100 to 300"
    if hi < 100:
        return "below the paper's regime of 100 to 300"
    if lo > 300:
        return "above the paper's regime of 100 to 300"
    return "partly in the paper's regime of 100 to 300"


@declare("runs_of_the_design", "every run of the test: its design, how far it missed, its verdicts")
def table_runs_of_the_design(runs_of: dict[str, tuple[dict[str, pd.DataFrame], dict]]) -> pd.DataFrame:
    """One row per run of the test, oldest first (``runs_of``: name -> (results, provenance)): the
    token table, the largest calibration draft, the targets' ``M``, ``M/N*`` at the prediction,
    the measured ``N*`` over the predicted one, how far the prediction reached beyond the
    calibration drafts, the targets passing the criterion of the first two runs (inside the
    interval, less than 2 % lost) and the baselines the prediction beats on a majority of targets,
    under both counts."""
    return pd.DataFrame([_run_row(name, res, prov) for name, (res, prov) in runs_of.items()])


def summary_design_runs(table: pd.DataFrame, prereg: dict | None, prov: dict | None = None) -> dict[str, object]:
    """What the prose says of :func:`table_runs_of_the_design` (``<run>_<column>``) and of the third
    run's preregistered prediction (``prereg``: its ``prediction.json`` with the committed table
    as ``table``; None: none yet), as ``third_*``; with ``prov`` (the provenance of the results the
    chapter reads), ``third_same_file``: whether the prediction those results tested is the
    preregistered file, byte for byte (equal sha256)."""
    out: dict[str, object] = {}
    for _, r in table.iterrows():
        for col, v in r.items():
            if col != "run":
                out[f"{r['run']}_{col}"] = v
    out["n_runs"] = len(table)
    if prereg is not None:
        from sdsl.experiment.config import get_scale
        from sdsl.experiment.predict import SEARCH_FLOOR_FRACTION

        full = get_scale("full")  # the scale of the preregistered run: its floor of the range searched
        floor = SEARCH_FLOOR_FRACTION * min(full.params(x) for x in full.shapes)
        t = prereg["table"]
        t = t[t["count"] == "with_embeddings"].sort_values("params", ascending=False)
        checks = prereg["design_checks"]["with_embeddings"]
        out |= {
            "third_sha256_short": str(prereg["sha256"])[:12],
            "third_written_utc": str(prereg["written_utc"]),
            "third_n_test": len(prereg["test_runs"]),
            "third_extrapolation": float(checks["extrapolation"]),
            "third_m_span": float(checks["m_span"]),
            "third_largest_draft_k": float(checks["largest_calibration_draft"]) / 1e3,
            "third_same_file": (
                "the same file byte for byte"
                if prov is not None and str((prov.get("prediction") or {}).get("sha256")) == str(prereg["sha256"])
                else "a different file"
            ),
            "third_predicted": "; ".join(
                f"{_short(r['target'])}{' (held out)' if r['role'] == 'held_out_target' else ''} "
                f"{r['params'] / 1e6:.2f} M: "
                f"{_interval(r['n_star_predicted'], r['predicted_low'], r['predicted_high'], floor=floor)}"
                for _, r in t.iterrows()
            ),
        }
    return out


def preregistered(folder=None) -> dict | None:
    """The third run's committed prediction (``PREREGISTERED``, or ``folder``): its
    ``prediction.json`` with the committed table as ``table``; None when there is none."""
    import json

    from sdsl import data as _data

    folder = PREREGISTERED if folder is None else folder
    path = folder / "prediction.json"
    if not path.is_file():
        return None
    rec = json.loads(path.read_text(encoding="utf-8"))
    return rec | {"table": _data.load(folder / "prediction_committed.csv")}


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
        "gpu_m_span": scale.target_span(),
        "gpu_min_tokens_per_param": float(tot["min_tokens_per_param"]),
    }


def _interval(v: float, lo: float, hi: float, scale: float = 1e3, unit: str = "k", floor: float | None = None) -> str:
    """``v [lo, hi]`` in ``unit``; a lower end at ``floor`` (the range searched) is written
    ``≤ lo``: the interval is censored there, its lower end is not measured."""
    low = f"{lo / scale:,.1f}"
    if floor is not None and lo <= floor * (1 + 1e-9):
        low = "≤ " + low
    return f"{v / scale:,.1f} {unit} [{low}, {hi / scale:,.1f}]"


#: How the prose names each rule.
RULE_WORDS = {
    "m_over_200": "M/200",
    "m_over_100": "M/100",
    "best_calibration": "the best calibration draft",
    "ln_n_fit": "a line of alpha in ln N",
}


def _summary_baselines(res: dict[str, pd.DataFrame], runs: pd.DataFrame, test_n: np.ndarray) -> dict[str, object]:
    """The prediction against the baselines in the prose's words: per baseline the targets on
    which the prediction loses less (``wins_<rule>``, ``wins_ne_<rule>``), what each loses on the
    largest target (``t0_lost_<rule>``), the baselines not beaten on a majority, the verdict under
    the whole criterion, the floor of the range searched, and the share of the prediction's draws
    outside the test grid (their loss is read at the grid's end)."""
    out: dict[str, object] = {}
    verdicts = {}
    for tag, pname, bname in (
        ("", "prediction", "baselines"),
        ("ne_", "prediction_non_embedding", "baselines_non_embedding"),
    ):
        pred, bl = res[pname], res[bname]
        j = judge(pred, bl).set_index("rule")
        for r in BASELINES:
            out[f"wins_{tag}{r}"] = int(j.loc[r, "wins"])
        missed = [RULE_WORDS[r] for r in BASELINES if j.loc[r, "beaten"] == "no"]
        out[f"{tag}not_beaten"] = " and ".join(missed) if missed else "none"
        if tag == "":
            when = (
                "written with the prediction before any test draft was trained"
                if "baselines_committed" in res
                else "computed after the run"
            )
            out["baselines_sentence"] = (
                f"Rules a practitioner could use without the paper's laws, from the same calibration pairs and "
                f"{when}, lose as little or less on a majority of the targets ({' and '.join(missed)})"
                if missed
                else "The prediction also loses less than each rule a practitioner could use without the paper's "
                f"laws ({when}) on a majority of the targets"
            )
        v = verdict(pred)
        verdicts[tag] = bool(v["passed"].all()) and not missed
        out[f"{tag}verdict_whole"] = "passes" if verdicts[tag] else "fails"
        big = pred.sort_values("params", ascending=False)["target"].iloc[0]
        for _, b in bl[bl["target"] == big].iterrows():
            out[f"{tag}t0_lost_{b['rule']}"] = (
                f"{100 * b['lost']:.1f} % [{100 * b['lost_low']:.1f}, {100 * b['lost_high']:.1f}]"
            )
    out["floor_k"] = search_floor(runs) / 1e3
    d = res["prediction_draws"]
    d = d[(d["count"] == "with_embeddings")]["n_star"].dropna()
    out["draws_outside_grid_pct"] = 100 * float(((d < test_n.min()) | (d > test_n.max())).mean())
    return out


def summary(
    res: dict[str, pd.DataFrame], prov: dict, costs: pd.DataFrame, oos: pd.DataFrame, wall_opt: pd.DataFrame
) -> dict[str, object]:
    """The numbers the chapter's prose cites (glued as ``laptop_scale_<key>``): the result per
    target with its intervals and the verdict under both counts, the design, the scale's costs,
    the alpha predicted out of sample, the wall clock and the cost of the run per phase."""
    runs, pred, ne = res["runs"], res["prediction"], res["prediction_non_embedding"]
    v, v_ne = verdict(pred), verdict(ne)
    tests = runs[runs["role"] == "test"]
    out: dict[str, object] = {}
    for tag, p in (("", pred), ("ne_", ne)):
        for i, (_, row) in enumerate(p.sort_values("params", ascending=False).iterrows()):
            k = f"t{i}"
            out[f"{k}_name"] = _short(row["target"]) + (" (held out)" if row["role"] == "held_out_target" else "")
            floor = search_floor(runs, "with_embeddings" if tag == "" else "non_embedding")
            out[f"{tag}{k}_predicted"] = _interval(
                row["n_star_predicted"], row["predicted_low"], row["predicted_high"], floor=floor
            )
            out[f"{tag}{k}_empirical"] = _interval(row["n_star_empirical"], row["empirical_low"], row["empirical_high"])
            out[f"{tag}{k}_lost"] = (
                f"{100 * row['lost_at_predicted']:.1f} % [{100 * row['lost_low']:.1f}, {100 * row['lost_high']:.1f}]"
            )
            vv = verdict(p.loc[[row.name]]).iloc[0]
            out[f"{tag}{k}_verdict"] = (
                "passes"
                if vv["passed"]
                else "fails ("
                + " and ".join(
                    x
                    for x, bad in (
                        ("empirical N* outside the predicted interval", not vv["inside"]),
                        (f"more than {100 * CRITERION['max_lost']:.0f} % lost", not vv["lost_ok"]),
                    )
                    if bad
                )
                + ")"
            )
            out[f"{tag}{k}_ratio"] = float(row["params"] / row["n_star_predicted"])
            top = float((tests if tag == "" else tests.assign(params=tests["non_embedding_params"]))["params"].max())
            out[f"{tag}{k}_emp_where"] = (
                "at the largest test draft: the measured optimum lies there or beyond"
                if np.isclose(row["n_star_empirical"], top, rtol=1e-6)
                else "inside the test grid"
            )
    held = pred.loc[pred["role"] == "held_out_target", "target"]
    targets = runs[runs["role"].isin(["target", "held_out_target"])]
    tests = runs[runs["role"] == "test"]
    tn = np.sort(tests["params"].unique().astype(float))
    p_main = pred.sort_values("params", ascending=False).iloc[0]
    t_hw = res["alpha_pairs"]["half_width"]
    out |= {
        "targets": ", ".join(_short(t) for t in pred.sort_values("params", ascending=False)["target"]),
        "held_out": ", ".join(_short(t) for t in held),
        "n_targets": len(targets),
        "passed": int(v["passed"].sum()),
        "passed_ne": int(v_ne["passed"].sum()),
        "verdict": "passes" if bool(v["passed"].all()) else "fails",
        "verdict_ne": "passes" if bool(v_ne["passed"].all()) else "fails",
        "n_inside": int(v["inside"].sum()),
        "n_inside_ne": int(v_ne["inside"].sum()),
        "n_lost_ok": int(v["lost_ok"].sum()),
        "n_lost_ok_ne": int(v_ne["lost_ok"].sum()),
        "max_lost_pct": 100 * CRITERION["max_lost"],
        "lost_high_max_pct": 100 * float(pred["lost_high"].max()),
        "main_target": _short(p_main["target"]),
        "main_ratio": float(p_main["params"] / p_main["n_star_predicted"]),
        "max_ratio": float((pred["params"] / pred["n_star_predicted"]).max()),
        "min_ratio": float((pred["params"] / pred["n_star_predicted"]).min()),
        "regime": _regime(
            float((pred["params"] / pred["n_star_predicted"]).min()),
            float((pred["params"] / pred["n_star_predicted"]).max()),
        ),
        "max_ratio_ne": float((ne["params"] / ne["n_star_predicted"]).max()),
        "min_ratio_ne": float((ne["params"] / ne["n_star_predicted"]).min()),
        "n_baselines": len(BASELINES),
        "n_calibration": int((runs["role"] == "calibration").sum()),
        "n_calibration_shapes": int(
            runs.loc[runs["role"] == "calibration", ["width", "layers"]].drop_duplicates().shape[0]
        ),
        "n_test": len(tests),
        "n_test_sizes": len(tn),
        "test_min_k": tn.min() / 1e3,
        "test_max_k": tn.max() / 1e3,
        "test_step_max": float(np.exp(np.diff(np.log(tn))).max()),
        "n_extension": len((prov["prediction"].get("grid_extension") or {}).get("runs", [])),
        "n_upper": sum(
            v == "upper" for v in ((prov["prediction"].get("grid_extension") or {}).get("ends", {})).values()
        ),
        "n_seeds2": int((tests["replicate"] == 2).sum()),
        "n_seeds2_measured": len((prov["prediction"].get("replicates") or {}).get("runs", [])),
        "seeds_near": int(prov["scale"]["test_grid"]["seeds_near"]),
        **_fine_from(prov["scale"]),
        "vocab": int(prov["scale"]["vocab_size"]),
        "d_common_m": float(targets["tokens"].iloc[0]) / 1e6,
        "tokens_per_param_min": float(targets["tokens_per_param"].min()),
        "tokens_per_param_max": float(targets["tokens_per_param"].max()),
        "head_share_min": float((1 - tests["non_embedding_params"] / tests["params"]).min() * 100),
        "head_share_max": float((1 - tests["non_embedding_params"] / tests["params"]).max() * 100),
        "hours_20_max": float(costs["hours_to_20_tokens_per_param"].max()),
        "hours_ratio100": float(costs["hours_for_ratio_100_common_budget"].max()),
        "hours_ratio100_20": float(costs["hours_for_ratio_100_at_20_tokens"].max()),
        "m_ratio100_m": float(costs["m_for_ratio_100"].max()) / 1e6,
        "m_ratio100_emp_m": float(costs["m_for_ratio_100_empirical"].max()) / 1e6,
        "hours_ratio100_emp": float(costs["hours_for_ratio_100_empirical_common_budget"].max()),
        "hours_ratio100_emp_20": float(costs["hours_for_ratio_100_empirical_at_20_tokens"].max()),
        "min_ratio_empirical": float((pred["params"] / pred["n_star_empirical"]).min()),
        "max_ratio_empirical": float((pred["params"] / pred["n_star_empirical"]).max()),
        "sha256": str(prov["prediction"]["sha256"]),
        "sha256_short": str(prov["prediction"]["sha256"])[:12],
        "written_utc": str(prov["prediction"]["written_utc"]),
        "first_test_utc": str(prov["prediction"]["first_test_task_start_utc"]),
        "duration_min": float(prov["duration_s"]) / 60,
        "cpu": str(prov["machine"]["cpu"]),
        "cpus": int(prov["machine"]["logical_cpus"]),
        "load_mean": float(np.mean(prov["load_average_1min_mean"])),
        "n_prompts": int(res["alpha_pairs"]["n_prompts"].max()),
        "alpha_hw_min": float(t_hw.min()),
        "alpha_hw_max": float(t_hw.max()),
        "n_pairs": len(res["alpha_pairs"]),
        "oos_rmse_fit": float(np.sqrt((oos.loc[oos["target_role"] == "target", "error"] ** 2).mean())),
        "oos_rmse_held": float(np.sqrt((oos.loc[oos["target_role"] == "held_out_target", "error"] ** 2).mean())),
        "oos_bias_held": float(oos.loc[oos["target_role"] == "held_out_target", "error"].mean()),
        "rounds": int(res["wallclock_rounds"].groupby(["draft", "target"]).size().min()),
        "n_wall_pairs": len(res["wallclock"]),
        "wall_speedup_min": float(res["wallclock"]["speedup"].min()),
        "wall_speedup_max": float(res["wallclock"]["speedup"].max()),
        "n_wall_above_1": int((res["wallclock"]["speedup_low"] > 1).sum()),
    }
    order = {t: i for i, t in enumerate(pred.sort_values("params", ascending=False)["target"])}
    for _, w in wall_opt.iterrows():
        out[f"t{order[w['target']]}_wall_best"] = (
            f"{_short(w['best_draft'])} (N = {w['n_best'] / 1e3:,.1f} k; 95 % of resamples pick N in "
            f"[{w['n_low'] / 1e3:,.1f}, {w['n_high'] / 1e3:,.1f}] k)"
        )
    out |= _summary_baselines(res, runs, tn)
    minutes = prov["cpu_minutes_by_phase"]
    for phase in PHASES:  # a phase without tasks (no extension, no second seed needed) cost nothing
        out["cpu_min_" + phase.replace(" ", "_")] = float(minutes.get(phase, 0.0))
    out["cpu_min_extension"] = sum(float(minutes.get(p, 0.0)) for p in PHASES if "extension" in p)
    out["cpu_min_replicates"] = sum(float(minutes.get(p, 0.0)) for p in PHASES if "replicate" in p)
    out["cpu_min_total"] = float(sum(minutes.values()))
    return out


# What this chapter shows that a function of another module makes.
declare("loss_law", "the calibration loss law against the published constants")(calibration_loss)
declare("alpha", "alpha of every pair with its bootstrap interval")(alpha_summary)
declare("alpha_out_of_sample", "alpha of the test pairs predicted from the calibration runs", shown=False)(
    out_of_sample_alpha
)
declare("costs", "M / N*, tokens per parameter and the cost of the paper's regime")(scale_costs)
declare("wallclock", "plain against speculative decoding, interleaved rounds, medians with intervals")(
    wallclock_summary
)
declare("wallclock_optimum", "the wall-clock best draft per target with the interval of its N")(wallclock_optimum)
