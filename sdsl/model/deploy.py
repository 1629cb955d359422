"""From a planned optimum to settings a serving engine takes: an integer draft length and flags.

Engines draft a whole number of tokens per iteration; the paper's optimum ``gamma*`` is the
maximiser of its continuous relaxation (method notes, section 3). This module gives

* :func:`integer_draft_length` -- the best integer ``gamma`` at a draft size ``N`` (the floor or
  the ceiling of ``gamma*``: Eq. 9 is unimodal in ``gamma``) and the share of throughput that
  rounding gives up, ``1 - T(N, gamma_int) / T(N, gamma*)``;
* :func:`vllm_speculative_config` and :func:`vllm_command` -- vLLM's ``--speculative-config`` JSON for a
  separate draft model, ``{"method": "draft_model", "model": ..., "num_speculative_tokens": ...,
  "draft_tensor_parallel_size": ...}`` (vLLM rejects ``tensor_parallel_size`` inside it), with
  ``--tensor-parallel-size``, ``--dtype`` or ``--quantization fp8 --kv-cache-dtype fp8`` and
  ``--max-num-seqs``;
* :func:`sglang_flags` and :func:`sglang_command` -- SGLang's standalone (small draft model)
  speculative decoding, ``--speculative-algorithm STANDALONE --speculative-draft-model-path ...
  --speculative-num-steps gamma --speculative-eagle-topk 1 --speculative-num-draft-tokens gamma+1``
  (with top-k 1 the verified tokens are ``num_steps + 1``), with ``--tp``, ``--dtype`` or
  ``--quantization fp8 --kv-cache-dtype fp8_e4m3`` and ``--max-running-requests``;
* :func:`trtllm_settings` -- TensorRT-LLM's LLM API with ``DraftTargetDecodingConfig(max_draft_len,
  speculative_model, draft_len_schedule)``: one configuration whose ``draft_len_schedule`` (batch
  size -> draft length) carries the per-batch ``gamma*``;
* :func:`llamacpp_command` -- ``llama-server -m TARGET.gguf -md DRAFT.gguf --spec-draft-n-max gamma``;
* :func:`check_tensor_parallel` -- the device counts the engines can shard a model's heads over;
* :func:`engine_settings` -- all four, as one mapping for ``--json``, each with the engine version
  its flags were checked against (:data:`ENGINES`; the sources are listed in ``data/engines.md``).
"""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import dataclass
from typing import Any

from sdsl.model.throughput import optimal_gamma, tokens_per_flop
from sdsl.validation import as_open_unit, as_positive

__all__ = [
    "ENGINES",
    "ENGINE_DTYPES",
    "DRAFT_PLACEHOLDER",
    "TARGET_PLACEHOLDER",
    "IntegerDraftLength",
    "integer_draft_length",
    "vllm_speculative_config",
    "vllm_command",
    "sglang_flags",
    "sglang_command",
    "trtllm_settings",
    "llamacpp_command",
    "check_tensor_parallel",
    "tensor_parallel_choices",
    "engine_settings",
]

#: Written where the draft's repository id or path is not known.
DRAFT_PLACEHOLDER = "<draft-model>"
#: Written where the target's repository id or path is not known.
TARGET_PLACEHOLDER = "<target-model>"

#: The engine version each engine's settings were checked against, and what a deployment needs
#: (the files and commits read are listed in data/engines.md).
ENGINES: dict[str, dict[str, str]] = {
    "vllm": {
        "name": "vLLM",
        "checked_against": "vLLM 0.25.0 (documentation; vllm/config/speculative.py at commit 002e77c1)",
        "requires": "a release after 0.13.0: 0.13.0 raises NotImplementedError for method draft_model",
    },
    "sglang": {
        "name": "SGLang",
        "checked_against": "SGLang main (docs/advanced_features/server_arguments.md at commit 004813e1)",
        "requires": "a release with --speculative-algorithm STANDALONE",
    },
    "trtllm": {
        "name": "TensorRT-LLM",
        "checked_against": "TensorRT-LLM 1.3.0rc29 (LLM API reference; tensorrt_llm/llmapi/llm_args.py)",
        "requires": "the PyTorch backend (DraftTargetDecodingConfig supports no other); draft_len_schedule is "
        "a developer interface of the LLM API",
    },
    "llamacpp": {
        "name": "llama.cpp",
        "checked_against": "llama.cpp master (tools/server/README.md at commit 00dc8057)",
        "requires": "a build with --spec-draft-n-max (older builds call it --draft-max, since removed)",
    },
}

