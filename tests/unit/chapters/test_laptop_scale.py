"""Chapter laptop_scale: its parameter check and the tables it builds from the committed
raw results of the laptop-scale experiment, and the summary its prose glues."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from sdsl.book.glue import plain
from sdsl.chapters import laptop_scale as ch
from sdsl.experiment.results import RESULTS, load_results, provenance
from sdsl.model.laws import BESIROGLU_2024, HOFFMANN_2022

DEFAULTS = dict(
    results_dir=None,
    temperature=1.0,
    seed=20260317,
    loss_resamples=100,
    alpha_resamples=2000,
    law_resamples=2000,
    artifacts_dir=None,
)


def test_the_notebook_defaults_pass():
    ch.check_parameters(**DEFAULTS)
    ch.check_parameters(**{**DEFAULTS, "results_dir": str(RESULTS), "temperature": 0.0})


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("temperature", 0.5, "temperature must be one of 1.0, 0.0"),
        ("loss_resamples", 5, "loss_resamples must be 0 (none) or an integer in [100, 10000]"),
        ("alpha_resamples", 2.5, "alpha_resamples must be an integer"),
        ("law_resamples", 0, "law_resamples must be an integer in [100, 10000]"),
        ("seed", -1, "seed must be an integer"),
        ("results_dir", "/no/such/folder", "results_dir must be an existing folder"),
    ],
)
def test_a_bad_value_is_refused_in_one_line_naming_it(name, value, message):
    with pytest.raises(ValueError) as e:
        ch.check_parameters(**{**DEFAULTS, name: value})
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_a_folder_without_results_and_an_unknown_name_are_refused(tmp_path):
    with pytest.raises(ValueError, match="has no runs.csv"):
        ch.check_parameters(**{**DEFAULTS, "results_dir": str(tmp_path)})
    with pytest.raises(ValueError, match="did you mean 'seed'"):
        ch.check_parameters(sed=1)


@pytest.fixture(scope="module")
def runs():
    return load_results(RESULTS)["runs"]


def test_table_runs_flags_the_runs_below_twenty_tokens_per_parameter(runs):
    t = ch.table_runs(runs)
    assert len(t) == len(runs)
    assert (t["under_trained"] == (t["tokens"] / t["params"] < 20)).all()
    assert t["params"].is_monotonic_increasing


def test_table_loss_law_sits_beside_the_published_constants(runs):
    from sdsl.experiment.analysis import fit_all_runs

    t = ch.table_loss_law(fit_all_runs(runs)).set_index("parameter")
    for p in ("E", "A", "B", "a", "b"):
        assert t.loc[p, "hoffmann2022"] == getattr(HOFFMANN_2022, p)
        assert t.loc[p, "besiroglu2024"] == getattr(BESIROGLU_2024, p)
    # without bootstrap draws there is no interval, and none is invented
    assert t["ci_lower"].isna().all() and np.isfinite(t["estimate"]).all()


# -- summary(): the numbers the prose glues, against the committed results ---------------------------

NOTEBOOK = Path(__file__).resolve().parents[3] / "notebooks" / "laptop_scale.md"


@pytest.fixture(scope="module")
def glued():
    """summary() at the committed results, the loss law without bootstrap refits and few resamples
    (the values tested below do not depend on the resamples, or are given a tolerance that covers
    them)."""
    from sdsl.experiment import analysis as an
    from sdsl.model import alpha_fits

    res, prov = load_results(RESULTS), provenance(RESULTS)
    runs, rng = res["runs"], np.random.default_rng(0)
    fit = an.fit_all_runs(runs)
    alpha = an.alpha_summary(res, rng, n_resamples=200)
    frame = an.pair_frame(runs, alpha, 1.0)
    _, laws = an.law_comparison(frame, rng, n_resamples=100)
    losses = {w: an.small_half_loss(runs, w) for w in (False, True)}
    preds = an.predictions(runs, frame, losses=losses)
    return ch.summary(
        res,
        prov,
        fit,
        alpha,
        frame,
        alpha_fits.fit_plane(frame),
        laws,
        preds,
        ch.predicted_alpha(frame, runs, "plane", losses[False]),
        an.paper_predictions(runs, frame, fit),
        an.wallclock_summary(res["wallclock"], runs, frame),
        temperature=1.0,
        loss_resamples=0,
        alpha_resamples=200,
    )


@pytest.fixture(scope="module")
def raw():
    """The committed raw tables read with pandas and yaml alone (not through the package)."""
    with open(RESULTS / "provenance.yml", encoding="utf-8") as fh:
        prov = yaml.safe_load(fh)
    return {name: pd.read_csv(RESULTS / f"{name}.csv") for name in ("runs", "alpha_pairs", "wallclock")} | {
        "prov": prov
    }


def test_every_glue_name_the_prose_cites_is_in_the_summary_and_gluable(glued):
    cited = set(re.findall(r"\{glue:text\}`laptop_scale_([A-Za-z0-9_]+?)(?::[^`]*)?`", NOTEBOOK.read_text()))
    assert len(cited) > 90
    assert cited <= set(glued), sorted(cited - set(glued))
    for name, value in glued.items():
        plain(name, value)  # no boolean, no NaN: glue_summary would refuse it


def test_the_family_numbers_match_the_raw_runs_and_provenance(glued, raw):
    runs, prov = raw["runs"], raw["prov"]
    assert glued["n_runs"] == len(runs) == 15 and glued["n_shapes"] == runs["shape"].nunique() == 9
    assert glued["n_min"] == runs["params"].min() and glued["n_max"] == runs["params"].max()
    assert glued["corpus_tokens_m"] == pytest.approx(sum(s["tokens"] for s in prov["corpus"]["splits"].values()) / 1e6)
    assert glued["corpus_tokens_m"] == pytest.approx(5.9748, abs=1e-4)
    assert glued["vocab"] == 2048 and glued["cpus"] == prov["machine"]["logical_cpus"]
    assert glued["n_under"] == int((runs["tokens"] / runs["params"] < 20).sum()) == 10
    sizes = runs.drop_duplicates("shape")["params"]
    assert glued["n_decades"] == pytest.approx(np.log10(sizes.max() / sizes.min()), rel=1e-12)
    assert glued["n_decades"] == pytest.approx(1.957, abs=1e-3) and glued["ne_decades"] == pytest.approx(
        3.144, abs=1e-3
    )
    budgets = sorted(runs["tokens"].unique())
    assert glued["n_budgets"] == len(budgets) == 3 and glued["d_common_m"] == pytest.approx(budgets[-1] / 1e6)
    assert glued["extra_budgets"] == "0.50176 M and 1.00147 M"
    assert glued["n_multi"] == 3  # the shapes trained on all three budgets
    assert glued["train_min"] == pytest.approx(runs["train_s"].sum() / 60)
    assert glued["duration_min"] == pytest.approx(prov["duration_s"] / 60)


def test_the_loss_law_numbers(glued):
    # the fit on all 15 runs (L-BFGS from Hoffmann's grid: stable to far better than 1e-3)
    assert glued["loss_a"] == pytest.approx(0.7197, abs=1e-3) and glued["loss_b"] == pytest.approx(0.5374, abs=1e-3)
    assert glued["loss_rmse_pct"] == pytest.approx(2.131, abs=0.01)
    assert (glued["hoffmann_a"], glued["hoffmann_b"]) == (0.34, 0.28)
    assert (glued["besiroglu_a"], glued["besiroglu_b"]) == (0.3478, 0.3658)
    # no bootstrap refits: no interval, said in words
    assert glued["loss_a_lo"] == glued["loss_b_hi"] == "n/a" and glued["loss_resamples"] == 0


def test_the_alpha_numbers_match_the_raw_pairs(glued, raw):
    pairs = raw["alpha_pairs"]
    assert glued["n_pairs"] == int((pairs["temperature"] == 1).sum()) == 27
    assert glued["prompts_min"] == pairs["n_prompts"].min() and glued["prompts_max"] == pairs["n_prompts"].max()
    # the truncated-geometric MLE does not depend on the resamples
    assert glued["alpha_min_t1"] == pytest.approx(0.37954, abs=1e-5)
    assert glued["alpha_max_t1"] == pytest.approx(0.73366, abs=1e-5)
    # the largest half width (likelihood or bootstrap): 0.0213 at temperature 1 with 2000 resamples;
    # the runner stopped each pair at about its 0.02 target
    assert glued["hw_max_t1"] == pytest.approx(0.0213, abs=0.002) and glued["hw_target"] == 0.02
    assert 0 < glued["gap_on_policy_t1"] < 0.02


def test_the_greedy_numbers_match_the_raw_pairs(glued, raw):
    pairs, m = raw["alpha_pairs"], raw["prov"]["scale"]["measurement"]
    greedy = pairs[pairs["temperature"] == 0]
    assert glued["greedy_pairs"] == len(greedy) == 27 and glued["greedy_reached"] == 27
    assert glued["greedy_prompts_min"] == glued["greedy_prompts_max"] == m["min_prompts_greedy"] == 1600
    # the harness check of the replay: 16 prompts per pair, every one identical
    assert glued["greedy_checked"] == 27 * m["greedy_check_prompts"] == glued["greedy_identical"] == 432
    # the largest greedy half width, 0.0153 with 200 resamples (0.0153 in the table's 2000): the
    # bootstrap over 1,600 prompts moves it by about 1e-3 between resample counts
    assert glued["hw_max_greedy"] == pytest.approx(0.0153, abs=0.002) and glued["hw_max_greedy"] <= 0.02
    # greedy alpha and the early stop: the MLE does not depend on the resamples
    assert glued["alpha_min_greedy"] == pytest.approx(0.18518, abs=1e-5)
    assert glued["alpha_max_greedy"] == pytest.approx(0.60604, abs=1e-5)
    assert glued["greedy_early_pair"] == "w8l1-d2000k → w128l3-d2000k" and glued["greedy_early_n"] == 16
    assert glued["greedy_early_alpha"] == pytest.approx(0.97764, abs=1e-5)
    assert glued["greedy_all_alpha"] == pytest.approx(0.40261, abs=1e-5)
    assert glued["greedy_early_hw"] < 0.02  # narrow, and wrong by far more than its width
    # teacher-forced agreement on held-out text minus on-policy greedy alpha: positive for every pair
    assert glued["greedy_tf_gap_min"] == pytest.approx(0.0590, abs=1e-3)
    assert glued["greedy_tf_gap_max"] == pytest.approx(0.2298, abs=1e-3)
    assert glued["tf_gap_abs_max_t1"] == pytest.approx(0.0457, abs=1e-3)


def test_the_law_numbers(glued):
    assert glued["plane_r2"] == pytest.approx(0.94224, abs=1e-4)
    assert glued["paper_plane_rmse"] == pytest.approx(0.5355, abs=1e-3)
    # leave-one-draft-out RMSEs are point values (the resamples only set their intervals)
    assert glued["loo_best"] == "log_x" and glued["loo_best_rmse"] == pytest.approx(0.012418, abs=1e-5)
    assert glued["loo_plane_rmse"] == pytest.approx(0.029839, abs=1e-5)
    assert glued["loo_loglin_n_rmse"] == pytest.approx(0.10408, abs=1e-4)


def test_the_smooth_curve_keeps_the_one_dip_of_the_measured_alpha(glued):
    """At the common budget alpha falls once from a draft to the next larger one (the MLE does not
    depend on the resamples): 6 + 7 steps over the two targets' drafts, one of them down."""
    assert (glued["alpha_steps"], glued["alpha_dips"]) == (13, 1)
    assert (
        glued["alpha_dip"]
        == "for the w128l3-d2000k target, w48l2-d2000k has α = 0.724 and the larger w64l2-d2000k α = 0.717"
    )


