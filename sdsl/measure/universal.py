"""Alpha of a draft/target pair with *different* tokenizers, through transformers' universal
assisted generation, with the accepted count of every iteration.

26 of the paper's 50 pairs are cross-family (OPT drafts for Qwen targets and the reverse): token-level
speculative sampling (:mod:`sdsl.measure.harness`) cannot compare their distributions. transformers decodes
them with ``generate(assistant_model=draft, tokenizer=..., assistant_tokenizer=...)``:

* greedy (``AssistedCandidateGeneratorDifferentTokenizers``, "universal assisted generation"): the
  draft's text is re-tokenized for the target, each candidate target token is accepted while it
  equals the target's argmax; the output is the target's greedy output;
* sampling (``UniversalSpeculativeDecodingGenerator``, Timor et al. 2025): draft tokens whose string
  is also a target token are mapped 1:1, the draft's logits are moved to the target vocabulary and
  speculative sampling (Leviathan et al. 2023) accepts or resamples; draft tokens outside the shared
  vocabulary are suppressed.

transformers 5.24 prunes the draft's output layer to the shared tokens for sampling, keeping the rows
in ``get_vocab()`` order but scattering the pruned logits back in token-id order; whenever the two
orders differ (fast tokenizers return an unordered dict) the draft's probabilities are attached to
the wrong tokens. The output is still the target's (rejection sampling corrects any draft) but the
acceptance is far too low. :func:`universal_generate` therefore registers the vocabulary translator
itself, without pruning (tokens outside the shared vocabulary are suppressed by a logits processor
instead), before ``generate`` looks it up (:func:`_register_unpruned_translator`).

Either way an iteration proposes ``drafted`` *target* tokens and accepts ``accepted`` of them, which
is what :func:`sdsl.measure.estimators.alpha_from_accepted` needs: alpha here is the acceptance probability
per target token after re-tokenization (a different quantity from the same-vocabulary alpha when
token boundaries disagree; see the measure chapter). The counts are read from the candidate
generator's ``update_candidate_strategy(input_ids, scores, num_matches)``, called once per
iteration with ``scores`` holding ``drafted + 1`` positions (:func:`record_assisted_iterations`).

The draft length is set where transformers 5.x reads it, the *draft's* ``generation_config``
(:func:`configure_assistant`: ``num_assistant_tokens = gamma``, schedule ``"constant"``, confidence
stop off); passing ``num_assistant_tokens`` to ``target.generate`` is ignored. The last iteration of
each request is dropped: it can be cut by ``max_new_tokens``, which would count as rejections.

Sampling uses torch's global generator inside ``torch.random.fork_rng`` (transformers' sampling takes
no generator), seeded per request, so the global state is left as it was. Exact in float32; in
bfloat16 verification can round differently from one-token decoding (see :mod:`sdsl.measure.harness`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "configure_assistant",
    "record_assisted_iterations",
    "universal_generate",
    "measure_universal",
    "summarize_universal",
]


@contextmanager
def configure_assistant(draft: Any, gamma: int) -> Iterator[None]:
    """Within the block, ``draft.generation_config`` drafts exactly ``gamma`` tokens per iteration:
    ``num_assistant_tokens = gamma``, ``num_assistant_tokens_schedule = "constant"``,
    ``assistant_confidence_threshold = 0`` (no early stop); restored afterwards."""
    if int(gamma) < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma!r}")
    cfg = draft.generation_config
    keys = ("num_assistant_tokens", "num_assistant_tokens_schedule", "assistant_confidence_threshold")
    saved = {k: getattr(cfg, k, None) for k in keys}
    cfg.num_assistant_tokens = int(gamma)
    cfg.num_assistant_tokens_schedule = "constant"
    cfg.assistant_confidence_threshold = 0.0
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(cfg, k, v)


@contextmanager
def record_assisted_iterations(target: Any) -> Iterator[list[tuple[int, int]]]:
    """Record ``(drafted, accepted)`` in target tokens for every iteration of
    ``target.generate(assistant_model=...)`` inside the block (appended to the yielded list), by
    wrapping the candidate generator that ``target._get_candidate_generator`` returns."""
    log: list[tuple[int, int]] = []
    original = target._get_candidate_generator

    def wrapped(*args, **kwargs):
        gen = original(*args, **kwargs)
        update = gen.update_candidate_strategy

        def record(input_ids, scores, num_matches):
            log.append((int(scores.shape[1]) - 1, int(num_matches)))
            return update(input_ids, scores, num_matches)

        gen.update_candidate_strategy = record
        return gen

    target._get_candidate_generator = wrapped
    try:
        yield log
    finally:
        del target._get_candidate_generator  # back to the class's method


def _register_unpruned_translator(target: Any, draft: Any, target_tokenizer: Any, draft_tokenizer: Any) -> None:
    """Put an unpruned ``AssistantToTargetTranslator`` for this tokenizer pair into transformers'
    cache (module docstring); ``generate`` then reuses it instead of pruning the draft."""
    from transformers.generation.candidate_generator import (
        AssistantVocabTranslatorCache,
    )

    AssistantVocabTranslatorCache.get_translator(
        target_tokenizer,
        draft_tokenizer,
        target.config.get_text_config().vocab_size,
        assistant_model=draft,
        assistant_prune_lm_head=False,
    )


def universal_generate(
    target: Any,
    draft: Any,
    target_tokenizer: Any,
    draft_tokenizer: Any,
    input_ids: Sequence[int],
    *,
    gamma: int,
    max_new_tokens: int,
    temperature: float = 0.0,
    top_k: int = 0,
    top_p: float = 1.0,
    seed: int = 0,
):
    """One request through transformers' universal assisted generation (module docstring).

    Parameters
    ----------
    target, draft : loaded causal language models (any vocabularies).
    target_tokenizer, draft_tokenizer : their tokenizers.
    input_ids : the prompt in target tokens.
    gamma : draft tokens per iteration (in draft tokens; the target sees their re-tokenization).
    max_new_tokens : generated to exactly this length (``eos_token_id=None``: EOS is an ordinary token,
        not a stop, as in :mod:`sdsl.measure.harness`).
    temperature, top_k, top_p : 0 is greedy; else sampling with the filters.
    seed : seed of this request's sampling.

    Returns
    -------
    :class:`sdsl.measure.sampling.GenerationResult` with the new tokens and per-iteration ``drafted`` /
    ``accepted`` (target tokens; the last iteration dropped), ``evaluated = min(accepted + 1,
    drafted)`` and ``beta_sum`` NaN (no ``min(p, q)`` across vocabularies), and TTOT.
    """
    import torch

    from sdsl.measure.sampling import GenerationResult, _check_decoding_args, check_filters, model_device

    max_new_tokens, temperature = _check_decoding_args(max_new_tokens, temperature)
    top_k, top_p = check_filters(top_k, top_p)
    ids = [int(t) for t in input_ids]
    if not ids:
        raise ValueError("input_ids is empty: a prompt of at least one token is needed")
    sampling = (
        dict(do_sample=True, temperature=temperature, top_k=top_k or None, top_p=top_p)
        if temperature > 0
        else dict(do_sample=False)
    )
    if temperature > 0:
        _register_unpruned_translator(target, draft, target_tokenizer, draft_tokenizer)
    x = torch.tensor([ids], device=model_device(target))
    res = GenerationResult(tokens=[], prompt_tokens=len(ids))
    t0 = time.perf_counter()
    with configure_assistant(draft, gamma), record_assisted_iterations(target) as log, torch.random.fork_rng():
        torch.manual_seed(int(seed))
        with torch.inference_mode():
            out = target.generate(
                x,
                attention_mask=torch.ones_like(x),
                assistant_model=draft,
                tokenizer=target_tokenizer,
                assistant_tokenizer=draft_tokenizer,
                max_new_tokens=max_new_tokens,
                eos_token_id=None,
                pad_token_id=target_tokenizer.eos_token_id,
                **sampling,
            )
    res.ttot_s = time.perf_counter() - t0
    res.tokens = out[0, len(ids) :].tolist()
    for drafted, accepted in log[:-1]:
        res.drafted.append(drafted)
        res.accepted.append(min(accepted, drafted))
        res.evaluated.append(min(accepted + 1, drafted))
        res.beta_sum.append(float("nan"))
    return res


def measure_universal(
    draft: Any,
    target: Any,
    prompts: Sequence[str],
    *,
    gammas: Sequence[int] = (4,),
    temperature: float = 0.0,
    max_new_tokens: int = 32,
    seed: int = 0,
    tokenizer: Any = None,
    draft_tokenizer: Any = None,
    top_k: int = 0,
    top_p: float = 1.0,
    progress: bool = True,
):
    """:func:`sdsl.measure.harness.measure_acceptance` for pairs with different tokenizers: every prompt at
    every draft length through :func:`universal_generate`; the same tables (``iterations``,
    ``requests``), so :func:`sdsl.measure.harness.summarize_measurement` and the estimators apply
    (use :func:`summarize_universal`: there is no shared vocabulary for ``min(p, q)``). TTFT and TPOT
    are not observable inside ``generate`` and are NaN.
    """
    from sdsl.measure.harness import AcceptanceRun, _gamma_list, _record, _seed_for, _settings
    from sdsl.measure.local import load_model, load_tokenizer

    if not prompts:
        raise ValueError("prompts is empty")
    gammas = _gamma_list(gammas)
    tok = load_tokenizer(tokenizer if tokenizer is not None else target)
    dtok = load_tokenizer(draft_tokenizer if draft_tokenizer is not None else draft)
    if isinstance(dtok, (str, os.PathLike)) or not hasattr(dtok, "get_vocab"):
        raise ValueError("draft_tokenizer is required when the draft is a loaded model")
    dmodel, tmodel = load_model(draft), load_model(target)
    encoded = [tok(p)["input_ids"] for p in prompts]

    def generate(g: int, j: int, ids: list[int]):
        return universal_generate(
            tmodel,
            dmodel,
            tok,
            dtok,
            ids,
            gamma=g,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            seed=_seed_for(seed, g, j),
        )

    iterations, requests = _record(
        generate, gammas, encoded, desc="universal assisted generation", progress=progress, timed=False
    )
    settings = _settings(
        draft,
        target,
        gammas,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        max_new_tokens=max_new_tokens,
        seed=seed,
        n_prompts=len(prompts),
    )
    settings["method"] = "transformers universal assisted generation (different tokenizers)"
    return AcceptanceRun(iterations, requests, settings)


def summarize_universal(m, rng: np.random.Generator, **kwargs) -> pd.DataFrame:
    """:func:`sdsl.measure.harness.summarize_measurement` of a :func:`measure_universal` run, with the
    ``sum min(p, q)`` columns set to NaN (the two models share no vocabulary to compare over)."""
    from sdsl.measure.harness import summarize_measurement

    out = summarize_measurement(m, rng, **kwargs)
    out[["alpha_min_pq", "alpha_min_pq_se"]] = np.nan
    return out
