"""TensorRT-LLM's iteration statistics (``GET /metrics`` of ``trtllm-serve``, ``LLM.get_stats()``)
into alpha: the run's mean acceptance length over its verification steps, inverted (chain drafts
only).

``GET /metrics`` returns the iterations recorded since the previous call (``enable_iter_perf_stats``;
the queue is drained on read) as a JSON list, one object per iteration (TensorRT-LLM PR #19311
describes it; the fields are ``tensorrt_llm``'s ``IterationStats``)::

    {"iter": 182, "iterLatencyMS": 20.0, "numActiveRequests": 8, ...,
     "specDecodingStats": {"numDraftTokens": 24, "numAcceptedTokens": 12,
                           "numRequestsWithDraftTokens": 8, "acceptanceLength": 2.5,
                           "iterLatencyMS": 4.1, "draftOverhead": 0.2}}

(``acceptanceLength = (numAcceptedTokens + numRequestsWithDraftTokens) / numRequestsWithDraftTokens``;
some versions give each iteration as a JSON string). Summed over the iterations,
``numRequestsWithDraftTokens`` counts the verification steps (one per request per iteration), so
the mean acceptance length is ``1 + accepted / steps`` over ``steps`` steps, inverted with its
delta-method interval (:func:`sdsl.measure.estimators.alpha_from_mean_tokens`). ``k``
(``max_draft_len``) is not in the stats: ``--gamma`` gives it, else draft tokens / steps when that
is a whole number (every draft ``k`` long). Draft tokens below ``k x steps`` mean drafts shorter
than ``k``: counted as ``k`` long they give the lowest alpha (a short draft has fewer chances to be
accepted in full), and the highest puts the missing tokens on as few drafts as possible
(:func:`_alpha_extreme_split`); the interval covers both.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.types import EngineRead
from sdsl.validation import shown

__all__ = ["looks_like_iteration_stats", "read_iteration_stats", "iteration_totals"]

_KEYS = ("numDraftTokens", "numAcceptedTokens", "numRequestsWithDraftTokens")


def looks_like_iteration_stats(text: str) -> bool:
    return "specDecodingStats" in text or ('"iterLatencyMS"' in text and text.lstrip()[:1] in "[{")


def _iterations(text: str, where: str) -> list[Any]:
    """The iteration objects of a file: a JSON list (entries may be JSON strings), an object with
    a list under ``stats``, or JSON lines."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError:
        data = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                data.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where} line {lineno}: not valid JSON ({exc.msg})") from None
    if isinstance(data, dict):
        data = data.get("stats", [data]) if "specDecodingStats" not in data else [data]
    if not isinstance(data, list):
        raise ValueError(f"{where}: a JSON {type(data).__name__}, not a list of iteration stats")
    out = []
    for i, x in enumerate(data):
        if isinstance(x, str):
            try:
                x = json.loads(x)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where} entry {i}: a string that is not JSON ({exc.msg})") from None
        out.append(x)
    return out


def iteration_totals(text: str, where: str = "stats") -> tuple[int, int, int, int, int]:
    """``(draft tokens, accepted tokens, verification steps, iterations with drafts, iterations)``
    summed over the iterations of a ``GET /metrics`` answer."""
    iters = _iterations(text, where)
    dt = acc = steps = used = 0
    for i, it in enumerate(iters):
        if not isinstance(it, dict):
            raise ValueError(f"{where} entry {i}: not an iteration object")
        spec = it.get("specDecodingStats")
        if spec is None:
            continue
        if not isinstance(spec, dict):
            raise ValueError(f"{where} entry {i}: specDecodingStats must be an object, got {spec!r}"[:200])
        vals = []
        for key in _KEYS:
            v = spec.get(key, 0)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or not float(v).is_integer():
                raise ValueError(f"{where} entry {i}: specDecodingStats.{key} must be a whole count >= 0, got {v!r}")
            vals.append(int(v))
        d, a, n = vals
        if d == 0:
            continue
        if a > d:
            raise ValueError(f"{where} entry {i}: numAcceptedTokens {a} > numDraftTokens {d}")
        if n == 0:
            raise ValueError(f"{where} entry {i}: {d} draft tokens but numRequestsWithDraftTokens is 0")
        dt, acc, steps, used = dt + d, acc + a, steps + n, used + 1
    return dt, acc, steps, used, len(iters)


