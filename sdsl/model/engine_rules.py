"""What each serving engine accepts of a (target, draft) pair, and whether the deployment fits memory.

Every rule a command of ``sdsl plan`` must pass is written once here, in :data:`RULES`, with the
engine's source it comes from (file, function, commit or release; the sources read are listed in
``data/engines.md``):

* **vLLM** (``method: draft_model``): the vocabulary sizes of the two ``config.json`` equal
  (``verify_equal_vocab_size_if_draft_model``), or ``use_heterogeneous_vocab`` written (vLLM 0.25.0
  on, greedy draft sampling only); ``draft_tensor_parallel_size`` 1 or the target's
  (``_verify_and_get_draft_tp``), written every time, and the draft's attention heads divisible by it
  (``ModelConfig.verify_with_parallel_config`` on the draft's parallel config).
* **SGLang** (``--speculative-algorithm STANDALONE``): the draft runs in the target's tensor-parallel
  layout (``draft_parallel.py``: ``TARGET_LAYOUT`` for a standalone draft), so its heads must divide
  the target's ``--tp`` (``models/*.py``: ``assert self.total_num_heads % tp_size == 0``); equal
  vocabularies (``standalone_worker_v2.py`` ``_validate_vocab_compatibility``).
* **TensorRT-LLM** (``DraftTargetDecodingConfig``, PyTorch backend): the draft engine is built with the
  target's ``mapping`` (``py_executor_creator.py``), so it shares the tensor parallelism; draft and
  target share a vocabulary (``examples/draft_target_model/README.md``); FP8 weights come from an FP8
  checkpoint (the PyTorch backend has no on-the-fly weight quantisation: ``quant_config`` belongs to the
  TensorRT backend); no OPT or OLMo 2 model in ``tensorrt_llm/_torch/models``.
* **llama.cpp** (``--spec-type draft-simple``): no tensor-parallel constraint (``-sm row`` splits rows);
  the vocabularies compatible by ``common_speculative_are_compatible`` (same type, BOS/EOS, sizes within
  128, the same token texts); no OPT model (``src/models``).

:func:`check_pair` applies them to one pair at a number of devices and a precision and returns a
:class:`Verdict` per engine: accepted (with the settings the command must carry, e.g. the draft's
tensor parallel size) or refused (one line per reason). :func:`compatible_drafts` lists the preset
drafts of a target's tokenizer group with their verdicts; :func:`memory_fit` says whether weights and
KV caches fit ``gpus`` devices (:func:`sdsl.model.hardware.memory_needed`) and, when not, the smallest
number of devices that does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sdsl.model import hardware as H
from sdsl.model.deploy import ENGINE_KEYS, check_tensor_parallel, tensor_parallel_choices

__all__ = [
    "Rule",
    "RULES",
    "rule",
    "ModelSpec",
    "Verdict",
    "check_pair",
    "compatible_drafts",
    "MemoryFit",
    "memory_fit",
    "LLAMACPP_MAX_VOCAB_DIFFERENCE",
]

#: ``SPEC_VOCAB_MAX_SIZE_DIFFERENCE`` of llama.cpp's ``common/speculative.cpp``.
LLAMACPP_MAX_VOCAB_DIFFERENCE = 128


@dataclass(frozen=True)
class Rule:
    """One condition an engine puts on a draft-model deployment, and where the engine says so."""

    engine: str
    key: str
    text: str
    source: str


_V = "vllm-project/vllm"
_S = "sgl-project/sglang"
_T = "NVIDIA/TensorRT-LLM"
_L = "ggml-org/llama.cpp"

#: Every rule :func:`check_pair` applies, with its source.
RULES: tuple[Rule, ...] = (
    Rule(
        "vllm",
        "vocab",
        "the draft's and the target's config.json vocab_size are equal, unless use_heterogeneous_vocab is set",
        f"{_V} vllm/config/speculative.py SpeculativeConfig.verify_equal_vocab_size_if_draft_model, called by "
        "_verify_args when not use_heterogeneous_vocab (commit 002e77c1; vllm 0.25.0 wheel)",
    ),
    Rule(
        "vllm",
        "heterogeneous_vocab",
        "use_heterogeneous_vocab needs method draft_model and draft_sample_method greedy (the default)",
        f"{_V} vllm/config/speculative.py SpeculativeConfig._verify_args (commit 002e77c1; field added in vllm 0.25.0)",
    ),
    Rule(
        "vllm",
        "draft_tp",
        "draft_tensor_parallel_size is 1 or the target's tensor_parallel_size; tensor_parallel_size inside the "
        "speculative config is refused",
        f"{_V} vllm/config/speculative.py SpeculativeConfig._verify_and_get_draft_tp and _verify_args (commit 002e77c1)",
    ),
    Rule(
        "vllm",
        "heads",
        "the attention heads of each model are divisible by its tensor parallel size (the draft's by "
        "draft_tensor_parallel_size)",
        f"{_V} vllm/config/model.py ModelConfig.verify_with_parallel_config, called on the draft's parallel config by "
        "SpeculativeConfig._verify_args (vllm 0.25.0 wheel)",
    ),
    Rule(
        "vllm",
        "max_model_len",
        "--max-model-len is at most the target's derived maximum (max_position_embeddings with RoPE scaling); the "
        "draft's is the smaller of its own and the target's",
        f"{_V} vllm/config/model.py _get_and_verify_max_len; vllm/config/speculative.py "
        "_maybe_override_draft_max_model_len (vllm 0.25.0 wheel)",
    ),
    Rule(
        "vllm",
        "dynamic_sd",
        "num_speculative_tokens_per_batch_size: [start, end, K] entries, the first starting at batch 1, sorted and "
        "disjoint, K >= 0 and at most num_speculative_tokens; tested by vLLM with EAGLE, EAGLE-3 and DFlash only",
        f"{_V} vllm/v1/spec_decode/dynamic/utils.py validate_and_normalize_dynamic_sd_schedule; "
        "docs/features/speculative_decoding/dynamic_speculative_decoding.md (Limitations)",
    ),
    Rule(
        "sglang",
        "draft_tp",
        "a STANDALONE draft runs in the target's tensor-parallel layout: its attention heads must divide --tp "
        "(key-value heads split or replicated)",
        f"{_S} python/sglang/srt/speculative/draft_parallel.py legacy_draft_parallel_spec (TARGET_LAYOUT) and "
        "standalone_worker_v2.py draft_tp_context; models/qwen2.py, llama.py, gemma2.py, olmo2.py: assert "
        "self.total_num_heads % tp_size == 0 (sglang 0.5.23 wheel)",
    ),
    Rule(
        "sglang",
        "vocab",
        "the draft's vocab_size equals the target's and the tokenizers map the same tokens to the same ids",
        f"{_S} python/sglang/srt/speculative/standalone_worker_v2.py _validate_vocab_compatibility (sglang 0.5.15 on)",
    ),
    Rule(
        "sglang",
        "context_length",
        "--context-length is at most the derived context length of the target and of the draft (the draft gets the "
        "target's), unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set",
        f"{_S} python/sglang/srt/configs/model_config.py ModelConfig._derive_context_length (sglang 0.5.23 wheel)",
    ),
    Rule(
        "trtllm",
        "draft_tp",
        "the draft engine is built with the target's mapping: it shares the tensor parallelism, so its heads must "
        "divide tensor_parallel_size",
        f"{_T} tensorrt_llm/_torch/pyexecutor/py_executor_creator.py create_py_executor: "
        "PyTorchModelEngine(model_path=spec_config.speculative_model, mapping=mapping, is_draft_model=True)",
    ),
    Rule(
        "trtllm",
        "vocab",
        "draft and target share the same vocabulary",
        f"{_T} examples/draft_target_model/README.md (two models sharing the same vocabulary); "
        "docs/source/features/speculative-decoding.md (Draft/Target: the same tokenizer)",
    ),
    Rule(
        "trtllm",
        "fp8",
        "FP8 weights come from an FP8 checkpoint given as model: the PyTorch backend that DraftTargetDecodingConfig "
        "needs takes no quant_config",
        f"{_T} tensorrt_llm/llmapi/llm_args.py DraftTargetDecodingConfig.supports_backend ('pytorch'); quant_config "
        "on TrtLlmArgs only",
    ),
    Rule(
        "trtllm",
        "architecture",
        "the PyTorch backend has a model for the architecture (no OPT, no OLMo 2)",
        f"{_T} tensorrt_llm/_torch/models: no modeling_opt.py or modeling_olmo2.py in the stored snapshot",
    ),
    Rule(
        "llamacpp",
        "vocab",
        "same vocabulary type, BOS and EOS; vocabulary sizes within 128 tokens; the same token texts from id 5 on",
        f"{_L} common/speculative.cpp common_speculative_are_compatible, SPEC_VOCAB_MAX_SIZE_DIFFERENCE 128 "
        "(commit 001d906a)",
    ),
    Rule(
        "llamacpp",
        "architecture",
        "llama.cpp has a model for the architecture (no OPT)",
        f"{_L} src/models: no opt.cpp in the stored snapshot",
    ),
    Rule(
        "llamacpp",
        "context",
        "-c is the total context, shared by the -np slots (each gets -c / -np unless the KV cache is unified)",
        f"{_L} tools/server/README.md (-c, -np, --kv-unified: enabled only when the number of slots is auto; "
        "commit 00dc8057)",
    ),
)

_BY_KEY = {(r.engine, r.key): r for r in RULES}


def rule(engine: str, key: str) -> Rule:
    """The rule ``key`` of ``engine`` (``KeyError`` names the known ones)."""
    try:
        return _BY_KEY[(engine, key)]
    except KeyError:
        raise KeyError(f"no rule {key!r} for {engine!r}; known: {sorted(_BY_KEY)}") from None


#: Architectures (by tokenizer group of data/presets.csv) an engine has no model for.
_NO_MODEL = {"trtllm": {"opt": "OPT", "olmo2": "OLMo 2"}, "llamacpp": {"opt": "OPT"}}


def _int_or_none(x: Any) -> int | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return int(x)


@dataclass(frozen=True)
class ModelSpec:
    """What the rules need to know of a model (a preset row, or a user's model: unknowns are None)."""

    name: str
    params: float
    repo: str | None = None
    tokenizer: str | None = None
    vocab: int | None = None
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    tied_embeddings: int | None = None

    @classmethod
    def from_preset(cls, row: Mapping[str, Any]) -> ModelSpec:
        """A row of ``data/presets.csv`` (:func:`sdsl.data.records`)."""
        return cls(
            name=str(row["model"]),
            params=float(row["params"]),
            repo=row.get("hf_id") or None,
            tokenizer=row.get("tokenizer") or None,
            **{
                k: _int_or_none(row.get(k))
                for k in ("vocab", "layers", "hidden", "heads", "kv_heads", "head_dim", "tied_embeddings")
            },
        )

    @classmethod
    def from_shape(
        cls,
        name: str,
        params: float,
        shape: Mapping[str, float] | None,
        repo: str | None = None,
        tokenizer: str | None = None,
    ) -> ModelSpec:
        """A model of ``params`` parameters with a preset's architecture columns (or none known)."""
        s = shape or {}
        return cls(
            name=name,
            params=float(params),
            repo=repo,
            tokenizer=tokenizer,
            **{
                k: _int_or_none(s.get(k))
                for k in ("vocab", "layers", "hidden", "heads", "kv_heads", "head_dim", "tied_embeddings")
            },
        )

    @property
    def shape_known(self) -> bool:
        return None not in (self.layers, self.hidden, self.heads, self.kv_heads, self.head_dim, self.vocab)

    def architecture(self) -> H.Architecture | None:
        """The :class:`sdsl.model.hardware.Architecture` of the model, or None when its shape is unknown."""
        if not self.shape_known:
            return None
        return H.target_shape(self.params, {k: float(getattr(self, k) or 0) for k in _SHAPE})[0]


_SHAPE = ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab", "tied_embeddings")


@dataclass(frozen=True)
class Verdict:
    """Whether one engine accepts a pair, and with which settings."""

    engine: str
    reasons: tuple[str, ...] = ()
    """Why the engine refuses the pair (empty: accepted)."""
    caveats: tuple[str, ...] = ()
    """What could not be checked (a shape or a vocabulary not known), or what the user must provide."""
    settings: Mapping[str, Any] = field(default_factory=dict)
    """What the command must carry: ``draft_tp`` (vLLM), ``heterogeneous_vocab`` (vLLM), ``fp8_checkpoint``
    (TensorRT-LLM)."""
    features: tuple[str, ...] = ()
    """Features of ``data/engine_versions.csv`` the command needs beyond the engine's base one."""

    @property
    def ok(self) -> bool:
        return not self.reasons

    def line(self) -> str:
        """One line: ``"accepted"`` or the reasons."""
        return "accepted" if self.ok else "; ".join(self.reasons)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "reasons": list(self.reasons),
            "caveats": list(self.caveats),
            "settings": dict(self.settings),
            "features": list(self.features),
        }


