"""Speculative sampling and plain decoding of Hugging Face causal language models that share a
vocabulary, with per-iteration accepted counts: the decoding under the harness
(:mod:`sdsl.measure.harness`). Optional extra ``measure`` (torch, transformers): imported only
inside the functions, so ``import sdsl`` stays light.

Algorithm: speculative sampling (Leviathan, Kalman and Matias 2023, Algorithm 1; Chen et al. 2023),
batch size 1, with a ``transformers.DynamicCache`` for each model. One iteration with draft length
``gamma``:

1. the draft samples ``x_1..x_gamma`` autoregressively from ``q`` (one cached forward per token);
2. the target scores ``[last token, x_1..x_gamma]`` in one cached forward, giving ``p_1..p_{gamma+1}``;
3. ``x_i`` is accepted with probability ``min(1, p_i(x_i) / q_i(x_i))``, in order, until the first
   rejection; on a rejection at position ``n + 1`` the token is resampled from
   ``norm(max(0, p - q))``, and if all ``gamma`` are accepted a bonus token is sampled from
   ``p_{gamma+1}``; both caches are cropped back to the accepted prefix.

Greedy decoding (``temperature = 0``) is the limit of one-hot ``p`` and ``q``: ``x_i`` is accepted
iff it is the target's argmax, and the correction is the target's argmax, so the output is exactly
the target's greedy output. With sampling the output is distributed as the target's (Leviathan et
al., Theorem 3.5); with ``top_k`` / ``top_p`` both models' distributions are warped as servers
sample (:func:`warped_probs`) and the output follows the target's warped distribution. Per
evaluated position the harness also records
``beta = sum_x min(p(x), q(x))``, whose mean is alpha (Leviathan et al., Corollary 3.6): an
independent check of the estimate from accepted counts (:mod:`sdsl.measure.estimators`).

Exactness is guaranteed in float32. In bfloat16 (or float16) a token's logits can depend on how
many tokens the forward pass holds (kernels and reduction orders chosen by the matrix shapes,
typically on GPUs), so verifying ``gamma + 1`` tokens at once and decoding one token at a time can
round differently: near-ties flip and greedy outputs diverge after the first flip (one measurement on another machine:
568 of 960 greedy tokens agreeing in bfloat16; on the CPU build of torch pinned here the local
pairs agreed on all of them, ``benchmarks/bench_harness.py --dtype bfloat16`` counts it). Sampled
outputs still follow the target up to that rounding; load the models in float32
(``load_model(..., dtype=torch.float32)``) when exactness matters. Models whose cache
cannot be cropped after a rejection (recurrent or linear-attention layers) are refused
(:func:`check_croppable_model`, the check transformers' assisted generation makes); pairs with different tokenizers go through
:mod:`sdsl.measure.universal`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import torch
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "GenerationResult",
    "autoregressive_generate",
    "check_same_vocabulary",
    "model_device",
    "speculative_generate",
    "check_croppable_model",
    "check_croppable_cache",
    "check_filters",
    "warped_probs",
]


def _vocab_size(model) -> int:
    return int(model.get_output_embeddings().weight.shape[0])


def check_same_vocabulary(draft, target, draft_tokenizer=None, target_tokenizer=None) -> int:
    """Refuse pairs that do not share a vocabulary; returns the number of token ids to compare.

    Token-level speculative sampling compares ``p(x)`` and ``q(x)`` for the same token id, so the
    two models must index the same vocabulary: identical token-to-id maps when tokenizers are
    given, and equal output sizes -- except that with identical tokenizers, output layers padded to
    different sizes (Qwen2.5-0.5B scores 151,936 ids, Qwen2.5-72B 152,064) are compared on the
    tokenizer's ids only. Cross-family pairs (OPT drafts for Qwen targets and the reverse, as in
    the paper's Tables 1 and 2) fail here: they need token-level translation or text-level
    verification, a different algorithm with a different acceptance rate.
    """
    vd, vt = _vocab_size(draft), _vocab_size(target)
    if draft_tokenizer is not None and target_tokenizer is not None:
        a, b = draft_tokenizer.get_vocab(), target_tokenizer.get_vocab()
        if a != b:
            only_d = len(set(a) - set(b))
            only_t = len(set(b) - set(a))
            raise ValueError(
                "draft and target vocabularies differ (tokenizers: draft has "
                f"{len(a)} tokens, target {len(b)}; {only_d} only in the draft, {only_t} only in "
                "the target, or the same tokens with different ids): token-level speculative "
                "sampling needs a shared vocabulary"
            )
        n = max(b.values()) + 1 if b else 0
        if vd != vt and min(vd, vt) >= n:
            return n
    if vd != vt:
        raise ValueError(
            f"draft and target vocabularies differ: the draft scores {vd} tokens, the target "
            f"{vt}; token-level speculative sampling needs a shared vocabulary"
        )
    return vt


# --------------------------------------------------------------------------- decoding
def _probs(logits: torch.Tensor, temperature: float, top_k: int = 0, top_p: float = 1.0) -> torch.Tensor:
    """Next-token distributions (float64); one-hot argmax when ``temperature == 0``; top-k / top-p
    warping (:func:`sdsl.measure.sampling.warped_probs`) when either is on."""
    import torch

    logits = logits.double()
    if temperature == 0.0:
        out = torch.zeros_like(logits)
        out.scatter_(-1, logits.argmax(dim=-1, keepdim=True), 1.0)
        return out
    if top_k or top_p < 1.0:
        return warped_probs(logits, temperature, top_k, top_p)
    return torch.softmax(logits / temperature, dim=-1)


def _sample(probs: torch.Tensor, temperature: float, generator: torch.Generator) -> int:
    import torch

    if temperature == 0.0:
        return int(probs.argmax())
    return int(torch.multinomial(probs, 1, generator=generator))


def _crop_to(cache, length: int) -> None:
    extra = cache.get_seq_length() - length
    if extra > 0:
        cache.crop(-extra)


_CACHE_KWARG: dict[type, str] = {}


def _cache_kwarg(model) -> str:
    """``cache`` (transformers >= 5.2x) or ``past_key_values`` (older, and most architectures)."""
    cls = type(model)
    if cls not in _CACHE_KWARG:
        import inspect

        params = inspect.signature(model.forward).parameters
        _CACHE_KWARG[cls] = "cache" if "cache" in params else "past_key_values"
    return _CACHE_KWARG[cls]


def model_device(model) -> torch.device:
    """The device of ``model``'s parameters: inputs are made there, and everything computed from
    the logits (probabilities, sampling with a CPU ``torch.Generator``) is done on the CPU, so a
    model on a GPU gives the same decisions from the same logits."""
    return next(model.parameters()).device


def _forward(model, tokens: list[int], cache) -> torch.Tensor:
    import torch

    x = torch.tensor([tokens], device=model_device(model))
    out = model(input_ids=x, use_cache=True, **{_cache_kwarg(model): cache})
    return out.logits[0].cpu()  # a no-op on the CPU


def _check_decoding_args(max_new_tokens: int, temperature: float) -> tuple[int, float]:
    if int(max_new_tokens) < 1:
        raise ValueError(f"max_new_tokens must be >= 1, got {max_new_tokens!r}")
    t = float(temperature)
    if not np.isfinite(t) or t < 0:
        raise ValueError(f"temperature must be >= 0 (0: greedy), got {temperature!r}")
    return int(max_new_tokens), t


@dataclass
class GenerationResult:
    """One prompt's generation: the new tokens, per-iteration counts and timings (seconds)."""

    tokens: list[int]
    drafted: list[int] = field(default_factory=list)
    accepted: list[int] = field(default_factory=list)
    evaluated: list[int] = field(default_factory=list)
    beta_sum: list[float] = field(default_factory=list)
    ttft_s: float = float("nan")
    ttot_s: float = float("nan")
    prompt_tokens: int = 0

    @property
    def tpot_s(self) -> float:
        """Time per output token after the first: ``(TTOT - TTFT) / (new tokens - 1)``."""
        n = len(self.tokens)
        return (self.ttot_s - self.ttft_s) / (n - 1) if n > 1 else float("nan")


