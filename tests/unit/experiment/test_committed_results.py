"""The committed raw results of the full CPU run: valid tables, provenance, the design."""

from __future__ import annotations

import numpy as np
import pytest

from sdsl import data
from sdsl.experiment import results
from sdsl.experiment.pairs import counts_to_iterations
from sdsl.measure.estimators import alpha_from_accepted

pytestmark = pytest.mark.skipif(not results.RESULTS.is_dir(), reason="no committed results")


@pytest.fixture(scope="module")
def res():
    return results.load_results()


@pytest.mark.parametrize("name", results.TABLES)
def test_every_table_has_its_schema_and_sha256(name):
    path = results.RESULTS / f"{name}.csv"
    assert data.provenance(path)["sha256"] == data.sha256(path), f"update {name}.yml"


def test_provenance_names_command_commit_machine_duration_seeds():
    prov = results.provenance()
    assert prov["command"].startswith("python -m sdsl.experiment run")
    assert len(prov["commit"]) == 40
    assert prov["machine"]["cpu"] and prov["machine"]["logical_cpus"] >= 1
    assert prov["duration_s"] > 0 and len(prov["session_durations_s"]) == prov["sessions"]
    assert prov["scale"]["name"] == "full" and prov["seed"] == prov["scale"]["seed"]
    sources = {s["source"] for s in prov["corpus"]["sources"]}
    assert sources == {"kjv", "fortunes", "python-docs"}
    assert sum(v["tokens"] for v in prov["corpus"]["splits"].values()) >= 5_000_000


def test_family_spans_the_design(res):
    runs = res["runs"]
    assert runs["shape"].nunique() >= 8
    ne = runs.groupby("shape")["non_embedding_params"].first()
    assert np.log10(ne.max() / ne.min()) >= 1.5
    assert (runs.groupby("shape")["tokens"].nunique() >= 3).sum() >= 3


def test_every_alpha_has_a_half_width_of_at_most_0_02(res):
    """The likelihood interval of every pair at both temperatures is within 0.02, and the runner's
    stopping rule (also the cluster bootstrap) was met by every pair: at temperature 1 by the
    harness, greedy by the exact replay (greedy decoding is deterministic per prompt, so its
    interval needed hundreds of prompts)."""
    counts = res["alpha_counts"]
    for (d, t, temp), g in counts.groupby(["draft", "target", "temperature"]):
        it = counts_to_iterations(g)
        it = it[it["drafted"] > 0]
        assert alpha_from_accepted(it["accepted"], it["drafted"]).half_width <= 0.02, (d, t, temp)
    pairs = res["alpha_pairs"]
    assert set(pairs["temperature"]) == {0.0, 1.0}
    assert (pairs["reached_target"] == "yes").all() and (pairs["half_width"] <= 0.02).all()


def test_greedy_alpha_is_the_replay_and_it_reproduced_the_harness_on_every_checked_prompt(res):
    pairs = res["alpha_pairs"]
    greedy, t1 = pairs[pairs["temperature"] == 0.0], pairs[pairs["temperature"] == 1.0]
    m = results.provenance()["scale"]["measurement"]
    assert set(greedy["method"]) == {"greedy replay"} and set(t1["method"]) == {"speculative sampling"}
    assert (greedy["harness_prompts"] == m["greedy_check_prompts"]).all()
    assert (greedy["harness_identical"] == greedy["harness_prompts"]).all()
    # the per-prompt table: every prompt of every pair, harness times for the checked ones only
    prompts = res["alpha_prompts"]
    per = prompts.groupby(["draft", "target", "temperature"]).size()
    assert (per.to_numpy() == pairs.set_index(["draft", "target", "temperature"]).loc[per.index, "n_prompts"]).all()
    gp = prompts[prompts["temperature"] == 0.0]
    assert (gp["ttot_s"].notna() == (gp["prompt_id"] < m["greedy_check_prompts"])).all()
    assert prompts.loc[prompts["temperature"] == 1.0, "ttot_s"].notna().all()


def test_tokenizer_is_the_one_of_the_run():
    pytest.importorskip("tokenizers")
    from sdsl.experiment.tokenizer import load_tokenizer, sha256_text, tokenizer_json

    tok = load_tokenizer(results.RESULTS / "tokenizer.json")
    assert tok.get_vocab_size() == results.provenance()["scale"]["vocab_size"]
    text = (results.RESULTS / "tokenizer.json").read_text(encoding="utf-8")
    assert sha256_text(text) == results.provenance()["corpus"]["tokenizer_sha256"]
    assert tokenizer_json(tok) == text
