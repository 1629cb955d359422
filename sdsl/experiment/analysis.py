"""From the raw results to the quantities of the chapter: alpha per pair with its intervals, the
calibration loss law, the measured throughput of the test drafts, alpha predicted out of sample,
the wall-clock benchmark with the wall-clock optimum, and what the scale costs.

The prediction and the empirical optimum with their bands are computed by the experiment
(:mod:`sdsl.experiment.predict`, written as ``prediction*.csv``, ``prediction_draws.csv`` and
``throughput_curves.csv``); everything here reads the committed tables
(:func:`sdsl.experiment.results.load_results`) and runs in seconds; nothing trains or decodes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdsl.experiment.lossfit import LossFit, bootstrap_loss_law, fit_loss_law
from sdsl.experiment.pairs import counts_to_iterations
from sdsl.experiment.predict import POINT_LAW, law_by_name, law_frame
from sdsl.measure.estimators import alpha_bootstrap, alpha_from_accepted
from sdsl.model.optimum import _features_at
from sdsl.model.throughput import optimal_tokens_per_flop

__all__ = [
    "alpha_summary",
    "calibration_loss",
    "common_budget",
    "out_of_sample_alpha",
    "scale_costs",
    "test_points",
    "wallclock_optimum",
    "wallclock_summary",
]


def common_budget(runs: pd.DataFrame) -> float:
    """The token budget of the targets (every test draft is trained on it)."""
    return float(runs.loc[runs["role"] == "target", "tokens"].iloc[0])


def alpha_summary(res: dict[str, pd.DataFrame], rng: np.random.Generator, n_resamples: int = 2000) -> pd.DataFrame:
    """One row per (draft, target): alpha by the truncated-geometric MLE with its profile
    interval and by the cluster bootstrap over prompts (:mod:`sdsl.measure.estimators`), the
    on-policy mean of ``sum min(p, q)`` over the evaluated positions, the teacher-forced
    ``E[sum min(p, q)]``, the drafted tokens, the roles, and both parameter counts."""
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
        rows.append(
            {
                "draft": p["draft"],
                "target": p["target"],
                "draft_role": runs.loc[p["draft"], "role"],
                "target_role": runs.loc[p["target"], "role"],
                "temperature": float(p["temperature"]),
                "n": int(runs.loc[p["draft"], "params"]),
                "n_non_embedding": int(runs.loc[p["draft"], "non_embedding_params"]),
                "m": int(runs.loc[p["target"], "params"]),
                "d": int(runs.loc[p["draft"], "tokens"]),
                "draft_ppl": float(runs.loc[p["draft"], "val_ppl"]),
                "target_ppl": float(runs.loc[p["target"], "val_ppl"]),
                "n_prompts": int(p["n_prompts"]),
                "evaluated": int(mle.trials),
                "alpha": mle.alpha,
                "ci_low": mle.ci_low,
                "ci_high": mle.ci_high,
                "alpha_hw95": mle.half_width,
                "boot_ci_low": boot.ci_low,
                "boot_ci_high": boot.ci_high,
                "boot_hw95": boot.half_width,
                "min_pq_on_policy": float(pr["beta_sum"].sum() / pr["evaluated"].sum()),
                "min_pq_teacher_forced": float(p["overlap"]),
            }
        )
    return pd.DataFrame(rows).sort_values(
        ["target", "n", "d", "draft"], ascending=[False, True, True, True], ignore_index=True
    )


def calibration_loss(
    runs: pd.DataFrame, count: str = "with_embeddings", rng: np.random.Generator | None = None, n_resamples: int = 0
) -> LossFit:
    """The loss law of the prediction: fitted on the calibration drafts and the fit targets
    (never a held-out target or a test draft), ``N`` counted by ``count``; with ``n_resamples``
    bootstrap refits over those runs."""
    col = "params" if count == "with_embeddings" else "non_embedding_params"
    cal = runs[runs["role"].isin(["calibration", "target"])]
    n, d, loss = cal[col].to_numpy(float), cal["tokens"].to_numpy(float), cal["val_loss"].to_numpy(float)
    fit = fit_loss_law(n, d, loss)
    if n_resamples:
        if rng is None:
            raise ValueError("rng must be a numpy.random.Generator for bootstrap refits (n_resamples > 0), got None")
        fit = bootstrap_loss_law(fit, n, d, loss, rng, n_resamples=n_resamples)
    return fit


def test_points(summary: pd.DataFrame) -> pd.DataFrame:
    """The test pairs with the throughput over plain decoding at equal FLOPs ``2 M T(N)`` (Eq. 9
    at ``gamma*``, ``N`` and ``M`` with embeddings) at the measured alpha and at the ends of its
    bootstrap interval."""
    t = summary[summary["draft_role"] == "test"].copy()
    n, m = t["n"].to_numpy(float), t["m"].to_numpy(float)
    for col, a in (("speedup", "alpha"), ("speedup_low", "boot_ci_low"), ("speedup_high", "boot_ci_high")):
        t[col] = 2 * m * optimal_tokens_per_flop(np.clip(t[a].to_numpy(float), 1e-9, 1 - 1e-9), n, m)
    return t.reset_index(drop=True)


def out_of_sample_alpha(
    runs: pd.DataFrame,
    summary: pd.DataFrame,
    law: str = POINT_LAW,
    count: str = "with_embeddings",
    loss: LossFit | None = None,
) -> pd.DataFrame:
    """Alpha of every test pair as the calibration fits predict it, beside the measured alpha:
    ``law`` fitted on the calibration pairs (measured perplexities), evaluated at
    ``x = exp(L(N, D))`` and ``y = exp(L(M, D'))`` of the calibration loss law ``loss``
    (:func:`calibration_loss` of ``runs`` and ``count``, fitted here when not given). No fit has
    seen a test draft, and none has seen a held-out target."""
    cal = summary[(summary["draft_role"] == "calibration") & (summary["target_role"] == "target")]
    fitted = law_by_name(law).fit(law_frame(runs, cal, count))
    if loss is None:
        loss = calibration_loss(runs, count)
    elif not isinstance(loss, LossFit):
        raise ValueError(f"loss must be the calibration loss law (a LossFit), got {type(loss).__name__}")
    test = summary[summary["draft_role"] == "test"].reset_index(drop=True)
    f = law_frame(runs, test, count)
    pred = np.empty(len(f))
    for i, row in f.iterrows():
        feats = _features_at(np.array([row["n"]]), row["m"], row["d"], row["d_target"], loss.constants())
        pred[i] = fitted.alpha(feats, row["target"])[0]
    out = test[["target", "target_role", "draft", "n", "alpha", "boot_ci_low", "boot_ci_high"]].copy()
    out["alpha_predicted"] = pred
    out["error"] = out["alpha_predicted"] - out["alpha"]
    return out


def wallclock_summary(wall: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Per test pair: ``N`` and ``N/M``, the measured cost ratio ``c``, alpha, gamma, median
    tokens per second of both methods, the median speedup with its interval, Theorem 3.8's
    prediction and the FLOP speedup ``2 M T(N)`` of Eq. 9 at the measured alpha."""
    r = runs.set_index("run")
    w = wall.copy()
    w["n"], w["m"] = r.loc[w["draft"], "params"].to_numpy(float), r.loc[w["target"], "params"].to_numpy(float)
    w["target_role"] = r.loc[w["target"], "role"].to_numpy()
    w["n_over_m"] = w["n"] / w["m"]
    w["measured_over_predicted"] = w["speedup"] / w["predicted_speedup"]
    w["flop_speedup"] = 2 * w["m"] * optimal_tokens_per_flop(np.clip(w["alpha"], 1e-9, 1 - 1e-9), w["n"], w["m"])
    cols = [
        "target",
        "target_role",
        "draft",
        "n",
        "n_over_m",
        "c",
        "alpha",
        "gamma",
        "target_tokens_per_s",
        "spec_tokens_per_s",
        "speedup",
        "speedup_low",
        "speedup_high",
        "predicted_speedup",
        "measured_over_predicted",
        "flop_speedup",
    ]
    return w[cols].sort_values(["target", "n", "draft"], ascending=[False, True, True], ignore_index=True)


def wallclock_optimum(
    rounds: pd.DataFrame, runs: pd.DataFrame, rng: np.random.Generator, n_resamples: int = 2000
) -> pd.DataFrame:
    """Per target, the test draft with the largest median wall-clock speedup and the interval of
    its ``N``: rounds resampled with replacement within every pair, the argmax over drafts
    recomputed, 2.5 % and 97.5 % of the ``N`` it picks."""
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be an integer >= 1, got {n_resamples!r}")
    r = runs.set_index("run")
    rows = []
    for target, g in rounds.groupby("target", sort=False):
        drafts = sorted(g["draft"].unique(), key=lambda d: r.loc[d, "params"])
        ratios = [(g.loc[g["draft"] == d, "target_s"] / g.loc[g["draft"] == d, "spec_s"]).to_numpy() for d in drafts]
        n = np.array([float(r.loc[d, "params"]) for d in drafts])
        med = np.array([np.median(x) for x in ratios])
        # drawn in the order of a loop over (resample, draft); the medians then at once per draft
        draws = [[rng.choice(x, x.size) for x in ratios] for _ in range(int(n_resamples))]
        medians = np.column_stack([np.median(np.stack(per_draft), axis=1) for per_draft in zip(*draws)])
        picks = n[np.argmax(medians, axis=1)]
        k = int(np.argmax(med))
        rows.append(
            {
                "target": target,
                "best_draft": drafts[k],
                "n_best": n[k],
                "speedup_best": float(med[k]),
                "n_low": float(np.quantile(picks, 0.025)),
                "n_high": float(np.quantile(picks, 0.975)),
            }
        )
    return pd.DataFrame(rows)


def scale_costs(runs: pd.DataFrame, prediction: pd.DataFrame) -> pd.DataFrame:
    """Per target: ``M``, tokens per parameter, ``M / N*`` at the predicted and the empirical
    ``N*``, and what it would cost on this machine (its measured training FLOP/s on the target)
    to train the target to 20 tokens per parameter, and to train a target of ``M = 100 N*``
    (at the predicted and at the empirical ``N*``) on the common budget and to 20 tokens per
    parameter; training FLOPs
    ``6 N D`` (Kaplan et al. 2020), hours at the measured rate."""
    r = runs.set_index("run")
    rows = []
    for _, p in prediction.iterrows():
        t = r.loc[p["target"]]
        m, d, rate = float(t["params"]), float(t["tokens"]), float(t["flops_per_s"])
        m100 = 100.0 * float(p["n_star_predicted"])
        e100 = 100.0 * float(p["n_star_empirical"])
        rows.append(
            {
                "target": p["target"],
                "role": p["role"],
                "m": m,
                "tokens": d,
                "tokens_per_param": d / m,
                "m_over_n_star_predicted": m / float(p["n_star_predicted"]),
                "m_over_n_star_empirical": m / float(p["n_star_empirical"]),
                "train_hours": float(t["train_s"]) / 3600,
                "hours_to_20_tokens_per_param": 6 * m * 20 * m / rate / 3600,
                "m_for_ratio_100": m100,
                "hours_for_ratio_100_common_budget": 6 * m100 * d / rate / 3600,
                "hours_for_ratio_100_at_20_tokens": 6 * m100 * 20 * m100 / rate / 3600,
                "m_for_ratio_100_empirical": e100,
                "hours_for_ratio_100_empirical_common_budget": 6 * e100 * d / rate / 3600,
                "hours_for_ratio_100_empirical_at_20_tokens": 6 * e100 * 20 * e100 / rate / 3600,
            }
        )
    return pd.DataFrame(rows)
