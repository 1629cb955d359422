"""A cost model of a decoding step, and the draft plan it implies (beyond the paper).

One forward pass of a dense transformer over ``k`` new tokens for each of ``b`` sequences, each with
a KV cache of ``L`` tokens, takes (a roofline per kind of kernel: Williams, Waterman and Patterson
2009, "Roofline"; the decoding form of e.g. Pope et al. 2023, "Efficiently Scaling Transformer
Inference")

    t(k, b, L) = t0 + t_layer * layers
                 + max(2 N_s b k / P,  w N_s / W)                                   (weight products)
                 + max(4 layers q_dim b k (L + k) / P_attn,  2 layers kv_dim w b (L + k) / W_attn)
                                                                                    (attention over the cache)

with ``N_s`` the parameters that take part in the matrix products (all but an untied input
embedding), ``w`` bytes per parameter, ``q_dim = heads * head_dim``, ``kv_dim = kv_heads *
head_dim``. The weight products and the attention are different kernels, one after the other in
each layer, so their times add; each is bound by compute or by memory traffic, whichever is slower.
``P`` and ``W`` are the *effective* compute rate and bandwidth of the products, ``P_attn`` and
``W_attn`` those of the attention kernels, ``t0`` a fixed time per pass and ``t_layer`` a time per
layer (kernel launches and the inefficiency of small kernels, which no spec sheet states): fitted to
measured step times (:mod:`sdsl.model.calibration`, ``sdsl steps fit``), or, for a device nobody
measured, the spec sheet's peaks and no overhead -- which on an H200 under-estimated measured step
times 1.3-14x. A speculative iteration drafts ``gamma`` tokens one at a time and verifies
``gamma + 1`` in one pass of the target:

    sequential:  T_iter = gamma t_draft(1, b, L) + t_target(gamma + 1, b, L)
    overlapped:  T_iter = max(gamma t_draft(1, b, L), t_target(gamma + 1, b, L))

the second when drafting runs concurrently with verification, as in speculative speculative
decoding (Kumar, Dao and May 2026, "Saguaro": the draft speculates the next round on its own
hardware while the target verifies) or MineDraft's batch-parallel drafting (Tang et al. 2026: the
draft of one half-batch overlaps the verification of the other). The wall-clock speedup over
plain decoding is ``S = E(alpha, gamma) t_target(1, b, L) / T_iter`` (Leviathan et al. 2023,
Theorem 3.8 with ``c = t_draft / t_target`` and the verification cost measured by the model). It
falls below 1 where no draft length pays: the plan reports the best draft length from 1 up and its
speedup, whichever side of 1 it lies.

**The paper's FLOP model is the batch-1, memory-bound limit of this one**: with ``b = 1``, no KV
cache, no overhead and compute fast enough that every pass is memory-bound, a pass costs ``w N_s / W``
whatever its ``k``, so ``T_iter`` is proportional to ``N gamma + M`` -- the paper's
``C = 2 N gamma + 2 M`` up to a constant -- and ``S = T(N, M, alpha, gamma) * 2M`` (Eq. 9;
:func:`flop_limit` builds that accelerator, and the unit tests recover the paper's ``N*``). The
paper's FLOP count equals time only there: in the compute-bound limit the verification would cost
``2M (gamma + 1)`` and speculation could never pay.

The draft's architecture, where the user does not give it, is assumed: a draft of ``N`` parameters
is given the target's aspect ratio (:func:`draft_shape`: layers and widths scale as
``(N/M)**(1/3)``, so KV bytes per token as ``(N/M)**(2/3)``, tied embeddings) -- said so in the
output. Since every layer costs ``t_layer``, a deep draft costs more than its parameters say.

The accelerator, its presets (``data/accelerators.csv``, or a file written by ``sdsl steps fit``)
and the FLOP-model limit are defined at the end of this module.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from sdsl.model.optimum import log_grid, solve
from sdsl.model.throughput import expected_tokens
from sdsl.validation import as_float_array

__all__ = [
    "Architecture",
    "REFERENCE_SHAPE",
    "HardwarePlan",
    "draft_shape",
    "shape_like",
    "step_time",
    "iteration_time",
    "speedup_at",
    "plan_on_hardware",
    "target_shape",
    "DEVICE_COUNTS",
    "memory_needed",
    "devices_to_hold",
    "Accelerator",
    "flop_limit",
    "accelerator_names",
    "get_accelerator",
    "read_accelerator",
    "write_accelerator",
    "BASES",
]


@dataclass(frozen=True)
class Architecture:
    """The parts of a dense transformer's architecture that set the cost of a step."""

    params: float
    """All parameters (the ``N`` or ``M`` of the scaling law)."""
    layers: float
    q_dim: float
    """Attention heads times head dimension."""
    kv_dim: float
    """Key-value heads times head dimension (grouped-query attention: fewer than ``q_dim``)."""
    embedding_params: float = 0.0
    """An untied input embedding (vocabulary x hidden): looked up, not multiplied, not streamed."""

    def __post_init__(self) -> None:
        for f in ("params", "layers"):
            if not (getattr(self, f) > 0):
                raise ValueError(f"architecture: {f} must be > 0, got {getattr(self, f)!r}")
        for f in ("q_dim", "kv_dim"):  # 0: attention's cost left out (the FLOP-model limit)
            if not (getattr(self, f) >= 0):
                raise ValueError(f"architecture: {f} must be >= 0, got {getattr(self, f)!r}")
        if not 0 <= self.embedding_params < self.params:
            raise ValueError(f"architecture: embedding_params must lie in [0, params), got {self.embedding_params!r}")

    @property
    def streamed_params(self) -> float:
        """Parameters read and multiplied on every pass."""
        return self.params - self.embedding_params

    def kv_elements_per_token(self) -> float:
        """Keys and values stored per token of context, over all layers."""
        return 2.0 * self.layers * self.kv_dim