def _group(target: ModelSpec, draft: ModelSpec) -> str | None:
    if target.tokenizer and draft.tokenizer and target.tokenizer != draft.tokenizer:
        return (
            f"{draft.name} is of tokenizer group {draft.tokenizer!r}, {target.name} of {target.tokenizer!r}: "
            f"their token ids differ"
        )
    return None


def _vocab_sizes(target: ModelSpec, draft: ModelSpec) -> tuple[int, int] | None:
    if target.vocab is None or draft.vocab is None:
        return None
    return target.vocab, draft.vocab


def _shard_draft(engine_name: str, tp: int, draft: ModelSpec) -> tuple[str | None, str | None]:
    """(reason, caveat) for a draft that must share ``tp`` devices with the target."""
    if tp == 1:
        return None, None
    if draft.heads is None or draft.kv_heads is None:
        return None, f"{draft.name}'s attention heads are unknown: check that {tp} divides them ({engine_name})"
    why = check_tensor_parallel(tp, draft.heads, draft.kv_heads, draft.name)
    if why:
        return f"{why}, and {engine_name} shards the draft over the target's {tp} devices", None
    return None, None


def _no_models(engine: str, target: ModelSpec, draft: ModelSpec, engine_name: str) -> list[str]:
    """The engine has no model for the target's architecture (then the draft's is not asked), or
    for the draft's."""
    for m, what in ((target, "the target"), (draft, "the draft")):
        arch = _NO_MODEL.get(engine, {}).get(m.tokenizer or "")
        if arch:
            return [f"{engine_name} has no {arch} model ({what}, {m.name})"]
    return []


