"""Fit the step-time model to measured step times, and measure how wrong it is.

The cost of a forward pass (:func:`sdsl.model.hardware.step_time`) has six numbers no spec sheet
gives: the effective compute rate and bandwidth of the weight products, those of the attention
over the KV cache, a fixed time per pass and a time per layer. This module fits them to measured
step times -- ``data/h200_step_times.csv`` (one NVIDIA H200, passes replayed from CUDA graphs),
``data/cpu_step_times.csv`` (this machine's CPU) or the CSV of ``sdsl steps measure`` on the user's
device -- by ``scipy.optimize.least_squares`` on the squared log-ratio of predicted to measured
seconds, over the logarithms of the six numbers (so each stays > 0):

    min  sum_i  ln( t_model(shape_i, batch_i, context_i, tokens_i) / t_measured_i )^2

and reports the error of each shape predicted by the model fitted *without* it (leave one shape
out, :func:`leave_one_shape_out`), so that the error quoted is not the fit's own residual.

The accelerator presets of ``data/accelerators.csv`` come from here (:func:`preset_rows`): ``h200``
is the fit to the H200 measurement; ``a100-80gb`` and ``h100-sxm`` scale it by the ratios of their
spec sheets' peaks to the H200's (:func:`scaled`; their overheads are the H200's: nobody measured
them); ``cpu-here`` is the fit to this machine's CPU.

Rows that measure a verification of several tokens against a long cache (context 8192 and more
than one new token, :func:`slow_attention`) ran PyTorch's attention kernel, which does not split a
long cache across the GPU's processors as the engines' split-KV (flash-decoding) kernels do: they
are left out of GPU fits and accuracy figures, and said so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from sdsl.model.hardware import Accelerator, Architecture, step_time

__all__ = [
    "CPU_NAME",
    "STEP_COLUMNS",
    "MEASURED_COLUMNS",
    "shape_of",
    "shape_name",
    "measured_seconds",
    "slow_attention",
    "roofline_only",
    "fit_step_model",
    "step_time_errors",
    "leave_one_shape_out",
    "error_summary",
    "scaled",
    "accuracy_text",
    "preset_rows",
    "write_presets",
]

#: Name of the calibrated CPU preset in ``data/accelerators.csv``.
CPU_NAME = "cpu-here"

#: The columns that describe one measured pass (the shape, then the pass): those of
#: ``data/h200_step_times.csv`` and of ``sdsl steps measure``.
STEP_COLUMNS = (
    "shape",
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "intermediate",
    "vocab",
    "tied",
    "params",
    "embedding_params",
    "batch",
    "context",
    "tokens",
)
#: Measured seconds, in the order a fit looks for them: the figure an engine sees (``seconds``; on
#: a CUDA device the pass replayed from a CUDA graph, ``graph_s``), then the eager pass.
MEASURED_COLUMNS = ("seconds", "graph_s", "eager_s")

#: The numbers fitted, as fields of :class:`~sdsl.model.hardware.Accelerator`, with the range each
#: is searched in (rates in FLOP/s and bytes/s, overheads in seconds; an overhead may vanish).
_FITTED = {
    "peak_flops": (1e6, 1e19),
    "bandwidth": (1e6, 1e16),
    "attention_bandwidth": (1e6, 1e16),
    "step_overhead": (1e-15, 10.0),
    "layer_overhead": (1e-15, 1.0),
}


def _get(row: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if k in row and row[k] is not None and row[k] == row[k]:
            return row[k]
    raise ValueError(f"a step-time row lacks {' or '.join(repr(k) for k in keys)}: columns are {', '.join(row)}")


def shape_of(row: Mapping[str, Any]) -> Architecture:
    """The :class:`Architecture` of a row of step times: ``params``, ``layers``, ``heads``,
    ``kv_heads``, ``head_dim``, ``embedding_params`` and ``tied`` (or ``tied_embeddings``); an
    untied input embedding is looked up, not streamed."""
    tied = int(float(_get(row, "tied", "tied_embeddings"))) == 1
    params, emb = float(_get(row, "params")), float(_get(row, "embedding_params"))
    return Architecture(
        params=params,
        layers=float(_get(row, "layers")),
        q_dim=float(_get(row, "heads")) * float(_get(row, "head_dim")),
        kv_dim=float(_get(row, "kv_heads")) * float(_get(row, "head_dim")),
        embedding_params=0.0 if tied else emb,
    )


def shape_name(row: Mapping[str, Any]) -> str:
    """The name of a row's shape (``shape``, or ``config`` in ``data/cpu_step_times.csv``)."""
    return str(_get(row, "shape", "config"))