def test_alpha_dips_are_counted_per_target_at_the_common_budget_only():
    runs = pd.DataFrame({"role": ["target", "draft"], "tokens": [100.0, 50.0]})
    frame = pd.DataFrame(
        {
            "target": ["T"] * 4 + ["U"] * 3,
            "draft": ["a", "b", "c", "b"] + ["a", "b", "c"],
            "n": [1.0, 2.0, 3.0, 2.0, 1.0, 2.0, 3.0],
            "d": [100.0, 100.0, 100.0, 50.0, 100.0, 100.0, 100.0],
            "alpha": [0.5, 0.6, 0.7, 0.1, 0.5, 0.4, 0.45],
        }
    )
    s = ch.summary_alpha_dips(frame, runs)
    assert (s["alpha_steps"], s["alpha_dips"]) == (4, 1)  # the D = 50 row of T is not a step
    assert s["alpha_dip"] == "for the U target, a has α = 0.500 and the larger b α = 0.400"
    rising = frame.assign(alpha=[0.5, 0.6, 0.7, 0.1, 0.3, 0.4, 0.45])
    assert ch.summary_alpha_dips(rising, runs) == {"alpha_steps": 4, "alpha_dips": 0, "alpha_dip": "none"}


def test_the_prediction_numbers(glued, raw):
    runs = raw["runs"]
    assert glued["small_shapes"] == "w8l1, w16l1, w24l1, w32l1"
    assert glued["held_shapes"] == "w48l2, w64l2, w96l3, w128l3"
    assert (glued["target_0"], glued["target_1"]) == ("w160l4-d2000k", "w128l3-d2000k")
    assert glued["pred_0"] == pytest.approx(30576, rel=1e-3) and glued["pred_1"] == pytest.approx(25879, rel=1e-3)
    assert glued["best_0"] == glued["best_1"] == glued["nearest_0"] == "w16l1-d2000k"
    assert glued["n_best_0"] == runs.set_index("run").loc["w16l1-d2000k", "params"]
    for i in (0, 1):
        assert glued[f"ratio_best_{i}"] == pytest.approx(glued[f"pred_{i}"] / glued[f"n_best_{i}"])
        assert glued[f"lost_pct_{i}"] == 0.0  # the nearest trained draft is the best one
    assert glued["n_variants"] == 2 * 4 * 2  # targets x acceptance laws x loss-law fits
    assert glued["ratio_smooth_min"] == pytest.approx(0.206, abs=1e-3)
    assert glued["ratio_smooth_max"] == pytest.approx(1.029, abs=1e-3)
    assert glued["lost_pct_max"] == pytest.approx(8.50, abs=0.01)
    assert glued["held_rmse"] == pytest.approx(0.03477, abs=1e-4)
    # the largest target's perplexity by Besiroglu et al.'s law, exp(E + A/N^a + B/D^b)
    t = runs.set_index("run").loc["w160l4-d2000k"]
    b = BESIROGLU_2024
    assert glued["paper_y_besiroglu"] == pytest.approx(
        np.exp(b.E + b.A / t["params"] ** b.a + b.B / t["tokens"] ** b.b), rel=1e-9
    )
    assert glued["paper_nstar_ours"] == pytest.approx(35312, rel=1e-3)


