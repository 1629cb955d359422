"""Top-k and top-p (nucleus) warping of next-token distributions, as servers sample.

Speculative sampling is lossless with respect to whatever distribution it verifies against: with
the target's warped distribution ``p'`` and the draft's warped ``q'`` (the same temperature, top-k and
top-p applied to each model's logits, as vLLM and transformers do), the accept/resample rule of
Leviathan et al. (2023, Algorithm 1) outputs tokens distributed exactly as ``p'``, and the
acceptance rate it measures is ``alpha = E[sum_x min(p'(x), q'(x))]`` (Corollary 3.6) under those
sampling settings, not under plain temperature sampling.

The warping is transformers' own (``TemperatureLogitsWarper`` then ``TopKLogitsWarper`` then
``TopPLogitsWarper``, the order of ``generate``), applied in float64:

* top-k keeps the ``k`` most probable tokens (and every token tied with the ``k``-th);
* top-p keeps the smallest set of most probable tokens whose probability reaches ``p`` (a token is
  removed when the probability of the tokens less probable than or as probable as it, itself
  included, is at most ``1 - p``), at least one token.

``top_k = 0`` and ``top_p = 1`` switch each off. Greedy decoding (``temperature = 0``) keeps the
argmax whatever the filters.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["check_filters", "warped_probs"]


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
