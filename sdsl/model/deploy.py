"""From a planned optimum to settings a serving engine takes: an integer draft length and flags.

Engines draft a whole number of tokens per iteration; the paper's optimum ``gamma*`` is the
maximiser of its continuous relaxation (method notes, section 3). This module gives

* :func:`integer_draft_length` -- the best integer ``gamma`` at a draft size ``N`` (the floor or
  the ceiling of ``gamma*``: Eq. 9 is unimodal in ``gamma``) and the share of throughput that
  rounding gives up, ``1 - T(N, gamma_int) / T(N, gamma*)``;
* :func:`vllm_speculative_config` and :func:`vllm_command` -- vLLM's ``--speculative-config`` JSON for a
  separate draft model, ``{"method": "draft_model", "model": ..., "num_speculative_tokens": ...,
  "draft_tensor_parallel_size": ...}`` (written every time; vLLM rejects ``tensor_parallel_size``
  inside it), with ``use_heterogeneous_vocab`` for a draft of another vocabulary size and
  ``num_speculative_tokens_per_batch_size`` (:func:`vllm_schedule`) for one server over several
  batch sizes, and ``--tensor-parallel-size``, ``--dtype`` or ``--quantization fp8 --kv-cache-dtype
  fp8``, ``--max-model-len`` and ``--max-num-seqs``;
* :func:`sglang_flags` and :func:`sglang_command` -- SGLang's standalone (small draft model)
  speculative decoding, ``--speculative-algorithm STANDALONE --speculative-draft-model-path ...
  --speculative-num-steps gamma --speculative-eagle-topk 1 --speculative-num-draft-tokens gamma+1``
  (with top-k 1 the verified tokens are ``num_steps + 1``), with ``--tp``, ``--dtype`` or
  ``--quantization fp8 --kv-cache-dtype fp8_e4m3 --speculative-draft-model-quantization fp8``,
  ``--context-length`` and ``--max-running-requests``;
* :func:`trtllm_settings` -- TensorRT-LLM's LLM API with ``DraftTargetDecodingConfig(max_draft_len,
  speculative_model, draft_len_schedule)``: one configuration whose ``draft_len_schedule`` (batch
  size -> draft length) carries the per-batch ``gamma*``, ``max_seq_len`` the context, and at fp8
  the FP8 checkpoints (:func:`fp8_checkpoint`), not the bf16 ones;
* :func:`llamacpp_command` -- ``llama-server -m TARGET.gguf -ngl all -md DRAFT.gguf -ngld all
  --spec-type draft-simple --spec-draft-n-max gamma -np slots -c context*slots``;
* :func:`check_tensor_parallel` -- the device counts the engines can shard a model's heads over;
* :func:`engine_settings` -- all four, as one mapping for ``--json``, each with the engine version
  its flags were checked against and the installable requirement its features need
  (:data:`ENGINES` and :func:`engine_requirement`, read from ``data/engine_versions.csv``; the
  sources are listed in ``data/engines.md``), or, where an engine refuses the pair
  (:mod:`sdsl.model.engine_rules`) or the deployment does not fit memory, the reason instead of a
  command.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sdsl.model.throughput import optimal_gamma, tokens_per_flop
from sdsl.validation import as_open_unit, as_positive

__all__ = [
    "ENGINE_KEYS",
    "ENGINES",
    "engine_requirement",
    "fp8_checkpoint",
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
    "vllm_schedule",
    "engine_settings",
]

#: Written where the draft's repository id or path is not known.
DRAFT_PLACEHOLDER = "<draft-model>"
#: Written where the target's repository id or path is not known.
TARGET_PLACEHOLDER = "<target-model>"

#: The engines, in the order ``sdsl plan`` prints them.
ENGINE_KEYS: tuple[str, ...] = ("vllm", "sglang", "trtllm", "llamacpp")

#: Every command of an engine uses this feature of ``data/engine_versions.csv``.
_BASE_FEATURE = {
    "vllm": "draft_model",
    "sglang": "STANDALONE",
    "trtllm": "DraftTargetDecodingConfig",
    "llamacpp": "--spec-type draft-simple",
}


def _version_key(version: str) -> tuple[int, ...]:
    """``0.15.0`` -> (0, 15, 0, 1, 0); ``1.3.0rc27`` -> (1, 3, 0, 0, 27) (a release candidate sorts
    before its release); ``b9464`` -> (9464, 1, 0)."""
    main, _, rc = version.lstrip("b").partition("rc")
    nums = tuple(int(x) for x in main.split(".") if x)
    return nums + ((0, int(rc)) if rc else (1, 0))


def _load_engines() -> dict[str, dict[str, Any]]:
    """``data/engine_versions.csv`` by engine: its name, what its flags were checked against, the
    requirement of its base feature and every feature's row."""
    from sdsl.data import records

    out: dict[str, dict[str, Any]] = {}
    for r in records("engine_versions"):
        e = out.setdefault(r["engine"], {"name": r["name"], "checked_against": r["checked_against"], "features": {}})
        e["features"][r["feature"]] = {k: r[k] for k in ("used_when", "requirement", "version", "source")}
    for key, e in out.items():
        base = e["features"][_BASE_FEATURE[key]]
        e.update(requires=base["requirement"], requires_source=base["source"])
    return {k: out[k] for k in ENGINE_KEYS}