def autoregressive_generate(
    model,
    input_ids: Sequence[int],
    *,
    max_new_tokens: int,
    temperature: float = 0.0,
    generator=None,
    eos_token_id: int | None = None,
    top_k: int = 0,
    top_p: float = 1.0,
) -> GenerationResult:
    """Plain decoding with a KV cache, batch size 1 (the baseline; same sampling as the harness,
    ``top_k`` / ``top_p`` included)."""
    import torch
    from transformers import DynamicCache

    max_new_tokens, temperature = _check_decoding_args(max_new_tokens, temperature)
    top_k, top_p = check_filters(top_k, top_p)
    generator = generator if generator is not None else torch.Generator().manual_seed(0)
    seq = [int(t) for t in input_ids]
    if not seq:
        raise ValueError("input_ids is empty: a prompt of at least one token is needed")
    res = GenerationResult(tokens=[], prompt_tokens=len(seq))
    t0 = time.perf_counter()
    with torch.inference_mode():
        cache = DynamicCache()
        feed = seq
        while len(res.tokens) < max_new_tokens:
            logits = _forward(model, feed, cache)
            tok = _sample(_probs(logits[-1], temperature, top_k, top_p), temperature, generator)
            res.tokens.append(tok)
            if len(res.tokens) == 1:
                res.ttft_s = time.perf_counter() - t0
            if eos_token_id is not None and tok == eos_token_id:
                break
            feed = [tok]
    res.ttot_s = time.perf_counter() - t0
    return res


