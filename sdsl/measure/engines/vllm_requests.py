"""vLLM's per-request acceptance metrics (``--per-request-spec-decode-metrics summary|detailed``,
vLLM PR #48915) into the per-iteration MLE of alpha and a cluster bootstrap over requests.

Each OpenAI-compatible response (or the final usage chunk of a stream) carries::

    "metrics": {"speculative_decoding": {
        "mean_acceptance_length": 1.2325581395348837, "draft_acceptance_rate": 0.0775...,
        "acceptance_histogram": [39, 1, 0, 3], "num_spec_steps": 43,
        "num_accepted_draft_tokens": 10, "num_draft_tokens": 129, "num_spec_tokens": 3}}

``acceptance_histogram[j]`` counts the verification steps that accepted exactly ``j`` draft tokens
(length ``k + 1``, ``k = num_spec_tokens``); ``num_draft_tokens`` is after drafts invalidated by
structured output, so it is below ``k x num_spec_steps`` when drafts were shorter than ``k``.
``detailed`` adds ``per_step_accepted`` and ``per_step_drafted``, one entry per step: the exact
input of :func:`sdsl.measure.estimators.alpha_from_accepted`. With ``summary`` only, every step is taken as
``k`` long and the missing draft tokens bound the estimate (:mod:`sdsl.measure.estimators`).

Accepted files: one JSON response, a JSON list of them, JSON lines, or a server-sent-event stream
(``data: {...}`` lines). Every object with an ``acceptance_histogram`` is a request; responses
with ``"speculative_decoding": null`` (``n > 1``) and requests that drafted nothing are counted and
skipped. Requests are grouped by the response's ``model``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.types import EngineRead, Skipped

__all__ = ["RequestStats", "parse_requests", "read_vllm_requests", "looks_like_requests"]


@dataclass(frozen=True)
class RequestStats:
    """One request's ``metrics.speculative_decoding``."""

    index: int
    model: str
    k: int
    histogram: tuple[int, ...]
    num_spec_steps: int
    num_accepted: int
    num_draft_tokens: int
    per_step_accepted: tuple[int, ...] | None = None
    per_step_drafted: tuple[int, ...] | None = None


def _json_values(text: str, where: str) -> list[Any]:
    s = text.strip()
    if not s:
        raise ValueError(f"{where}: the file is empty")
    try:
        return [json.loads(s)]
    except json.JSONDecodeError:
        pass
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        ln = line.strip()
        if ln.startswith("data:"):
            ln = ln[5:].strip()
        if not ln or ln == "[DONE]" or ln.startswith((":", "event:", "id:")):
            continue
        try:
            out.append(json.loads(ln))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where} line {lineno}: not JSON ({exc.msg})") from None
    return out


def _walk(obj: Any, model: str | None = None) -> Iterator[tuple[dict | None, str | None, bool]]:
    """Yield ``(speculative_decoding dict or None, model, is_null)`` for every response found."""
    if isinstance(obj, list):
        for x in obj:
            yield from _walk(x, model)
        return
    if not isinstance(obj, dict):
        return
    model = obj.get("model", model) if isinstance(obj.get("model", model), (str, type(None))) else model
    if "acceptance_histogram" in obj and "num_spec_steps" in obj:
        yield obj, model, False
        return
    for key, val in obj.items():
        if key == "speculative_decoding" and val is None:
            yield None, model, True
        elif isinstance(val, (dict, list)):
            yield from _walk(val, model)


def looks_like_requests(text: str) -> bool:
    return "acceptance_histogram" in text and "num_spec_steps" in text


def _ints(value: Any, name: str, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 and float(x).is_integer() for x in value
    ):
        raise ValueError(f"{where}: {name} must be a list of whole counts >= 0, got {value!r}"[:200])
    return tuple(int(x) for x in value)