#: Llama-3-8B (hidden 4096, 32 layers, 32 heads, 8 KV heads of 128, vocabulary 128256, untied
#: embeddings; its config.json): the shape :func:`shape_like` scales when a target's is unknown.
REFERENCE_SHAPE = Architecture(params=8030261248, layers=32, q_dim=4096, kv_dim=1024, embedding_params=128256 * 4096)


def shape_like(params: float, reference: Architecture = REFERENCE_SHAPE, tied: bool = False) -> Architecture:
    """A model of ``params`` parameters with the aspect ratio of ``reference``: layers and widths
    scale as ``(params / reference.params)**(1/3)`` (so ``params ~ layers * width**2``).

    Parameters
    ----------
    params : float
        Parameters of the model, > 0.
    reference : Architecture
        The architecture whose proportions are kept.
    tied : bool
        Tied embeddings (no untied input embedding); otherwise the reference's embedding is scaled
        with the width (the vocabulary kept), at most half the parameters.

    Returns
    -------
    Architecture
    """
    p = float(params)
    if not (p > 0 and math.isfinite(p)):
        raise ValueError(f"params must be a positive number of parameters, got {params!r}")
    s = (p / reference.params) ** (1.0 / 3.0)
    emb = 0.0 if tied else min(reference.embedding_params * s, 0.5 * p)
    return Architecture(
        params=p,
        layers=max(reference.layers * s, 1.0),
        q_dim=reference.q_dim * s,
        kv_dim=reference.kv_dim * s,
        embedding_params=emb,
    )


def draft_shape(n: float, target: Architecture) -> Architecture:
    """The assumed shape of a draft of ``n`` parameters for ``target``: the target's aspect ratio
    and grouped-query ratio, tied embeddings (as most small open models have)."""
    return shape_like(n, target, tied=True)