def measured_seconds(row: Mapping[str, Any], column: str | None = None) -> float:
    """The measured seconds of a row: ``column``, or the first of :data:`MEASURED_COLUMNS` it has."""
    return float(_get(row, *((column,) if column else MEASURED_COLUMNS)))


def slow_attention(row: Mapping[str, Any]) -> bool:
    """A verification of several tokens against a cache of 8192 or more: PyTorch's attention kernel,
    slower there than the engines' split-KV decoding kernels (see the module's notes)."""
    return float(row["context"]) >= 8192 and float(row["tokens"]) > 1


def _pass(row: Mapping[str, Any]) -> tuple[float, float, float]:
    return float(row["batch"]), float(row["context"]), float(row["tokens"])


def roofline_only(bench: Iterable[Mapping[str, Any]], bytes_per_param: float = 4.0) -> Accelerator:
    """The CPU as its micro-benchmarks (``data/cpu_microbench.csv``) see it, without overheads: the
    baseline a fitted model has to beat."""
    b = {str(r["quantity"]): float(r["value"]) for r in bench}
    for q in ("peak_flops", "read_bandwidth"):
        if q not in b:
            raise ValueError(f"the micro-benchmarks have no {q!r} row (data/cpu_microbench.csv)")
    return Accelerator(
        name=CPU_NAME,
        peak_flops=b["peak_flops"],
        bandwidth=b["read_bandwidth"],
        memory=math.inf,
        bytes_per_param=bytes_per_param,
        dtype="fp32",
    )


def _start(rows: Sequence[Mapping[str, Any]], t: np.ndarray, w: float) -> np.ndarray:
    """A starting point from the data: the largest rate any row implies, 10 us of overhead."""
    ns = np.array([shape_of(r).streamed_params for r in rows])
    bk = np.array([float(r["batch"]) * float(r["tokens"]) for r in rows])
    p0, w0 = float(np.max(2 * ns * bk / t)), float(np.max(w * ns / t))
    return np.log([p0, w0, w0, 1e-5, 1e-5])


def fit_step_model(
    rows: Sequence[Mapping[str, Any]],
    name: str,
    memory: float = math.inf,
    bytes_per_param: float = 2.0,
    dtype: str = "bf16",
    column: str | None = None,
    source: str = "",
) -> Accelerator:
    """The six numbers of the step-time model that best predict ``rows`` (see the module's notes).

    Parameters
    ----------
    rows : sequence of mappings
        Measured passes: the shape columns of :func:`shape_of`, ``batch``, ``context``, ``tokens``
        and the measured seconds (:func:`measured_seconds`). At least 8 rows of at least 2 shapes.
    name : str
        The device's name.
    memory : float
        Its memory, bytes (not fitted; used by plans to check that a deployment fits).
    bytes_per_param : float
        Bytes per weight and KV-cache element of the measured passes (2: bf16).
    dtype : str
    column : str, optional
        The column of measured seconds (default: :func:`measured_seconds`'s order).
    source : str
        Where the measurement comes from, for the accelerator's ``source``.

    Returns
    -------
    Accelerator
        ``basis`` "measured".
    """
    from scipy.optimize import least_squares

    rows = list(rows)
    if len(rows) < 8 or len({shape_name(r) for r in rows}) < 2:
        raise ValueError(
            f"a fit of the step-time model's six numbers needs at least 8 measured passes of at least 2 shapes, "
            f"got {len(rows)} of {len({shape_name(r) for r in rows})}"
        )
    t = np.array([measured_seconds(r, column) for r in rows])
    if not np.all(np.isfinite(t) & (t > 0)):
        raise ValueError("measured seconds must be finite numbers > 0")
    shapes = [shape_of(r) for r in rows]
    passes = [_pass(r) for r in rows]

    def acc_of(x: np.ndarray) -> Accelerator:
        p, w, wa, t0, tl = map(float, np.exp(x))
        return Accelerator(
            name, p, w, memory, t0, tl, bytes_per_param, dtype, attention_flops=p, attention_bandwidth=wa,
            basis="measured", source=source,
        )  # fmt: skip

    def resid(x: np.ndarray) -> np.ndarray:
        a = acc_of(x)
        return np.log(np.array([float(step_time(s, a, *p)) for s, p in zip(shapes, passes)]) / t)

    lower, upper = np.log(np.array(list(_FITTED.values()))).T
    x0 = np.clip(_start(rows, t, bytes_per_param), lower + 1, upper - 1)
    return acc_of(least_squares(resid, x0, bounds=(lower, upper), x_scale="jac").x)