def _check_vllm(target: ModelSpec, draft: ModelSpec, tp: int, dtype: str | None) -> Verdict:
    reasons, caveats, features = [], [], []
    settings: dict[str, Any] = {}
    if (g := _group(target, draft)) is not None:
        reasons.append(g)
    v = _vocab_sizes(target, draft)
    if v is None:
        caveats.append("a vocabulary size is unknown: vLLM refuses the pair unless both config.json vocab_size agree")
    elif v[0] != v[1] and not reasons:
        settings["heterogeneous_vocab"] = True
        features.append("use_heterogeneous_vocab")
        caveats.append(
            f"vocabulary sizes differ ({draft.name} {v[1]}, {target.name} {v[0]}): vLLM takes the pair only with "
            f"use_heterogeneous_vocab (its token-level intersection, greedy draft sampling)"
        )
    if draft.heads is None or draft.kv_heads is None:
        settings["draft_tp"] = 1
        if tp > 1:
            caveats.append(f"{draft.name}'s attention heads are unknown: the draft runs on one device")
    else:
        settings["draft_tp"] = tp if check_tensor_parallel(tp, draft.heads, draft.kv_heads, draft.name) is None else 1
    return Verdict("vllm", tuple(reasons), tuple(caveats), settings, tuple(features))


def _check_sglang(target: ModelSpec, draft: ModelSpec, tp: int, dtype: str | None) -> Verdict:
    reasons, caveats, features = [], [], []
    if (g := _group(target, draft)) is not None:
        reasons.append(g)
    v = _vocab_sizes(target, draft)
    if v is None:
        caveats.append("a vocabulary size is unknown: SGLang refuses the pair unless they agree")
    elif v[0] != v[1]:
        reasons.append(f"SGLang's STANDALONE draft needs the target's vocabulary size ({v[1]}, not {v[0]})")
    why, cav = _shard_draft("SGLang", tp, draft)
    reasons += [why] if why else []
    caveats += [cav] if cav else []
    if dtype == "fp8":
        features.append("speculative_draft_model_quantization")
    return Verdict("sglang", tuple(reasons), tuple(caveats), {}, tuple(features))


