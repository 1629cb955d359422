"""Greedy speculative decoding of many prompts at once, exactly, from the two models' argmaxes.

Under greedy decoding (temperature 0) speculative decoding is deterministic, and every decision it
takes is fixed by two things (:mod:`sdsl.measure.sampling`, Leviathan et al. 2023, Algorithm 1 in
the one-hot limit):

1. its output is the target's greedy continuation ``y_0 .. y_{n-1}`` of the prompt ``x``, and
2. a drafted token at position ``j`` is accepted iff every earlier draft of the iteration was
   accepted (so the draft saw ``x, y_<j``) and the draft's argmax after ``x, y_<j`` is ``y_j``.

So with ``m_j = [argmax q(. | x, y_<j) = y_j]`` for ``j = 1 .. n - 1`` (``y_0`` comes from the
target's prefill and is never drafted), the iterations of
:func:`sdsl.measure.sampling.speculative_generate` at draft length ``gamma`` are: from ``L`` tokens
produced, draft ``g = min(gamma, n - L - 1)``, accept the ``k`` leading ones of
``m_L .. m_{L+g-1}``, produce ``k + 1`` tokens (correction or bonus). :func:`greedy_iterations` walks
that recursion; :func:`greedy_continuations` computes ``y`` for a batch of prompts in one cached
decoding loop of the target, and :func:`draft_matches` computes ``m`` for every position in one
teacher-forced forward of the draft. The counts are the same as running the harness prompt by
prompt, at a fraction of the cost: the speculative loop runs ``n / (k + 1)`` sequential iterations
of ``gamma`` draft forwards and one target forward per prompt, this runs the target once per
token for a whole batch of prompts and the draft once per batch. Floating point enters only through
argmax ties: a position whose two largest logits differ by less than the rounding of a differently
shaped forward can flip, after which the two runs diverge; :func:`replay_check` counts the prompts on
which the harness and the replay disagree, and the runner reports that count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdsl.experiment.config import Measurement
from sdsl.experiment.pairs import PairMeasurement, alpha_interval, iterations_to_counts, seed_for

__all__ = [
    "GreedyMeasurement",
    "draft_matches",
    "greedy_continuations",
    "greedy_iterations",
    "measure_alpha_greedy",
    "replay_check",
    "replay_greedy",
]


def greedy_iterations(matches: Sequence[bool] | np.ndarray, gamma: int, new_tokens: int) -> dict[str, list]:
    """The iterations of greedy speculative decoding at draft length ``gamma`` that produce
    ``new_tokens`` tokens, given ``matches[j - 1] = m_j`` for ``j = 1 .. new_tokens - 1`` (module
    docstring). Returns the per-iteration lists ``drafted``, ``accepted``, ``evaluated`` and
    ``beta_sum`` exactly as :func:`sdsl.measure.sampling.speculative_generate` records them at
    temperature 0 (where ``sum min(p, q)`` of one-hot ``p`` and ``q`` is the match indicator).

    Parameters
    ----------
    matches : bool, length ``new_tokens - 1``.
    gamma : draft length >= 1.
    new_tokens : tokens to produce, >= 1.
    """
    gamma, n = int(gamma), int(new_tokens)
    if gamma < 1:
        raise ValueError(f"gamma must be >= 1, got {gamma!r}")
    if n < 1:
        raise ValueError(f"new_tokens must be >= 1, got {new_tokens!r}")
    m = np.asarray(matches, dtype=bool)
    if m.shape != (n - 1,):
        raise ValueError(f"matches must hold new_tokens - 1 = {n - 1} values, got shape {m.shape}")
    out: dict[str, list] = {"drafted": [], "accepted": [], "evaluated": [], "beta_sum": []}
    produced = 1  # y_0, from the target's prefill
    while produced < n:
        g = min(gamma, n - produced - 1)
        k = 0
        while k < g and m[produced + k - 1]:
            k += 1
        out["drafted"].append(g)
        out["accepted"].append(k)
        out["evaluated"].append(min(k + 1, g))
        out["beta_sum"].append(float(k))
        produced += k + 1
    return out


def _groups_by_length(prompts: Sequence[Sequence[int]], batch: int) -> list[list[int]]:
    """Indices of ``prompts`` in batches of equal length (no padding: every row of a batch sees
    the same positions as it would alone)."""
    by_len: dict[int, list[int]] = {}
    for i, p in enumerate(prompts):
        by_len.setdefault(len(p), []).append(i)
    out: list[list[int]] = []
    for length in sorted(by_len):
        idx = by_len[length]
        out.extend(idx[i : i + batch] for i in range(0, len(idx), batch))
    return out


def greedy_continuations(
    target, prompts: Sequence[Sequence[int]], new_tokens: int, *, batch: int = 64
) -> list[list[int]]:
    """The target's greedy continuation of every prompt, ``new_tokens`` tokens each (EOS is not a
    stop, as in the harness), decoded one token at a time with a ``transformers.DynamicCache`` for
    a batch of equal-length prompts.

    Parameters
    ----------
    target : a causal language model (float32).
    prompts : token ids of each prompt (non-empty).
    new_tokens : tokens to produce per prompt, >= 1.
    batch : prompts per decoding loop.
    """
    import torch
    from transformers import DynamicCache

    from sdsl.measure.sampling import _cache_kwarg, model_device

    if int(new_tokens) < 1:
        raise ValueError(f"new_tokens must be >= 1, got {new_tokens!r}")
    if any(len(p) == 0 for p in prompts):
        raise ValueError("every prompt must hold at least one token")
    kw, dev = _cache_kwarg(target), model_device(target)
    out: list[list[int]] = [[] for _ in prompts]
    with torch.inference_mode():
        for idx in _groups_by_length(prompts, int(batch)):
            cache = DynamicCache()
            feed = torch.tensor([list(prompts[i]) for i in idx], device=dev)
            steps = []
            for _ in range(int(new_tokens)):
                logits = target(input_ids=feed, use_cache=True, **{kw: cache}).logits[:, -1, :]
                nxt = logits.argmax(dim=-1)
                steps.append(nxt)
                feed = nxt[:, None]
            ys = torch.stack(steps, dim=1).cpu().tolist()
            for i, y in zip(idx, ys):
                out[i] = y
    return out


def draft_matches(
    draft,
    prompts: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[int]],
    *,
    vocab_size: int | None = None,
    batch: int = 64,
) -> list[np.ndarray]:
    """``m_j = [argmax q(. | x, y_<j) = y_j]`` for ``j = 1 .. n - 1`` of every prompt ``x`` and
    continuation ``y`` (module docstring), from one teacher-forced forward of the draft over
    ``x, y_0 .. y_{n-2}`` per batch of equal-length prompts.

    Parameters
    ----------
    draft : a causal language model sharing the target's vocabulary.
    prompts, continuations : token ids, one continuation per prompt, all of one length ``n``.
    vocab_size : compare only the first ids (padded output layers); default: all.
    batch : prompts per forward.
    """
    import torch

    from sdsl.measure.sampling import model_device

    if len(prompts) != len(continuations):
        raise ValueError(f"prompts and continuations differ in length: {len(prompts)} and {len(continuations)}")
    lengths = {len(y) for y in continuations}
    if len(lengths) > 1:
        raise ValueError(f"continuations must all have one length, got {sorted(lengths)}")
    out: list[np.ndarray] = [np.zeros(0, dtype=bool) for _ in prompts]
    dev = model_device(draft)
    with torch.inference_mode():
        for idx in _groups_by_length(prompts, int(batch)):
            lp = len(prompts[idx[0]])
            seq = torch.tensor([list(prompts[i]) + list(continuations[i][:-1]) for i in idx], device=dev)
            logits = draft(input_ids=seq).logits
            if vocab_size is not None:
                logits = logits[..., : int(vocab_size)]
            # logits at position lp - 1 + j predict y_j; j = 1 .. n - 1
            pred = logits[:, lp:, :].argmax(dim=-1)
            ys = torch.tensor([list(continuations[i][1:]) for i in idx], device=dev)
            hit = (pred == ys).cpu().numpy()
            for i, h in zip(idx, hit):
                out[i] = h
    return out


def replay_greedy(
    draft,
    prompts: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[int]],
    gamma: int,
    *,
    vocab_size: int | None = None,
    batch: int = 64,
) -> list[dict[str, list]]:
    """Per prompt, the iterations (:func:`greedy_iterations`) of greedy speculative decoding of
    ``draft`` against the target whose greedy ``continuations`` of ``prompts`` are given."""
    n = len(continuations[0]) if continuations else 0
    ms = draft_matches(draft, prompts, continuations, vocab_size=vocab_size, batch=batch)
    return [greedy_iterations(m, gamma, n) for m in ms]


_KEYS = ("drafted", "accepted", "evaluated", "beta_sum")


def replay_check(
    target, draft, prompt: Sequence[int], continuation: Sequence[int], replayed: dict[str, list], gamma: int
) -> tuple[dict[str, list], bool, float]:
    """Decode ``prompt`` greedily with the harness (:func:`sdsl.measure.sampling.speculative_generate`,
    one prompt, KV caches) and compare it with the replay.

    Returns
    -------
    (iterations, identical, seconds)
        The harness's per-iteration lists (as :func:`greedy_iterations` returns them), whether its
        tokens equal ``continuation`` and its iterations equal ``replayed``, and its wall time.
    """
    from sdsl.measure.sampling import speculative_generate

    res = speculative_generate(
        target, draft, list(prompt), gamma=int(gamma), max_new_tokens=len(continuation), temperature=0.0
    )
    rows = {k: list(getattr(res, k)) for k in _KEYS}
    same = list(res.tokens) == list(continuation) and all(rows[k] == list(replayed[k]) for k in _KEYS)
    return rows, bool(same), float(res.ttot_s)


@dataclass
class GreedyMeasurement(PairMeasurement):
    """A greedy :class:`~sdsl.experiment.pairs.PairMeasurement` with ``harness_prompts`` (the first
    prompts, decoded by the harness as well as replayed) and ``harness_identical`` (of those, how
    many the replay reproduced token for token and iteration for iteration)."""

    harness_prompts: int = 0
    harness_identical: int = 0


def measure_alpha_greedy(
    draft,
    target,
    prompts: Sequence[Sequence[int]],
    continuations: Sequence[Sequence[int]],
    *,
    measurement: Measurement,
    seed: int,
) -> GreedyMeasurement:
    """Alpha of greedy speculative decoding of ``(draft, target)`` at draft length
    ``measurement.gamma``, with the stopping rule of :func:`sdsl.experiment.pairs.measure_alpha`:
    prompts are added ``prompt_batch`` at a time (at least ``min_prompts_greedy``, at most
    ``max_prompts_greedy``) until the 95 % half width (the wider of the likelihood's and the
    cluster bootstrap's) is at most ``half_width``. The full scale sets both to every window of the
    prompt split: a greedy prompt either falls into a loop that the draft predicts or not, and a
    rule allowed to stop early can stop on a run of looping prompts with a far too high alpha and
    a narrow interval (the laptop-scale chapter shows what a stop at 16 prompts would report).

    The first ``greedy_check_prompts`` prompts are decoded by the harness, and their counts are
    the harness's; every prompt after them is replayed (module docstring). The replay of the
    checked prompts is compared with the harness's decoding, and the number of identical prompts
    is returned.

    Parameters
    ----------
    draft, target : loaded causal language models sharing one vocabulary (float32).
    prompts : token ids of the prompts, in the order they are used.
    continuations : the target's greedy continuation of each prompt (:func:`greedy_continuations`),
        ``measurement.new_tokens`` tokens each.
    measurement : the measurement settings.
    seed : seeds the bootstrap.
    """
    from sdsl.measure.sampling import check_same_vocabulary

    m = measurement
    cap = min(len(prompts), len(continuations), m.max_prompts_greedy)
    if cap < m.min_prompts_greedy:
        raise ValueError(
            f"the greedy measurement needs min_prompts_greedy = {m.min_prompts_greedy} prompts, got {cap} "
            f"({len(prompts)} prompts, {len(continuations)} continuations, max_prompts_greedy = {m.max_prompts_greedy})"
        )
    lengths = {len(y) for y in continuations[:cap]}
    if lengths != {m.new_tokens}:
        raise ValueError(f"continuations must hold new_tokens = {m.new_tokens} tokens each, got {sorted(lengths)}")
    vocab = check_same_vocabulary(draft, target)
    rng = np.random.default_rng(seed_for(seed, "bootstrap"))
    n_check = min(m.greedy_check_prompts, cap)
    pid: list[int] = []
    drafted: list[int] = []
    accepted: list[int] = []
    per: list[dict] = []
    same: list[bool] = []
    alpha, hw, used = float("nan"), float("inf"), 0
    for start in range(0, cap, m.greedy_batch):
        stop = min(start + m.greedy_batch, cap)
        idx = list(range(start, stop))
        replayed = replay_greedy(
            draft, [prompts[i] for i in idx], [continuations[i] for i in idx], m.gamma, vocab_size=vocab
        )
        for i, r in zip(idx, replayed):
            ttot = float("nan")
            if i < n_check:
                r, ok, ttot = replay_check(target, draft, prompts[i], continuations[i], r, m.gamma)
                same.append(ok)
            pid.extend([i] * len(r["drafted"]))
            drafted.extend(r["drafted"])
            accepted.extend(r["accepted"])
            per.append(
                {
                    "prompt_id": i,
                    "new_tokens": m.new_tokens,
                    "iterations": len(r["drafted"]),
                    "evaluated": int(sum(r["evaluated"])),
                    "beta_sum": float(sum(r["beta_sum"])),
                    "ttot_s": ttot,
                }
            )
        it_all = pd.DataFrame({"prompt_id": pid, "drafted": drafted, "accepted": accepted})
        reached = False
        for n in sorted({*range(m.prompt_batch, stop + 1, m.prompt_batch), stop}):
            if n <= start or n < m.min_prompts_greedy:
                continue
            alpha, hw = alpha_interval(it_all[it_all["prompt_id"] < n], rng, m.n_resamples)
            used = n
            if hw <= m.half_width:
                reached = True
                break
        if reached:
            break
    it = it_all[it_all["prompt_id"] < used]
    counts = iterations_to_counts(it)
    return GreedyMeasurement(
        counts=counts,
        prompts=pd.DataFrame(per[:used]),
        alpha=float(alpha),
        half_width=float(hw),
        n_prompts=int(used),
        reached_target=bool(hw <= m.half_width),
        harness_prompts=min(n_check, used),
        harness_identical=int(sum(same[:used])),
    )