def step_time(shape: Architecture, acc: Accelerator, batch: float, context: float, tokens) -> np.ndarray:
    """Seconds of one forward pass (see the module's docstring).

    Parameters
    ----------
    shape : Architecture
    acc : Accelerator
    batch : float
        Sequences in the batch, >= 1.
    context : float
        Tokens already in each sequence's KV cache, >= 0.
    tokens : array_like
        New tokens per sequence in this pass (1 to decode; ``gamma + 1`` to verify), >= 1.

    Returns
    -------
    numpy.ndarray
        Seconds, the shape of ``tokens``.
    """
    k = as_float_array(tokens, "tokens (new tokens per sequence)")
    if np.any(k < 1):
        raise ValueError(f"tokens (new tokens per sequence) must be >= 1, got {np.min(k)!r}")
    b, ctx = float(batch), float(context)
    if not b >= 1:
        raise ValueError(f"batch (sequences decoded together) must be >= 1, got {batch!r}")
    if not ctx >= 0:
        raise ValueError(f"context (tokens in the KV cache) must be >= 0, got {context!r}")
    return _pass_time(shape.streamed_params, shape.layers, shape.q_dim, shape.kv_elements_per_token(), acc, b, ctx, k)


def _terms(ns, layers, q_dim, kv_elems, acc: Accelerator, b: float, ctx, k) -> dict[str, np.ndarray]:
    """The four rates' times of one pass (arrays broadcast): the weight products' compute and memory
    traffic, the attention's compute and KV-cache traffic."""
    w = acc.bytes_per_param
    return {
        "products_compute": 2.0 * ns * b * k / acc.peak_flops,
        "products_memory": w * ns / acc.bandwidth,
        "attention_compute": 4.0 * layers * q_dim * b * k * (ctx + k) / acc.attention_rate,
        "attention_memory": kv_elems * w * b * (ctx + k) / acc.attention_bandwidth_rate,
    }


def _pass_time(ns, layers, q_dim, kv_elems, acc: Accelerator, b: float, ctx, k) -> np.ndarray:
    t = _terms(ns, layers, q_dim, kv_elems, acc, b, ctx, k)
    return (
        acc.step_overhead
        + acc.layer_overhead * layers
        + np.maximum(t["products_compute"], t["products_memory"])
        + np.maximum(t["attention_compute"], t["attention_memory"])
    )


def _draft_step_times(
    n: np.ndarray, target: Architecture, acc: Accelerator, batch: float, context: float
) -> np.ndarray:
    """:func:`step_time` of one token for drafts of sizes ``n`` (vectorised :func:`draft_shape`)."""
    s = (np.asarray(n, dtype=float) / target.params) ** (1.0 / 3.0)
    layers = np.maximum(target.layers * s, 1.0)
    kv = 2.0 * layers * target.kv_dim * s
    return _pass_time(n, layers, target.q_dim * s, kv, acc, float(batch), float(context), 1.0)


def iteration_time(
    draft: Architecture,
    target: Architecture,
    acc: Accelerator,
    gamma,
    batch: float = 1,
    context: float = 0,
    overlap: bool = False,
) -> np.ndarray:
    """Seconds of one speculative iteration: ``gamma`` draft passes of one token and one target pass
    of ``gamma + 1`` tokens, summed (``overlap=False``) or overlapped (their maximum); ``gamma = 0``
    is one plain target step."""
    g = as_float_array(gamma, "gamma (draft length)")
    if np.any(g < 0):
        raise ValueError(f"gamma (draft length) must be >= 0, got {np.min(g)!r}")
    td = g * step_time(draft, acc, batch, context, 1.0)
    tv = step_time(target, acc, batch, context, g + 1.0)
    return np.maximum(td, tv) if overlap else td + tv


