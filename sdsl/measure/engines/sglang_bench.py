"""SGLang's ``bench_serving`` result into alpha: its acceptance length inverted (chain drafts only).

``python -m sglang.bench_serving`` (``python/sglang/bench_serving.py``) reads the server's
``avg_spec_accept_length`` (``/get_server_info``, ``internal_states[0]``) and prints it in its
result block, 2 decimals (pasted in SGLang PR #13376 and PR #13553)::

    ============ Serving Benchmark Result ============
    Backend:                                 sglang
    ...
    Total generated tokens:                  512000
    ...
    Accept length:                           5.86

and writes it as ``accept_length`` (full precision) in the JSON line of ``--output-file`` beside
``total_output_tokens``. The acceptance length includes the bonus token; no draft length is
printed, so ``k`` is ``--gamma`` (``speculative_num_steps`` of a chain draft). Alpha inverts
``E(alpha, k)`` (:func:`sdsl.measure.estimators.alpha_from_mean_tokens`); the number of
verification steps is not printed either: it is taken as generated tokens / acceptance length, for
the delta-method interval, which also covers the printed rounding (the interval is the union over
the acceptance length +- half a unit of its last digit). The value is the server's average since
it started (warm-up and earlier runs included), which the reading says.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.types import AlphaReading, EngineRead, Labels, Skipped
from sdsl.validation import shown

__all__ = ["looks_like_sglang_bench", "read_sglang_bench", "parse_sglang_bench"]

_NUM = r"([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_HEADER = re.compile(r"=+\s*Serving Benchmark Result\s*=+")
_BACKEND = re.compile(r"^\s*Backend:\s*(\S+)\s*$")
_ACCEPT = re.compile(r"^\s*Accept length:\s*" + _NUM + r"\s*$")
_TOKENS = re.compile(r"^\s*Total generated tokens:\s*" + _NUM + r"\s*$")
#: Half a unit of the 2 printed decimals.
TEXT_ROUNDING = 5e-3


def looks_like_sglang_bench(text: str) -> bool:
    s = text.lstrip()
    if s[:1] == "{":
        head = s.splitlines()[0] if s else ""
        return '"accept_length"' in head and '"backend"' in head
    return bool(_HEADER.search(text)) and any(_ACCEPT.match(ln) for ln in text.splitlines())


def parse_sglang_bench(text: str, where: str = "bench") -> list[tuple[int, str, float, float | None, float]]:
    """``(line, backend, accept length, generated tokens, rounding)`` of every result in a file:
    the printed blocks, or the JSON lines of ``--output-file``."""
    out: list[tuple[int, str, float, float | None, float]] = []
    s = text.lstrip()
    if s[:1] == "{":
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                d: Any = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where} line {lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(d, dict):
                raise ValueError(f"{where} line {lineno}: a JSON {type(d).__name__}, not a bench_serving result")
            length = d.get("accept_length")
            if length is None:
                continue
            tokens = d.get("total_output_tokens")
            out.append(
                (
                    lineno,
                    str(d.get("backend", "")),
                    _number(length, "accept_length", where, lineno),
                    None if tokens is None else _number(tokens, "total_output_tokens", where, lineno),
                    0.0,
                )
            )
        if not out:
            raise ValueError(
                f"{where}: no accept_length in the results: the server ran without speculative decoding, or this "
                "bench_serving does not record it"
            )
        return out
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if _HEADER.search(ln)] or [0]
    for j, i0 in enumerate(starts):
        i1 = starts[j + 1] if j + 1 < len(starts) else len(lines)
        backend, length, tokens = "", None, None
        for i in range(i0, i1):
            if m := _BACKEND.match(lines[i]):
                backend = m.group(1)
            elif m := _ACCEPT.match(lines[i]):
                length = _number(float(m.group(1)), "Accept length", where, i + 1)
            elif m := _TOKENS.match(lines[i]):
                tokens = _number(float(m.group(1)), "Total generated tokens", where, i + 1)
        if length is not None:
            out.append((i0 + 1, backend, length, tokens, TEXT_ROUNDING))
    if not out:
        raise ValueError(f"{where}: no 'Accept length:' line: the server ran without speculative decoding")
    return out


def _number(value: Any, name: str, where: str, lineno: int) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value == value or value < 0:
        raise ValueError(f"{where} line {lineno}: {name} must be a number >= 0, got {value!r}")
    return float(value)


def _reading(
    length: float, tokens: float | None, rounding: float, k: int, path: str, labels: Labels, level: float
) -> AlphaReading:
    at = f"{path} ({', '.join(v for _, v in labels) or 'result'})"
    if not 1.0 <= length <= k + 1.0 + rounding:
        raise ValueError(f"{at}: acceptance length {length:g} outside [1, k + 1] = [1, {k + 1}]; is --gamma {k} right?")
    steps = tokens / length if tokens else None
    notes = [
        "the acceptance length is the server's avg_spec_accept_length since it started (warm-up and earlier runs "
        "included), not only this benchmark's",
        f"k = {k} from {shown('gamma')}",
    ]
    if steps is not None:
        notes.append(f"verification steps taken as generated tokens / acceptance length = {steps:.0f} (not printed)")
    lo_len, hi_len = max(length - rounding, 1.0), min(length + rounding, k + 1.0)
    mean = min(length, k + 1.0)
    n = None if steps is None else max(steps, 1.0)
    base = E.from_mean_length(
        source="sglang-bench",
        path=path,
        labels=labels,
        mean_length=mean,
        k=k,
        n_iterations=n,
        level=level,
        num_drafts=n,
        method="bench_serving Accept length (mean acceptance length) inverted",
        notes=tuple(notes),
    )
    if rounding and n is not None:
        lo = E.from_mean_length(
            source="sglang-bench", path=path, labels=labels, mean_length=lo_len, k=k, n_iterations=n, level=level
        ).estimate
        hi = E.from_mean_length(
            source="sglang-bench", path=path, labels=labels, mean_length=hi_len, k=k, n_iterations=n, level=level
        ).estimate
        est = replace(
            base.estimate,
            ci_low=min(base.estimate.ci_low, lo.ci_low),
            ci_high=max(base.estimate.ci_high, hi.ci_high),
            interval="wald_delta_union_over_rounding",
        )
        base = replace(
            base,
            estimate=est,
            notes=base.notes + (f"printed with 2 decimals: the interval covers {length:.2f} +- 0.005",),
        )
    return base


def read_sglang_bench(
    text: str, path: str, *, level: float = 0.95, gamma: int | None = None, detected_by: str = ""
) -> EngineRead:
    """One reading per result of the file (``--gamma`` gives ``k``, which the output lacks)."""
    results = parse_sglang_bench(text, path)
    readings, skipped = [], []
    for lineno, backend, length, tokens, rounding in results:
        labels: Labels = (("line", str(lineno)),) if len(results) > 1 else ()
        if backend and backend not in ("sglang", "sglang-oai", "sglang-oai-chat", "sglang-native"):
            labels = (*labels, ("backend", backend))
        if gamma is None:
            skipped.append(
                Skipped(
                    labels,
                    "k (the draft length) is not in bench_serving's output: give --gamma K (speculative_num_steps of "
                    "a chain draft)",
                )
            )
            continue
        try:
            readings.append(_reading(length, tokens, rounding, int(gamma), path, labels, level))
        except ValueError as exc:
            skipped.append(Skipped(labels, f"inconsistent: {str(exc).split(': ', 1)[-1]}"))
    return EngineRead(path, "sglang-bench", detected_by, tuple(readings), tuple(skipped))
