"""From the raw results to the quantities of the chapter: alpha per pair with its intervals, the
acceptance laws with leave-one-draft-out errors, the predictions of ``N*`` and the wall clock.

Everything here is computed from the committed tables (:func:`sdsl.experiment.results.load_results`)
in seconds; nothing trains or decodes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdsl.experiment.lossfit import LossFit, fit_loss_law
from sdsl.experiment.pairs import counts_to_iterations
from sdsl.experiment.predict import (
    empirical_optimum,
    law_by_name,
    law_frame,
    predict_n_star,
    small_half,
    throughput_lost,
)
from sdsl.measure.estimators import alpha_bootstrap, alpha_from_accepted
from sdsl.model.crossval import compare_laws, cross_validate
from sdsl.model.laws import BESIROGLU_2024
from sdsl.model.optimum import law_optimal_draft_size

__all__ = [
    "LOO_LAWS",
    "PREDICTION_LAWS",
    "alpha_summary",
    "common_budget",
    "fit_all_runs",
    "law_comparison",
    "pair_frame",
    "paper_predictions",
    "predictions",
    "small_half_loss",
    "wallclock_summary",
]

#: Laws compared by leave-one-draft-out error (names of :data:`sdsl.model.alpha_laws.LAWS`).
#: ``loglin_n_y`` (``a + b ln N + c y``) is left out: with two targets ``c y`` is a per-target
#: intercept, so it is ``loglin_n_pooled`` reparametrised; the two tie to the last bit and their
#: order (and with it the bootstrap stream each gets) would be decided by rounding.
LOO_LAWS = (
    "plane",
    "linear_x",
    "log_x",
    "power_x",
    "loglin_n",
    "loglin_n_pooled",
    "loglin_nd_pooled",
    "target_mean",
    "plane_paper",
)
#: Laws used to predict N* from the smaller drafts.
PREDICTION_LAWS = ("plane", "log_x", "power_x", "loglin_n")


def _no_overflow_warning(f):
    """Run ``f`` without numpy's overflow warning: the law searches evaluate ``exp(L(N, D))`` of
    fitted constants far outside the family, where it overflows to ``inf`` and the candidate is
    rejected (an answer, not an error)."""
    import functools

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        with np.errstate(over="ignore"):
            return f(*args, **kwargs)

    return wrapped


def common_budget(runs: pd.DataFrame) -> float:
    """The token budget of the targets (every shape is trained on it)."""
    return float(runs.loc[runs["role"] == "target", "tokens"].iloc[0])


def alpha_summary(res: dict[str, pd.DataFrame], rng: np.random.Generator, n_resamples: int = 2000) -> pd.DataFrame:
    """One row per (draft, target, temperature): alpha by the truncated-geometric MLE with its
    profile interval and by the cluster bootstrap over prompts (:mod:`sdsl.measure.estimators`), the
    on-policy mean of ``sum min(p, q)`` over the evaluated positions (ratio of sums, SE clustered
    by prompt), the teacher-forced ``E[sum min(p, q)]`` and argmax agreement, the drafted tokens,
    and the draft's and target's ``N`` and perplexity."""
    runs = res["runs"].set_index("run")
    rows = []
    pair = ["draft", "target", "temperature"]
    counts = dict(tuple(res["alpha_counts"].groupby(pair, sort=False)))
    prompts = dict(tuple(res["alpha_prompts"].groupby(pair, sort=False)))
    for _, p in res["alpha_pairs"].iterrows():
        key = (p["draft"], p["target"], p["temperature"])
        it = counts_to_iterations(counts[key])
        it = it[it["drafted"] > 0]
        mle = alpha_from_accepted(it["accepted"], it["drafted"])
        boot = alpha_bootstrap(it["accepted"], it["drafted"], it["prompt_id"], rng, n_resamples=n_resamples)
        pr = prompts[key]
        beta = float(pr["beta_sum"].sum() / pr["evaluated"].sum())
        resid = pr["beta_sum"] - beta * pr["evaluated"]
        k = len(pr)
        beta_se = float(np.sqrt(k / max(k - 1, 1) * np.sum(resid**2)) / pr["evaluated"].sum())
        direct = p["overlap"] if p["temperature"] > 0 else p["agree"]
        direct_se = p["overlap_se"] if p["temperature"] > 0 else p["agree_se"]
        rows.append(
            {
                "draft": p["draft"],
                "target": p["target"],
                "temperature": float(p["temperature"]),
                "n": int(runs.loc[p["draft"], "params"]),
                "m": int(runs.loc[p["target"], "params"]),
                "d": int(runs.loc[p["draft"], "tokens"]),
                "draft_ppl": float(runs.loc[p["draft"], "val_ppl"]),
                "target_ppl": float(runs.loc[p["target"], "val_ppl"]),
                "n_prompts": int(p["n_prompts"]),
                "drafted": int(it["drafted"].sum()),
                "evaluated": int(mle.trials),
                "alpha": mle.alpha,
                "ci_low": mle.ci_low,
                "ci_high": mle.ci_high,
                "alpha_hw95": mle.half_width,
                "boot_ci_low": boot.ci_low,
                "boot_ci_high": boot.ci_high,
                "boot_hw95": boot.half_width,
                "min_pq_on_policy": beta,
                "min_pq_on_policy_se": beta_se,
                "min_pq_teacher_forced": float(direct),
                "min_pq_teacher_forced_se": float(direct_se),
            }
        )
    return pd.DataFrame(rows).sort_values(
        ["temperature", "target", "n", "d"], ascending=[False, False, True, True], ignore_index=True
    )


def pair_frame(runs: pd.DataFrame, summary: pd.DataFrame, temperature: float = 1.0) -> pd.DataFrame:
    """:func:`sdsl.experiment.predict.law_frame` at one temperature, with ``alpha_hw95`` and the
    columns :mod:`sdsl.model.alpha_fits` expects (``draft_ppl``, ``target_ppl``)."""
    s = summary[summary["temperature"] == float(temperature)].reset_index(drop=True)
    if s.empty:
        raise ValueError(f"no pair was measured at temperature {temperature!r}")
    f = law_frame(runs, s)
    f["alpha_hw95"] = s["alpha_hw95"].to_numpy()
    f["draft_ppl"], f["target_ppl"] = f["x"], f["y"]
    return f


def law_comparison(
    frame: pd.DataFrame, rng: np.random.Generator, laws=LOO_LAWS, n_resamples: int = 2000
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Leave-one-draft-out predictions of every law (each fold holds out one draft run, at both
    targets) and the ranked RMSE table of :func:`sdsl.model.crossval.compare_laws`."""
    lws = [law_by_name(n) for n in laws]
    pred = pd.concat([cross_validate(lw, frame, "draft") for lw in lws], ignore_index=True)
    return pred, compare_laws(pred, frame, rng, lws, n_resamples=n_resamples)