def _int(value: Any, name: str, where: str, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer() or value < low:
        raise ValueError(f"{where}: {name} must be a whole number >= {low}, got {value!r}")
    return int(value)


def _request(d: dict, index: int, model: str | None, where: str) -> RequestStats:
    at = f"{where} request {index}"
    k = _int(d.get("num_spec_tokens"), "num_spec_tokens", at, 1)
    h = _ints(d.get("acceptance_histogram"), "acceptance_histogram", at)
    steps = _int(d.get("num_spec_steps"), "num_spec_steps", at)
    acc = _int(d.get("num_accepted_draft_tokens"), "num_accepted_draft_tokens", at)
    dt = _int(d.get("num_draft_tokens"), "num_draft_tokens", at)
    if len(h) != k + 1:
        raise ValueError(f"{at}: acceptance_histogram has {len(h)} entries, num_spec_tokens + 1 = {k + 1} expected")
    if sum(h) != steps:
        raise ValueError(f"{at}: acceptance_histogram sums to {sum(h)} but num_spec_steps is {steps}")
    if sum(j * c for j, c in enumerate(h)) != acc:
        raise ValueError(
            f"{at}: the histogram gives {sum(j * c for j, c in enumerate(h))} accepted tokens but "
            f"num_accepted_draft_tokens is {acc}"
        )
    if dt > k * steps or acc > dt:
        raise ValueError(
            f"{at}: need num_accepted_draft_tokens <= num_draft_tokens <= k x num_spec_steps, got "
            f"{acc} <= {dt} <= {k} x {steps}"
        )
    pa = pd = None
    if "per_step_accepted" in d or "per_step_drafted" in d:
        pa = _ints(d.get("per_step_accepted"), "per_step_accepted", at)
        pd = _ints(d.get("per_step_drafted"), "per_step_drafted", at)
        if not len(pa) == len(pd) == steps:
            raise ValueError(
                f"{at}: per_step_accepted ({len(pa)}) and per_step_drafted ({len(pd)}) must have "
                f"num_spec_steps = {steps} entries"
            )
        bad = [i for i, (a, g) in enumerate(zip(pa, pd)) if not a <= g <= k]
        if bad:
            raise ValueError(f"{at}: step {bad[0]} accepted {pa[bad[0]]} of {pd[bad[0]]} drafted (k = {k})")
        if sum(pa) != acc or sum(pd) != dt:
            raise ValueError(
                f"{at}: per-step arrays sum to {sum(pa)} accepted / {sum(pd)} drafted, the totals are {acc} / {dt}"
            )
    return RequestStats(index, model or "(unnamed model)", k, h, steps, acc, dt, pa, pd)


def parse_requests(text: str, where: str = "requests") -> tuple[list[RequestStats], int]:
    """The requests of a file and the number of responses whose ``speculative_decoding`` is null."""
    reqs: list[RequestStats] = []
    nulls = 0
    for value in _json_values(text, where):
        for d, model, _is_null in _walk(value):
            if d is None:  # a null speculative_decoding (is_null)
                nulls += 1
            else:
                reqs.append(_request(d, len(reqs), model, where))
    if not reqs and not nulls:
        raise ValueError(
            f"{where}: no metrics.speculative_decoding object (start vLLM with "
            "--per-request-spec-decode-metrics summary or detailed)"
        )
    return reqs, nulls


def read_vllm_requests(
    text: str, path: str, *, level: float = 0.95, seed: int = 0, detected_by: str = ""
) -> EngineRead:
    """Per model: the truncated-geometric MLE over every verification step of its requests, the
    cluster bootstrap over requests (``np.random.default_rng(seed)``), the constant-alpha test,
    and the short-draft record."""
    reqs, nulls = parse_requests(text, path)
    notes = [f"{nulls} response(s) with speculative_decoding null (n > 1) skipped"] if nulls else []
    readings, skipped = [], []
    for model in dict.fromkeys(r.model for r in reqs):
        rs = [r for r in reqs if r.model == model]
        labels = (("model", model),)
        active = [r for r in rs if r.num_spec_steps > 0]
        if not active:
            skipped.append(Skipped(labels, f"idle: none of the {len(rs)} request(s) drafted a token"))
            continue
        ks = {r.k for r in active}
        if len(ks) != 1:
            skipped.append(Skipped(labels, f"inconsistent: requests report different num_spec_tokens {sorted(ks)}"))
            continue
        k = ks.pop()
        exact = all(r.per_step_accepted is not None for r in active)
        acc: list[int] = []
        gam: list[int] = []
        grp: list[int] = []
        missing = 0
        for r in active:
            pa, pd = r.per_step_accepted, r.per_step_drafted
            if exact and pa is not None and pd is not None:  # exact: every active request has both
                acc += pa
                gam += pd
            else:
                for j, c in enumerate(r.histogram):
                    acc += [j] * c
                gam += [k] * r.num_spec_steps
                missing += k * r.num_spec_steps - r.num_draft_tokens
            grp += [r.index] * r.num_spec_steps
        idle = len(rs) - len(active)
        extra = [f"{idle} request(s) drafted nothing"] if idle else []
        level_txt = "per-step arrays (detailed)" if exact else "acceptance histograms (summary)"
        readings.append(
            E.from_iterations(
                source="vllm-requests",
                path=path,
                labels=labels,
                accepted=acc,
                drafted=gam,
                k=k,
                exact_lengths=exact,
                missing_tokens=missing,
                groups=np.asarray(grp),
                rng=np.random.default_rng(seed),
                level=level,
                method=f"{len(active)} request(s), {len(acc)} verification steps from {level_txt}: truncated-geometric "
                "MLE, cluster bootstrap over requests",
                notes=extra,
            )
        )
    return EngineRead(path, "vllm-requests", detected_by, tuple(readings), tuple(skipped), tuple(notes))
