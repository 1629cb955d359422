"""Chapter laptop_scale: its parameter check, the tables it builds from the committed raw results
of the laptop-scale experiment, and the summary its prose glues (against the raw tables read
with pandas and yaml alone)."""

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
    seed=20260317,
    loss_resamples=100,
    alpha_resamples=1000,
    wallclock_resamples=1000,
    artifacts_dir=None,
)


def test_the_notebook_defaults_pass():
    ch.check_parameters(**DEFAULTS)
    ch.check_parameters(**{**DEFAULTS, "results_dir": str(RESULTS)})


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("loss_resamples", 5, "loss_resamples must be 0 (none) or an integer in [100, 10000]"),
        ("alpha_resamples", 2.5, "alpha_resamples must be an integer"),
        ("wallclock_resamples", 0, "wallclock_resamples must be an integer in [100, 10000]"),
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
def res():
    return load_results(RESULTS)


def test_table_runs_orders_the_roles_and_flags_the_under_trained_runs(res):
    t = ch.table_runs(res["runs"])
    assert len(t) == len(res["runs"])
    assert (t["under_trained"] == (t["tokens"] / t["params"] < 20)).all()
    assert list(dict.fromkeys(t["role"])) == ["target", "held_out_target", "calibration", "test"]


def test_the_calibration_loss_law_sees_no_test_draft_and_no_held_out_target(res):
    from sdsl.experiment.analysis import calibration_loss

    runs = res["runs"]
    fit = calibration_loss(runs)
    assert fit.n_runs == int(runs["role"].isin(["calibration", "target"]).sum())
    t = ch.table_loss_law(fit).set_index("parameter")
    for p in ("E", "A", "B", "a", "b"):
        assert t.loc[p, "hoffmann2022"] == getattr(HOFFMANN_2022, p)
        assert t.loc[p, "besiroglu2024"] == getattr(BESIROGLU_2024, p)
    assert t["ci_lower"].isna().all() and np.isfinite(t["estimate"]).all()  # no draws, no interval invented


def test_table_prediction_gives_the_verdict_of_the_criterion(res):
    t = ch.table_prediction(res["prediction"])
    inside = (t["n_star_empirical"] >= t["predicted_low"]) & (t["n_star_empirical"] <= t["predicted_high"])
    assert (t["inside"] == inside).all()
    assert (t["passed"] == (inside & (t["lost_at_predicted"] < 0.02))).all()


NOTEBOOK = Path(__file__).resolve().parents[3] / "notebooks" / "laptop_scale.md"


@pytest.fixture(scope="module")
def glued(res):
    from sdsl.experiment import analysis as an

    prov, runs, rng = provenance(RESULTS), res["runs"], np.random.default_rng(0)
    summary = an.alpha_summary(res, rng, n_resamples=100)
    costs = an.scale_costs(runs, res["prediction"])
    oos = an.out_of_sample_alpha(runs, summary)
    wall_opt = an.wallclock_optimum(res["wallclock_rounds"], runs, rng, n_resamples=100)
    fit = an.calibration_loss(runs, rng=rng, n_resamples=20)
    loss = ch.summary_loss_law(ch.table_loss_law(fit))
    earlier = {name: (load_results(f), provenance(f)) for name, f in ch.EARLIER_RUNS.items()}
    design = ch.table_runs_of_the_design(earlier | {"third": (res, prov)})
    runs_of = ch.summary_design_runs(design, ch.preregistered(), prov)
    return ch.summary(res, prov, costs, oos, wall_opt) | ch.summary_gpu_scale() | loss | runs_of


@pytest.fixture(scope="module")
def raw():
    """The committed raw tables read with pandas and yaml alone (not through the package)."""
    with open(RESULTS / "provenance.yml", encoding="utf-8") as fh:
        prov = yaml.safe_load(fh)
    names = ("runs", "prediction", "prediction_non_embedding", "wallclock")
    return {name: pd.read_csv(RESULTS / f"{name}.csv") for name in names} | {"prov": prov}


def test_every_glue_name_the_prose_cites_is_in_the_summary_and_gluable(glued):
    cited = set(re.findall(r"\{glue:text\}`laptop_scale_([A-Za-z0-9_]+?)(?::[^`]*)?`", NOTEBOOK.read_text()))
    assert len(cited) > 50
    assert cited <= set(glued), sorted(cited - set(glued))
    for name, value in glued.items():
        plain(name, value)  # no boolean, no NaN: glue_summary would refuse it


