"""The whole experiment end to end at the smoke scale (3 tiny models on the committed Genesis
slice): corpus, tokenizer, training, alpha for every pair at both temperatures (greedy by the
replay, checked against the harness), wall clock, raw results with provenance; then a resume that
has nothing left to do."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from sdsl.experiment.config import get_scale
from sdsl.experiment.results import load_results, provenance
from sdsl.experiment.runner import run

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    # the corpus first, on its own (how a folder is prepared for a machine without the corpus's
    # packages), then the rest as a resumed run
    corpus = run(get_scale("smoke"), out, workers=2, progress=False, command="pytest smoke", corpus_only=True)
    assert corpus == out / "corpus" and (corpus / "tokenizer.json").is_file()
    assert sorted(p.name for p in (out / "done").iterdir()) == ["corpus.json"]
    assert not (out / "results").exists() and not (out / "models").exists()
    folder = run(get_scale("smoke"), out, resume=True, workers=2, progress=False, command="pytest smoke resumed")
    return out, folder


def test_every_table_is_written_and_valid(smoke):
    _, folder = smoke
    res = load_results(folder)
    s = get_scale("smoke")
    assert len(res["runs"]) == len(s.runs()) == 4
    assert set(res["runs"].loc[res["runs"]["role"] == "target", "run"]) == {t.run_id for t in s.targets()}
    assert len(res["alpha_pairs"]) == len(s.pairs()) * len(s.measurement.temperatures)
    assert len(res["wallclock"]) == len(s.pairs())
    assert (res["runs"]["val_loss"] < np.log(s.vocab_size)).all()  # every model learned something
    assert ((res["wallclock"]["speedup"] > 0) & (res["wallclock"]["gamma"] >= 1)).all()
    prov = provenance(folder)
    for key in ("command", "commit", "machine", "duration_s", "seed", "corpus", "scale"):
        assert key in prov
    assert prov["command"] == "pytest smoke" and prov["scale"]["name"] == "smoke"
    assert prov["resumed_with"] == ["pytest smoke resumed"]
    assert prov["machine"]["device"] == "cpu" and prov["machine"]["accelerator"] == "none"
    assert json.loads((folder / "tokenizer.json").read_text())["model"]["type"] == "BPE"


def test_alpha_from_the_counts_is_a_rate_and_close_to_min_pq(smoke):
    from sdsl.experiment.analysis import alpha_summary

    _, folder = smoke
    summ = alpha_summary(load_results(folder), np.random.default_rng(0), n_resamples=200)
    t1 = summ["temperature"] == 1.0
    assert ((summ.loc[t1, "alpha"] > 0) & (summ.loc[t1, "alpha"] < 1)).all()
    # greedy on barely trained models: both argmaxes may agree everywhere (alpha = 1) or almost nowhere
    assert ((summ["alpha"] >= 0) & (summ["alpha"] <= 1)).all()
    # Corollary 3.6: the on-policy mean of sum min(p, q) estimates the same alpha; with a few
    # hundred evaluated positions the two differ by a few standard errors at most
    gap = (summ["alpha"] - summ["min_pq_on_policy"]).abs()
    assert (gap < 4 * summ["alpha_hw95"] + 0.05).all()


def test_resume_has_nothing_left_to_do(smoke):
    out, folder = smoke
    before = load_results(folder)["timings"]
    run(get_scale("smoke"), out, resume=True, workers=2, progress=False)
    after = load_results(folder)["timings"]
    assert len(after) == len(before) and set(after["session"]) == {0, 1}
    assert set(after.loc[after["session"] == 0, "task"]) == {"corpus"}  # made by the corpus-only session
    state = json.loads((out / "state.json").read_text())
    assert len(state["sessions"]) == 3


def test_greedy_alpha_is_replayed_and_the_replay_reproduces_the_harness(smoke):
    _, folder = smoke
    res = load_results(folder)
    pairs = res["alpha_pairs"]
    greedy, t1 = pairs[pairs["temperature"] == 0.0], pairs[pairs["temperature"] == 1.0]
    assert set(greedy["method"]) == {"greedy replay"} and set(t1["method"]) == {"speculative sampling"}
    m = get_scale("smoke").measurement
    assert (greedy["harness_prompts"] == np.minimum(m.greedy_check_prompts, greedy["n_prompts"])).all()
    assert (greedy["harness_identical"] == greedy["harness_prompts"]).all()
    assert t1["harness_identical"].isna().all() and (t1["harness_prompts"] == t1["n_prompts"]).all()
    # the targets' continuations were computed once each, by their own tasks
    kinds = res["timings"]["kind"].value_counts()
    assert kinds["greedy"] == len(get_scale("smoke").targets())