#: Each engine's name, what its flags were checked against (``checked_against``), the installable
#: requirement of its base feature (``requires``) and every feature's requirement and source
#: (``features``), read from ``data/engine_versions.csv`` (the files read: ``data/engines.md``).
ENGINES: dict[str, dict[str, Any]] = _load_engines()


def engine_requirement(engine: str, features: Iterable[str] = ()) -> dict[str, str]:
    """The requirement an engine's command needs: the highest version among its base feature and
    ``features``, with the feature and the source it comes from."""
    e = ENGINES[engine]
    names = [_BASE_FEATURE[engine], *features]
    unknown = [f for f in names if f not in e["features"]]
    if unknown:
        raise KeyError(
            f"data/engine_versions.csv has no {engine} feature {unknown[0]!r}; known: {sorted(e['features'])}"
        )
    top = max(names, key=lambda f: _version_key(e["features"][f]["version"]))
    row = e["features"][top]
    return {"requirement": row["requirement"], "feature": top, "source": row["source"]}


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


def fp8_checkpoint(model: str | None, placeholder: str) -> str:
    """What TensorRT-LLM takes as ``model`` at ``--dtype fp8``: a placeholder naming the FP8
    checkpoint of ``model`` (its PyTorch backend quantises no weights on load)."""
    return f"<FP8 checkpoint of {model}>" if model else placeholder.replace("<", "<FP8 ", 1)