#: The precision of weights and KV cache (``sdsl plan --dtype``) in each engine's terms.
ENGINE_DTYPES: dict[str, dict[str, str]] = {
    "bf16": {"torch": "bfloat16", "gguf": "bf16", "kv_gguf": "bf16"},
    "fp16": {"torch": "float16", "gguf": "f16", "kv_gguf": "f16"},
    "fp32": {"torch": "float32", "gguf": "f32", "kv_gguf": "f32"},
    "fp8": {"torch": "", "gguf": "q8_0", "kv_gguf": "q8_0"},
}


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


def check_tensor_parallel(tp: int, heads: int, kv_heads: int, what: str) -> str | None:
    """Why ``tp`` devices cannot shard a model's attention, or None when they can.

    vLLM, SGLang and TensorRT-LLM give each device ``heads / tp`` query heads, so ``tp`` must
    divide ``heads``; key-value heads are split when ``kv_heads >= tp`` (``tp`` must divide them)
    and replicated otherwise (``kv_heads`` must divide ``tp``)."""
    if heads % tp:
        return f"{tp} devices cannot share the {heads} attention heads of {what} evenly"
    if (kv_heads >= tp and kv_heads % tp) or (kv_heads < tp and tp % kv_heads):
        return f"{tp} devices cannot share or replicate the {kv_heads} key-value heads of {what} evenly"
    return None


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def tensor_parallel_choices(heads: int, kv_heads: int) -> list[int]:
    """Device counts that can shard ``heads`` query and ``kv_heads`` key-value heads."""
    return [t for t in _divisors(heads) if check_tensor_parallel(t, heads, kv_heads, "") is None]


def vllm_speculative_config(
    num_speculative_tokens: int, draft_model: str | None = None, draft_tp: int = 1, dtype: str | None = None
) -> dict[str, object]:
    """vLLM's ``--speculative-config`` for a separate draft model.

    Parameters
    ----------
    num_speculative_tokens : int
        Tokens the draft proposes per iteration (the integer ``gamma``), >= 1.
    draft_model : str, optional
        The draft's repository id or local path (placeholder when None).
    draft_tp : int
        ``draft_tensor_parallel_size`` (1 or the target's; written when above 1).
    dtype : str, optional
        ``"fp8"`` adds ``"quantization": "fp8"`` (vLLM does not carry the target's to a draft model).

    Returns
    -------
    dict
        ``{"method": "draft_model", "model": draft_model, "num_speculative_tokens": gamma, ...}``.
    """
    cfg: dict[str, object] = {
        "method": "draft_model",
        "model": draft_model or DRAFT_PLACEHOLDER,
        "num_speculative_tokens": _check_gamma(num_speculative_tokens),
    }
    if draft_tp > 1:
        cfg["draft_tensor_parallel_size"] = int(draft_tp)
    if dtype == "fp8":
        cfg["quantization"] = "fp8"
    return cfg


def _vllm_deployment(tp: int, dtype: str | None, batch: int | None) -> list[str]:
    out = ["--tensor-parallel-size", str(tp)] if tp > 1 else []
    if dtype == "fp8":
        out += ["--quantization", "fp8", "--kv-cache-dtype", "fp8"]
    elif dtype is not None:
        out += ["--dtype", ENGINE_DTYPES[dtype]["torch"]]
    return out + (["--max-num-seqs", str(batch)] if batch is not None else [])


def vllm_command(
    num_speculative_tokens: int,
    target_model: str | None = None,
    draft_model: str | None = None,
    tp: int = 1,
    dtype: str | None = None,
    batch: int | None = None,
    draft_tp: int | None = None,
) -> str:
    """A ready-to-paste ``vllm serve`` command line with the speculative config as JSON (none when
    ``num_speculative_tokens`` is 0: plain decoding)."""
    args = ["vllm", "serve", target_model or TARGET_PLACEHOLDER, *_vllm_deployment(tp, dtype, batch)]
    if num_speculative_tokens:
        cfg = vllm_speculative_config(num_speculative_tokens, draft_model, tp if draft_tp is None else draft_tp, dtype)
        args += ["--speculative-config", json.dumps(cfg, separators=(", ", ": "))]
    return " ".join(shlex.quote(a) for a in args)


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


