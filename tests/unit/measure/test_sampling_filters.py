"""Top-k / top-p warping (sdsl.measure.sampling) and the cache checks (sdsl.measure.sampling) in the
harness: the warping against brute force; speculative sampling stays lossless under top-k and
top-p (the chi-square machinery of tests/test_harness.py against the exact warped marginals);
stateful models and caches that cannot be cropped are refused with one line."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from chisq import chisquare  # noqa: E402  (the shared chi-square machinery)

from sdsl.measure import local as L  # noqa: E402
from sdsl.measure import sampling as S  # noqa: E402
from sdsl.measure.sampling import (  # noqa: E402
    check_croppable_cache,  # noqa: E402
    check_filters,
    warped_probs,
)

torch.set_num_threads(1)


def test_top_k_and_top_p_against_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(50):
        logits = torch.tensor(rng.normal(0, 2, 12))
        t, k, p = float(rng.uniform(0.5, 1.5)), int(rng.integers(1, 12)), float(rng.uniform(0.05, 0.99))
        base = torch.softmax(logits.double() / t, -1).numpy()
        kept_k = np.argsort(-base)[:k]
        got = warped_probs(logits, t, top_k=k).numpy()
        assert set(np.flatnonzero(got > 0)) == set(kept_k.tolist())
        assert got[kept_k] == pytest.approx(base[kept_k] / base[kept_k].sum(), rel=1e-12)
        order = np.argsort(-base)
        n_keep = int(np.searchsorted(np.cumsum(base[order]), p - 1e-12) + 1)  # smallest set reaching p
        got = warped_probs(logits, t, top_p=p).numpy()
        assert set(np.flatnonzero(got > 0)) == set(order[:n_keep].tolist())
    two = warped_probs(torch.tensor([[3.0, 1.0, 0.0], [0.0, 0.0, 5.0]]), 1.0, top_k=1)
    assert two.tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]  # row-wise on verification logits


@pytest.mark.parametrize(
    "top_k, top_p, message",
    [
        (-1, 1.0, "top_k must be"),
        (1.5, 1.0, "top_k must be"),
        (0, 0.0, "top_p must lie in"),
        (0, 1.2, "top_p must lie in"),
    ],
)
def test_invalid_filters(top_k, top_p, message):
    with pytest.raises(ValueError, match=message):
        check_filters(top_k, top_p)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The untrained 7-token pair of test_harness.test_sampling_distribution_is_the_targets."""
    folder = tmp_path_factory.mktemp("tiny")
    draft, target = L.build_local_pair(
        folder,
        texts=["abcde"],
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
    with torch.no_grad():
        g = torch.Generator().manual_seed(5)
        for prm in dm.parameters():
            prm.add_(torch.randn(prm.shape, generator=g) * 0.3)
    return dm, tm, L.load_tokenizer(target)


def _warped_marginals(model, prompt_ids, vocab, temperature, top_k, top_p):
    """Exact distributions of new tokens 2 and 3 under sampling with the filters."""
    w = lambda x: warped_probs(x, temperature, top_k, top_p)  # noqa: E731
    with torch.inference_mode():
        p1 = w(model(input_ids=torch.tensor([prompt_ids])).logits[0, -1])
        p2 = w(model(input_ids=torch.tensor([prompt_ids + [a] for a in range(vocab)])).logits[:, -1])
        seq3 = torch.tensor([prompt_ids + [a, b] for a in range(vocab) for b in range(vocab)])
        p3 = w(model(input_ids=seq3).logits[:, -1])
    joint12 = p1[:, None] * p2
    return joint12.sum(0).numpy(), (joint12.reshape(-1, 1) * p3).sum(0).numpy()


@pytest.mark.parametrize("top_k, top_p", [(3, 1.0), (0, 0.8)])
def test_speculative_sampling_stays_lossless_under_the_filters(tiny, top_k, top_p):
    dm, tm, tok = tiny
    vocab = len(tok)
    prompt = tok("ab")["input_ids"]
    n = 500
    c2, c3 = np.zeros(vocab), np.zeros(vocab)
    accepted = []
    for i in range(n):
        gen = torch.Generator().manual_seed(2000 + i)
        r = S.speculative_generate(
            tm, dm, prompt, gamma=2, max_new_tokens=4, temperature=1.0, generator=gen, top_k=top_k, top_p=top_p
        )
        c2[r.tokens[1]] += 1
        c3[r.tokens[2]] += 1
        accepted += r.accepted
    p2, p3 = _warped_marginals(tm, prompt, vocab, 1.0, top_k, top_p)
    assert chisquare(c2, p2).pvalue > 1e-3 and chisquare(c3, p3).pvalue > 1e-3
    # power: the filters change the target's distribution, and the samples follow the filtered one
    u2, _ = _warped_marginals(tm, prompt, vocab, 1.0, 0, 1.0)
    q2, _ = _warped_marginals(dm, prompt, vocab, 1.0, top_k, top_p)
    assert chisquare(c2, u2).pvalue < 1e-6 and chisquare(c2, q2).pvalue < 1e-6
    assert 0 < np.mean(np.asarray(accepted) > 0) < 1
    # the plain-decoding baseline samples the same filtered distribution
    plain = np.zeros(vocab)
    for i in range(n):
        r = S.autoregressive_generate(
            tm,
            prompt,
            max_new_tokens=2,
            temperature=1.0,
            top_k=top_k,
            top_p=top_p,
            generator=torch.Generator().manual_seed(9000 + i),
        )
        plain[r.tokens[1]] += 1
    assert chisquare(plain, p2).pvalue > 1e-3


def test_greedy_ignores_the_filters(tiny):
    dm, tm, tok = tiny
    ids = tok("abc")["input_ids"]
    a = S.speculative_generate(tm, dm, ids, gamma=3, max_new_tokens=8, top_k=2, top_p=0.5)
    b = S.autoregressive_generate(tm, ids, max_new_tokens=8)
    assert a.tokens == b.tokens


def test_stateful_models_and_uncroppable_caches_are_refused(tiny, monkeypatch):
    from transformers import DynamicCache, MambaConfig, MambaForCausalLM

    dm, tm, tok = tiny
    mamba = MambaForCausalLM(
        MambaConfig(
            vocab_size=tm.config.vocab_size,
            hidden_size=16,
            num_hidden_layers=1,
            state_size=4,
            intermediate_size=32,
            conv_kernel=2,
        )
    ).eval()
    with pytest.raises(ValueError, match="target model MambaForCausalLM keeps a recurrent state"):
        S.speculative_generate(mamba, dm, [2, 3], gamma=2, max_new_tokens=4)
    # transformers 4.56 has no is_croppable (every cache of its crops); 5 reports it per cache
    monkeypatch.setattr(DynamicCache, "is_croppable", property(lambda self: False), raising=False)
    with pytest.raises(ValueError, match="target model GPT2LMHeadModel: its cache \\(DynamicCache.*cannot be cropped"):
        S.speculative_generate(tm, dm, [2, 3], gamma=2, max_new_tokens=4)


def test_check_croppable_cache_names_the_layers():
    class Layer:
        is_croppable = False

    class Cache:
        is_croppable = False
        layers = [Layer()]

    with pytest.raises(ValueError, match="draft model: its cache \\(Cache, layers Layer\\) cannot be cropped"):
        check_croppable_cache(Cache(), "draft")
    check_croppable_cache(object(), "draft")  # no is_croppable: nothing to check
