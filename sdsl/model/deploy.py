"""From a planned optimum to settings a serving engine takes: an integer draft length and flags.

Engines draft a whole number of tokens per iteration; the paper's optimum ``gamma*`` is the
maximiser of its continuous relaxation (method notes, section 3). This module gives

* :func:`integer_draft_length` -- the best integer ``gamma`` at a draft size ``N`` (the floor or
  the ceiling of ``gamma*``: Eq. 9 is unimodal in ``gamma``) and the share of throughput that
  rounding gives up, ``1 - T(N, gamma_int) / T(N, gamma*)``;
* :func:`vllm_speculative_config` and :func:`vllm_command` -- vLLM's ``--speculative-config`` JSON for a
  separate draft model, ``{"method": "draft_model", "model": ..., "num_speculative_tokens": ...}``
  (vLLM documentation, *Speculative Decoding / Draft Models*,
  https://docs.vllm.ai/en/latest/features/speculative_decoding/draft_model/);
* :func:`sglang_flags` and :func:`sglang_command` -- SGLang's standalone (small draft model)
  speculative decoding, ``--speculative-algorithm STANDALONE --speculative-draft-model-path ...
  --speculative-num-steps gamma --speculative-eagle-topk 1 --speculative-num-draft-tokens gamma+1``
  (SGLang documentation, *Speculative Decoding*, section "Standalone Speculative Decoding",
  docs/advanced_features/speculative_decoding.md of github.com/sgl-project/sglang: with top-k 1,
  the verified tokens are ``num_steps + 1``);
* :func:`engine_settings` -- both, as one mapping for ``--json``.
"""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass

from sdsl._validate import as_open_unit, as_positive
from sdsl.model.throughput import optimal_gamma, tokens_per_flop

__all__ = [
    "DRAFT_PLACEHOLDER",
    "TARGET_PLACEHOLDER",
    "IntegerDraftLength",
    "integer_draft_length",
    "vllm_speculative_config",
    "vllm_command",
    "sglang_flags",
    "sglang_command",
    "engine_settings",
]

#: Written where the draft's repository id or path is not known.
DRAFT_PLACEHOLDER = "<draft-model>"
#: Written where the target's repository id or path is not known.
TARGET_PLACEHOLDER = "<target-model>"


@dataclass(frozen=True)
class IntegerDraftLength:
    """The draft length an engine can take, at one draft size."""

    gamma_continuous: float
    """``gamma*`` of the continuous relaxation (method notes, section 3)."""
    gamma_integer: int
    """The best integer ``gamma`` (floor or ceiling of ``gamma_continuous``)."""
    tokens_per_flop_continuous: float
    tokens_per_flop_integer: float
    rounding_loss: float
    """``1 - T(N, gamma_integer) / T(N, gamma_continuous)``: the share of throughput given up."""


def integer_draft_length(alpha: float, n: float, m: float) -> IntegerDraftLength:
    """Best integer draft length at draft size ``n`` and what rounding costs (the paper's Eq. 9).

    Parameters
    ----------
    alpha : float
        Acceptance rate, in (0, 1).
    n, m : float
        Draft and target parameters, ``m / n >= 1``.

    Returns
    -------
    IntegerDraftLength
    """
    a = float(as_open_unit(alpha, "alpha (acceptance rate)"))
    n = float(as_positive(n, "n (draft parameters)"))
    m = float(as_positive(m, "m (target parameters)"))
    gc = float(optimal_gamma(a, n, m))
    gi = float(optimal_gamma(a, n, m, integer=True))
    tc = float(tokens_per_flop(a, n, m, gc))
    ti = float(tokens_per_flop(a, n, m, gi))
    return IntegerDraftLength(gc, int(gi), tc, ti, max(0.0, 1.0 - ti / tc))


def _check_gamma(gamma: int) -> int:
    g = float(gamma)
    if not math.isfinite(g) or not g.is_integer() or g < 1:
        raise ValueError(
            f"num_speculative_tokens must be an integer >= 1 (speculation with 0 drafted tokens is plain "
            f"decoding: leave speculative decoding off), got {gamma!r}"
        )
    return int(g)


def vllm_speculative_config(num_speculative_tokens: int, draft_model: str | None = None) -> dict[str, object]:
    """vLLM's ``--speculative-config`` for a separate draft model.

    Parameters
    ----------
    num_speculative_tokens : int
        Tokens the draft proposes per iteration (the integer ``gamma``), >= 1.
    draft_model : str, optional
        The draft's repository id or local path (placeholder when None).

    Returns
    -------
    dict
        ``{"method": "draft_model", "model": draft_model, "num_speculative_tokens": gamma}``.
    """
    return {
        "method": "draft_model",
        "model": draft_model or DRAFT_PLACEHOLDER,
        "num_speculative_tokens": _check_gamma(num_speculative_tokens),
    }


def vllm_command(num_speculative_tokens: int, target_model: str | None = None, draft_model: str | None = None) -> str:
    """A ready-to-paste ``vllm serve`` command line with the speculative config as JSON."""
    cfg = json.dumps(vllm_speculative_config(num_speculative_tokens, draft_model), separators=(", ", ": "))
    return f"vllm serve {shlex.quote(target_model or TARGET_PLACEHOLDER)} --speculative-config {shlex.quote(cfg)}"


def sglang_flags(num_steps: int, draft_model: str | None = None) -> list[str]:
    """SGLang's flags for standalone speculative decoding with a small draft model.

    Parameters
    ----------
    num_steps : int
        Draft depth (the integer ``gamma``), >= 1; with ``--speculative-eagle-topk 1`` the server
        verifies ``num_steps + 1`` tokens (``--speculative-num-draft-tokens``).
    draft_model : str, optional
        The draft's repository id or local path (placeholder when None).

    Returns
    -------
    list of str
        The arguments, flag and value in turn.
    """
    g = _check_gamma(num_steps)
    return [
        "--speculative-algorithm",
        "STANDALONE",
        "--speculative-draft-model-path",
        draft_model or DRAFT_PLACEHOLDER,
        "--speculative-num-steps",
        str(g),
        "--speculative-eagle-topk",
        "1",
        "--speculative-num-draft-tokens",
        str(g + 1),
    ]


def sglang_command(num_steps: int, target_model: str | None = None, draft_model: str | None = None) -> str:
    """A ready-to-paste ``python -m sglang.launch_server`` command line."""
    args = [
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        target_model or TARGET_PLACEHOLDER,
        *sglang_flags(num_steps, draft_model),
    ]
    return " ".join(shlex.quote(a) for a in args)


def engine_settings(gamma: int, target_model: str | None = None, draft_model: str | None = None) -> dict[str, object]:
    """vLLM and SGLang settings for one integer draft length, as printed by ``sdsl plan --json``.

    Returns ``{"vllm": {"speculative_config": {...}, "command": ...}, "sglang": {"flags": [...],
    "command": ...}}``; ``None`` for both when ``gamma < 1`` (speculation does not pay: serve
    without it)."""
    if gamma < 1:
        return {
            "vllm": None,
            "sglang": None,
            "note": "the best draft length is 0: speculation does not pay here; serve without it",
        }
    return {
        "vllm": {
            "speculative_config": vllm_speculative_config(gamma, draft_model),
            "command": vllm_command(gamma, target_model, draft_model),
        },
        "sglang": {
            "flags": sglang_flags(gamma, draft_model),
            "command": sglang_command(gamma, target_model, draft_model),
        },
    }