def test_the_wallclock_numbers_match_the_raw_timings(glued, raw):
    wall, params = raw["wallclock"], raw["runs"].set_index("run")["params"]
    assert glued["c_min"] == wall["c"].min() and glued["c_max"] == wall["c"].max()
    assert glued["speedup_min"] == wall["speedup"].min() and glued["speedup_max"] == wall["speedup"].max()
    nm = params.loc[wall["draft"]].to_numpy() / params.loc[wall["target"]].to_numpy()
    assert glued["nm_min"] == pytest.approx(nm.min()) and glued["nm_max"] == pytest.approx(nm.max())
    assert glued["mp_ratio_median"] == pytest.approx(np.median(wall["speedup"] / wall["predicted_speedup"]))
    for i in (0, 1):
        w = wall[wall["target"] == glued[f"target_{i}"]]
        assert glued[f"wall_best_{i}"] == w.loc[w["speedup"].idxmax(), "draft"]
    assert glued["flop_best_0"] == "w16l1-d2000k"
    m = raw["prov"]["scale"]["measurement"]
    assert (glued["timing_prompts"], glued["timing_repeats"]) == (m["timing_prompts"], m["timing_repeats"])


def test_the_gpu_scale_numbers_are_the_defined_scale(glued):
    # by hand: w512l8 has 8 (12 * 512^2 + 13 * 512) + 2 * 512 = 25,220,096 non-embedding
    # parameters, plus the 4,096 x 512 token table; w64l1 has 12 * 64^2 + 13 * 64 + 2 * 64 plus 4,096 x 64
    assert glued["gpu_n_max_m"] == 27_317_248 / 1e6
    assert glued["gpu_n_min_m"] == (12 * 64**2 + 15 * 64 + 4096 * 64) / 1e6
    assert (glued["gpu_shapes"], glued["gpu_runs"], glued["gpu_pairs"]) == (9, 15, 27)
    assert glued["gpu_tokens_m"] == 20.0 and glued["gpu_max_epochs"] == 4.0 and glued["gpu_precision"] == "bf16"
    # training FLOPs: 6 N D per run dominates; the two targets alone are 6 * 20,004,864 * (27.3 M + 18.7 M)
    assert 6 * 20_004_864 * (27_317_248 + 18_735_808) / 1e15 < glued["gpu_train_pflop"] < 13
