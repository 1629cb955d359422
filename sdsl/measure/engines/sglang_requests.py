"""SGLang's per-request speculative statistics (``meta_info``) into alpha (method notes, section 9).

A finished request's ``meta_info`` (``/generate`` responses, the ``Finish:`` log line of
``--log-requests``, ``sglext`` of the OpenAI-compatible API) carries, filled by SGLang's
``fill_spec_decoding_meta`` (``python/sglang/srt/managers/``; SGLang PR #3152, PR #11144, PR #18332)::

    "spec_verify_ct": 43,                      # verification steps of the request
    "spec_num_correct_drafts": 63,             # draft tokens accepted (alias spec_accepted_drafts)
    "spec_num_proposed_drafts": 215,           # spec_verify_ct x (speculative_num_draft_tokens - 1)
    "spec_correct_drafts_histogram": [11, 14, 11, 4, 0, 3],   # alias spec_accept_histogram
    "spec_accept_length": 2.465..., "spec_accept_rate": 0.293...,
    "completion_tokens": 106

(SGLang PR #33518, a DeepSeek-V4-Flash run with a DSpark draft of 5 tokens). Entry ``j`` of the
histogram counts the verification steps that accepted exactly ``j`` draft tokens: the exact input of
:func:`sdsl.measure.estimators.alpha_from_accepted` with every step ``k`` long, and a cluster
bootstrap over requests. ``k`` is ``spec_num_proposed_drafts / spec_verify_ct`` (the configured
``speculative_num_draft_tokens - 1``: a chain's length; for a tree draft, ``topk > 1``, give
``--gamma`` with the number of steps), else ``--gamma``, else the histogram's last bucket (which
assumes the histogram has one per count up to ``k``). Without a histogram (SGLang before
PR #18332) the mean acceptance length ``completion_tokens / spec_verify_ct`` (or ``1 +`` accepted /
steps) pooled over the requests is inverted (:func:`sdsl.measure.estimators.alpha_from_mean_tokens`,
chain drafts only).

Accepted files: a JSON response, a JSON list of them, JSON lines, a server-sent-event stream
(``data: {...}`` lines), or log lines holding ``'meta_info': {...}`` as Python prints it. Every
object with ``spec_verify_ct`` is a request; requests are grouped by the response's ``model`` when
it has one.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.types import AlphaReading, EngineRead, Labels, Skipped
from sdsl.validation import shown

__all__ = ["Request", "parse_sglang_requests", "read_sglang_requests", "looks_like_sglang_requests"]

#: The histogram's name and its older alias.
HISTOGRAM = ("spec_correct_drafts_histogram", "spec_accept_histogram")
#: Accepted and proposed draft tokens, with their older aliases.
CORRECT = ("spec_num_correct_drafts", "spec_accepted_drafts")
PROPOSED = ("spec_num_proposed_drafts", "spec_proposed_drafts")


@dataclass(frozen=True)
class Request:
    """One request's speculative statistics."""

    index: int
    model: str
    verify_ct: int
    histogram: tuple[int, ...] | None
    correct: int | None
    proposed: int | None
    completion_tokens: int | None


def looks_like_sglang_requests(text: str) -> bool:
    return "spec_verify_ct" in text and (
        "meta_info" in text or "spec_tokens_details" in text or text.lstrip()[:1] in "{["
    )


def _balanced(text: str, start: int) -> str | None:
    """The ``{...}`` that opens at ``start``, quotes respected; None if it is not closed."""
    depth, quote, i = 0, "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    return None


def _values(text: str, where: str) -> list[Any]:
    """The JSON values of a file: one JSON document, JSON lines or ``data:`` lines; else the
    ``meta_info`` dicts Python printed in log lines."""
    s = text.strip()
    try:
        return [json.loads(s)]
    except json.JSONDecodeError:
        pass
    out: list[Any] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        ln = line.strip()
        if ln.startswith("data:"):
            ln = ln[5:].strip()
        if not ln or ln == "[DONE]" or ln.startswith((":", "event:", "id:")):
            continue
        if ln[:1] in "{[":
            try:
                out.append(json.loads(ln))
                continue
            except json.JSONDecodeError:
                pass
        if "spec_verify_ct" not in ln:
            continue
        key = ln.find("'meta_info': {")
        if key < 0:
            key = ln.find('"meta_info": {')
        if key < 0:
            raise ValueError(f"{where} line {lineno}: spec_verify_ct outside a JSON value or a 'meta_info': {{...}}")
        body = _balanced(ln, ln.index("{", key))
        if body is None:
            raise ValueError(f"{where} line {lineno}: the meta_info dict is not closed (the line is cut)")
        try:
            out.append({"meta_info": ast.literal_eval(body)})
        except (ValueError, SyntaxError):
            raise ValueError(f"{where} line {lineno}: the meta_info dict cannot be read as a Python literal") from None
    return out