def _alpha_extreme_split(accepted: float, steps: int, draft_tokens: int, k: int) -> float:
    """The alpha at which ``steps`` drafts of ``draft_tokens`` in all, split as unevenly as the
    lengths 1..k allow (as many of length 1 as the missing tokens give, one remainder, the rest
    ``k``), expect ``accepted`` tokens: the highest alpha the totals allow (the expected accepted
    tokens of a draft of ``g`` tokens, ``alpha + ... + alpha^g``, is concave in ``g``, so the uneven
    split expects the fewest)."""
    missing = k * steps - draft_tokens
    ones = min(missing // (k - 1), steps) if k > 1 else 0
    rest = missing - ones * (k - 1) if k > 1 else 0
    counts = {1: ones}
    if rest and ones < steps:
        counts[k - rest] = counts.get(k - rest, 0) + 1
    counts[k] = counts.get(k, 0) + steps - sum(counts.values())

    def expected(a: float) -> float:
        return sum(c * sum(a**i for i in range(1, g + 1)) for g, c in counts.items())

    lo, hi = 0.0, 1.0
    if expected(1.0) <= accepted:
        return 1.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if expected(mid) < accepted else (lo, mid)
    return 0.5 * (lo + hi)


def read_iteration_stats(
    text: str, path: str, *, level: float = 0.95, gamma: int | None = None, detected_by: str = ""
) -> EngineRead:
    """One reading for the iterations of the file (``--gamma`` gives ``k`` when the counts do not)."""
    dt, acc, steps, used, total = iteration_totals(text, path)
    notes = (
        f"{used} of {total} iteration(s) drafted; GET /metrics returns the iterations since the previous call (the "
        "queue is drained on read), so this file covers that span only",
    )
    if steps == 0:
        return EngineRead(path, "trtllm-iteration-stats", detected_by, (), (), (*notes, "no iteration drafted a token"))
    ratio = dt / steps
    if gamma is not None:
        k, how = gamma, f"k = {gamma} from {shown('gamma')}"
        if ratio > gamma:
            raise ValueError(
                f"{shown('gamma')} {gamma} is below draft tokens / steps = {ratio:.3g} in {path}: k must be at least the "
                "longest draft (max_draft_len)"
            )
    elif float(ratio).is_integer():
        k, how = int(ratio), "k = draft tokens / steps (every draft k long); give --gamma K if max_draft_len is larger"
    else:
        raise ValueError(
            f"{path}: draft tokens / steps = {dt}/{steps} is not whole (drafts of varying length): give {shown('gamma')} K "
            "(max_draft_len)"
        )
    r = E.from_mean_length(
        source="trtllm-iteration-stats",
        path=path,
        labels=(),
        mean_length=min(1.0 + acc / steps, k + 1.0),
        k=int(k),
        n_iterations=steps,
        level=level,
        num_drafts=steps,
        num_draft_tokens=dt,
        num_accepted_tokens=acc,
        method="specDecodingStats summed over iterations: 1 + accepted / steps (numRequestsWithDraftTokens) inverted",
        notes=(*notes, how),
    )
    missing = int(k * steps - dt)
    if missing > 0:
        high = _alpha_extreme_split(acc, steps, dt, int(k))
        margin = r.estimate.ci_high - r.estimate.alpha
        est = replace(
            r.estimate,
            ci_high=min(max(r.estimate.ci_high, high + margin), 1.0),
            interval="wald_delta_union_over_draft_lengths",
        )
        short = E.short_drafts(
            k=int(k),
            accepted=acc,
            trials=1.0,
            trials_low=1.0,
            drafts=steps,
            drafts_low=steps,
            drafts_high=steps,
            draft_tokens=dt,
        )
        short = replace(short, alpha_full=r.estimate.alpha, alpha_upper=max(high, r.estimate.alpha))
        r = replace(
            r,
            estimate=est,
            short_drafts=short,
            notes=r.notes
            + (
                f"{missing} draft tokens fewer than k x steps: counted as k long the drafts give the lowest alpha; the "
                "highest puts the missing tokens on as few drafts as possible (lengths 1 and k); the interval covers both",
            ),
        )
    return EngineRead(path, "trtllm-iteration-stats", detected_by, (r,), ())