def vllm_speculative_config(
    num_speculative_tokens: int,
    draft_model: str | None = None,
    draft_tp: int = 1,
    dtype: str | None = None,
    heterogeneous_vocab: bool = False,
    schedule: list[tuple[int, int, int]] | None = None,
) -> dict[str, object]:
    """vLLM's ``--speculative-config`` for a separate draft model.

    Parameters
    ----------
    num_speculative_tokens : int
        Tokens the draft proposes per iteration (the integer ``gamma``; with ``schedule``, the largest), >= 1.
    draft_model : str, optional
        The draft's repository id or local path (placeholder when None).
    draft_tp : int
        ``draft_tensor_parallel_size``, 1 or the target's (``_verify_and_get_draft_tp``): written every
        time, since left out it defaults to the target's and shards the draft's heads with it.
    dtype : str, optional
        ``"fp8"`` adds ``"quantization": "fp8"`` (vLLM does not carry the target's to a draft model).
    heterogeneous_vocab : bool
        ``"use_heterogeneous_vocab": true``: vLLM 0.25.0's token-level intersection, for a draft whose
        vocabulary size is not the target's.
    schedule : list of (int, int, int), optional
        ``num_speculative_tokens_per_batch_size``: ``(first batch, last batch, draft length)``.

    Returns
    -------
    dict
        ``{"method": "draft_model", "model": draft_model, "num_speculative_tokens": gamma,
        "draft_tensor_parallel_size": ..., ...}``.
    """
    g = _check_gamma(num_speculative_tokens)
    cfg: dict[str, object] = {
        "method": "draft_model",
        "model": draft_model or DRAFT_PLACEHOLDER,
        "num_speculative_tokens": g,
        "draft_tensor_parallel_size": int(draft_tp),
    }
    if dtype == "fp8":
        cfg["quantization"] = "fp8"
    if heterogeneous_vocab:
        cfg["use_heterogeneous_vocab"] = True
    if schedule:
        if schedule[0][0] != 1 or any(b[0] != a[1] + 1 for a, b in zip(schedule, schedule[1:])):
            raise ValueError(
                f"num_speculative_tokens_per_batch_size must cover batch 1 on without gaps, got {schedule}"
            )
        if any(not 0 <= k <= g for _, _, k in schedule):
            raise ValueError(f"every draft length of the schedule must lie in [0, {g}], got {schedule}")
        cfg["num_speculative_tokens_per_batch_size"] = [list(e) for e in schedule]
    return cfg


