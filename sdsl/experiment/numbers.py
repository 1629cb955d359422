"""The laptop-scale experiment in numbers: the values the chapter's prose cites about the
measurement of alpha, the acceptance laws, the prediction of ``N*`` and the wall clock (glue names
without the chapter prefix), from the raw results and their provenance
(:mod:`sdsl.experiment.results`) and the tables of :mod:`sdsl.experiment.analysis`.

:func:`sdsl.chapters.laptop_scale.summary` merges them with the numbers of the chapter's own tables
(the family, the loss law). Plain values for :func:`sdsl.book.glue.glue_summary`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sdsl.experiment.pairs import counts_to_iterations
from sdsl.experiment.predict import small_half
from sdsl.measure.estimators import alpha_from_accepted
from sdsl.model.laws import PAPER_EQ5

__all__ = ["PAPER_PLANE", "finite_or_na", "summary_alpha", "summary_laws", "summary_prediction", "summary_wallclock"]

#: The paper's Table 3 plane, for the chapter's prose.
PAPER_PLANE = PAPER_EQ5


def finite_or_na(value: float) -> float | str:
    """A finite float, or ``"n/a"`` (a rerun without bootstrap draws has no interval to cite)."""
    return float(value) if np.isfinite(value) else "n/a"


def _targets(runs: pd.DataFrame) -> list[str]:
    """The target runs, largest first (``target_0`` is the largest)."""
    return list(runs.loc[runs["role"] == "target"].sort_values("params", ascending=False)["run"])


def summary_alpha(
    res: dict[str, pd.DataFrame], prov: dict, table: pd.DataFrame, alpha_resamples: int
) -> dict[str, object]:
    """The measurement (pairs, gamma, tokens, the half-width target, resamples, prompts) and, from
    :func:`sdsl.experiment.analysis.alpha_summary` ``table``: the largest 95 % half width (the wider
    of likelihood and bootstrap) per temperature, the range of alpha at temperature 1 and the
    largest gap between alpha and ``E[sum min(p, q)]`` on the sampled positions there; for greedy
    decoding, the prompts used per pair, the harness check of the replay (prompts decoded by
    both, and how many came out identical), the range of teacher-forced argmax agreement minus
    alpha, and what an early stop would have reported (:func:`_greedy_early_stop`)."""
    mp = prov["scale"]["measurement"]
    hw = np.maximum(table["alpha_hw95"], table["boot_hw95"])
    t1 = table[table["temperature"] == 1.0]
    pairs = res["alpha_pairs"]
    greedy = pairs[pairs["temperature"] == 0.0]
    replayed = greedy[greedy["method"] == "greedy replay"]
    early = _greedy_early_stop(res["alpha_counts"], table, int(mp["min_prompts"]))
    g0 = table[table["temperature"] == 0.0]
    tf_gap = g0["min_pq_teacher_forced"] - g0["alpha"]
    return {
        "n_pairs": len(res["alpha_pairs"]) // len(mp["temperatures"]),
        "gamma": mp["gamma"],
        "new_tokens": mp["new_tokens"],
        "prompt_len": mp["prompt_tokens"],
        "hw_target": mp["half_width"],
        "hw_max_t1": float(hw[table["temperature"] == 1.0].max()),
        "hw_max_greedy": float(hw[table["temperature"] == 0.0].max()),
        "runner_resamples": mp["n_resamples"],
        "alpha_resamples": int(alpha_resamples),
        "max_prompts_greedy": mp["max_prompts_greedy"],
        "min_prompts_greedy": mp["min_prompts_greedy"],
        "greedy_early_n": int(mp["min_prompts"]),
        "greedy_early_pair": f"{early['draft']} → {early['target']}",
        "greedy_early_alpha": early["alpha_early"],
        "greedy_early_hw": early["hw_early"],
        "greedy_all_alpha": early["alpha_all"],
        "alpha_min_greedy": float(table.loc[table["temperature"] == 0.0, "alpha"].min()),
        "alpha_max_greedy": float(table.loc[table["temperature"] == 0.0, "alpha"].max()),
        "tf_gap_abs_max_t1": float((t1["min_pq_teacher_forced"] - t1["alpha"]).abs().max()),
        "greedy_tf_gap_min": float(tf_gap.min()),
        "greedy_tf_gap_max": float(tf_gap.max()),
        "greedy_prompts_min": int(greedy["n_prompts"].min()),
        "greedy_prompts_max": int(greedy["n_prompts"].max()),
        "greedy_reached": int((greedy["reached_target"] == "yes").sum()),
        "greedy_pairs": len(greedy),
        "greedy_check_prompts": mp["greedy_check_prompts"],
        "greedy_checked": int(replayed["harness_prompts"].sum()),
        "greedy_identical": int(replayed["harness_identical"].sum()),
        "prompts_min": int(table["n_prompts"].min()),
        "prompts_max": int(table["n_prompts"].max()),
        "alpha_min_t1": float(t1["alpha"].min()),
        "alpha_max_t1": float(t1["alpha"].max()),
        "gap_on_policy_t1": float((t1["min_pq_on_policy"] - t1["alpha"]).abs().max()),
    }


def _greedy_early_stop(counts: pd.DataFrame, table: pd.DataFrame, n_early: int) -> pd.Series:
    """The greedy pair whose alpha over its first ``n_early`` prompts differs most from its alpha
    over every prompt (``table``'s, :func:`sdsl.experiment.analysis.alpha_summary`): ``draft``,
    ``target``, ``alpha_early`` with its likelihood half width ``hw_early``, and ``alpha_all``
    (what a stopping rule allowed to stop at ``n_early`` prompts could have reported)."""
    head = counts[(counts["temperature"] == 0.0) & (counts["prompt_id"] < n_early) & (counts["drafted"] > 0)]
    rows = []
    for (d, t), g in head.groupby(["draft", "target"]):
        it = counts_to_iterations(g)
        first = alpha_from_accepted(it["accepted"], it["drafted"])
        rows.append({"draft": d, "target": t, "alpha_early": first.alpha, "hw_early": first.half_width})
    every = table.loc[table["temperature"] == 0.0, ["draft", "target", "alpha"]].rename(columns={"alpha": "alpha_all"})
    both = pd.DataFrame(rows).merge(every, on=["draft", "target"], validate="one_to_one")
    return both.loc[(both["alpha_early"] - both["alpha_all"]).abs().idxmax()]


def summary_laws(frame: pd.DataFrame, plane, laws: pd.DataFrame, temperature: float) -> dict[str, object]:
    """The laws' fit: this family's plane ``R^2``, the RMS error of the paper's Table 3 plane on this
    family's alpha, and the leave-one-draft-out ranking ``laws`` (best law, its RMSE, the plane's
    and Scylla's ``loglin_n``)."""
    paper = PAPER_PLANE.A * frame["x"] + PAPER_PLANE.B * frame["y"] + PAPER_PLANE.C
    t = laws.set_index("law")
    best = str(laws.loc[laws["rank"] == 1, "law"].iloc[0])
    return {
        "temperature": float(temperature),
        "plane_r2": float(plane.r2),
        "paper_plane_rmse": float(np.sqrt(np.mean((paper - frame["alpha"]) ** 2))),
        "loo_best": best,
        "loo_best_rmse": float(t.loc[best, "rmse"]),
        "loo_plane_rmse": float(t.loc["plane", "rmse"]),
        "loo_loglin_n_rmse": float(t.loc["loglin_n", "rmse"]),
    }


def summary_prediction(
    runs: pd.DataFrame, preds: pd.DataFrame, alpha_pred: pd.DataFrame, paper: pd.DataFrame
) -> dict[str, object]:
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
        out.update(
            {
                f"target_{i}": str(t),
                f"pred_{i}": finite_or_na(r["n_star_predicted"]),
                f"best_{i}": str(r["best_draft"]),
                f"n_best_{i}": float(r["n_best"]),
                f"ratio_best_{i}": finite_or_na(r["ratio_to_best"]),
                f"ratio_smooth_{i}": finite_or_na(r["ratio_to_smooth"]),
                f"nearest_{i}": str(r["nearest_draft"]),
                f"lost_pct_{i}": finite_or_na(100 * r["throughput_lost"]),
            }
        )
    ok = preds[preds["status"] == "interior"]
    h = alpha_pred[alpha_pred["held_out"]]
    tp = paper.set_index(["target", "recipe"])
    ours = tp.loc[(_targets(runs)[0], "Table 3 + this family's loss law")]
    out.update(
        {
            "n_variants": len(preds),
            "ratio_smooth_min": finite_or_na(ok["ratio_to_smooth"].min()),
            "ratio_smooth_max": finite_or_na(ok["ratio_to_smooth"].max()),
            "lost_pct_max": finite_or_na(100 * ok["throughput_lost"].max()),
            "held_rmse": float(np.sqrt(np.mean((h["predicted"] - h["alpha"]) ** 2))),
            "paper_y_besiroglu": float(
                tp.loc[(_targets(runs)[0], "Table 3 + Besiroglu et al. constants"), "target_ppl_predicted"]
            ),
            "paper_nstar_ours": finite_or_na(ours["n_star"] if np.isfinite(ours["n_star"]) else ours["n_at_max"]),
        }
    )
    return out


def summary_wallclock(wall: pd.DataFrame, runs: pd.DataFrame, prov: dict) -> dict[str, object]:
    """The timing (prompts, rounds) and, from :func:`sdsl.experiment.analysis.wallclock_summary`:
    the ranges of the cost ratio ``c``, of ``N/M`` and of the measured speedup, the median measured
    over predicted speedup, and per target the wall-clock-best draft (and the FLOP-best of the
    largest)."""
    mp = prov["scale"]["measurement"]
    out: dict[str, object] = {
        "timing_prompts": mp["timing_prompts"],
        "timing_repeats": mp["timing_repeats"],
        "c_min": wall["c"].min(),
        "c_max": wall["c"].max(),
        "nm_min": wall["n_over_m"].min(),
        "nm_max": wall["n_over_m"].max(),
        "speedup_min": wall["speedup"].min(),
        "speedup_max": wall["speedup"].max(),
        "mp_ratio_median": wall["measured_over_predicted"].median(),
    }
    for i, t in enumerate(_targets(runs)):
        w = wall[wall["target"] == t]
        out[f"wall_best_{i}"] = str(w.loc[w["wallclock_best"], "draft"].iloc[0])
        out[f"flop_best_{i}"] = str(w.loc[w["flop_best"], "draft"].iloc[0])
    return out