@dataclass(frozen=True)
class HardwarePlan:
    """Throughput-optimal draft on one accelerator at one batch size and context length."""

    accelerator: str
    batch: float
    context: float
    overlap: bool
    n_star: float
    """Best draft size (parameters), whether or not speculation pays."""
    gamma_star: int
    """Best integer draft length from 1 up (the given one when it was fixed)."""
    alpha: float
    """Acceptance rate at ``n_star``."""
    speedup: float
    """Wall-clock speedup over plain decoding at the same batch size and context: below 1 when no
    draft length pays."""
    pays: bool
    """``speedup > 1``: speculation beats plain decoding."""
    gamma_fixed: bool
    """The draft length was given, not searched."""
    cost_coefficient: float
    """``c = t_draft(1) / t_target(1)`` at ``n_star`` (Theorem 3.8)."""
    verify_cost: float
    """``t_target(gamma* + 1) / t_target(1)`` (1 in Theorem 3.8)."""
    target_step_s: float
    """Seconds of one plain decoding step of the whole batch."""
    iteration_s: float
    """Seconds of one speculative iteration at the optimum."""
    target_bound: str
    """``"memory"`` or ``"compute"``: what limits the weight products of the target's verification."""
    memory_needed: float
    """Bytes for both models' weights and KV caches (context ``context``, ``batch`` sequences)."""
    fits_in_memory: bool
    """Whether ``memory_needed`` fits the accelerator's memory."""

    def as_dict(self) -> dict[str, object]:
        out = dict(self.__dict__)
        for k, v in out.items():
            if isinstance(v, float) and not math.isfinite(v):
                out[k] = None
        return out


def memory_needed(
    target: Architecture, draft: Architecture | None, bytes_per_param: float, batch: float, context: float
) -> float:
    """Bytes the weights and KV caches of a deployment take: every parameter of the target and of
    the draft (none: plain decoding) at ``bytes_per_param``, and ``batch`` sequences of ``context``
    tokens in each model's KV cache (keys and values of every layer) at the same precision.
    Activations, CUDA graphs and the engines' reserved fractions are not counted."""
    models = [target] if draft is None else [target, draft]
    weights = sum(m.params for m in models)
    kv = sum(m.kv_elements_per_token() for m in models) * float(batch) * float(context)
    return float(bytes_per_param) * (weights + kv)


def _bound(shape: Architecture, acc: Accelerator, batch: float, context: float, tokens: float) -> str:
    t = _terms(
        shape.streamed_params, shape.layers, shape.q_dim, shape.kv_elements_per_token(), acc, batch, context, tokens
    )
    return "compute" if t["products_compute"] > t["products_memory"] else "memory"


def _gammas(gamma_max: int, gamma: int | None) -> np.ndarray:
    """The draft lengths searched: ``1 .. gamma_max``, or the one given."""
    if gamma is not None:
        if not (isinstance(gamma, (int, np.integer)) and gamma >= 1):
            raise ValueError(f"gamma (a fixed draft length) must be an integer >= 1, got {gamma!r}")
        return np.array([float(gamma)])
    if not (isinstance(gamma_max, (int, np.integer)) and gamma_max >= 1):
        raise ValueError(f"gamma_max must be an integer >= 1, got {gamma_max!r}")
    return np.arange(1, gamma_max + 1, dtype=float)


def speedup_at(
    n: float,
    alpha: float,
    target: Architecture,
    acc: Accelerator,
    batch: float = 1,
    context: float = 0,
    overlap: bool = False,
    gamma_max: int = 32,
    gamma: int | None = None,
    draft: Architecture | None = None,
) -> tuple[int, float]:
    """The best integer draft length from 1 up (or the given ``gamma``) and its wall-clock speedup,
    below 1 where speculation loses, for a draft of ``n`` parameters with acceptance rate ``alpha``
    (brute force over ``gamma = 1 .. gamma_max``). ``draft``: the draft's architecture when known
    (default :func:`draft_shape`)."""
    d = draft if draft is not None else draft_shape(n, target)
    g = _gammas(gamma_max, gamma)
    t_plain = float(step_time(target, acc, batch, context, 1.0))
    s = expected_tokens(alpha, g) * t_plain / iteration_time(d, target, acc, g, batch, context, overlap)
    i = int(np.argmax(s))
    return int(g[i]), float(s[i])