def fit_all_runs(
    runs: pd.DataFrame, rng: np.random.Generator | None = None, n_resamples: int = 0, non_embedding: bool = False
) -> LossFit:
    """The loss law on every run (``N = params``, or the non-embedding count), optionally with
    ``n_resamples`` bootstrap refits."""
    from sdsl.experiment.lossfit import bootstrap_loss_law

    n = runs["non_embedding_params" if non_embedding else "params"].to_numpy(float)
    d, loss = runs["tokens"].to_numpy(float), runs["val_loss"].to_numpy(float)
    fit = fit_loss_law(n, d, loss)
    if n_resamples:
        if rng is None:
            raise ValueError("rng must be a numpy.random.Generator for bootstrap refits (n_resamples > 0), got None")
        fit = bootstrap_loss_law(fit, n, d, loss, rng, n_resamples=n_resamples)
    return fit


def small_half_loss(runs: pd.DataFrame, with_targets: bool = False) -> LossFit:
    """The loss law fitted on the runs of the smaller half of the draft shapes (and the targets'
    runs with ``with_targets``)."""
    sel = runs["shape"].isin(small_half(runs)) | (with_targets & (runs["role"] == "target"))
    return fit_loss_law(runs.loc[sel, "params"], runs.loc[sel, "tokens"], runs.loc[sel, "val_loss"])