def step_time_errors(
    rows: Sequence[Mapping[str, Any]], acc: Accelerator, column: str | None = None
) -> list[dict[str, Any]]:
    """Measured against predicted seconds of every row: ``ratio = predicted / measured``."""
    out = []
    for r in rows:
        b, c, k = _pass(r)
        pred = float(step_time(shape_of(r), acc, b, c, k))
        meas = measured_seconds(r, column)
        out.append(
            {
                "shape": shape_name(r),
                "batch": int(b),
                "context": int(c),
                "tokens": int(k),
                "measured_s": meas,
                "predicted_s": pred,
                "ratio": pred / meas,
                "slow_attention": slow_attention(r),
            }
        )
    return out


def leave_one_shape_out(rows: Sequence[Mapping[str, Any]], **fit: Any) -> list[dict[str, Any]]:
    """:func:`step_time_errors` of each shape under the model fitted on the other shapes only
    (:func:`fit_step_model` with ``fit``; ``name`` defaults to "held out")."""
    rows = list(rows)
    fit = {"name": "held out", **fit}
    out = []
    for name in dict.fromkeys(shape_name(r) for r in rows):
        train = [r for r in rows if shape_name(r) != name]
        test = [r for r in rows if shape_name(r) == name]
        out += step_time_errors(test, fit_step_model(train, **fit), fit.get("column"))
    return out


