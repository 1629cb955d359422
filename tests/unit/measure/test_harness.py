"""The speculative-sampling harness (sdsl.measure.harness) on small GPT-2 models built offline, saved to a
temporary folder and loaded through the real path (AutoModelForCausalLM.from_pretrained).

Checks: greedy speculative decoding reproduces the target's greedy output token for token (ours
and transformers' generate); with sampling, the output distribution is the target's (chi-square
against the exact marginals); an identical draft gives alpha = 1; alpha from accepted counts
agrees with E[sum min(p, q)] over the same positions (Leviathan et al., Corollary 3.6); pairs with
different vocabularies are refused."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from chisq import chisquare  # noqa: E402

from sdsl.measure import harness as H  # noqa: E402
from sdsl.measure import local as L  # noqa: E402
from sdsl.measure import sampling as S  # noqa: E402
from sdsl.paths import DATA  # noqa: E402

torch.set_num_threads(1)  # tiny models: one thread is fastest and immune to oversubscription

PROMPTS = L.read_prompts(DATA / "prompts.txt")


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pair")
    draft, target = L.build_local_pair(
        folder, texts=PROMPTS, seed=3, target_layers=2, target_width=32, train_steps=60, draft_train_steps=15, lr=5e-3
    )
    return draft, target


@pytest.fixture(scope="module")
def loaded(pair):
    draft, target = pair
    return L.load_model(draft), L.load_model(target), L.load_tokenizer(target)


def test_loading_path_is_the_real_one(pair, loaded):
    from transformers import GPT2LMHeadModel

    dm, tm, tok = loaded
    assert isinstance(tm, GPT2LMHeadModel) and not tm.training
    assert tm.config.n_layer == 2 and dm.config.n_layer == 1
    assert (pair[1] / "config.json").exists() and (pair[1] / "tokenizer.json").exists()
    assert tok.decode(tok("A dog runs.")["input_ids"]) == "A dog runs."


@pytest.mark.parametrize("gamma", [1, 3, 8])
def test_greedy_speculative_equals_target_greedy(loaded, gamma):
    dm, tm, tok = loaded
    for prompt in PROMPTS[:3]:
        ids = tok(prompt)["input_ids"]
        plain = S.autoregressive_generate(tm, ids, max_new_tokens=20)
        spec = S.speculative_generate(tm, dm, ids, gamma=gamma, max_new_tokens=20)
        assert spec.tokens == plain.tokens
        assert len(spec.tokens) == 20
        assert sum(spec.accepted) + len(spec.accepted) + 1 == 20  # accepted + corrections + first
        assert all(0 <= a <= d for a, d in zip(spec.accepted, spec.drafted))


def test_greedy_matches_transformers_generate(loaded):
    dm, tm, tok = loaded
    ids = tok(PROMPTS[4])["input_ids"]
    ref = tm.generate(
        torch.tensor([ids]),
        attention_mask=torch.ones(1, len(ids), dtype=torch.long),
        max_new_tokens=16,
        do_sample=False,
        pad_token_id=tok.eos_token_id,
    )
    spec = S.speculative_generate(tm, dm, ids, gamma=4, max_new_tokens=16)
    assert spec.tokens == ref[0, len(ids) :].tolist()


def _exact_marginals(model, prompt_ids, vocab, temperature):
    """Exact distributions of new tokens 2 and 3 under plain sampling from ``model``."""
    with torch.inference_mode():
        p1 = torch.softmax(model(input_ids=torch.tensor([prompt_ids])).logits[0, -1].double() / temperature, -1)
        seq2 = torch.tensor([prompt_ids + [a] for a in range(vocab)])
        p2_given = torch.softmax(model(input_ids=seq2).logits[:, -1].double() / temperature, -1)  # [t1, t2]
        seq3 = torch.tensor([prompt_ids + [a, b] for a in range(vocab) for b in range(vocab)])
        p3_given = torch.softmax(model(input_ids=seq3).logits[:, -1].double() / temperature, -1)
    joint12 = p1[:, None] * p2_given
    m2 = joint12.sum(0)
    m3 = (joint12.reshape(-1, 1) * p3_given).sum(0)
    return m2.numpy(), m3.numpy()


def test_sampling_distribution_is_the_targets(tmp_path):
    """Untrained models with peaked random distributions on a 7-token vocabulary: the draft's
    distribution is far from the target's, yet speculative samples follow the target exactly."""
    texts = ["abcde"]
    draft, target = L.build_local_pair(
        tmp_path,
        texts=texts,
        seed=11,
        target_layers=1,
        target_width=16,
        draft_width=16,
        n_head=2,
        train_steps=0,
        draft_train_steps=0,
        initializer_range=0.2,
    )
    dm, tm = L.load_model(draft), L.load_model(target)
    # the draft was initialised as a truncated copy: make it a genuinely different model
    with torch.no_grad():
        g = torch.Generator().manual_seed(5)
        for prm in dm.parameters():
            prm.add_(torch.randn(prm.shape, generator=g) * 0.3)
    tok = L.load_tokenizer(target)
    vocab = len(tok)
    prompt = tok("ab")["input_ids"]
    temperature = 1.0
    n = 500
    counts2 = np.zeros(vocab)
    counts3 = np.zeros(vocab)
    accepted = []
    for i in range(n):
        gen = torch.Generator().manual_seed(1000 + i)
        r = S.speculative_generate(tm, dm, prompt, gamma=2, max_new_tokens=4, temperature=temperature, generator=gen)
        counts2[r.tokens[1]] += 1
        counts3[r.tokens[2]] += 1
        accepted += r.accepted
    p2, p3 = _exact_marginals(tm, prompt, vocab, temperature)
    q2, _ = _exact_marginals(dm, prompt, vocab, temperature)
    assert chisquare(counts2, p2).pvalue > 1e-3
    assert chisquare(counts3, p3).pvalue > 1e-3
    # power: the draft's own marginal is rejected against these samples, and rejections happened
    assert chisquare(counts2, q2).pvalue < 1e-6
    assert 0 < np.mean(np.asarray(accepted) > 0) < 1


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_identical_draft_gives_alpha_one(pair, temperature):
    _, target = pair
    m = H.measure_acceptance(
        target, target, PROMPTS[:3], gammas=[3], temperature=temperature, max_new_tokens=16, seed=1, progress=False
    )
    it = m.iterations[m.iterations["drafted"] > 0]
    assert (it["accepted"] == it["drafted"]).all()
    summary = H.summarize_measurement(m, np.random.default_rng(0), n_resamples=200)
    assert summary.loc[0, "alpha"] == 1.0
    assert summary.loc[0, "alpha_min_pq"] == pytest.approx(1.0, abs=1e-6)


