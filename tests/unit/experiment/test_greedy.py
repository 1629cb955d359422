"""The exact greedy replay (sdsl.experiment.greedy): the iteration recursion against hand-worked
cases, and the batched replay against the harness's prompt-by-prompt greedy speculative decoding
on a small trained GPT-2 pair, token for token and iteration for iteration."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import dataclasses

import pytest

from sdsl.experiment.config import Measurement
from sdsl.experiment.greedy import greedy_iterations


def test_all_matches_accept_every_draft_and_end_with_a_plain_step():
    # 10 tokens at gamma 4: y0 from the prefill; 1 + 5 = 6; then g = min(4, 10 - 6 - 1) = 3 -> 10
    it = greedy_iterations([True] * 9, 4, 10)
    assert it["drafted"] == [4, 3] and it["accepted"] == [4, 3]
    assert it["evaluated"] == [4, 3] and it["beta_sum"] == [4.0, 3.0]
    # 11 tokens: 1 + 5 + 5 leaves none; 12 tokens leaves one, produced by a plain step (g = 0)
    assert greedy_iterations([True] * 10, 4, 11)["drafted"] == [4, 4]
    assert greedy_iterations([True] * 11, 4, 12)["drafted"] == [4, 4, 0]


def test_a_mismatch_ends_the_iteration_and_the_next_starts_after_the_correction():
    m = [True, False, True, True, True, True, False, False, True]  # m_1 .. m_9, 10 tokens
    it = greedy_iterations(m, 3, 10)
    # from 1 produced: m1 ok, m2 no -> k = 1, produce 2 (3 produced); m3, m4, m5 ok -> k = 3,
    # produce 4 (7); g = min(3, 10 - 7 - 1) = 2: m7 no -> k = 0 (8); g = 1: m8 no -> k = 0 (9);
    # g = 0: a plain step (10)
    assert it["drafted"] == [3, 3, 2, 1, 0]
    assert it["accepted"] == [1, 3, 0, 0, 0]
    assert it["evaluated"] == [2, 3, 1, 1, 0]


def test_no_match_at_all_drafts_gamma_each_time():
    it = greedy_iterations([False] * 7, 2, 8)
    assert it["accepted"] == [0] * len(it["drafted"])
    assert sum(a + 1 for a in it["accepted"]) + 1 == 8


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([True] * 5, 4, 7), "matches must hold new_tokens - 1 = 6 values"),
        (([True] * 5, 0, 6), "gamma must be >= 1"),
        (([], 4, 0), "new_tokens must be >= 1"),
    ],
)
def test_bad_arguments_are_named(args, message):
    with pytest.raises(ValueError, match=message):
        greedy_iterations(*args)


# ------------------------------------------------------------------ against the harness
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from sdsl.experiment import greedy as G  # noqa: E402
from sdsl.measure import local as L  # noqa: E402
from sdsl.measure import sampling as S  # noqa: E402
from sdsl.paths import DATA  # noqa: E402

PROMPTS = L.read_prompts(DATA / "prompts.txt")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("pair")
    draft, target = L.build_local_pair(
        folder, texts=PROMPTS, seed=3, target_layers=2, target_width=32, train_steps=60, draft_train_steps=15, lr=5e-3
    )
    tok = L.load_tokenizer(target)
    ids = [tok(p)["input_ids"] for p in PROMPTS]
    return L.load_model(draft), L.load_model(target), ids


def test_continuations_are_the_targets_greedy_output(loaded):
    _, tm, ids = loaded
    ys = G.greedy_continuations(tm, ids, 24, batch=3)
    for x, y in zip(ids, ys):
        assert y == S.autoregressive_generate(tm, x, max_new_tokens=24).tokens


@pytest.mark.parametrize("gamma", [1, 4, 7])
def test_the_replay_is_the_harness_iteration_for_iteration(loaded, gamma):
    dm, tm, ids = loaded
    ys = G.greedy_continuations(tm, ids, 40)
    replayed = G.replay_greedy(dm, ids, ys, gamma)
    accepted = 0
    for x, y, r in zip(ids, ys, replayed):
        rows, same, _ = G.replay_check(tm, dm, x, y, r, gamma)
        assert same, (x, rows, r)
        accepted += sum(rows["accepted"])
    # the pair is neither identical nor unrelated: some drafts are accepted, some rejected
    total = sum(sum(r["drafted"]) for r in replayed)
    assert 0 < accepted < total


def test_an_identical_draft_is_accepted_everywhere(loaded):
    _, tm, ids = loaded
    ys = G.greedy_continuations(tm, ids[:4], 20)
    for r in G.replay_greedy(tm, ids[:4], ys, 4):
        assert r["accepted"] == r["drafted"]


def test_measure_alpha_greedy_stops_at_the_half_width_and_counts_its_harness_check(loaded):
    dm, tm, ids = loaded
    prompts = (ids * 8)[:48]
    ys = G.greedy_continuations(tm, prompts, 24)
    m = Measurement(
        new_tokens=24, half_width=0.5, min_prompts_greedy=8, prompt_batch=4, max_prompts_greedy=48,
        greedy_check_prompts=6, greedy_batch=16, n_resamples=100,
    )  # fmt: skip
    res = G.measure_alpha_greedy(dm, tm, prompts, ys, measurement=m, seed=1)
    assert res.reached_target and res.half_width <= 0.5
    assert res.n_prompts == 8  # the first check, at min_prompts, already meets a loose target
    assert res.harness_prompts == res.harness_identical == 6
    assert set(res.counts["prompt_id"]) == set(range(8)) == set(res.prompts["prompt_id"])
    assert res.prompts["ttot_s"].notna().sum() == 6  # timed by the harness: the checked prompts only
    it = res.counts[res.counts["drafted"] > 0]
    mle = (it["accepted"] * it["iterations"]).sum() / (
        (it["accepted"] * it["iterations"]).sum() + (it.loc[it["accepted"] < it["drafted"], "iterations"]).sum()
    )
    assert res.alpha == pytest.approx(mle, rel=1e-12)  # the truncated-geometric MLE of the counts

    tight = dataclasses.replace(m, half_width=1e-4)
    res = G.measure_alpha_greedy(dm, tm, prompts, ys, measurement=tight, seed=1)
    assert not res.reached_target and res.n_prompts == 48  # every prompt used, target not met
    # no early stop: min_prompts_greedy = max_prompts_greedy uses every prompt even when the first
    # ones already meet the target
    every = dataclasses.replace(m, min_prompts_greedy=40, max_prompts_greedy=40)
    res = G.measure_alpha_greedy(dm, tm, prompts, ys, measurement=every, seed=1)
    assert res.reached_target and res.n_prompts == 40 and len(res.prompts) == 40
    with pytest.raises(ValueError, match="needs min_prompts_greedy = 60 prompts, got 48"):
        G.measure_alpha_greedy(dm, tm, prompts, ys, measurement=dataclasses.replace(m, min_prompts_greedy=60), seed=1)


def test_measure_alpha_greedy_refuses_continuations_of_another_length(loaded):
    dm, tm, ids = loaded
    ys = G.greedy_continuations(tm, ids, 10)
    m = Measurement(new_tokens=24, min_prompts_greedy=2, max_prompts_greedy=8)
    with pytest.raises(ValueError, match="continuations must hold new_tokens = 24 tokens each"):
        G.measure_alpha_greedy(dm, tm, ids, ys, measurement=m, seed=0)