def sglang_command(
    num_steps: int,
    target_model: str | None = None,
    draft_model: str | None = None,
    tp: int = 1,
    dtype: str | None = None,
    batch: int | None = None,
) -> str:
    """A ready-to-paste ``python -m sglang.launch_server`` command line (no speculation when
    ``num_steps`` is 0)."""
    args = ["python", "-m", "sglang.launch_server", "--model-path", target_model or TARGET_PLACEHOLDER]
    args += ["--tp", str(tp)] if tp > 1 else []
    if dtype == "fp8":
        args += ["--quantization", "fp8", "--kv-cache-dtype", "fp8_e4m3"]
    elif dtype is not None:
        args += ["--dtype", ENGINE_DTYPES[dtype]["torch"]]
    args += ["--max-running-requests", str(batch)] if batch is not None else []
    args += sglang_flags(num_steps, draft_model) if num_steps else []
    return " ".join(shlex.quote(a) for a in args)


def trtllm_settings(
    gamma_by_batch: list[tuple[int, int]],
    target_model: str | None = None,
    draft_model: str | None = None,
    tp: int = 1,
    dtype: str | None = None,
    planned_batches: bool = True,
) -> dict[str, object]:
    """TensorRT-LLM's LLM API arguments and a ready-to-paste Python line.

    ``speculative_config`` is ``DraftTargetDecodingConfig(max_draft_len, speculative_model,
    draft_len_schedule)``: the schedule maps a batch size to the draft length used from that size
    on; TensorRT-LLM requires it to hold batch size 1 at ``max_draft_len`` and no length above it,
    so batch 1 gets the largest planned length. With one batch size the schedule is left out."""
    gmax = max(g for _, g in gamma_by_batch)
    spec: dict[str, object] = {
        "decoding_type": "Draft_Target",
        "max_draft_len": _check_gamma(gmax),
        "speculative_model": draft_model or DRAFT_PLACEHOLDER,
    }
    sched = {1: gmax, **{b: g for b, g in gamma_by_batch if b > 1}}
    if len(gamma_by_batch) > 1:
        spec["draft_len_schedule"] = sched
    llm: dict[str, object] = {"model": target_model or TARGET_PLACEHOLDER}
    if tp > 1:
        llm["tensor_parallel_size"] = tp
    if dtype is not None and dtype != "fp8":
        llm["dtype"] = ENGINE_DTYPES[dtype]["torch"]
    if planned_batches:
        llm["max_batch_size"] = max(b for b, _ in gamma_by_batch)
    imports = ["DraftTargetDecodingConfig"]
    kw = [f"{k}={v!r}" for k, v in llm.items()]
    if dtype == "fp8":
        llm["kv_cache_config"] = {"dtype": "fp8"}
        imports.append("KvCacheConfig")
        kw.append("kv_cache_config=KvCacheConfig(dtype='fp8')")
    args = ", ".join(f"{k}={v!r}" for k, v in spec.items() if k != "decoding_type")
    kw.append(f"speculative_config=DraftTargetDecodingConfig({args})")
    llm["speculative_config"] = {
        **spec,
        **({"draft_len_schedule": {str(b): g for b, g in sched.items()}} if "draft_len_schedule" in spec else {}),
    }
    code = (
        f"from tensorrt_llm import LLM; from tensorrt_llm.llmapi import {', '.join(imports)}; "
        f"llm = LLM({', '.join(kw)})"
    )
    return {"llm_args": llm, "speculative_config": llm["speculative_config"], "command": code}


def _gguf(model: str | None, placeholder: str, dtype: str | None) -> str:
    name = (model or placeholder).rstrip("/").split("/")[-1]
    return f"{name}.{ENGINE_DTYPES[dtype or 'bf16']['gguf']}.gguf"


def llamacpp_command(
    gamma: int,
    target_model: str | None = None,
    draft_model: str | None = None,
    tp: int = 1,
    dtype: str | None = None,
    batch: int | None = None,
) -> str:
    """A ready-to-paste ``llama-server`` command line: the target and the draft as GGUF files (named
    after the models and the precision), ``--spec-draft-n-max`` the draft length, drafting not cut
    short (``--spec-draft-n-min 0 --spec-draft-p-min 0``: Theorem 3.8's fixed length), every layer
    on the GPUs, the weights split by rows over ``tp`` devices and ``batch`` server slots."""
    args = ["llama-server", "-m", _gguf(target_model, TARGET_PLACEHOLDER, dtype), "-ngl", "99"]
    if gamma:
        args += ["-md", _gguf(draft_model, DRAFT_PLACEHOLDER, dtype), "-ngld", "99"]
        args += ["--spec-draft-n-max", str(_check_gamma(gamma)), "--spec-draft-n-min", "0", "--spec-draft-p-min", "0"]
    if tp > 1:
        args += ["-sm", "row", "-ts", ",".join(["1"] * tp)]
    if dtype is not None:
        kv = ENGINE_DTYPES[dtype]["kv_gguf"]
        args += ["-ctk", kv, "-ctv", kv] + (["-ctkd", kv, "-ctvd", kv] if gamma else [])
    args += ["-np", str(batch)] if batch is not None else []
    return " ".join(shlex.quote(a) for a in args)


