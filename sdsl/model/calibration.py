"""Calibrate the roofline on this machine's CPU and measure how wrong it is.

``data/cpu_microbench.csv`` holds two numbers measured without any model (the best float32
matrix-multiplication rate and the read bandwidth of a 256 MiB array); ``data/cpu_step_times.csv``
holds the measured time of one forward pass of randomly initialised GPT-2 and Llama configurations
against the tokens per forward, batch and context (``tools/measure_cpu_step_times.py``). This
module

* builds the CPU accelerator two ways: peak compute and bandwidth from the micro-benchmarks with the
  two overheads of a pass (fixed, per layer) fitted by least squares on the relative errors of the
  step times (:func:`calibrate_cpu`, the physical roofline), and all four numbers fitted to the step
  times in log space (:func:`fit_effective`, the *effective* roofline: the rates PyTorch's kernels
  actually reach); the ``cpu-here`` preset of ``data/accelerators.csv`` is the effective one;
* predicts every measured step with :func:`sdsl.model.hardware.step_time` and reports the error
  (:func:`step_time_errors`), also with the overheads fitted without the configuration predicted
  (leave one configuration out, :func:`cross_validated_errors`), so that the error is not the fit's
  own residual.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from sdsl.model.hardware import Accelerator, Architecture, step_time

__all__ = [
    "CPU_NAME",
    "shape_of",
    "roofline_only",
    "fit_overheads",
    "calibrate_cpu",
    "fit_effective",
    "step_time_errors",
    "cross_validated_errors",
    "error_summary",
]

#: Name of the calibrated preset in ``data/accelerators.csv``.
CPU_NAME = "cpu-here"


def shape_of(row: Mapping[str, Any]) -> Architecture:
    """The :class:`Architecture` of a row of ``cpu_step_times`` (or any row with ``params``, ``layers``,
    ``heads``, ``kv_heads``, ``head_dim``, ``embedding_params`` and ``tied_embeddings``)."""
    tied = int(row["tied_embeddings"]) == 1
    return Architecture(
        params=float(row["params"]),
        layers=float(row["layers"]),
        q_dim=float(row["heads"]) * float(row["head_dim"]),
        kv_dim=float(row["kv_heads"]) * float(row["head_dim"]),
        embedding_params=0.0 if tied else float(row["embedding_params"]),
    )


def _bench(bench: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    out = {str(r["quantity"]): float(r["value"]) for r in bench}
    for q in ("peak_flops", "read_bandwidth"):
        if q not in out:
            raise ValueError(f"the micro-benchmarks have no {q!r} row (data/cpu_microbench.csv)")
    return out


def roofline_only(bench: Iterable[Mapping[str, Any]], bytes_per_param: float = 4.0) -> Accelerator:
    """The CPU as the micro-benchmarks see it, without overheads (float32 weights by default)."""
    b = _bench(bench)
    return Accelerator(
        name=CPU_NAME,
        peak_flops=b["peak_flops"],
        bandwidth=b["read_bandwidth"],
        memory=math.inf,
        bytes_per_param=bytes_per_param,
        dtype="fp32",
    )


def _design(rows: Sequence[Mapping[str, Any]], acc: Accelerator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = np.array([float(r["seconds"]) for r in rows])
    base = np.array(
        [float(step_time(shape_of(r), acc, float(r["batch"]), float(r["context"]), float(r["tokens"]))) for r in rows]
    )
    layers = np.array([float(r["layers"]) for r in rows])
    return t, base, layers


def fit_overheads(rows: Sequence[Mapping[str, Any]], acc: Accelerator) -> tuple[float, float]:
    """Fixed and per-layer overhead of a pass, minimising the squared relative error of
    ``roofline + t0 + t_layer * layers`` against the measured seconds (both kept >= 0).

    Parameters
    ----------
    rows : sequence of mappings
        Rows of ``cpu_step_times``.
    acc : Accelerator
        The roofline without overheads (:func:`roofline_only`).

    Returns
    -------
    (float, float)
        ``t0`` and ``t_layer`` in seconds.
    """
    if not rows:
        raise ValueError("no step-time measurements to fit the overheads on")
    t, base, layers = _design(rows, acc)
    w = 1.0 / t
    X = np.column_stack([np.ones_like(t), layers]) * w[:, None]
    y = (t - base) * w
    best = (math.inf, 0.0, 0.0)
    for cols in ((0, 1), (0,), (1,)):  # the non-negative least squares of two unknowns by enumeration
        coef, *_ = np.linalg.lstsq(X[:, cols], y, rcond=None)
        if np.any(coef < 0):
            continue
        full = np.zeros(2)
        full[list(cols)] = coef
        sse = float(np.sum((X @ full - y) ** 2))
        if sse < best[0]:
            best = (sse, float(full[0]), float(full[1]))
    return best[1], best[2]


def calibrate_cpu(bench: Iterable[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]) -> Accelerator:
    """The ``cpu-here`` accelerator: micro-benchmarked roofline plus overheads fitted on ``rows``."""
    acc = roofline_only(bench)
    t0, tl = fit_overheads(rows, acc)
    return Accelerator(
        name=CPU_NAME,
        peak_flops=acc.peak_flops,
        bandwidth=acc.bandwidth,
        memory=acc.memory,
        step_overhead=t0,
        layer_overhead=tl,
        bytes_per_param=4.0,
        dtype="fp32",
    )


def fit_effective(rows: Sequence[Mapping[str, Any]], start: Accelerator | None = None) -> Accelerator:
    """The roofline whose compute rate, bandwidth and two overheads best predict ``rows``.

    Minimises the squared log-ratio of predicted to measured seconds
    (``scipy.optimize.least_squares`` on the logarithms of the four numbers, so each stays > 0).

    Parameters
    ----------
    rows : sequence of mappings
        Rows of ``cpu_step_times``.
    start : Accelerator, optional
        Starting point (default: 1e11 FLOP/s, 1e10 bytes/s, 1 ms, 1 ms).

    Returns
    -------
    Accelerator
        Named :data:`CPU_NAME`, float32.
    """
    from scipy.optimize import least_squares

    if not rows:
        raise ValueError("no step-time measurements to fit the roofline on")
    t = np.array([float(r["seconds"]) for r in rows])
    shapes = [(shape_of(r), float(r["batch"]), float(r["context"]), float(r["tokens"])) for r in rows]
    s = start or Accelerator(CPU_NAME, 1e11, 1e10, math.inf, 1e-3, 1e-3, 4.0, "fp32")
    x0 = np.log([s.peak_flops, s.bandwidth, max(s.step_overhead, 1e-6), max(s.layer_overhead, 1e-6)])

    def acc_of(x: np.ndarray) -> Accelerator:
        pk, bw, t0, tl = np.exp(x)
        return Accelerator(CPU_NAME, float(pk), float(bw), math.inf, float(t0), float(tl), 4.0, "fp32")

    def resid(x: np.ndarray) -> np.ndarray:
        a = acc_of(x)
        return np.log(np.array([float(step_time(sh, a, b, c, k)) for sh, b, c, k in shapes]) / t)

    return acc_of(least_squares(resid, x0).x)


def step_time_errors(rows: Sequence[Mapping[str, Any]], acc: Accelerator) -> list[dict[str, Any]]:
    """Measured against predicted seconds of every step: ``relative_error = predicted / measured - 1``."""
    t, base, layers = _design(rows, replace_overheads(acc, 0.0, 0.0))
    pred = base + acc.step_overhead + acc.layer_overhead * layers
    return [
        {
            "config": r["config"],
            "batch": int(r["batch"]),
            "context": int(r["context"]),
            "tokens": int(r["tokens"]),
            "measured_s": float(ti),
            "predicted_s": float(pi),
            "relative_error": float(pi / ti - 1.0),
        }
        for r, ti, pi in zip(rows, t, pred)
    ]


def replace_overheads(acc: Accelerator, t0: float, tl: float) -> Accelerator:
    """``acc`` with other overheads."""
    from dataclasses import replace

    return replace(acc, step_overhead=t0, layer_overhead=tl)


def cross_validated_errors(
    bench: Iterable[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]], effective: bool = False
) -> list[dict[str, Any]]:
    """:func:`step_time_errors` of each configuration with the model fitted on the other
    configurations only (leave one configuration out): the overheads of :func:`calibrate_cpu`, or
    with ``effective=True`` all four numbers of :func:`fit_effective`."""
    bench = list(bench)
    base = roofline_only(bench)
    out = []
    for cfg in dict.fromkeys(r["config"] for r in rows):
        train = [r for r in rows if r["config"] != cfg]
        test = [r for r in rows if r["config"] == cfg]
        if effective:
            acc = fit_effective(train)
        else:
            t0, tl = fit_overheads(train, base)
            acc = replace_overheads(base, t0, tl)
        out += step_time_errors(test, acc)
    return out


def error_summary(errors: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Median and 90th percentile of the absolute relative error, the largest one, and the mean
    signed error (bias), over ``errors``."""
    e = np.array([float(x["relative_error"]) for x in errors])
    if e.size == 0:
        raise ValueError("no errors to summarise")
    a = np.abs(e)
    return {
        "n": int(e.size),
        "median_abs": float(np.median(a)),
        "p90_abs": float(np.quantile(a, 0.9)),
        "max_abs": float(a.max()),
        "mean_signed": float(e.mean()),
    }