@_no_overflow_warning
def predictions(
    runs: pd.DataFrame, frame: pd.DataFrame, laws=PREDICTION_LAWS, losses: dict[bool, LossFit] | None = None
) -> pd.DataFrame:
    """For every target, acceptance law and loss-law fit (the smaller drafts only, or with the
    targets' runs; ``losses`` maps ``with_targets`` to an already fitted law): ``N*`` predicted from the smaller half of the drafts, the empirical optimum
    (best trained draft and smooth curve), their ratios and the throughput lost by training the
    draft nearest the prediction."""
    shapes = small_half(runs)
    d = common_budget(runs)
    losses = losses or {w: small_half_loss(runs, w) for w in (False, True)}
    rows = []
    for target in runs.loc[runs["role"] == "target"].sort_values("params", ascending=False)["run"]:
        emp = empirical_optimum(frame, target, d)
        for law in laws:
            for with_t in (False, True):
                p = predict_n_star(
                    runs, frame, target, law, fit_shapes=shapes, with_targets=with_t, loss=losses[with_t]
                )
                lost = throughput_lost(frame, target, d, p.n_star) if np.isfinite(p.n_star) else {}
                rows.append(
                    {
                        "target": target,
                        "m": emp["m"],
                        "law": law,
                        "loss_fit": p.loss_fit,
                        "status": p.status,
                        "n_star_predicted": p.n_star,
                        "alpha_predicted": p.alpha,
                        "gamma_predicted": p.gamma,
                        "best_draft": emp["best_draft"],
                        "n_best": emp["n_best"],
                        "n_smooth": emp["n_smooth"],
                        "ratio_to_best": p.n_star / emp["n_best"],
                        "ratio_to_smooth": p.n_star / emp["n_smooth"],
                        "nearest_draft": lost.get("nearest_draft"),
                        "throughput_lost": lost.get("lost", np.nan),
                        "best_at_edge": emp["best_at_edge"],
                        "smooth_at_edge": emp["smooth_at_edge"],
                    }
                )
    return pd.DataFrame(rows)


@_no_overflow_warning
def paper_predictions(runs: pd.DataFrame, frame: pd.DataFrame, ours: LossFit) -> pd.DataFrame:
    """What the paper's own recipe predicts for this family: the Table 3 plane with the Besiroglu
    constants (perplexity from the published law) and with our fitted loss law, beside the
    empirical optimum."""
    d = common_budget(runs)
    fitted = law_by_name("plane_paper").fit(frame)  # the Table 3 coefficients, not refitted
    rows = []
    for target in runs.loc[runs["role"] == "target"].sort_values("params", ascending=False)["run"]:
        r = runs.set_index("run").loc[target]
        emp = empirical_optimum(frame, target, d)
        lo = 0.5 * float(runs["params"].min())
        for label, consts in (
            ("Table 3 + Besiroglu et al. constants", BESIROGLU_2024),
            ("Table 3 + this family's loss law", ours.constants()),
        ):
            o = law_optimal_draft_size(
                fitted, target, float(r["params"]), d, float(r["tokens"]), consts, n_bounds=(lo, float(r["params"]))
            )
            y = float(np.exp(consts.E + consts.A * r["params"] ** -consts.a + consts.B * r["tokens"] ** -consts.b))
            rows.append(
                {
                    "target": target,
                    "recipe": label,
                    "target_ppl_predicted": y,
                    "status": o.status,
                    "n_star": o.n_star,
                    "n_at_max": o.n_at_max,
                    "alpha_at_max": o.alpha,
                    "n_best": emp["n_best"],
                    "n_smooth": emp["n_smooth"],
                }
            )
    return pd.DataFrame(rows)


def wallclock_summary(wall: pd.DataFrame, runs: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """Per pair: ``N/M``, the measured cost ratio ``c``, alpha, the chosen integer gamma, measured
    and Theorem 3.8 speedups and their ratio, and the FLOP speedup ``2 M T(N)`` of Eq. 9 at the
    measured alpha; flags for the wall-clock-optimal and FLOP-optimal draft of each target."""
    from sdsl.model.throughput import optimal_tokens_per_flop

    r = runs.set_index("run")
    w = wall.copy()
    w["n"], w["m"] = r.loc[w["draft"], "params"].to_numpy(float), r.loc[w["target"], "params"].to_numpy(float)
    w["n_over_m"] = w["n"] / w["m"]
    w["measured_over_predicted"] = w["speedup"] / w["predicted_speedup"]
    w["flop_speedup"] = 2 * w["m"] * optimal_tokens_per_flop(np.clip(w["alpha"], 1e-9, 1 - 1e-9), w["n"], w["m"])
    w["wallclock_best"] = w["speedup"] == w.groupby("target")["speedup"].transform("max")
    w["flop_best"] = w["flop_speedup"] == w.groupby("target")["flop_speedup"].transform("max")
    cols = [
        "target",
        "draft",
        "n",
        "m",
        "n_over_m",
        "c",
        "alpha",
        "gamma",
        "target_tokens_per_s",
        "spec_tokens_per_s",
        "speedup",
        "predicted_speedup",
        "measured_over_predicted",
        "flop_speedup",
        "wallclock_best",
        "flop_best",
    ]
    return w[cols].sort_values(["target", "n"], ascending=[False, True], ignore_index=True)