def _walk(
    obj: Any, model: str | None = None, usage: dict | None = None
) -> Iterator[tuple[dict, str | None, dict | None]]:
    """Yield ``(stats dict, model, usage)`` for every dict that holds ``spec_verify_ct``."""
    if isinstance(obj, list):
        for x in obj:
            yield from _walk(x, model, usage)
        return
    if not isinstance(obj, dict):
        return
    if isinstance(obj.get("model"), str):
        model = obj["model"]
    if isinstance(obj.get("usage"), dict):
        usage = obj["usage"]
    if "spec_verify_ct" in obj:
        yield obj, model, usage
        return
    for val in obj.values():
        if isinstance(val, (dict, list)):
            yield from _walk(val, model, usage)


def _int(value: Any, name: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or not float(value).is_integer():
        raise ValueError(f"{where}: {name} must be a whole number >= 0, got {value!r}")
    return int(value)


def _first(d: dict, names: tuple[str, ...]) -> tuple[str, Any] | None:
    for n in names:
        if n in d and d[n] is not None:
            return n, d[n]
    return None


def _request(d: dict, index: int, model: str | None, usage: dict | None, where: str) -> Request:
    at = f"{where} request {index}"
    v = _int(d["spec_verify_ct"], "spec_verify_ct", at)
    hist = None
    found = _first(d, HISTOGRAM)
    if found is not None:
        name, raw = found
        if not isinstance(raw, list) or not raw:
            raise ValueError(f"{at}: {name} must be a non-empty list of counts, got {raw!r}"[:200])
        hist = tuple(_int(x, f"{name}[{j}]", at) for j, x in enumerate(raw))
        if sum(hist) != v:
            raise ValueError(f"{at}: {name} sums to {sum(hist)} but spec_verify_ct is {v}")
    correct = proposed = None
    if (c := _first(d, CORRECT)) is not None:
        correct = _int(c[1], c[0], at)
        if hist is not None and sum(j * h for j, h in enumerate(hist)) != correct:
            raise ValueError(
                f"{at}: the histogram gives {sum(j * h for j, h in enumerate(hist))} accepted tokens but {c[0]} is "
                f"{correct}"
            )
    if (p := _first(d, PROPOSED)) is not None:
        proposed = _int(p[1], p[0], at)
        if correct is not None and correct > proposed:
            raise ValueError(f"{at}: {c[0] if c else 'accepted'} ({correct}) > {p[0]} ({proposed})")
    ct = d.get("completion_tokens", (usage or {}).get("completion_tokens"))
    completion = None if ct is None else _int(ct, "completion_tokens", at)
    return Request(index, model or "(unnamed model)", v, hist, correct, proposed, completion)


def parse_sglang_requests(text: str, where: str = "requests") -> list[Request]:
    """Every request of a file (:class:`Request`). A streamed response repeats a request's
    ``meta_info`` in each chunk with the counts so far: the last one of each ``id`` is kept."""
    found: list[tuple[dict, str | None, dict | None]] = []
    last: dict[str, int] = {}
    for value in _values(text, where):
        for d, model, usage in _walk(value):
            rid = d.get("id")
            if isinstance(rid, str) and rid in last:
                found[last[rid]] = (d, model, usage)
                continue
            if isinstance(rid, str):
                last[rid] = len(found)
            found.append((d, model, usage))
    reqs = [_request(d, i, model, usage, where) for i, (d, model, usage) in enumerate(found)]
    if not reqs:
        raise ValueError(f"{where}: no meta_info with spec_verify_ct (is speculative decoding on?)")
    return reqs


def _k(active: list[Request], gamma: int | None, where: str) -> tuple[int | None, str]:
    """``k`` of a group of requests and how it was found."""
    ratios = {r.proposed / r.verify_ct for r in active if r.proposed is not None}
    if len(ratios) > 1:
        raise ValueError(
            f"{where}: requests report different spec_num_proposed_drafts / spec_verify_ct {sorted(ratios)}"
        )
    from_ratio = None
    if ratios:
        x = ratios.pop()
        if not float(x).is_integer() or x < 1:
            raise ValueError(
                f"{where}: spec_num_proposed_drafts / spec_verify_ct = {x:.6g} is not a whole draft length"
            )
        from_ratio = int(x)
    if gamma is not None:
        if from_ratio is None or from_ratio == gamma:
            return gamma, f"k = {gamma} from {shown('gamma')}"
        return gamma, (
            f"k = {gamma} from {shown('gamma')} overrides spec_num_proposed_drafts / spec_verify_ct = {from_ratio} "
            f"(right for a tree draft of {gamma} steps; for a chain draft the ratio is its length)"
        )
    if from_ratio is not None:
        return from_ratio, (
            f"k = {from_ratio} from spec_num_proposed_drafts / spec_verify_ct (speculative_num_draft_tokens - 1): a "
            "chain draft's length; for a tree draft (topk > 1) give --gamma with the number of steps"
        )
    hists = [r.histogram for r in active if r.histogram is not None]
    if hists:
        k = max(len(h) for h in hists) - 1
        if k >= 1:
            return k, (
                f"k = {k} from the histogram's last bucket: assumes it has one bucket per accepted count up to k "
                "(give --gamma K otherwise)"
            )
    return None, "k unknown: give --gamma K (speculative_num_steps of a chain draft)"


def _group(rs: list[Request], model: str, path: str, level: float, gamma: int | None, seed: int) -> AlphaReading:
    labels: Labels = (("model", model),) if model != "(unnamed model)" else ()
    at = f"{path} ({model})"
    k, how = _k(rs, gamma, at)
    if k is None:
        raise ValueError(f"{at}: {how}")
    with_hist = [r for r in rs if r.histogram is not None]
    notes = [how]
    if with_hist:
        if len(with_hist) < len(rs):
            notes.append(f"{len(rs) - len(with_hist)} request(s) without a histogram not used")
        acc: list[int] = []
        grp: list[int] = []
        for r in with_hist:
            h = r.histogram or ()
            if len(h) > k + 1:
                raise ValueError(f"{at}: request {r.index} accepted {len(h) - 1} tokens in a step, more than k = {k}")
            for j, c in enumerate(h):
                acc += [j] * c
            grp += [r.index] * r.verify_ct
        return E.from_iterations(
            source="sglang-requests",
            path=path,
            labels=labels,
            accepted=acc,
            drafted=[k] * len(acc),
            k=k,
            exact_lengths=False,
            groups=np.asarray(grp),
            rng=np.random.default_rng(seed),
            level=level,
            method=f"{len(with_hist)} request(s), {len(acc)} verification steps from spec_correct_drafts_histogram: "
            "truncated-geometric MLE, cluster bootstrap over requests",
            notes=(*notes, "SGLang does not report shorter drafts: every step is taken as k long"),
        )
    steps = sum(r.verify_ct for r in rs)
    if all(r.correct is not None for r in rs):
        accepted = sum(r.correct or 0 for r in rs)
        mean, src = 1.0 + accepted / steps, "1 + spec_num_correct_drafts / spec_verify_ct"
    elif all(r.completion_tokens is not None for r in rs):
        total = sum(r.completion_tokens or 0 for r in rs)
        mean, src = total / steps, "completion_tokens / spec_verify_ct"
        accepted = total - steps
        notes.append("completion_tokens / spec_verify_ct counts one token per step besides the accepted ones")
    else:
        raise ValueError(f"{at}: no histogram, no accepted count and no completion_tokens: nothing to read alpha from")
    return E.from_mean_length(
        source="sglang-requests",
        path=path,
        labels=labels,
        mean_length=min(max(mean, 1.0), k + 1.0),
        k=k,
        n_iterations=steps,
        level=level,
        num_drafts=steps,
        num_accepted_tokens=accepted,
        method=f"{len(rs)} request(s): mean acceptance length {src} over {steps} steps inverted (no histogram)",
        notes=tuple(notes),
    )


def read_sglang_requests(
    text: str, path: str, *, level: float = 0.95, gamma: int | None = None, seed: int = 0, detected_by: str = ""
) -> EngineRead:
    """Per model: the truncated-geometric MLE over every verification step of its requests'
    histograms (with a cluster bootstrap over requests), else the pooled mean acceptance length
    inverted."""
    reqs = parse_sglang_requests(text, path)
    readings, skipped, notes = [], [], []
    for model in dict.fromkeys(r.model for r in reqs):
        rs = [r for r in reqs if r.model == model]
        active = [r for r in rs if r.verify_ct > 0]
        labels: Labels = (("model", model),) if model != "(unnamed model)" else ()
        if not active:
            skipped.append(Skipped(labels, f"idle: none of the {len(rs)} request(s) had a verification step"))
            continue
        if len(active) < len(rs):
            notes.append(f"{model}: {len(rs) - len(active)} request(s) without a verification step")
        try:
            readings.append(_group(active, model, path, level, gamma, seed))
        except ValueError as exc:
            skipped.append(Skipped(labels, f"unusable: {str(exc).split(': ', 1)[-1]}"))
    return EngineRead(path, "sglang-requests", detected_by, tuple(readings), tuple(skipped), tuple(notes))
