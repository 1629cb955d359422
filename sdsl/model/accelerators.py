"""The accelerator of the roofline cost model (:mod:`sdsl.model.hardware`): peak compute, memory
bandwidth and capacity, per-pass overheads and the precision of weights and KV cache
(:class:`Accelerator`), the presets of ``data/accelerators.csv`` (:func:`get_accelerator`) and the
limit in which the roofline is the paper's FLOP model (:func:`flop_limit`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

__all__ = ["Accelerator", "flop_limit", "accelerator_names", "get_accelerator"]


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
