"""The runner's command line and its refusal to mix runs; the scales meet the design of the test
(a split fixed in advance, a fine grid of test drafts, a held-out target)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sdsl.experiment import __main__ as cli
from sdsl.experiment.config import SCALES, DraftGrid, ModelShape, RunSpec, get_scale
from sdsl.experiment.runner import run


@pytest.mark.parametrize("name", ["full", "gpu"])
def test_full_and_gpu_scales_fix_the_split_in_advance(name):
    s = get_scale(name)
    assert len(s.target_runs()) + len(s.held_out_runs()) >= 3 and s.held_out_runs()
    roles = {r.run_id: s.role(r) for r in s.runs()}
    assert set(roles.values()) == {"calibration", "target", "held_out_target"}
    # the loss law's data term needs budgets: at least two drafts at three budgets
    budgets: dict[str, set[int]] = {}
    for r in s.draft_runs():
        budgets.setdefault(r.shape.name, set()).add(r.tokens)
    assert sum(len(b) >= 3 for b in budgets.values()) >= 2
    # the acceptance law is fitted on fit targets only: a held-out target is in no calibration pair
    held = {r.run_id for r in s.held_out_runs()}
    assert not {t.run_id for _, t in s.calibration_pairs()} & held
    assert s.vocab_size <= 65535


@pytest.mark.parametrize("n_star", [7e3, 1e4, 2e4, 3e4, 5e4, 1.2e5])
def test_the_test_grid_meets_the_design_around_any_prediction(n_star):
    """At least 3 sizes within 0.5-2x, neighbours at most 1.35x apart, from at most a third to at
    least three times the prediction, at least 6 test drafts, 2 seeds for the nearest. (Below
    N* of about 7 k the 1-layer shapes of widths 2 and 3, 1.5x apart, would be the only ones
    left: there the grid could not be finer.)"""
    s = get_scale("full")
    tests = s.test_runs([n_star])
    n = np.array(sorted({s.params(r.shape) for r in tests}), dtype=float)
    assert len(tests) >= 6 and all(s.role(r) == "test" for r in tests)
    assert ((n >= 0.5 * n_star) & (n <= 2 * n_star)).sum() >= 3
    assert np.exp(np.diff(np.log(n))).max() <= 1.35
    assert n.min() <= n_star / 3 and n.max() >= 3 * n_star
    twice = [r for r in tests if r.replicate == 2]
    assert len(twice) == s.test_grid.seeds_near and all(RunSpec(r.shape, r.tokens, 1) in tests for r in twice)
    # no test draft is a calibration run (other replicates, other seeds)
    assert not {r.run_id for r in tests} & {r.run_id for r in s.runs()}


def test_the_grid_covers_every_target_prediction_and_stops_at_the_smallest_shape():
    g = DraftGrid(step=1.25, span=3.0, min_width=1, max_width=256)
    shapes = g.sizes([2e4, 4e4], 2048)
    n = [sh.params(2048) for sh in shapes]
    assert min(n) <= 2e4 / 3 and max(n) >= 3 * 4e4
    low = g.sizes([3e3], 2048)  # below the smallest 1-layer shape's span: the grid starts at width 1
    assert low[0] == ModelShape(1, 1, 1)
    with pytest.raises(ValueError, match="n_stars must be positive numbers"):
        g.sizes([float("nan")], 2048)
    with pytest.raises(ValueError, match="step must be in"):
        DraftGrid(step=1.5)


def test_replicates_get_their_own_seeds():
    from sdsl.experiment.pairs import seed_for

    a, b = RunSpec(ModelShape(12, 1, 1), 2_000_000, 1), RunSpec(ModelShape(12, 1, 1), 2_000_000, 2)
    assert a.run_id == "w12l1-d2000k-r1" and b.run_id == "w12l1-d2000k-r2"
    assert seed_for(1, "init", a.run_id) != seed_for(1, "init", b.run_id)


def test_a_corpus_repeated_more_than_max_epochs_is_refused(tmp_path):
    from dataclasses import replace

    from sdsl.experiment.runner import Experiment

    smoke = get_scale("smoke")
    Experiment(replace(smoke, max_epochs=1.0), tmp_path / "ok").corpus_task(lambda _f: None)
    train = json.loads((tmp_path / "ok" / "corpus" / "sources.json").read_text())["splits"]["train"]["tokens"]
    epochs = smoke.common_tokens / train
    with pytest.raises(ValueError, match=rf"is {epochs:.2f} epochs of the training split \({train:,} tokens\), "):
        Experiment(replace(smoke, max_epochs=0.5 * epochs), tmp_path / "bad").corpus_task(lambda _f: None)
    assert not (tmp_path / "bad" / "corpus" / "tokenizer.json").exists()  # refused before it is written


def test_parameter_count_matches_the_built_model():
    pytest.importorskip("transformers")
    from sdsl.experiment.training import build_model, param_counts

    for shape in SCALES["full"].shapes[:3]:
        counts = param_counts(build_model(shape, 2048, 256, seed=0))
        assert counts.n == shape.params(2048)
        assert counts.non_embedding == shape.non_embedding_params()


def test_bad_arguments_exit_2_with_one_line(capsys):
    assert cli.main(["run", "--scale", "huge"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "invalid choice: 'huge'" in err[0]
    assert cli.main(["run", "--workers", "0"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert cli.main(["run", "--scale", "gpu"]) == 2  # the gpu scale on the CPU would take days
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("python -m sdsl.experiment: error: --scale gpu trains")
    assert "FLOPs, days on a CPU" in err[0]


def test_a_scale_that_measures_greedy_or_mixes_the_split_is_refused():
    from dataclasses import replace

    smoke = get_scale("smoke")
    with pytest.raises(ValueError, match="temperatures > 0"):
        replace(smoke, measurement=replace(smoke.measurement, temperatures=(1.0, 0.0)))
    with pytest.raises(ValueError, match="every calibration draft must be smaller than every target"):
        replace(smoke, drafts=smoke.drafts + (ModelShape(64, 2, 2),))
    with pytest.raises(ValueError, match="at least one fit target and one held-out target"):
        replace(smoke, held_out_targets=())


def test_an_existing_run_is_not_overwritten_and_other_settings_do_not_resume(tmp_path, capsys):
    s = get_scale("smoke")
    (tmp_path / "state.json").write_text(json.dumps({"scale": "smoke", "digest": "0" * 16, "sessions": []}))
    assert cli.main(["run", "--scale", "smoke", "--out", str(tmp_path), "--no-progress"]) == 2
    assert "pass --resume" in capsys.readouterr().err
    with pytest.raises(ValueError, match="holds a run of other settings"):
        run(s, tmp_path, resume=True, progress=False)


def test_every_target_gets_second_seeds_nearest_its_own_prediction():
    """Three predictions far apart: each gets its ``seeds_near`` nearest shapes twice, not only the
    shapes nearest their geometric mean."""
    s = get_scale("full")
    stars = [8e3, 3e4, 1.1e5]
    shapes = s.test_grid.sizes(stars, s.vocab_size)
    twice = s.test_grid.nearest(shapes, stars, s.vocab_size)
    assert len(twice) == len(set(twice)) == 3 * s.test_grid.seeds_near
    ln = np.log([s.params(sh) for sh in shapes])
    for n_star in stars:
        order = np.argsort(np.abs(ln - np.log(n_star)), kind="stable")
        assert {shapes[i] for i in order[: s.test_grid.seeds_near]} <= set(twice)
    with pytest.raises(ValueError, match="n_stars must be positive numbers"):
        s.test_grid.nearest(shapes, [0.0], s.vocab_size)


def test_the_full_scale_extrapolates_and_its_targets_span_four_times():
    """The third design: the targets span at least 4x in M (a constant M/k cannot sit near every
    optimum by accident), the predictions lie at least three times above every calibration draft
    (checked where the second run's calibration puts them, and again by the runner on its own
    prediction, before it is written), and the grid around them is fine (neighbours at most 1.35x
    apart) from a third of the smallest to three times the largest."""
    from sdsl.experiment.budget import expected_n_stars
    from sdsl.experiment.results import RESULTS

    s = get_scale("full")
    assert s.target_span() >= 4 and s.min_target_span == 4
    assert len(s.held_out_targets) >= 1
    stars = list(expected_n_stars(s, RESULTS).values())
    largest = max(s.params(d) for d in s.drafts)
    assert min(stars) / largest >= 3 == s.min_extrapolation
    assert s.check_extrapolation(stars) >= 3
    with pytest.raises(ValueError, match="the design asks for at least 3"):
        s.check_extrapolation([2.9 * largest, 5e4])
    shapes = sorted({r.shape for r in s.test_runs(stars)}, key=s.params)
    n = np.array([s.params(x) for x in shapes], dtype=float)
    # at most 1.35x apart, except between consecutive integer widths (width 3 to 4: 1.36x, no shape between)
    wide = np.diff([x.width for x in shapes]) > 1
    assert (np.exp(np.diff(np.log(n)))[wide] <= 1.35).all()
    assert n.min() <= min(stars) / 3 and n.max() >= 3 * max(stars)
    # M/200 and M/100 lie on the grid for these targets, so that their losses are measured, not bounded
    for t in s.targets + s.held_out_targets:
        m = s.params(t)
        assert n.min() <= m / 200 and m / 100 <= n.max()


def test_a_scale_whose_targets_span_too_little_is_refused():
    from dataclasses import replace

    s = get_scale("full")
    with pytest.raises(ValueError, match=r"the targets span 1\.\d+x in M; the scale asks for at least 4"):
        replace(s, targets=(ModelShape(208, 4, 4), ModelShape(192, 4, 4)), held_out_targets=(ModelShape(200, 4, 4),))


def test_stop_after_names_a_phase(tmp_path):
    with pytest.raises(ValueError, match="stop_after must be one of"):
        run(get_scale("smoke"), tmp_path / "x", stop_after="nothing", progress=False)
    assert not (tmp_path / "x").exists()  # refused before anything is written


def test_the_gpu_scale_spans_ten_times_in_m_at_twenty_tokens_per_parameter():
    """The GPU scale follows the third design: targets spanning at least 10x in M, one held out,
    every model (calibration and test) on at least 20 tokens per parameter, a grid of test drafts
    at most 1.35x apart wherever the predictions land between the calibration drafts' threefold and
    the smallest target's fiftieth, and the runner's demand that the prediction reach three times
    beyond the calibration drafts."""
    from sdsl.experiment.budget import budget_table

    s = get_scale("gpu")
    assert s.target_span() >= 10 and s.min_target_span == 10 and s.min_extrapolation == 3
    assert s.held_out_targets and s.needs_accelerator
    table = budget_table(s)
    assert (table["tokens_per_param"] >= 20).all(), table.loc[table["tokens_per_param"] < 20, "run"].tolist()
    largest_draft = max(s.params(d) for d in s.drafts)
    m_min = min(s.params(t) for t in s.targets + s.held_out_targets)
    for stars in ([3 * largest_draft, 1e4, 3e4], [m_min / 50, 5e4, 1.2e5]):
        tests = s.test_runs(stars)
        n = np.array(sorted({s.params(r.shape) for r in tests}), dtype=float)
        assert np.exp(np.diff(np.log(n))).max() <= 1.35
        assert n.min() <= min(stars) / 3 and n.max() >= 3 * max(stars)
        # a test draft has the common budget too: at least 20 tokens per parameter
        assert s.common_tokens / n.max() >= 20