def test_the_result_numbers_are_the_committed_prediction(glued, raw):
    p = raw["prediction"].sort_values("params", ascending=False).reset_index(drop=True)
    runs = raw["runs"]
    # the floor of the range searched: a fifth of the smallest run the loss law is fitted on; a
    # lower end there is censored, and the prose says so with "≤"
    floor = 0.2 * runs.loc[runs["role"].isin(["calibration", "target"]), "params"].min()
    for i, row in p.iterrows():
        lo, hi = row["predicted_low"] / 1e3, row["predicted_high"] / 1e3
        low = ("≤ " if row["predicted_low"] <= floor * (1 + 1e-9) else "") + f"{lo:,.1f}"
        assert glued[f"t{i}_predicted"] == f"{row['n_star_predicted'] / 1e3:,.1f} k [{low}, {hi:,.1f}]"
        assert glued[f"t{i}_name"].startswith(row["target"].split("-d")[0])
    passed = (
        (p["n_star_empirical"] >= p["predicted_low"])
        & (p["n_star_empirical"] <= p["predicted_high"])
        & (p["lost_at_predicted"] < 0.02)
    )
    assert glued["passed"] == int(passed.sum())
    assert glued["verdict"] == ("passes" if passed.all() else "fails")
    ne = raw["prediction_non_embedding"]
    passed_ne = (
        (ne["n_star_empirical"] >= ne["predicted_low"])
        & (ne["n_star_empirical"] <= ne["predicted_high"])
        & (ne["lost_at_predicted"] < 0.02)
    )
    assert glued["verdict_ne"] == ("passes" if passed_ne.all() else "fails")
    assert glued["sha256"] == raw["prov"]["prediction"]["sha256"]
    assert glued["max_ratio"] == pytest.approx((p["params"] / p["n_star_predicted"]).max(), rel=1e-12)


def test_the_design_and_cost_numbers_match_the_raw_runs_and_provenance(glued, raw):
    runs, prov = raw["runs"], raw["prov"]
    tests = runs[runs["role"] == "test"]
    assert glued["n_test"] == len(tests) and glued["n_calibration"] == int((runs["role"] == "calibration").sum())
    assert glued["n_seeds2"] == int((tests["replicate"] == 2).sum())
    assert glued["duration_min"] == pytest.approx(prov["duration_s"] / 60, rel=1e-12)
    assert glued["cpu_min_total"] == pytest.approx(sum(prov["cpu_minutes_by_phase"].values()), rel=1e-12)
    w = raw["wallclock"]
    assert glued["wall_speedup_min"] == pytest.approx(w["speedup"].min(), rel=1e-9)
    assert glued["n_wall_above_1"] == int((w["speedup_low"] > 1).sum())


def test_undetermined_endpoints_are_named_in_words():
    t = pd.DataFrame(
        {
            "parameter": ["E", "A", "B", "a"],
            "ci_lower": [0.0067, 3.98, 19.1, 0.015],
            "ci_upper": [0.0074, 2052.8, 1.07e17, 0.70],
            "ci_lower_se": [0.0, 1.68, 1.38, 0.007],
            "ci_upper_se": [0.0019, 1.33e6, 1.98e17, 0.47],
        }
    )
    assert ch.undetermined_endpoints(t) == "the upper ends of A and B"
    t.loc[3, "ci_lower_se"] = 0.02
    assert ch.undetermined_endpoints(t) == "the lower end of a; the upper ends of A and B"
    assert ch.undetermined_endpoints(t.assign(ci_lower_se=0.0, ci_upper_se=0.0)) == "none"


@pytest.mark.parametrize(
    "run, name",
    [
        ("w160l4-d2000k", "w160l4"),
        ("w11l1-d2000k-r1", "w11l1, seed 1"),
        ("w11l1-d2000k-r2", "w11l1, seed 2"),
        ("w8l1-d500k", "w8l1, 0.5 M tokens"),
        ("w16l1-d1000k", "w16l1, 1 M tokens"),
        ("not-a-run", "not-a-run"),
    ],
)
def test_runs_are_named_by_shape_budget_and_seed(run, name):
    assert ch.model_name(run) == name


def test_every_run_name_is_read_and_tells_the_runs_apart(res):
    runs = res["runs"]
    names = runs["run"].map(ch.model_name)
    assert not names.str.contains("-d").any()
    assert names.nunique() == runs["run"].nunique()


