"""The whole experiment end to end at the smoke scale (tiny models on the committed Genesis
slice), in worker processes of the standard library with Ray hidden (the runner must not need it):
corpus, calibration runs, the prediction written before any test
draft, the test grid around it, alpha, the interleaved wall clock, raw results with provenance;
the prediction against its baselines; then a resume that has nothing left to do."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from sdsl.experiment.collect import TEST_PHASES
from sdsl.experiment.config import PHASES, ModelShape, RunSpec, get_scale
from sdsl.experiment.results import load_results, provenance
from sdsl.experiment.runner import run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    import sys

    out = tmp_path_factory.mktemp("smoke")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "ray", None)  # an import of ray fails: the runner must not need it
        # the corpus first, on its own (how a folder is prepared for a machine without the corpus's
        # packages), then the rest as a resumed run
        corpus = run(get_scale("smoke"), out, workers=2, progress=False, command="pytest smoke", corpus_only=True)
        assert corpus == out / "corpus" and (corpus / "tokenizer.json").is_file()
        assert sorted(p.name for p in (out / "done").iterdir()) == ["corpus.json"]
        assert not (out / "results").exists() and not (out / "models").exists()
        folder = run(get_scale("smoke"), out, resume=True, workers=2, progress=False, command="pytest smoke resumed")
    return out, folder


def test_every_table_is_written_and_valid(smoke):
    out, folder = smoke
    res = load_results(folder)
    s = get_scale("smoke")
    tests = s.test_runs(json.loads((out / "prediction" / "prediction.json").read_text())["grid_n_stars"])
    ext = json.loads((out / "prediction" / "grid_extension.json").read_text())
    tests += [RunSpec(ModelShape(*sh), s.common_tokens, 1) for sh in ext["shapes"]]
    # the grid is extended only beyond an end where some target's measured optimum lies
    assert bool(ext["shapes"]) == any(v != "interior" for v in ext["ends"].values())
    # second seeds near every target's measured optimum, for shapes that had one seed
    rep = json.loads((out / "prediction" / "replicates.json").read_text())
    assert set(rep["optima"]) == {t.run_id for t in s.target_runs() + s.held_out_runs()}
    added = [RunSpec(ModelShape(*sh), s.common_tokens, 2) for sh in rep["shapes"]]
    assert not set(added) & set(tests)
    shapes = sorted({r.shape for r in tests}, key=s.params)
    near = s.test_grid.nearest(shapes, [o["n_star"] for o in rep["optima"].values()], s.vocab_size)
    assert {r.shape for r in added} == set(near) - {r.shape for r in tests if r.replicate == 2}
    tests += added
    runs = res["runs"]
    assert len(runs) == len(s.runs()) + len(tests)
    assert set(runs["role"]) == {"calibration", "target", "held_out_target", "test"}
    assert len(res["alpha_pairs"]) == len(s.calibration_pairs()) + len(s.test_pairs(tests))
    assert len(res["wallclock"]) == len(s.test_pairs(tests))
    assert (res["wallclock_rounds"].groupby(["draft", "target"]).size() == s.measurement.timing_rounds).all()
    assert (runs["val_loss"] < np.log(s.vocab_size)).all()  # every model learned something
    w = res["wallclock"]
    assert ((w["speedup_low"] <= w["speedup"]) & (w["speedup"] <= w["speedup_high"]) & (w["gamma"] >= 1)).all()
    # replicates are other seeds: their losses differ
    rep = runs[runs["role"] == "test"].groupby("shape")["val_loss"]
    assert (rep.nunique()[rep.size() > 1] == 2).all()
    pred = res["prediction"]
    assert set(pred["role"]) == {"target", "held_out_target"} and len(pred) == 3
    assert (pred["predicted_low"] <= pred["predicted_high"]).all()
    assert (pred["empirical_low"] <= pred["empirical_high"]).all()
    assert (pred["lost_low"] <= pred["lost_high"]).all()


def test_the_prediction_was_written_before_any_test_task_and_its_sha256_is_the_file(smoke):
    _, folder = smoke
    prov = provenance(folder)
    p = prov["prediction"]
    assert hashlib.sha256((folder / "prediction_committed.csv").read_bytes()).hexdigest() == p["sha256"]
    timings = load_results(folder)["timings"]
    test = timings[timings["phase"].isin(TEST_PHASES)]
    assert len(test) and (test["start_utc"] >= p["written_utc"]).all() and p["written_before_every_test_task"]
    cal = timings[timings["phase"].isin(["calibration training", "calibration alpha"])]
    assert (cal["end_utc"] <= p["written_utc"]).all()
    # every phase ran (the extension phases have no task when no optimum lies at an end, the
    # replicate phases none when the drafts nearest the measured optima have two seeds already)
    optional = {"extension training", "extension alpha", "replicate training", "replicate alpha"}
    assert set(timings["phase"]) >= set(PHASES) - optional
    assert set(prov["cpu_minutes_by_phase"]) == set(timings["phase"])
    assert prov["executor"][-1]["kind"] == "processes" and prov["executor"][-1]["workers"] == 2
    assert prov["machine"]["device"] == "cpu"
    assert prov["command"] == "pytest smoke" and prov["resumed_with"] == ["pytest smoke resumed"]


def test_resume_has_nothing_left_to_do(smoke):
    out, folder = smoke
    before = load_results(folder)["timings"]
    sha = provenance(folder)["prediction"]["sha256"]
    run(get_scale("smoke"), out, resume=True, workers=2, progress=False)
    after = load_results(folder)["timings"]
    assert len(after) == len(before) and set(after["session"]) == {0, 1}
    assert set(after.loc[after["session"] == 0, "task"]) == {"corpus"}  # made by the corpus-only session
    assert provenance(folder)["prediction"]["sha256"] == sha  # the committed prediction is not redone
    state = json.loads((out / "state.json").read_text())
    assert len(state["sessions"]) == 3


def test_the_prediction_is_judged_against_baselines_written_with_it(smoke):
    from sdsl.experiment.baselines import BASELINES, RULES, judge

    out, folder = smoke
    res = load_results(folder)
    p = provenance(folder)["prediction"]
    # the rules' sizes were written with the prediction, before any test task, and kept byte for byte
    assert hashlib.sha256((folder / "baselines_committed.csv").read_bytes()).hexdigest() == p["baselines_sha256"]
    committed = res["baselines_committed"]
    for name in ("baselines", "baselines_non_embedding"):
        b = res[name]
        assert set(b["rule"]) == set(RULES) and len(b) == len(RULES) * 3
        count = "with_embeddings" if name == "baselines" else "non_embedding"
        sizes = committed[committed["count"] == count].set_index(["target", "rule"])["n"]
        got = b[b["rule"] != "sdsl"].set_index(["target", "rule"])["n"].reindex(sizes.index)
        assert np.allclose(got, sizes, rtol=1e-6)
        pred = res["prediction" if name == "baselines" else "prediction_non_embedding"].set_index("target")
        s = b[b["rule"] == "sdsl"].set_index("target")
        assert np.allclose(s["lost"], pred.loc[s.index, "lost_at_predicted"], rtol=1e-8)
        assert list(judge(pred.reset_index(), b)["rule"]) == list(BASELINES)
    checks = p["design_checks"]["with_embeddings"]
    assert checks["m_span"] > 1 and checks["extrapolation"] > 0


def test_a_cluster_address_runs_the_tasks_on_ray(tmp_path):
    """Ray stays for clusters: with an address (``local`` starts a cluster on this machine) every
    task is a Ray task; the corpus phase alone shows it."""
    pytest.importorskip("ray")
    run(get_scale("smoke"), tmp_path, address="local", progress=False, command="pytest ray", corpus_only=True)
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["sessions"][-1]["executor"]["kind"] == "ray"
    assert json.loads((tmp_path / "done" / "corpus.json").read_text())["task"] == "corpus"