def plan_on_hardware(
    m_shape: Architecture,
    alpha_of_n: Callable[[np.ndarray], np.ndarray],
    acc: Accelerator,
    n_range: tuple[float, float],
    batch: float = 1,
    context: float = 0,
    overlap: bool = False,
    gamma_max: int = 32,
    grid_points: int = 121,
    gamma: int | None = None,
) -> HardwarePlan:
    """Maximise the wall-clock speedup over the draft size ``N`` and the integer draft length.

    Parameters
    ----------
    m_shape : Architecture
        The target.
    alpha_of_n : callable
        Acceptance rate of a draft of ``N`` parameters (vectorised), e.g. the loss law and the
        paper's Eq. 5; must stay in (0, 1) over ``n_range``.
    acc : Accelerator
    n_range : (float, float)
        Draft sizes searched, parameters, ``low < high <= M``.
    batch, context : float
        Sequences decoded together and tokens in each KV cache.
    overlap : bool
        Drafting overlapped with verification (Saguaro, MineDraft) instead of before it.
    gamma_max : int
        Largest draft length searched (brute force over ``1 .. gamma_max``).
    grid_points : int
        A log-spaced scan of ``N``; the best is refined by the package's one search for ``N*``
        (:func:`sdsl.model.optimum.solve`, the root of the derivative of the speedup).
    gamma : int, optional
        A fixed draft length instead of the search.

    Returns
    -------
    HardwarePlan
        The best draft and draft length from 1 up, with a speedup below 1 (``pays`` False) where
        plain decoding is faster.
    """
    lo, hi = (float(x) for x in n_range)
    if not (0 < lo < hi <= m_shape.params):
        raise ValueError(f"n_range must satisfy 0 < low < high <= M = {m_shape.params:.6g}, got ({lo:.6g}, {hi:.6g})")
    g = _gammas(gamma_max, gamma)
    t_plain = float(step_time(m_shape, acc, batch, context, 1.0))
    t_verify = step_time(m_shape, acc, batch, context, g + 1.0)

    def best(log_n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = np.exp(log_n)
        a = np.asarray(alpha_of_n(n), dtype=float)
        if np.any((a <= 0) | (a >= 1)):
            raise ValueError("the acceptance rate leaves (0, 1) inside n_range; narrow the range of draft sizes")
        td = _draft_step_times(n, m_shape, acc, batch, context)
        tdg = td[:, None] * g[None, :]
        t_iter = np.maximum(tdg, t_verify[None, :]) if overlap else tdg + t_verify[None, :]
        s = expected_tokens(a[:, None], g[None, :]) * t_plain / t_iter
        return s.max(axis=1), g[s.argmax(axis=1)]

    def objective(n: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return best(np.log(np.ravel(n)))[0].reshape(np.shape(n))

    def at_length(n: np.ndarray, rows: np.ndarray, gam: np.ndarray) -> np.ndarray:
        """The speedup at draft size ``n`` and the fixed integer draft length ``gam``."""
        n, gam = np.broadcast_arrays(np.asarray(n, dtype=float), np.asarray(gam, dtype=float))
        a = np.asarray(alpha_of_n(n.ravel()), dtype=float).reshape(n.shape)
        td = _draft_step_times(n.ravel(), m_shape, acc, batch, context).reshape(n.shape)
        tv = t_verify[np.searchsorted(g, gam)]
        t_iter = np.maximum(td * gam, tv) if overlap else td * gam + tv
        return expected_tokens(a, gam) * t_plain / t_iter

    def alpha_at(n: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return np.asarray(alpha_of_n(np.ravel(n)), dtype=float).reshape(np.shape(n))

    o = solve(
        alpha_at,
        [m_shape.params],
        log_grid([lo], [hi], grid_points),
        objective=objective,
        gammas=g,
        branch_objective=at_length,
    )
    s_c, g_c = best(np.log(o.n_at_max))
    n_star, gam, speed = float(o.n_at_max[0]), int(g_c[0]), float(s_c[0])
    d = draft_shape(n_star, m_shape)
    alpha = float(np.asarray(alpha_of_n(np.array([n_star])), dtype=float)[0])
    t_d = float(step_time(d, acc, batch, context, 1.0))
    mem = memory_needed(m_shape, d, acc.bytes_per_param, batch, context)
    return HardwarePlan(
        accelerator=acc.name,
        batch=float(batch),
        context=float(context),
        overlap=bool(overlap),
        n_star=n_star,
        gamma_star=gam,
        alpha=alpha,
        speedup=speed,
        pays=bool(speed > 1.0),
        gamma_fixed=gamma is not None,
        cost_coefficient=t_d / t_plain,
        verify_cost=float(t_verify[np.searchsorted(g, gam)]) / t_plain,
        target_step_s=t_plain,
        iteration_s=float(t_plain * expected_tokens(alpha, gam) / speed),
        target_bound=_bound(m_shape, acc, batch, context, gam + 1.0),
        memory_needed=float(mem),
        fits_in_memory=bool(mem <= acc.memory),
    )


#: Device counts tried, in turn, for a deployment that must hold both models.
DEVICE_COUNTS = (1, 2, 4, 8, 16, 32, 64)


def devices_to_hold(
    target: Architecture, draft: Architecture, acc: Accelerator, batch: float = 1, context: float = 0
) -> int | None:
    """The fewest devices of :data:`DEVICE_COUNTS` whose memory holds :func:`memory_needed`, or None."""
    need = memory_needed(target, draft, acc.bytes_per_param, batch, context)
    return next((g for g in DEVICE_COUNTS if need <= acc.memory * g), None)


def target_shape(params: float, shape: Mapping[str, float] | None) -> tuple[Architecture, bool]:
    """The :class:`Architecture` of a target from its preset's architecture columns (``layers``,
    ``hidden``, ``heads``, ``kv_heads``, ``head_dim``, ``vocab``, ``tied_embeddings``), or, when they
    are unknown, :func:`shape_like` of Llama-3-8B; the flag says whether the shape is known."""
    if shape:
        emb = 0.0 if int(shape["tied_embeddings"]) else float(shape["vocab"]) * float(shape["hidden"])
        return Architecture(
            params=float(params),
            layers=float(shape["layers"]),
            q_dim=float(shape["heads"]) * float(shape["head_dim"]),
            kv_dim=float(shape["kv_heads"]) * float(shape["head_dim"]),
            embedding_params=min(emb, 0.5 * float(params)),
        ), True
    return shape_like(float(params)), False


# --- The accelerator of the cost model (:mod:`sdsl.model.hardware`): rates, overheads, memory

#: What an accelerator's numbers rest on: step times measured on it, a measured device's numbers
#: scaled by spec-sheet ratios, or the spec sheet alone (peaks, no overhead).
BASES = ("measured", "scaled", "spec sheet")


@dataclass(frozen=True)
class Accelerator:
    """What the step-time model needs to know of a device (or of ``count`` devices in tensor
    parallel). Rates are *effective* where the accelerator was fitted to measured step times
    (``basis`` "measured" or "scaled"), spec-sheet peaks otherwise."""

    name: str
    peak_flops: float
    """Compute rate of the weight products at ``dtype``, FLOP/s (fitted, or the spec sheet's dense peak)."""
    bandwidth: float
    """Memory bandwidth of the weight products, bytes/s (fitted, or the spec sheet's)."""
    memory: float
    """Memory capacity, bytes."""
    step_overhead: float = 0.0
    """Fixed time of one forward pass, s."""
    layer_overhead: float = 0.0
    """Time per layer of one forward pass, s."""
    bytes_per_param: float = 2.0
    """Bytes per weight (and per KV-cache element): 2 for bf16/fp16, 1 for fp8, 4 for fp32."""
    dtype: str = "bf16"
    count: int = 1
    attention_flops: float | None = None
    """Compute rate of the attention kernels, FLOP/s (None: ``peak_flops``)."""
    attention_bandwidth: float | None = None
    """Bandwidth of the attention kernels reading the KV cache, bytes/s (None: ``bandwidth``)."""
    basis: str = "spec sheet"
    """One of :data:`BASES`."""
    source: str = ""
    """Where the numbers come from, in words (a measurement and its fit, a spec sheet)."""
    accuracy: str = ""
    """How far the model's step times were from measured ones, in words (held-out shapes for a fit)."""

    def __post_init__(self) -> None:
        for f in ("peak_flops", "bandwidth", "memory", "bytes_per_param", "attention_flops", "attention_bandwidth"):
            v = getattr(self, f)
            if v is not None and not (v > 0):
                raise ValueError(f"accelerator {self.name!r}: {f} must be > 0, got {v!r}")
        for f in ("step_overhead", "layer_overhead"):
            v = getattr(self, f)
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"accelerator {self.name!r}: {f} must be a finite number >= 0 s, got {v!r}")
        if self.basis not in BASES:
            raise ValueError(f"accelerator {self.name!r}: basis must be one of {', '.join(BASES)}, got {self.basis!r}")

    @property
    def attention_rate(self) -> float:
        """FLOP/s of the attention kernels."""
        return self.peak_flops if self.attention_flops is None else self.attention_flops

    @property
    def attention_bandwidth_rate(self) -> float:
        """Bytes/s of the attention kernels."""
        return self.bandwidth if self.attention_bandwidth is None else self.attention_bandwidth

    def times(self, count: int) -> Accelerator:
        """``count`` devices in tensor parallel, scaled ideally (rates and memory times ``count``;
        the overheads and the all-reduce of each layer not modelled)."""
        if not (isinstance(count, (int, np.integer)) and count >= 1):
            raise ValueError(f"gpus (devices in tensor parallel) must be an integer >= 1, got {count!r}")
        if count == 1:
            return self
        scaled = {f: getattr(self, f) * count for f in ("attention_flops", "attention_bandwidth") if getattr(self, f)}
        return replace(
            self,
            name=f"{count} x {self.name}",
            peak_flops=self.peak_flops * count,
            bandwidth=self.bandwidth * count,
            memory=self.memory * count,
            count=self.count * count,
            **scaled,
        )

    def with_bytes_per_param(self, bytes_per_param: float, dtype: str) -> Accelerator:
        """The same device with weights and KV cache stored at another precision; the compute rate is
        kept (weight-only quantisation: the products still run at the preset's precision)."""
        return replace(self, bytes_per_param=float(bytes_per_param), dtype=dtype)

    def as_record(self) -> dict[str, object]:
        """The numbers of an accelerator file (:func:`write_accelerator`), in SI units."""
        return {
            "name": self.name,
            "basis": self.basis,
            "source": self.source,
            "dtype": self.dtype,
            "bytes_per_param": self.bytes_per_param,
            "memory": self.memory,
            "peak_flops": self.peak_flops,
            "bandwidth": self.bandwidth,
            "attention_flops": self.attention_rate,
            "attention_bandwidth": self.attention_bandwidth_rate,
            "step_overhead_s": self.step_overhead,
            "layer_overhead_s": self.layer_overhead,
            "accuracy": self.accuracy,
        }


def flop_limit(bytes_per_param: float = 2.0) -> Accelerator:
    """The accelerator under which the model is the paper's FLOP model: infinite compute, no
    overhead (every pass memory-bound, its time proportional to the parameters streamed). Use it
    with ``batch = 1``, ``context = 0`` and shapes without untied embeddings."""
    return Accelerator(
        name="FLOP-model limit (batch 1, memory-bound, no overhead)",
        peak_flops=math.inf,
        bandwidth=1e12,
        memory=math.inf,
        bytes_per_param=bytes_per_param,
        dtype="-",
    )


def accelerator_names() -> list[str]:
    """Names of the presets of ``data/accelerators.csv`` (as typed after ``--hardware``)."""
    from sdsl.data import records

    return [r["accelerator"] for r in records("accelerators")]


def _of_record(r: Mapping[str, Any]) -> Accelerator:
    return Accelerator(
        name=str(r["name"]),
        peak_flops=float(r["peak_flops"]),
        bandwidth=float(r["bandwidth"]),
        memory=float(r["memory"]),
        step_overhead=float(r["step_overhead_s"]),
        layer_overhead=float(r["layer_overhead_s"]),
        bytes_per_param=float(r["bytes_per_param"]),
        dtype=str(r["dtype"]),
        attention_flops=float(r["attention_flops"]),
        attention_bandwidth=float(r["attention_bandwidth"]),
        basis=str(r["basis"]),
        source=str(r.get("source") or r.get("calibration_source") or ""),
        accuracy=str(r.get("accuracy") or ""),
    )


#: The keys of an accelerator file, with what each holds (``sdsl steps fit`` writes them).
FILE_KEYS = {
    "name": "the device, as its maker names it",
    "basis": "measured, scaled or spec sheet",
    "source": "where the numbers come from",
    "dtype": "number format of weights and KV cache",
    "bytes_per_param": "bytes per weight and per KV-cache element",
    "memory": "memory capacity, bytes",
    "peak_flops": "effective compute rate of the weight products, FLOP/s",
    "bandwidth": "effective bandwidth of the weight products, bytes/s",
    "attention_flops": "effective compute rate of attention, FLOP/s",
    "attention_bandwidth": "effective bandwidth of attention over the KV cache, bytes/s",
    "step_overhead_s": "fixed seconds per forward pass",
    "layer_overhead_s": "seconds per layer of a forward pass",
    "accuracy": "how far predicted step times were from measured ones",
}


def write_accelerator(acc: Accelerator, path: str | os.PathLike, fit: Mapping[str, Any] | None = None) -> None:
    """Write ``acc`` as an accelerator file (YAML) that ``--hardware FILE`` reads, with ``fit`` (how
    it was fitted and how well it predicts, e.g. the leave-one-shape-out errors) beside it. The file
    appears whole or not at all (written beside and renamed)."""
    import tempfile

    import yaml

    p = Path(path)
    doc = {"accelerator": acc.as_record(), **({"fit": dict(fit)} if fit else {})}
    text = "# An accelerator of sdsl's step-time model (sdsl.model.hardware); read by --hardware FILE.\n"
    text += yaml.safe_dump(doc, sort_keys=False, width=100)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".part", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_accelerator(path: str | os.PathLike) -> Accelerator:
    """The accelerator of a file written by :func:`write_accelerator` (``sdsl steps fit``)."""
    import yaml

    from sdsl.validation import shown

    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise ValueError(f"{shown('hardware')} file {str(p)!r} could not be read: {str(e).splitlines()[0]}") from None
    rec = doc.get("accelerator") if isinstance(doc, dict) else None
    if not isinstance(rec, dict):
        raise ValueError(
            f"{shown('hardware')} file {str(p)!r} is not an accelerator file: it needs a mapping 'accelerator' "
            f"with {', '.join(FILE_KEYS)} (write one with 'sdsl steps fit')"
        )
    missing = [k for k in FILE_KEYS if k not in rec]
    if missing:
        raise ValueError(f"{shown('hardware')} file {str(p)!r} lacks {', '.join(missing)} under 'accelerator'")
    for k in FILE_KEYS:
        if k not in ("name", "basis", "source", "dtype", "accuracy") and not isinstance(rec[k], (int, float)):
            raise ValueError(f"{shown('hardware')} file {str(p)!r}: {k} must be a number, got {rec[k]!r}")
    try:
        return _of_record(rec)
    except ValueError as e:
        raise ValueError(f"{shown('hardware')} file {str(p)!r}: {e}") from None


def get_accelerator(name: str) -> Accelerator:
    """The :class:`Accelerator` of a preset of ``data/accelerators.csv`` (case-insensitive), or of an
    accelerator file (a path ending in ``.yml`` or ``.yaml``, :func:`read_accelerator`); an
    unknown name raises ``ValueError`` suggesting the closest names."""
    import difflib

    from sdsl.data import records
    from sdsl.validation import shown

    if str(name).strip().lower().endswith((".yml", ".yaml")):
        return read_accelerator(str(name).strip())
    rows = records("accelerators")
    key = str(name).strip().lower()
    for r in rows:
        if r["accelerator"].lower() == key:
            return _of_record(r)
    names = [r["accelerator"] for r in rows]
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
    raise ValueError(
        f"unknown {shown('hardware')} {name!r}; {hint}known: {', '.join(names)}, or an accelerator file "
        f"(.yml) written by 'sdsl steps fit'"
    )
