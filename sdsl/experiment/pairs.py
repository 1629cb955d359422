"""Alpha for every (draft, target) pair of the family, two independent ways.

1. **Speculative sampling** (:func:`sdsl.measure.harness.measure_acceptance`, Leviathan et al. 2023,
   Algorithm 1) on held-out prompts at a fixed draft length (greedy decoding: the exact batched
   replay of :mod:`sdsl.experiment.greedy`, checked against the harness on the first prompts,
   because a greedy interval needs hundreds of prompts), prompts added in batches until the
   95 % interval of alpha has a half width of at most ``Measurement.half_width`` (the larger of
   the truncated-geometric MLE's profile interval and the cluster bootstrap over prompts,
   :mod:`sdsl.measure.estimators`). What is kept are sufficient statistics: per prompt, the number of
   iterations with each ``(drafted, accepted)`` count, and the on-policy ``sum min(p, q)`` over the
   evaluated positions (its mean is alpha, Leviathan et al., Corollary 3.6).
2. **Teacher forcing on held-out text**: ``E[sum_x min(p(x), q(x))]`` over every position of
   validation windows at temperature 1, and the rate at which the two argmaxes agree (alpha of
   greedy decoding), computed directly from the two models' next-token distributions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sdsl.experiment.config import Measurement
from sdsl.measure.estimators import alpha_bootstrap, alpha_from_accepted

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = [
    "PairMeasurement",
    "alpha_interval",
    "counts_to_iterations",
    "iterations_to_counts",
    "make_prompts",
    "measure_alpha",
    "seed_for",
    "teacher_forced_overlap",
]


def seed_for(seed: int, *keys: int | str) -> int:
    """A 32-bit seed derived from ``seed`` and ``keys`` by ``numpy.random.SeedSequence``; a string
    key enters as the first 8 bytes of its sha256 (stable across processes, and every character
    of the string counts: two run ids that differ only at their end get different seeds)."""
    import hashlib

    ints = [int(seed)]
    for k in keys:
        ints.append(
            int(k)
            if isinstance(k, (int, np.integer))
            else int.from_bytes(hashlib.sha256(str(k).encode("utf-8")).digest()[:8], "little") % (2**63)
        )
    return int(np.random.SeedSequence(ints).generate_state(1)[0])


def make_prompts(prompt_ids: np.ndarray, eos_id: int, n_tokens: int, n: int, decode) -> list[str]:
    """``n`` prompts of ``n_tokens`` tokens from the prompt split: first one window from the start
    of every document long enough, then further non-overlapping windows of the longer documents,
    decoded to text with ``decode`` (a function of a list of ids)."""
    bounds = np.flatnonzero(np.asarray(prompt_ids) == eos_id)
    docs, start = [], 0
    for b in bounds:
        docs.append(np.asarray(prompt_ids[start:b]))
        start = int(b) + 1
    out: list[str] = []
    k = 0
    while len(out) < n:
        added = False
        for d in docs:
            lo = k * n_tokens
            if len(d) >= lo + n_tokens:
                out.append(decode(d[lo : lo + n_tokens].tolist()))
                added = True
                if len(out) == n:
                    break
        if not added:
            raise ValueError(f"the prompt split holds only {len(out)} windows of {n_tokens} tokens, {n} requested")
        k += 1
    return out


@dataclass
class PairMeasurement:
    """One pair at one temperature: ``counts`` (``prompt_id, drafted, accepted, iterations``),
    ``prompts`` (``prompt_id, new_tokens, iterations, evaluated, beta_sum, ttot_s``) and the
    stopping outcome."""

    counts: pd.DataFrame
    prompts: pd.DataFrame
    alpha: float
    half_width: float
    n_prompts: int
    reached_target: bool


def counts_to_iterations(counts: pd.DataFrame) -> pd.DataFrame:
    """Per-iteration rows (``prompt_id, drafted, accepted``) from the compressed counts (the order
    of iterations does not enter the MLE or the cluster bootstrap)."""
    rep = counts["iterations"].to_numpy(dtype=int)
    return pd.DataFrame({c: np.repeat(counts[c].to_numpy(), rep) for c in ("prompt_id", "drafted", "accepted")})


def iterations_to_counts(it: pd.DataFrame) -> pd.DataFrame:
    """The compressed counts (``prompt_id, drafted, accepted, iterations``) of per-iteration rows:
    the inverse of :func:`counts_to_iterations`."""
    return it.groupby(["prompt_id", "drafted", "accepted"]).size().rename("iterations").reset_index()


def alpha_interval(it: pd.DataFrame, rng: np.random.Generator, n_resamples: int) -> tuple[float, float]:
    """The MLE of alpha from per-iteration rows (``prompt_id, drafted, accepted``; rows with
    nothing drafted are left out) and its 95 % half width: the wider of the likelihood's and, with
    two prompts or more, the cluster bootstrap's over prompts (``n_resamples`` resamples)."""
    it = it[it["drafted"] > 0]
    mle = alpha_from_accepted(it["accepted"], it["drafted"])
    hw = mle.half_width
    if it["prompt_id"].nunique() >= 2:
        boot = alpha_bootstrap(it["accepted"], it["drafted"], it["prompt_id"], rng, n_resamples=n_resamples)
        hw = max(hw, boot.half_width)
    return mle.alpha, hw