def vllm_schedule(gamma_by_batch: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """``num_speculative_tokens_per_batch_size`` of the planned batch sizes: each size's draft length
    from the size above the previous one up to it (``[1, b1, g1], [b1 + 1, b2, g2], ...``)."""
    pairs = sorted((int(b), int(g)) for b, g in gamma_by_batch)
    out, lo = [], 1
    for b, g in pairs:
        out.append((lo, b, g))
        lo = b + 1
    return out


def _vllm_deployment(tp: int, dtype: str | None, batch: int | None, context: int | None) -> list[str]:
    out = ["--tensor-parallel-size", str(tp)]
    if dtype == "fp8":
        out += ["--quantization", "fp8", "--kv-cache-dtype", "fp8"]
    elif dtype is not None:
        out += ["--dtype", ENGINE_DTYPES[dtype]["torch"]]
    out += ["--max-model-len", str(context)] if context else []
    return out + (["--max-num-seqs", str(batch)] if batch is not None else [])


def vllm_command(
    num_speculative_tokens: int,
    target_model: str | None = None,
    draft_model: str | None = None,
    tp: int = 1,
    dtype: str | None = None,
    batch: int | None = None,
    draft_tp: int | None = None,
    context: int | None = None,
    heterogeneous_vocab: bool = False,
    schedule: list[tuple[int, int, int]] | None = None,
) -> str:
    """A ready-to-paste ``vllm serve`` command line: ``--tensor-parallel-size``, the precision,
    ``--max-model-len`` (the plan's context), ``--max-num-seqs`` and the speculative config as JSON
    (none when ``num_speculative_tokens`` is 0: plain decoding). ``draft_tp`` defaults to 1."""
    args = ["vllm", "serve", target_model or TARGET_PLACEHOLDER, *_vllm_deployment(tp, dtype, batch, context)]
    if num_speculative_tokens:
        cfg = vllm_speculative_config(
            num_speculative_tokens,
            draft_model,
            1 if draft_tp is None else draft_tp,
            dtype,
            heterogeneous_vocab,
            schedule,
        )
        args += ["--speculative-config", json.dumps(cfg, separators=(", ", ": "))]
    return " ".join(shlex.quote(a) for a in args)


def sglang_flags(num_steps: int, draft_model: str | None = None) -> list[str]:
    """SGLang's flags for standalone speculative decoding with a small draft model.

    Parameters
    ----------
    num_steps : int
        Draft depth (the integer ``gamma``), >= 1; with ``--speculative-eagle-topk 1`` the server
        verifies ``num_steps + 1`` tokens (``--speculative-num-draft-tokens``; SGLang resets any other
        value to that, ``_handle_eagle_family``).
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
    context: int | None = None,
) -> str:
    """A ready-to-paste ``python -m sglang.launch_server`` command line (no speculation when
    ``num_steps`` is 0): ``--tp`` (the draft shares it), the precision of target and draft,
    ``--context-length`` (the plan's context) and ``--max-running-requests``."""
    args = ["python", "-m", "sglang.launch_server", "--model-path", target_model or TARGET_PLACEHOLDER]
    args += ["--tp", str(tp)]
    if dtype == "fp8":
        args += ["--quantization", "fp8", "--kv-cache-dtype", "fp8_e4m3"]
        args += ["--speculative-draft-model-quantization", "fp8"] if num_steps else []
    elif dtype is not None:
        args += ["--dtype", ENGINE_DTYPES[dtype]["torch"]]
    args += ["--context-length", str(context)] if context else []
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
    context: int | None = None,
) -> dict[str, object]:
    """TensorRT-LLM's LLM API arguments and a ready-to-paste Python line.

    ``speculative_config`` is ``DraftTargetDecodingConfig(max_draft_len, speculative_model,
    draft_len_schedule)``: the schedule maps a batch size to the draft length used from that size
    on; TensorRT-LLM requires it to hold batch size 1 at ``max_draft_len`` and no length above it,
    so batch 1 gets the largest planned length. With one batch size the schedule is left out.
    ``max_seq_len`` carries the plan's context; at ``fp8`` target and draft are their FP8 checkpoints
    (:func:`fp8_checkpoint`)."""
    gmax = max(g for _, g in gamma_by_batch)
    fp8 = dtype == "fp8"
    spec: dict[str, object] = {
        "decoding_type": "Draft_Target",
        "max_draft_len": _check_gamma(gmax),
        "speculative_model": fp8_checkpoint(draft_model, DRAFT_PLACEHOLDER)
        if fp8
        else draft_model or DRAFT_PLACEHOLDER,
    }
    sched = {1: gmax, **{b: g for b, g in gamma_by_batch if b > 1}}
    if len(gamma_by_batch) > 1:
        spec["draft_len_schedule"] = sched
    llm: dict[str, object] = {
        "model": fp8_checkpoint(target_model, TARGET_PLACEHOLDER) if fp8 else target_model or TARGET_PLACEHOLDER
    }
    llm["tensor_parallel_size"] = tp
    if dtype is not None and not fp8:
        llm["dtype"] = ENGINE_DTYPES[dtype]["torch"]
    if planned_batches:
        llm["max_batch_size"] = max(b for b, _ in gamma_by_batch)
    if context:
        llm["max_seq_len"] = int(context)
    imports = ["DraftTargetDecodingConfig"]
    kw = [f"{k}={v!r}" for k, v in llm.items()]
    if fp8:
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
    context: int | None = None,
) -> str:
    """A ready-to-paste ``llama-server`` command line: the target and the draft as GGUF files (named
    after the models and the precision), every layer of both on the GPUs (``-ngl all``, ``-ngld all``:
    a number would leave the layers above it on the CPU), ``--spec-type draft-simple`` (no longer
    implied by ``-md``), ``--spec-draft-n-max`` the draft length, drafting not cut short
    (``--spec-draft-n-min 0 --spec-draft-p-min 0``: Theorem 3.8's fixed length), the weights split by
    rows over ``tp`` devices, ``batch`` server slots (``-np``) and ``-c`` the total context: the plan's
    context per slot times the slots (llama.cpp divides ``-c`` among the slots). Without a context the
    slots share one KV buffer of the model's training context (``--kv-unified``)."""
    slots = 1 if batch is None else int(batch)
    args = ["llama-server", "-m", _gguf(target_model, TARGET_PLACEHOLDER, dtype), "-ngl", "all"]
    if gamma:
        args += ["-md", _gguf(draft_model, DRAFT_PLACEHOLDER, dtype), "-ngld", "all", "--spec-type", "draft-simple"]
        args += ["--spec-draft-n-max", str(_check_gamma(gamma)), "--spec-draft-n-min", "0", "--spec-draft-p-min", "0"]
    if tp > 1:
        args += ["-sm", "row", "-ts", ",".join(["1"] * tp)]
    if dtype is not None:
        kv = ENGINE_DTYPES[dtype]["kv_gguf"]
        args += ["-ctk", kv, "-ctv", kv] + (["-ctkd", kv, "-ctvd", kv] if gamma else [])
    args += ["-np", str(slots)] if batch is not None else []
    args += ["-c", str(int(context) * slots)] if context else ["--kv-unified"]
    return " ".join(shlex.quote(a) for a in args)