def _check_trtllm(target: ModelSpec, draft: ModelSpec, tp: int, dtype: str | None) -> Verdict:
    reasons, caveats = [], []
    settings: dict[str, Any] = {}
    reasons += _no_models("trtllm", target, draft, "TensorRT-LLM's PyTorch backend")
    if (g := _group(target, draft)) is not None:
        reasons.append(g)
    v = _vocab_sizes(target, draft)
    if v is None:
        caveats.append("a vocabulary size is unknown: TensorRT-LLM needs draft and target to share the vocabulary")
    elif v[0] != v[1]:
        reasons.append(f"TensorRT-LLM's draft/target needs one vocabulary ({v[1]} tokens, not {v[0]})")
    why, cav = _shard_draft("TensorRT-LLM", tp, draft)
    reasons += [why] if why else []
    caveats += [cav] if cav else []
    if dtype == "fp8":
        settings["fp8_checkpoint"] = True
    return Verdict("trtllm", tuple(dict.fromkeys(reasons)), tuple(caveats), settings, ())


def _check_llamacpp(target: ModelSpec, draft: ModelSpec, tp: int, dtype: str | None) -> Verdict:
    reasons, caveats = [], []
    reasons += _no_models("llamacpp", target, draft, "llama.cpp")
    if (g := _group(target, draft)) is not None:
        reasons.append(g)
    v = _vocab_sizes(target, draft)
    if v is None:
        caveats.append("a vocabulary size is unknown: llama.cpp needs them within 128 tokens")
    elif abs(v[0] - v[1]) > LLAMACPP_MAX_VOCAB_DIFFERENCE:
        reasons.append(
            f"llama.cpp needs vocabulary sizes within {LLAMACPP_MAX_VOCAB_DIFFERENCE} tokens ({v[1]} and {v[0]})"
        )
    return Verdict("llamacpp", tuple(dict.fromkeys(reasons)), tuple(caveats), {}, ())