def measure_alpha(
    draft, target, tokenizer, prompts: Sequence[str], *, temperature: float, measurement: Measurement, seed: int
) -> PairMeasurement:
    """Alpha of ``(draft, target)`` at ``temperature`` by speculative sampling at draft length
    ``measurement.gamma``, prompts added ``measurement.prompt_batch`` at a time (at least
    ``min_prompts``, at most ``max_prompts``, ``max_prompts_greedy`` at temperature 0) until the
    95 % half width is at most ``measurement.half_width``.

    Parameters
    ----------
    draft, target : loaded causal language models sharing ``tokenizer``'s vocabulary.
    tokenizer : a ``transformers`` tokenizer (:func:`sdsl.experiment.tokenizer.to_transformers`).
    prompts : the prompt texts, in the order they are used.
    temperature : 1 for sampling, 0 for greedy.
    measurement : the measurement settings.
    seed : seeds the sampling of every batch and the bootstrap.
    """
    from sdsl.measure.harness import measure_acceptance

    m = measurement
    if len(prompts) < m.min_prompts:
        raise ValueError(f"prompts must hold at least min_prompts = {m.min_prompts}, got {len(prompts)}")
    rng = np.random.default_rng(seed_for(seed, "bootstrap"))
    counts, reqs, iters = [], [], []
    alpha, hw, used = float("nan"), float("inf"), 0
    cap = m.max_prompts if temperature > 0 else m.max_prompts_greedy
    for start in range(0, min(len(prompts), cap), m.prompt_batch):
        batch = list(prompts[start : start + m.prompt_batch])
        res = measure_acceptance(
            draft,
            target,
            batch,
            gammas=[m.gamma],
            temperature=temperature,
            max_new_tokens=m.new_tokens,
            seed=seed_for(seed, start),
            tokenizer=tokenizer,
            progress=False,
        )
        it = res.iterations.assign(prompt_id=res.iterations["prompt_id"] + start)
        iters.append(it)
        rq = res.requests.assign(prompt_id=res.requests["prompt_id"] + start)
        reqs.append(rq)
        used = start + len(batch)
        if used >= m.min_prompts:
            alpha, hw = alpha_interval(pd.concat(iters, ignore_index=True), rng, m.n_resamples)
            if hw <= m.half_width:
                break
    it = pd.concat(iters, ignore_index=True)
    rq = pd.concat(reqs, ignore_index=True)
    counts = iterations_to_counts(it)
    per = (
        it.groupby("prompt_id")
        .agg(iterations=("iteration", "size"), evaluated=("evaluated", "sum"), beta_sum=("beta_sum", "sum"))
        .reset_index()
    )
    per = per.merge(rq[["prompt_id", "new_tokens", "ttot_s"]], on="prompt_id", how="left")
    return PairMeasurement(
        counts=counts,
        prompts=per[["prompt_id", "new_tokens", "iterations", "evaluated", "beta_sum", "ttot_s"]],
        alpha=float(alpha),
        half_width=float(hw),
        n_prompts=int(used),
        reached_target=bool(hw <= m.half_width),
    )


def teacher_forced_overlap(draft, target, wins: torch.Tensor, batch: int = 16) -> pd.DataFrame:
    """Per held-out window: the mean over its positions of ``sum_x min(p(x), q(x))`` of the
    target's ``p`` and the draft's ``q`` at temperature 1 (``overlap``), and the fraction of
    positions where their argmaxes agree (``agree``, alpha of greedy decoding), with ``positions``
    (Leviathan et al. 2023, Corollary 3.6; method notes, section 9)."""
    import torch

    from sdsl.measure.sampling import model_device

    rows = []
    with torch.inference_mode():
        for i in range(0, wins.shape[0], batch):
            x = wins[i : i + batch, :-1]
            lp = target(input_ids=x.to(model_device(target))).logits.cpu().double()
            lq = draft(input_ids=x.to(model_device(draft))).logits.cpu().double()
            p, q = torch.softmax(lp, dim=-1), torch.softmax(lq, dim=-1)
            ov = torch.minimum(p, q).sum(dim=-1).mean(dim=1)
            ag = (lp.argmax(dim=-1) == lq.argmax(dim=-1)).double().mean(dim=1)
            for j in range(x.shape[0]):
                rows.append(
                    {"window": i + j, "positions": int(x.shape[1]), "overlap": float(ov[j]), "agree": float(ag[j])}
                )
    return pd.DataFrame(rows)