def engine_settings(
    gamma: int,
    target_model: str | None = None,
    draft_model: str | None = None,
    tp: int = 1,
    dtype: str | None = None,
    gamma_by_batch: list[tuple[int, int]] | None = None,
    draft_tp: int | None = None,
) -> dict[str, Any]:
    """vLLM, SGLang, TensorRT-LLM and llama.cpp settings, as printed by ``sdsl plan --json``.

    Parameters
    ----------
    gamma : int
        The draft length of a deployment with no planned batch sizes.
    target_model, draft_model : str, optional
        Repository ids or paths (placeholders when None).
    tp : int
        Devices in tensor parallel (the plan's ``--gpus``).
    dtype : str, optional
        ``bf16``, ``fp16``, ``fp8`` or ``fp32`` (the plan's; None: the engines' defaults).
    gamma_by_batch : list of (int, int), optional
        ``(batch, gamma)`` of each planned batch size: one command per batch size (``--max-num-seqs``,
        ``--max-running-requests``, ``-np``) and TensorRT-LLM's ``draft_len_schedule``.
    draft_tp : int, optional
        vLLM's ``draft_tensor_parallel_size`` (default ``tp``).

    Returns
    -------
    dict
        ``{"vllm": {...}, "sglang": {...}, "trtllm": {...}, "llamacpp": {...}}``, each with
        ``command``, ``version`` and ``requires`` (and ``by_batch`` where there are batch sizes);
        ``None`` for each and a ``note`` when every draft length is 0 (speculation does not pay:
        serve without it)."""
    planned = gamma_by_batch is not None
    pairs = list(gamma_by_batch) if gamma_by_batch is not None else [(1, int(gamma))]
    if all(g < 1 for _, g in pairs):
        return {
            "vllm": None,
            "sglang": None,
            "trtllm": None,
            "llamacpp": None,
            "note": "the best draft length is 0: speculation does not pay here; serve without it",
        }
    first = next(g for _, g in pairs if g >= 1)
    dtp = tp if draft_tp is None else draft_tp

    def by_batch(make) -> list[dict[str, object]]:
        return [{"batch": b, "gamma": g, "command": make(g, b)} for b, g in pairs] if planned else []

    def vl(g: int, b: int | None) -> str:
        return vllm_command(g, target_model, draft_model, tp, dtype, b, dtp)

    def sg(g: int, b: int | None) -> str:
        return sglang_command(g, target_model, draft_model, tp, dtype, b)

    def lc(g: int, b: int | None) -> str:
        return llamacpp_command(g, target_model, draft_model, tp, dtype, b)

    b0 = next(b for b, g in pairs if g >= 1) if planned else None
    out: dict[str, dict[str, Any]] = {
        "vllm": {
            "speculative_config": vllm_speculative_config(first, draft_model, dtp, dtype),
            "command": vl(first, b0),
            "by_batch": by_batch(vl),
        },
        "sglang": {"flags": sglang_flags(first, draft_model), "command": sg(first, b0), "by_batch": by_batch(sg)},
        "trtllm": trtllm_settings(pairs, target_model, draft_model, tp, dtype, planned),
        "llamacpp": {"command": lc(first, b0), "by_batch": by_batch(lc)},
    }
    for key, e in out.items():
        e.update(version=ENGINES[key]["checked_against"], requires=ENGINES[key]["requires"])
    out["llamacpp"]["note"] = (
        "llama.cpp reads GGUF files: convert each model with convert_hf_to_gguf.py --outtype "
        f"{ENGINE_DTYPES[dtype or 'bf16']['gguf']}"
        + (" (llama.cpp has no fp8: q8_0 is its 8-bit format)" if dtype == "fp8" else "")
        + (
            "; -sm row splits the weights over the GPUs, not the ideal tensor parallel of the roofline"
            if tp > 1
            else ""
        )
    )
    if dtype == "fp8":
        out["trtllm"]["note"] = (
            "give an FP8-quantised checkpoint as model: the LLM API's quant_config belongs to the TensorRT "
            "backend, not to the PyTorch backend that DraftTargetDecodingConfig needs"
        )
    return out