_CHECKS = {"vllm": _check_vllm, "sglang": _check_sglang, "trtllm": _check_trtllm, "llamacpp": _check_llamacpp}


def check_pair(target: ModelSpec, draft: ModelSpec, tp: int = 1, dtype: str | None = None) -> dict[str, Verdict]:
    """Each engine's :class:`Verdict` on serving ``target`` with ``draft`` over ``tp`` devices at ``dtype``.

    The target's own heads must divide ``tp`` for vLLM, SGLang and TensorRT-LLM (a plan refuses such a
    ``--gpus`` before it gets here); that is checked too, so that the verdicts stand alone."""
    tp = int(tp)
    if tp < 1:
        raise ValueError(f"tp (devices in tensor parallel) must be an integer >= 1, got {tp!r}")
    out = {k: _CHECKS[k](target, draft, tp, dtype) for k in ENGINE_KEYS}
    if target.heads is not None and target.kv_heads is not None:
        why = check_tensor_parallel(tp, target.heads, target.kv_heads, target.name)
        if why:
            for k in ("vllm", "sglang", "trtllm"):
                v = out[k]
                out[k] = Verdict(k, (why, *v.reasons), v.caveats, v.settings, v.features)
    return out


def compatible_drafts(
    target: ModelSpec | Mapping[str, Any],
    gpus: int = 1,
    dtype: str | None = None,
    drafts: Iterable[ModelSpec | Mapping[str, Any]] | None = None,
    accepted_only: bool = True,
) -> list[tuple[ModelSpec, dict[str, Verdict]]]:
    """The drafts the engines accept for ``target`` at ``gpus`` devices and ``dtype``.

    Parameters
    ----------
    target : ModelSpec or preset row
    gpus : int
        Devices in tensor parallel.
    dtype : str, optional
        ``bf16``, ``fp16``, ``fp32`` or ``fp8`` (None: the engines' defaults).
    drafts : iterable of ModelSpec or preset rows, optional
        Candidates (a user's own ``--draft-model`` among them); default: the dense presets of the
        target's tokenizer group (``data/presets.csv``) smaller than the target.
    accepted_only : bool
        Leave out a draft no engine accepts.

    Returns
    -------
    list of (ModelSpec, dict)
        Each draft with ``{engine: Verdict}``, smallest first; the caller ranks them (alpha, gamma,
        speedup of each)."""
    t = target if isinstance(target, ModelSpec) else ModelSpec.from_preset(target)
    if drafts is None:
        from sdsl.data import records

        rows = [
            r
            for r in records("presets")
            if r["architecture"] == "dense"
            and t.tokenizer is not None
            and r.get("tokenizer") == t.tokenizer
            and float(r["params"]) < t.params
        ]
        cands = [ModelSpec.from_preset(r) for r in rows]
    else:
        cands = [d if isinstance(d, ModelSpec) else ModelSpec.from_preset(d) for d in drafts]
    out = [(d, check_pair(t, d, gpus, dtype)) for d in sorted(cands, key=lambda d: d.params)]
    return [(d, v) for d, v in out if not accepted_only or any(x.ok for x in v.values())]