def test_alpha_agrees_with_expected_min_pq(pair):
    draft, target = pair
    m = H.measure_acceptance(
        draft, target, PROMPTS[:12], gammas=[3], temperature=1.0, max_new_tokens=40, seed=2, progress=False
    )
    s = H.summarize_measurement(m, np.random.default_rng(0), n_resamples=500).iloc[0]
    assert s["evaluated"] > 300
    assert 0.05 < s["alpha"] < 0.98  # a non-trivial pair
    # Corollary 3.6: E[accepted] = E[sum min(p, q)] position by position
    assert s["ci_low"] <= s["alpha_min_pq"] <= s["ci_high"]
    assert s["boot_ci_low"] <= s["alpha_min_pq"] <= s["boot_ci_high"]


def test_measurement_tables_and_acceptance_row(pair):
    draft, target = pair
    m = H.measure_acceptance(
        draft, target, PROMPTS[:4], gammas=[2, 4], temperature=1.0, max_new_tokens=12, seed=0, progress=False
    )
    assert list(m.iterations.columns) == H.ITERATION_COLUMNS
    assert list(m.requests.columns) == H.REQUEST_COLUMNS
    assert len(m.requests) == 8 and (m.requests["new_tokens"] == 12).all()
    per = m.iterations.groupby(["gamma", "prompt_id"])["tokens"].sum() + 1
    assert (per == 12).all()  # every token is the first, an accepted draft or a correction/bonus
    assert (m.requests["ttft_s"] > 0).all() and (m.requests["ttot_s"] >= m.requests["ttft_s"]).all()
    summary = H.summarize_measurement(m, np.random.default_rng(0), n_resamples=200)
    assert summary["gamma"].tolist() == [2, 4]
    from sdsl.measure.estimators import alpha_from_accepted

    est = alpha_from_accepted(m.iterations["accepted"], m.iterations["drafted"])
    row = H.acceptance_row(
        target="local-target", draft="local-draft", draft_family="local", draft_ppl=12.0, target_ppl=10.0, estimate=est
    )
    assert row["alpha_hw95"] == pytest.approx(est.half_width)
    data = pytest.importorskip("sdsl.data")
    if hasattr(data, "validate"):
        import pandas as pd

        data.validate(pd.DataFrame([row]), "acceptance")


def test_different_vocabularies_are_refused(tmp_path, pair):
    draft, target = L.build_local_pair(
        tmp_path,
        texts=PROMPTS[:5],
        seed=1,
        target_layers=1,
        target_width=16,
        n_head=2,
        train_steps=0,
        draft_train_steps=0,
        draft_tokenizer_texts=["xyz 0123456789"],
    )
    with pytest.raises(ValueError, match="vocabularies differ"):
        H.measure_acceptance(draft, target, PROMPTS[:1], gammas=[2], max_new_tokens=4, progress=False)
    with pytest.raises(ValueError, match="vocabularies differ"):
        S.speculative_generate(L.load_model(target), L.load_model(draft), [2, 3], gamma=2, max_new_tokens=4)


def test_invalid_arguments(loaded):
    dm, tm, _ = loaded
    with pytest.raises(ValueError, match="gamma"):
        S.speculative_generate(tm, dm, [2, 3], gamma=0, max_new_tokens=4)
    with pytest.raises(ValueError, match="max_new_tokens"):
        S.speculative_generate(tm, dm, [2, 3], gamma=2, max_new_tokens=0)
    with pytest.raises(ValueError, match="temperature"):
        S.speculative_generate(tm, dm, [2, 3], gamma=2, max_new_tokens=4, temperature=-1)
    with pytest.raises(ValueError, match="input_ids"):
        S.speculative_generate(tm, dm, [], gamma=2, max_new_tokens=4)
    with pytest.raises(ValueError, match="prompts"):
        H.measure_acceptance(dm, tm, [], progress=False)


def test_prompts_file_and_provenance():
    import hashlib

    import yaml

    meta = yaml.safe_load((DATA / "prompts.yml").read_text(encoding="utf-8"))
    assert meta["sha256"] == hashlib.sha256((DATA / "prompts.txt").read_bytes()).hexdigest(), (
        "prompts.txt changed: update prompts.yml"
    )
    assert len(PROMPTS) == meta["count"] == 50
    assert "HellaSwag" in meta["description"]
    assert len(set(PROMPTS)) == len(PROMPTS)