_DYNAMIC_SD_NOTE = (
    "num_speculative_tokens_per_batch_size carries the plan's draft length per batch size in one server; vLLM "
    "documents it as tested with EAGLE, EAGLE-3 and DFlash, not with draft models "
    "(docs/features/speculative_decoding/dynamic_speculative_decoding.md)"
)


def engine_settings(
    gamma: int,
    target_model: str | None = None,
    draft_model: str | None = None,
    tp: int = 1,
    dtype: str | None = None,
    gamma_by_batch: list[tuple[int, int]] | None = None,
    draft_tp: int | None = None,
    *,
    context: int | None = None,
    verdicts: Mapping[str, Mapping[str, Any]] | None = None,
    drafts: Mapping[str, tuple[str | None, list[tuple[int, int]]]] | None = None,
    refused: str | None = None,
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
        ``(batch, gamma)`` of each planned batch size: vLLM's one server with
        ``num_speculative_tokens_per_batch_size``, TensorRT-LLM's ``draft_len_schedule``, and one SGLang
        and llama.cpp command per batch size (``--max-running-requests``, ``-np``).
    draft_tp : int, optional
        vLLM's ``draft_tensor_parallel_size`` when no verdict gives it (default 1).
    context : int, optional
        Tokens per sequence (``--max-model-len``, ``--context-length``, ``max_seq_len``, ``-c`` per slot).
    verdicts : mapping, optional
        ``{engine: Verdict.as_dict()}`` of :func:`sdsl.model.engine_rules.check_pair` for the draft each
        engine takes: a refused engine gets no command but its reasons; an accepted one the settings
        (``draft_tp``, ``heterogeneous_vocab``) and the version its features need.
    drafts : mapping, optional
        ``{engine: (draft id, gamma_by_batch)}`` for an engine that takes another draft than
        ``draft_model`` (its own draft lengths).
    refused : str, optional
        One line refusing every engine (the deployment does not fit memory).

    Returns
    -------
    dict
        ``{"vllm": {...}, "sglang": {...}, "trtllm": {...}, "llamacpp": {...}}``, each with
        ``command`` (None when refused, with ``refused`` saying why), ``version`` (checked against),
        ``requires`` (the installable requirement) and ``requires_source``, ``draft`` (the draft it
        serves) and ``by_batch`` where there are batch sizes; ``None`` for each and a ``note`` when
        every draft length is 0 (speculation does not pay: serve without it)."""
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
    ctx = int(context) if context else None
    out: dict[str, Any] = {}
    for key in ENGINE_KEYS:
        v = dict((verdicts or {}).get(key) or {})
        dm, ps = (drafts or {}).get(key, (draft_model, pairs))
        ps = list(ps)
        feats = list(v.get("features", []))  # and what the command writes:
        if key == "vllm" and planned and len(ps) > 1:
            feats.append("num_speculative_tokens_per_batch_size")
        if key == "vllm" and v.get("settings", {}).get("heterogeneous_vocab"):
            feats.append("use_heterogeneous_vocab")
        if key == "sglang" and dtype == "fp8":
            feats.append("speculative_draft_model_quantization")
        req = engine_requirement(key, feats)
        base = {
            "version": ENGINES[key]["checked_against"],
            "requires": req["requirement"],
            "requires_source": f"{req['feature']}: {req['source']}",
            "draft": dm,
            "caveats": list(v.get("caveats", [])),
        }
        why = refused or ("; ".join(v["reasons"]) if v.get("reasons") else None)
        if why or all(g < 1 for _, g in ps):
            out[key] = {**base, "command": None, "by_batch": [], "refused": why or "the best draft length is 0"}
            continue
        out[key] = {**base, **_engine_entry(key, dm, ps, planned, target_model, tp, dtype, ctx, v, draft_tp)}
    notes = {
        "vllm": _DYNAMIC_SD_NOTE if planned and len(pairs) > 1 else "",
        "llamacpp": "llama.cpp reads GGUF files: convert each model with convert_hf_to_gguf.py --outtype "
        f"{ENGINE_DTYPES[dtype or 'bf16']['gguf']}"
        + (" (llama.cpp has no fp8: q8_0 is its 8-bit format)" if dtype == "fp8" else "")
        + (
            "; -sm row splits the weights over the GPUs, not the ideal tensor parallel of the roofline"
            if tp > 1
            else ""
        ),
        "trtllm": "give FP8-quantised checkpoints of target and draft (e.g. by NVIDIA TensorRT Model Optimizer): the "
        "LLM API's quant_config belongs to the TensorRT backend, not to the PyTorch backend that "
        "DraftTargetDecodingConfig needs"
        if dtype == "fp8"
        else "",
    }
    for key in ENGINE_KEYS:
        text = "; ".join(
            x
            for x in (
                notes.get(key, ""),
                "" if ctx else "no --context planned: the engine takes the model's own maximum",
            )
            if x
        )
        if text and out[key].get("command"):
            out[key]["note"] = text
    return out


def _engine_entry(
    key: str,
    dm: str | None,
    ps: list[tuple[int, int]],
    planned: bool,
    target_model: str | None,
    tp: int,
    dtype: str | None,
    ctx: int | None,
    v: Mapping[str, Any],
    draft_tp: int | None,
) -> dict[str, Any]:
    """The command(s) of one engine for draft ``dm`` with draft lengths ``ps``."""
    s = v.get("settings", {})
    first = next(g for _, g in ps if g >= 1)
    b0 = next(b for b, g in ps if g >= 1) if planned else None
    if key == "vllm":
        dtp = int(s.get("draft_tp", 1 if draft_tp is None else draft_tp))
        het = bool(s.get("heterogeneous_vocab", False))
        if planned and len(ps) > 1:
            sched = vllm_schedule(ps)
            gmax = max(g for _, g in ps)
            bmax = max(b for b, _ in ps)
            cfg = vllm_speculative_config(gmax, dm, dtp, dtype, het, sched)
            cmd = vllm_command(gmax, target_model, dm, tp, dtype, bmax, dtp, ctx, het, sched)
            return {"speculative_config": cfg, "command": cmd, "by_batch": [], "schedule": [list(e) for e in sched]}
        cfg = vllm_speculative_config(first, dm, dtp, dtype, het)
        return {
            "speculative_config": cfg,
            "command": vllm_command(first, target_model, dm, tp, dtype, b0, dtp, ctx, het),
            "by_batch": [],
        }
    if key == "sglang":

        def sg(g: int, b: int | None) -> str:
            return sglang_command(g, target_model, dm, tp, dtype, b, ctx)

        by = [{"batch": b, "gamma": g, "command": sg(g, b)} for b, g in ps] if planned else []
        return {"flags": sglang_flags(first, dm), "command": sg(first, b0), "by_batch": by}
    if key == "trtllm":
        return {**trtllm_settings(ps, target_model, dm, tp, dtype, planned, ctx), "by_batch": []}

    def lc(g: int, b: int | None) -> str:
        return llamacpp_command(g, target_model, dm, tp, dtype, b, ctx)

    by = [{"batch": b, "gamma": g, "command": lc(g, b)} for b, g in ps] if planned else []
    return {"command": lc(first, b0), "by_batch": by}