@dataclass(frozen=True)
class MemoryFit:
    """Whether weights and KV caches fit the devices (:func:`memory_fit`)."""

    needed: float
    """Bytes (:func:`sdsl.model.hardware.memory_needed`)."""
    available: float
    """Bytes: the memory of one device times the devices."""
    gpus: int
    smallest_gpus: int | None
    """The fewest devices (that can shard the target's heads) whose memory holds it; None: more than 64."""

    @property
    def fits(self) -> bool:
        return self.needed <= self.available

    def reason(self) -> str:
        """One line when it does not fit (empty when it does)."""
        if self.fits:
            return ""
        more = (
            f"the smallest --gpus that fits is {self.smallest_gpus}"
            if self.smallest_gpus is not None
            else "no --gpus up to 64 fits; give --dtype fp8, a smaller --batch or --context"
        )
        return (
            f"the weights and KV caches need {self.needed / 1e9:.4g} GB, more than the {self.available / 1e9:.4g} GB "
            f"of {self.gpus} device{'s' if self.gpus > 1 else ''}: {more}"
        )


def memory_fit(
    target: ModelSpec,
    draft: ModelSpec | None,
    device: H.Accelerator,
    gpus: int,
    batch: float = 1,
    context: float = 0,
) -> MemoryFit:
    """Weights of target and draft at ``device.bytes_per_param`` and their KV caches for ``batch``
    sequences of ``context`` tokens, against ``gpus`` devices of ``device`` (its memory per device:
    ``device.memory / device.count``); the smallest number of devices that fits, among those that can shard the
    target's heads when they are known."""
    per_device = device.memory / device.count
    tshape = target.architecture() or H.target_shape(target.params, None)[0]
    dshape = None
    if draft is not None:
        dshape = draft.architecture() or H.draft_shape(draft.params, tshape)
    need = H.memory_needed(tshape, dshape, device.bytes_per_param, batch, context)
    if target.heads is not None and target.kv_heads is not None:
        counts = [c for c in tensor_parallel_choices(target.heads, target.kv_heads) if c <= 64]
    else:
        counts = list(range(1, 65))
    smallest = next((c for c in counts if need <= per_device * c), None)
    return MemoryFit(need, per_device * gpus, int(gpus), smallest)