def error_summary(errors: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """The figures the issue of accuracy is judged by, over ``errors`` (:func:`step_time_errors`):
    the share of rows within 20 % of the measured time, the median of ``|ln(predicted/measured)|``,
    the smallest and largest ratio, and the median ratio (the bias)."""
    r = np.array([float(e["ratio"]) for e in errors])
    if r.size == 0:
        raise ValueError("no errors to summarise")
    return {
        "n": int(r.size),
        "within_20": float(np.mean(np.abs(r - 1.0) <= 0.2)),
        "median_abs_log": float(np.median(np.abs(np.log(r)))),
        "ratio_min": float(r.min()),
        "ratio_median": float(np.median(r)),
        "ratio_max": float(r.max()),
    }


def scaled(measured: Accelerator, name: str, spec: Mapping[str, float], measured_spec: Mapping[str, float], memory: float, source: str) -> Accelerator:  # fmt: skip
    """A device nobody measured, from one that was: each effective rate times the ratio of the two
    spec sheets' peaks (compute rates by ``peak_flops``, bandwidths by ``bandwidth``), the overheads
    kept. ``basis`` "scaled"."""
    fc = float(spec["peak_flops"]) / float(measured_spec["peak_flops"])
    fb = float(spec["bandwidth"]) / float(measured_spec["bandwidth"])
    return replace(
        measured,
        name=name,
        peak_flops=measured.peak_flops * fc,
        attention_flops=measured.attention_rate * fc,
        bandwidth=measured.bandwidth * fb,
        attention_bandwidth=measured.attention_bandwidth_rate * fb,
        memory=memory,
        basis="scaled",
        source=source,
    )


def accuracy_text(summary: Mapping[str, float], what: str) -> str:
    """One sentence of :func:`error_summary`'s figures: the share within 20 % and the typical error."""
    within = round(summary["within_20"] * summary["n"])
    return (
        f"within 20 % for {within} of {summary['n']} {what} (median |ln(predicted/measured)| "
        f"{summary['median_abs_log']:.3f}; predicted/measured {summary['ratio_min']:.2f}-{summary['ratio_max']:.2f})"
    )


def preset_rows() -> dict[str, Accelerator]:
    """The calibrated presets of ``data/accelerators.csv`` recomputed from the committed
    measurements and the spec sheets (the test that the file holds them reads this), each with
    its accuracy: held-out shapes for a fit, the measured device's for a scaled one, the H200
    measurement for the spec sheet alone."""
    from sdsl.data import records

    spec = {r["accelerator"]: r for r in records("accelerators")}
    all_h200 = [dict(r) for r in records("h200_step_times")]
    h200_rows = [r for r in all_h200 if not slow_attention(r)]
    held = error_summary(leave_one_shape_out(h200_rows, memory=spec["h200"]["memory"]))
    left = len(all_h200) - len(h200_rows)
    h200 = replace(
        fit_step_model(
            h200_rows,
            spec["h200"]["name"],
            spec["h200"]["memory"],
            source="fitted to data/h200_step_times.csv (CUDA-graph passes; rows with context 8192 and several new "
            "tokens left out)",
        ),
        accuracy=accuracy_text(held, "measured passes of shapes left out of the fit")
        + f"; {left} passes of context 8192 with several new tokens left out (PyTorch's attention there is slower "
        "than the engines' split-KV kernels)",
    )
    out = {"h200": h200}
    for key in ("a100-80gb", "h100-sxm"):
        out[key] = replace(
            scaled(
                h200,
                spec[key]["name"],
                {"peak_flops": spec[key]["spec_peak_flops"], "bandwidth": spec[key]["spec_bandwidth"]},
                {"peak_flops": spec["h200"]["spec_peak_flops"], "bandwidth": spec["h200"]["spec_bandwidth"]},
                spec[key]["memory"],
                f"the h200 fit scaled by the spec-sheet ratios of {key} to h200 (compute and bandwidth); overheads "
                "the H200's, not measured on this device",
            ),
            accuracy="not measured on this device; on the H200 the model it scales was "
            + accuracy_text(held, "passes of shapes left out of the fit"),
        )
    raw = spec["h200-spec"]
    sheet = Accelerator(
        raw["name"],
        raw["spec_peak_flops"],
        raw["spec_bandwidth"],
        raw["memory"],
        basis="spec sheet",
        source=raw["calibration_source"],
    )
    miss = error_summary(step_time_errors(all_h200, sheet))
    out["h200-spec"] = replace(
        sheet,
        accuracy=f"per-pass overhead unknown; on an H200 the uncalibrated model under-estimated step times "
        f"{1 / miss['ratio_max']:.1f}-{1 / miss['ratio_min']:.0f}x ({round(miss['within_20'] * miss['n'])} of "
        f"{miss['n']} measured passes within 20 %)",
    )
    cpu = [dict(r) for r in records("cpu_step_times")]
    cpu_held = error_summary(leave_one_shape_out(cpu, bytes_per_param=4.0, dtype="fp32"))
    out[CPU_NAME] = replace(
        fit_step_model(
            cpu,
            spec[CPU_NAME]["name"],
            spec[CPU_NAME]["memory"],
            bytes_per_param=4.0,
            dtype="fp32",
            source="fitted to data/cpu_step_times.csv",
        ),
        accuracy=accuracy_text(cpu_held, "measured passes of shapes left out of the fit"),
    )
    return out


#: The columns of ``data/accelerators.csv`` that :func:`preset_rows` computes, with the formats
#: they are written in (four significant digits; an overhead below a nanosecond as 0).
_WRITTEN = {
    "peak_flops": lambda a: a.peak_flops,
    "bandwidth": lambda a: a.bandwidth,
    "attention_flops": lambda a: a.attention_rate,
    "attention_bandwidth": lambda a: a.attention_bandwidth_rate,
    "step_overhead_s": lambda a: a.step_overhead,
    "layer_overhead_s": lambda a: a.layer_overhead,
}


def write_presets() -> None:
    """Rewrite the fitted columns, ``calibration_source`` and ``accuracy`` of ``data/accelerators.csv``
    from :func:`preset_rows`, and its sha256 in ``accelerators.yml`` (on purpose: the plans change)."""
    import csv
    import io
    import re

    from sdsl.data import data_path, sha256, yml_beside

    path = data_path("accelerators")
    fits = preset_rows()
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        a = fits.get(r["accelerator"])
        if a is None:
            continue
        for col, get in _WRITTEN.items():
            v = float(get(a))
            r[col] = "0" if col.endswith("overhead_s") and v < 1e-9 else f"{v:.4g}"
        r.update(calibration_source=a.source, accuracy=a.accuracy, basis=a.basis)
    buf = io.StringIO()
    w = csv.DictWriter(buf, list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")
    yml = yml_beside(path)
    assert yml is not None
    yml.write_text(re.sub(r"sha256: \S+", f"sha256: {sha256(path)}", yml.read_text(encoding="utf-8")), encoding="utf-8")


def _main() -> int:
    """``python -m sdsl.model.calibration [--write]``: the presets' numbers and their errors;
    ``--write`` rewrites them into ``data/accelerators.csv``."""
    import sys

    from sdsl.data import records
    from sdsl.model.hardware import get_accelerator

    if sys.argv[1:] == ["--write"]:
        write_presets()
    elif sys.argv[1:]:
        print(f"python -m sdsl.model.calibration: error: expected no argument or --write, got {' '.join(sys.argv[1:])!r}", file=sys.stderr)  # fmt: skip
        return 2
    presets = preset_rows()
    for key, acc in presets.items():
        print(
            f"{key:<10} products {acc.peak_flops:.4g} FLOP/s {acc.bandwidth:.4g} B/s; attention "
            f"{acc.attention_rate:.4g} FLOP/s {acc.attention_bandwidth_rate:.4g} B/s; {acc.step_overhead:.3g} s per "
            f"pass, {acc.layer_overhead:.3g} s per layer"
        )
    h200 = [dict(r) for r in records("h200_step_times")]
    fast = [r for r in h200 if not slow_attention(r)]
    cpu = [dict(r) for r in records("cpu_step_times")]
    bench = [dict(r) for r in records("cpu_microbench")]
    spec = get_accelerator("h200-spec")
    variants = (
        ("H200, spec sheet, no overhead (all rows)", step_time_errors(h200, spec)),
        ("H200, fitted, in sample", step_time_errors(fast, presets["h200"])),
        ("H200, fitted, leave one shape out", leave_one_shape_out(fast, memory=141e9)),
        ("CPU, micro-benchmarks, no overhead", step_time_errors(cpu, roofline_only(bench))),
        ("CPU, fitted, in sample", step_time_errors(cpu, presets[CPU_NAME])),
        ("CPU, fitted, leave one shape out", leave_one_shape_out(cpu, bytes_per_param=4.0, dtype="fp32")),
    )
    print(f"\n{'model':<44} {'n':>3} {'within 20 %':>11} {'med |ln|':>9} {'ratio range':>16}")
    for label, errs in variants:
        s = error_summary(errs)
        print(
            f"{label:<44} {s['n']:>3} {s['within_20']:>11.0%} {s['median_abs_log']:>9.3f} "
            f"{s['ratio_min']:>7.3g} - {s['ratio_max']:<7.3g}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