def speculative_generate(
    target,
    draft,
    input_ids: Sequence[int],
    *,
    gamma: int,
    max_new_tokens: int,
    temperature: float = 0.0,
    generator=None,
    eos_token_id: int | None = None,
    vocab_size: int | None = None,
    top_k: int = 0,
    top_p: float = 1.0,
) -> GenerationResult:
    """Speculative sampling (Leviathan et al. 2023, Algorithm 1), batch size 1, KV caches for both
    models (module docstring). ``temperature = 0`` is greedy. ``generator`` is a
    ``torch.Generator`` (seeded: reproducible). The first token comes from the target's prefill
    (both models prefill the prompt: TTFT); every later iteration drafts
    ``min(gamma, tokens still to produce - 1)`` tokens, so no token beyond ``max_new_tokens`` is
    generated; iterations that drafted 0 tokens are plain target steps and are recorded with
    ``drafted = 0``. Returns the new tokens, per-iteration ``drafted``, ``accepted`` (excluding the
    bonus/correction token), ``evaluated`` positions and ``beta_sum`` (``sum min(p, q)`` over the
    evaluated positions), and TTFT / TTOT. ``vocab_size``: compare only the first ids (from
    :func:`check_same_vocabulary` with tokenizers, for padded output layers); default: the
    models' output sizes, which must be equal. ``top_k`` / ``top_p`` warp both models' distributions
    (:func:`warped_probs`); the output then follows the target's warped distribution. Exact
    in float32 (module docstring: in bfloat16 verification can round differently from one-token
    decoding). A model whose cache cannot be cropped is refused (:func:`check_croppable_model`).
    """
    import torch
    from transformers import DynamicCache

    max_new_tokens, temperature = _check_decoding_args(max_new_tokens, temperature)
    top_k, top_p = check_filters(top_k, top_p)
    check_croppable_model(target, "target")
    check_croppable_model(draft, "draft")
    if int(gamma) < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma!r}")
    gamma = int(gamma)
    vocab = check_same_vocabulary(draft, target) if vocab_size is None else int(vocab_size)
    generator = generator if generator is not None else torch.Generator().manual_seed(0)
    seq = [int(t) for t in input_ids]
    if not seq:
        raise ValueError("input_ids is empty: a prompt of at least one token is needed")
    res = GenerationResult(tokens=[], prompt_tokens=len(seq))
    new = res.tokens
    t0 = time.perf_counter()
    with torch.inference_mode():
        tcache, dcache = DynamicCache(), DynamicCache()
        p0 = _probs(_forward(target, seq, tcache)[-1, :vocab], temperature, top_k, top_p)
        _forward(draft, seq, dcache)  # draft prefill, so TTFT covers both models
        check_croppable_cache(tcache, "target", target)
        check_croppable_cache(dcache, "draft", draft)
        first = _sample(p0, temperature, generator)
        new.append(first)
        seq.append(first)
        res.ttft_s = time.perf_counter() - t0
        t_len, d_len = len(seq) - 1, len(seq) - 1  # tokens held by each cache
        while len(new) < max_new_tokens and not (eos_token_id is not None and new[-1] == eos_token_id):
            g = min(gamma, max_new_tokens - len(new) - 1)
            drafts: list[int] = []
            qs = []
            feed = seq[d_len:]
            for _ in range(g):
                q = _probs(_forward(draft, feed, dcache)[-1, :vocab], temperature, top_k, top_p)
                x = _sample(q, temperature, generator)
                drafts.append(x)
                qs.append(q)
                feed = [x]
            d_len = len(seq) + max(g - 1, 0) if g else d_len
            p = _probs(_forward(target, seq[t_len:] + drafts, tcache)[-(g + 1) :, :vocab], temperature, top_k, top_p)
            n = 0
            beta = 0.0
            for i in range(g):
                x = drafts[i]
                beta += float(torch.minimum(p[i], qs[i]).sum())
                if temperature == 0.0:
                    ok = bool(p[i, x] == 1.0)
                else:
                    r = float(torch.rand((), generator=generator, dtype=torch.float64, device="cpu"))
                    ok = r * float(qs[i][x]) < float(p[i, x])  # r < p/q without dividing
                if not ok:
                    break
                n += 1
            if n < g:
                resid = torch.clamp(p[n] - qs[n], min=0.0)
                total = float(resid.sum())
                last = (
                    _sample(resid / total if total > 0 else p[n], temperature, generator)
                    if temperature > 0
                    else int(p[n].argmax())
                )
            else:
                last = _sample(p[g], temperature, generator)
            produced = drafts[:n] + [last]
            base = len(seq)
            seq.extend(produced)
            new.extend(produced)
            t_len = base + n  # target cache held seq + all drafts: keep the accepted prefix
            _crop_to(tcache, t_len)
            if g:
                d_len = min(d_len, base + n)
                _crop_to(dcache, d_len)
            res.drafted.append(g)
            res.accepted.append(n)
            res.evaluated.append(min(n + 1, g))
            res.beta_sum.append(beta)
        if eos_token_id is not None and eos_token_id in new:
            del new[new.index(eos_token_id) + 1 :]
    res.ttot_s = time.perf_counter() - t0
    return res


