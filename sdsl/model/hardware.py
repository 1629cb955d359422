"""A roofline cost model of a decoding step, and the draft plan it implies (beyond the paper).

One forward pass of a dense transformer over ``k`` new tokens for each of ``b`` sequences, each with
a KV cache of ``L`` tokens, on an accelerator of peak compute ``P`` (FLOP/s) and memory bandwidth
``W`` (bytes/s), takes (Williams, Waterman and Patterson 2009, "Roofline"; the decoding form of
e.g. Pope et al. 2023, "Efficiently Scaling Transformer Inference")

    t(k, b, L) = t0 + t_layer * layers + max(FLOPs / P, bytes / W)
    FLOPs      = 2 N_s b k + 4 layers q_dim b k (L + k)           (weights; attention)
    bytes      = w N_s + 2 layers kv_dim w_kv b (L + k)              (weights once; KV cache)

with ``N_s`` the parameters that take part in the matrix products (all but an untied input
embedding), ``w`` bytes per parameter, ``q_dim = heads * head_dim``, ``kv_dim = kv_heads *
head_dim`` and a fixed per-pass overhead ``t0`` (plus ``t_layer`` per layer: kernel launches,
framework). A speculative iteration drafts ``gamma`` tokens one at a time and verifies ``gamma + 1``
in one pass of the target:

    sequential:  T_iter = gamma t_draft(1, b, L) + t_target(gamma + 1, b, L)
    overlapped:  T_iter = max(gamma t_draft(1, b, L), t_target(gamma + 1, b, L))

the second when drafting runs concurrently with verification, as in speculative speculative
decoding (Kumar, Dao and May 2026, "Saguaro": the draft speculates the next round on its own
hardware while the target verifies) or MineDraft's batch-parallel drafting (Tang et al. 2026: the
draft of one half-batch overlaps the verification of the other). The wall-clock speedup over
plain decoding is ``S = E(alpha, gamma) t_target(1, b, L) / T_iter`` (Leviathan et al. 2023,
Theorem 3.8 with ``c = t_draft / t_target`` and the verification cost measured by the model).

**The paper's FLOP model is the batch-1, memory-bound limit of this one**: with ``b = 1``, no KV
cache, no overhead and compute fast enough that every pass is memory-bound, a pass costs ``w N_s / W``
whatever its ``k``, so ``T_iter`` is proportional to ``N gamma + M`` -- the paper's
``C = 2 N gamma + 2 M`` up to a constant -- and ``S = T(N, M, alpha, gamma) * 2M`` (Eq. 9;
:func:`flop_limit` builds that accelerator, and the unit tests recover the paper's ``N*``). The
paper's FLOP count equals time only there: in the compute-bound limit the verification would cost
``2M (gamma + 1)`` and speculation could never pay.

The draft's architecture is rarely known: a draft of ``N`` parameters is given the target's aspect
ratio (:func:`draft_shape`: layers and widths scale as ``(N/M)**(1/3)``, so KV bytes per token as
``(N/M)**(2/3)``, tied embeddings) -- an assumption, said so in the output.

The accelerator, its presets (``data/accelerators.csv``) and the FLOP-model limit are defined at
the end of this module.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

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
    "memory_needed",
    "target_shape",
    "Accelerator",
    "flop_limit",
    "accelerator_names",
    "get_accelerator",
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
    """Seconds of one forward pass by the roofline (see the module's docstring).

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
    t_c, t_m = _roofline_terms(
        shape.streamed_params, shape.layers, shape.q_dim, shape.kv_elements_per_token(), acc, b, ctx, k
    )
    return acc.step_overhead + acc.layer_overhead * shape.layers + np.maximum(t_c, t_m)


def _roofline_terms(ns, layers, q_dim, kv_elems, acc: Accelerator, b: float, ctx: float, k):
    """Compute time and memory time of one pass (arrays broadcast): FLOPs / peak, bytes / bandwidth."""
    w = acc.bytes_per_param
    flops = 2.0 * ns * b * k + 4.0 * layers * q_dim * b * k * (ctx + k)
    nbytes = w * ns + kv_elems * w * b * (ctx + k)
    return flops / acc.peak_flops, nbytes / acc.bandwidth


def _draft_step_times(
    n: np.ndarray, target: Architecture, acc: Accelerator, batch: float, context: float
) -> np.ndarray:
    """:func:`step_time` of one token for drafts of sizes ``n`` (vectorised :func:`draft_shape`)."""
    s = (np.asarray(n, dtype=float) / target.params) ** (1.0 / 3.0)
    layers = np.maximum(target.layers * s, 1.0)
    kv = 2.0 * layers * target.kv_dim * s
    t_c, t_m = _roofline_terms(n, layers, target.q_dim * s, kv, acc, float(batch), float(context), 1.0)
    return acc.step_overhead + acc.layer_overhead * layers + np.maximum(t_c, t_m)


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
    """Best draft size (parameters); NaN when speculation does not pay (``gamma_star = 0``)."""
    gamma_star: int
    """Best integer draft length (0: plain decoding is faster)."""
    alpha: float
    """Acceptance rate at ``n_star``."""
    speedup: float
    """Wall-clock speedup over plain decoding at the same batch size and context (>= 1)."""
    cost_coefficient: float
    """``c = t_draft(1) / t_target(1)`` at ``n_star`` (Theorem 3.8)."""
    verify_cost: float
    """``t_target(gamma* + 1) / t_target(1)`` (1 in Theorem 3.8)."""
    target_step_s: float
    """Seconds of one plain decoding step of the whole batch."""
    iteration_s: float
    """Seconds of one speculative iteration at the optimum."""
    target_bound: str
    """``"memory"`` or ``"compute"``: what limits the target's verification pass."""
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
    t_c, t_m = _roofline_terms(
        shape.streamed_params, shape.layers, shape.q_dim, shape.kv_elements_per_token(), acc, batch, context, tokens
    )
    return "compute" if t_c > t_m else "memory"


def speedup_at(
    n: float,
    alpha: float,
    target: Architecture,
    acc: Accelerator,
    batch: float = 1,
    context: float = 0,
    overlap: bool = False,
    gamma_max: int = 32,
) -> tuple[int, float]:
    """The best integer draft length and its wall-clock speedup for a draft of ``n`` parameters
    with acceptance rate ``alpha`` (brute force over ``gamma = 0 .. gamma_max``)."""
    d = draft_shape(n, target)
    g = np.arange(gamma_max + 1, dtype=float)
    t_plain = float(step_time(target, acc, batch, context, 1.0))
    s = expected_tokens(alpha, g) * t_plain / iteration_time(d, target, acc, g, batch, context, overlap)
    i = int(np.argmax(s))
    return i, float(s[i])


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
        Largest draft length searched (brute force over ``0 .. gamma_max``).
    grid_points : int
        A log-spaced scan of ``N``; the best is refined by the package's one search for ``N*``
        (:func:`sdsl.model.optimum.solve`, the root of the derivative of the speedup).

    Returns
    -------
    HardwarePlan
    """
    lo, hi = (float(x) for x in n_range)
    if not (0 < lo < hi <= m_shape.params):
        raise ValueError(f"n_range must satisfy 0 < low < high <= M = {m_shape.params:.6g}, got ({lo:.6g}, {hi:.6g})")
    if not (isinstance(gamma_max, (int, np.integer)) and gamma_max >= 1):
        raise ValueError(f"gamma_max must be an integer >= 1, got {gamma_max!r}")
    g = np.arange(gamma_max + 1, dtype=float)
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
        return s.max(axis=1), s.argmax(axis=1)

    def objective(n: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return best(np.log(np.ravel(n)))[0].reshape(np.shape(n))

    def at_length(n: np.ndarray, rows: np.ndarray, gam: np.ndarray) -> np.ndarray:
        """The speedup at draft size ``n`` and the fixed integer draft length ``gam``."""
        n, gam = np.broadcast_arrays(np.asarray(n, dtype=float), np.asarray(gam, dtype=float))
        a = np.asarray(alpha_of_n(n.ravel()), dtype=float).reshape(n.shape)
        td = _draft_step_times(n.ravel(), m_shape, acc, batch, context).reshape(n.shape)
        tv = t_verify[gam.astype(int)]
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
    cands = np.log(o.n_at_max)
    s_c, g_c = best(cands)
    j = 0
    n_star, gamma, speed = float(np.exp(cands[j])), int(g_c[j]), float(s_c[j])
    d = draft_shape(n_star, m_shape)
    alpha = float(np.asarray(alpha_of_n(np.array([n_star])), dtype=float)[0])
    t_d = float(step_time(d, acc, batch, context, 1.0))
    mem = memory_needed(m_shape, d, acc.bytes_per_param, batch, context)
    if gamma == 0:  # speculation does not pay: no draft
        speed, n_star, alpha = 1.0, math.nan, math.nan
        mem = memory_needed(m_shape, None, acc.bytes_per_param, batch, context)
    plan = HardwarePlan(
        accelerator=acc.name,
        batch=float(batch),
        context=float(context),
        overlap=bool(overlap),
        n_star=n_star,
        gamma_star=gamma,
        alpha=alpha,
        speedup=speed,
        cost_coefficient=t_d / t_plain if gamma else math.nan,
        verify_cost=float(t_verify[gamma]) / t_plain,
        target_step_s=t_plain,
        iteration_s=float(t_plain * expected_tokens(alpha, gamma) / speed) if gamma else t_plain,
        target_bound=_bound(m_shape, acc, batch, context, gamma + 1.0),
        memory_needed=float(mem),
        fits_in_memory=bool(mem <= acc.memory),
    )
    return plan


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


# --- The accelerator of the roofline cost model (:mod:`sdsl.model.hardware`): peak compute, memory


@dataclass(frozen=True)
class Accelerator:
    """What the roofline needs to know of a device (or of ``count`` devices in tensor parallel)."""

    name: str
    peak_flops: float
    """Dense peak compute at ``dtype``, FLOP/s (spec sheet; no sparsity)."""
    bandwidth: float
    """Memory bandwidth, bytes/s."""
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

    def __post_init__(self) -> None:
        for f in ("peak_flops", "bandwidth", "memory", "bytes_per_param"):
            v = getattr(self, f)
            if not (v > 0):
                raise ValueError(f"accelerator {self.name!r}: {f} must be > 0, got {v!r}")
        for f in ("step_overhead", "layer_overhead"):
            v = getattr(self, f)
            if not (math.isfinite(v) and v >= 0):
                raise ValueError(f"accelerator {self.name!r}: {f} must be a finite number >= 0 s, got {v!r}")

    def times(self, count: int) -> Accelerator:
        """``count`` devices in tensor parallel, scaled ideally (compute, bandwidth and memory times
        ``count``; overheads and communication not modelled)."""
        if not (isinstance(count, (int, np.integer)) and count >= 1):
            raise ValueError(f"gpus (devices in tensor parallel) must be an integer >= 1, got {count!r}")
        if count == 1:
            return self
        return replace(
            self,
            name=f"{count} x {self.name}",
            peak_flops=self.peak_flops * count,
            bandwidth=self.bandwidth * count,
            memory=self.memory * count,
            count=self.count * count,
        )

    def with_bytes_per_param(self, bytes_per_param: float, dtype: str) -> Accelerator:
        """The same device with weights and KV cache stored at another precision; the peak compute is
        kept (weight-only quantisation: the products still run at the preset's precision)."""
        return replace(self, bytes_per_param=float(bytes_per_param), dtype=dtype)


def flop_limit(bytes_per_param: float = 2.0) -> Accelerator:
    """The accelerator under which the roofline is the paper's FLOP model: infinite compute, no
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


def get_accelerator(name: str) -> Accelerator:
    """The :class:`Accelerator` of a preset of ``data/accelerators.csv`` (case-insensitive); an
    unknown name raises ``ValueError`` suggesting the closest names."""
    import difflib

    from sdsl.data import records

    rows = records("accelerators")
    key = str(name).strip().lower()
    for r in rows:
        if r["accelerator"].lower() == key:
            return Accelerator(
                name=r["name"],
                peak_flops=r["peak_flops"],
                bandwidth=r["bandwidth"],
                memory=r["memory"],
                step_overhead=r["step_overhead_s"],
                layer_overhead=r["layer_overhead_s"],
                bytes_per_param=r["bytes_per_param"],
                dtype=r["dtype"],
            )
    names = [r["accelerator"] for r in rows]
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(repr(c) for c in close)}? " if close else ""
    from sdsl.validation import shown

    raise ValueError(f"unknown {shown('hardware')} {name!r}; {hint}known: {', '.join(names)}")