def test_the_wallclock_optimum_draws_the_resamples_of_a_loop_over_resamples_and_drafts(res):
    """The medians are taken at once; the picks must be those of one loop over (resample, draft)
    drawing from the same generator: the same draws, so exactly the same N."""
    from sdsl.experiment import analysis as an

    runs, rounds = res["runs"], res["wallclock_rounds"]
    got = an.wallclock_optimum(rounds, runs, np.random.default_rng(7), n_resamples=200)
    rng, r = np.random.default_rng(7), runs.set_index("run")
    for target, g in rounds.groupby("target", sort=False):
        drafts = sorted(g["draft"].unique(), key=lambda d: r.loc[d, "params"])
        ratios = [(g.loc[g["draft"] == d, "target_s"] / g.loc[g["draft"] == d, "spec_s"]).to_numpy() for d in drafts]
        n = np.array([float(r.loc[d, "params"]) for d in drafts])
        picks = [n[int(np.argmax([np.median(rng.choice(x, x.size)) for x in ratios]))] for _ in range(200)]
        row = got[got["target"] == target].iloc[0]
        assert row["n_low"] == np.quantile(picks, 0.025) and row["n_high"] == np.quantile(picks, 0.975)
    with pytest.raises(ValueError, match="n_resamples must be an integer >= 1, got 0"):
        an.wallclock_optimum(rounds, runs, np.random.default_rng(7), n_resamples=0)


def test_out_of_sample_alpha_with_the_fitted_loss_law_is_the_refitted_one(res):
    from sdsl.experiment import analysis as an

    runs = res["runs"]
    summary = an.alpha_summary(res, np.random.default_rng(0), n_resamples=100)
    given = an.out_of_sample_alpha(runs, summary, loss=an.calibration_loss(runs))
    pd.testing.assert_frame_equal(given, an.out_of_sample_alpha(runs, summary))
    with pytest.raises(ValueError, match="loss must be the calibration loss law"):
        an.out_of_sample_alpha(runs, summary, loss="fit")


def test_the_grid_is_fine_from_the_width_where_consecutive_widths_come_within_max_ratio():
    """With the committed table of 512 entries widths 3 and 4 are 1.36x apart, 4 and 5 1.28x: fine
    from width 4 (2,300 parameters); with 2,048 entries widths 3 and 4 are 1.34x apart already."""
    scale = provenance(RESULTS)["scale"]
    assert ch._fine_from(scale) == {"fine_width": 4, "fine_k": 2.3}
    assert ch._fine_from({**scale, "vocab_size": 2048}) == {"fine_width": 3, "fine_k": 6.297}


def test_every_run_of_the_design_is_reported_with_its_miss_and_verdicts(glued):
    """The first run counts: its miss (measured over predicted N*) and its verdict, beside the
    second's and the third's, each recomputed here from the raw tables with pandas alone."""
    from sdsl.paths import DATA

    for run, folder, vocab in (
        ("first", DATA / "laptop_scale_first", 2048),
        ("second", DATA / "laptop_scale_second", 512),
        ("third", RESULTS, 512),
    ):
        p = pd.read_csv(folder / "prediction.csv")
        ratio = p["n_star_empirical"] / p["n_star_predicted"]
        passed = (
            (p["n_star_empirical"] >= p["predicted_low"])
            & (p["n_star_empirical"] <= p["predicted_high"])
            & (p["lost_at_predicted"] < 0.02)
        )
        assert glued[f"{run}_vocab"] == vocab
        assert glued[f"{run}_measured_over_predicted_min"] == pytest.approx(ratio.min(), rel=1e-12)
        assert glued[f"{run}_measured_over_predicted_max"] == pytest.approx(ratio.max(), rel=1e-12)
        assert glued[f"{run}_passed"] == int(passed.sum())
        m_over = p["params"] / p["n_star_predicted"]
        assert glued[f"{run}_m_over_n_star_min"] == pytest.approx(m_over.min(), rel=1e-12)
        b = pd.read_csv(folder / "baselines.csv")
        sdsl = b[b["rule"] == "sdsl"].set_index("target")["lost"]
        beaten = sum(
            2 * int((sdsl.reindex(g["target"]).to_numpy() < g["lost"].to_numpy()).sum()) > len(p)
            for _, g in b[b["rule"] != "sdsl"].groupby("rule")
        )
        assert glued[f"{run}_baselines_beaten"] == beaten
    # the first run missed by 6 to 8 times and failed every target; the second passed every one
    # by the 2 % criterion; the third, preregistered, missed by 2.4 to 3.5 times and failed every one
    assert glued["first_passed"] == 0 and glued["second_passed"] == 3 and glued["third_passed"] == 0
    assert glued["third_same_file"] == "the same file byte for byte"
    assert (
        round(glued["first_measured_over_predicted_min"]) == 6
        and round(glued["first_measured_over_predicted_max"]) == 8
    )