# --- Whether a model's KV cache can be rolled back after a rejected draft.


def check_croppable_model(model: Any, role: str) -> None:
    """Raise ``ValueError`` when ``model`` is stateful (its cache cannot be cropped)."""
    if getattr(model, "_is_stateful", False):
        raise ValueError(
            f"{role} model {type(model).__name__} keeps a recurrent state that cannot be rolled back after a rejected "
            "draft: speculative decoding needs a cache that can be cropped (full or sliding-window attention)"
        )


def check_croppable_cache(cache: Any, role: str, model: Any = None) -> None:
    """Raise ``ValueError`` when ``cache`` (after the prefill) reports ``is_croppable = False``."""
    croppable = getattr(cache, "is_croppable", True)
    if croppable is False:
        layers = sorted(
            {
                type(layer).__name__
                for layer in getattr(cache, "layers", [])
                if getattr(layer, "is_croppable", True) is False
            }
        )
        name = f" {type(model).__name__}" if model is not None else ""
        raise ValueError(
            f"{role} model{name}: its cache ({type(cache).__name__}"
            f"{', layers ' + ', '.join(layers) if layers else ''}) cannot be cropped after a rejected draft; "
            "speculative decoding needs a cache that can be cropped"
        )


# --- Top-k and top-p (nucleus) warping of next-token distributions, as servers sample.


def check_filters(top_k: Any = 0, top_p: Any = 1.0) -> tuple[int, float]:
    """``(top_k, top_p)`` validated: ``top_k`` a whole number >= 0 (0: off), ``top_p`` in (0, 1]
    (1: off); one ``ValueError`` line otherwise."""
    if isinstance(top_k, bool) or not isinstance(top_k, (int, float)) or not float(top_k).is_integer() or top_k < 0:
        raise ValueError(f"top_k must be a whole number >= 0 (0: no top-k filter), got {top_k!r}")
    p = float(top_p) if isinstance(top_p, (int, float)) and not isinstance(top_p, bool) else float("nan")
    if not math.isfinite(p) or not 0.0 < p <= 1.0:
        raise ValueError(f"top_p must lie in (0, 1] (1: no top-p filter), got {top_p!r}")
    return int(top_k), p


def warped_probs(logits: torch.Tensor, temperature: float, top_k: int = 0, top_p: float = 1.0) -> torch.Tensor:
    """Next-token probabilities (float64) after temperature, top-k and top-p.

    Parameters
    ----------
    logits : ``(vocab,)`` or ``(positions, vocab)`` scores.
    temperature : > 0 (the greedy case is handled by the caller).
    top_k, top_p : the filters (:func:`check_filters`).

    Returns
    -------
    A tensor of the shape of ``logits``, each row a distribution over the kept tokens.
    """
    import torch
    from transformers.generation.logits_process import (
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    x = logits.double() / float(temperature)
    flat = x.reshape(-1, x.shape[-1])
    if top_k and top_k < flat.shape[-1]:
        flat = TopKLogitsWarper(int(top_k))(None, flat)
    if top_p < 1.0:
        flat = TopPLogitsWarper(float(top_p))(None, flat)
    return torch.softmax(flat, dim=-1).reshape(x.shape)