def _main() -> int:
    """``python -m sdsl.model.calibration``: the roofline's error against data/cpu_step_times.csv."""
    from sdsl.data import records

    rows = [dict(r) for r in records("cpu_step_times")]
    bench = [dict(r) for r in records("cpu_microbench")]
    eff = fit_effective(rows)
    print(
        f"effective roofline: {eff.peak_flops:.4g} FLOP/s, {eff.bandwidth:.4g} bytes/s, "
        f"{eff.step_overhead:.3g} s per pass, {eff.layer_overhead:.3g} s per layer"
    )
    variants = (
        ("micro-benchmarks only, no overhead", step_time_errors(rows, roofline_only(bench))),
        ("micro-benchmarks + fitted overheads (in sample)", step_time_errors(rows, calibrate_cpu(bench, rows))),
        ("micro-benchmarks + overheads, leave one config out", cross_validated_errors(bench, rows)),
        ("effective roofline (in sample)", step_time_errors(rows, eff)),
        ("effective roofline, leave one config out", cross_validated_errors(bench, rows, effective=True)),
    )
    print(f"{'model':<52} {'n':>3} {'median |err|':>12} {'p90 |err|':>10} {'max |err|':>10} {'bias':>7}")
    for label, errs in variants:
        s = error_summary(errs)
        print(
            f"{label:<52} {s['n']:>3} {s['median_abs']:>12.1%} {s['p90_abs']:>10.1%} {s['max_abs']:>10.1%} "
            f"{s['mean_signed']:>+7.1%}"
        )
    print("\nleave one config out, effective roofline, by configuration and pass (relative error)")
    cv = variants[-1][1]
    for cfg in dict.fromkeys(e["config"] for e in cv):
        one = [e for e in cv if e["config"] == cfg and e["batch"] == 1 and e["context"] == 256]
        print(f"  {cfg:<16} " + " ".join(f"k={e['tokens']}:{e['relative_error']:+.0%}" for e in one))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
