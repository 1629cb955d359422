"""vLLM's JSON outputs that carry the spec-decode counters, into alpha (method notes, section 9).

``vllm bench serve --save-result`` (``vllm/benchmarks/serve.py``) scrapes the server's
``/metrics`` before and after the run and saves the difference, summed over every model and engine
of the server, as top-level keys of its result JSON::

    "spec_decode_acceptance_rate": 62.5,          # 100 x accepted / draft tokens (a percentage)
    "spec_decode_acceptance_length": 2.875,       # 1 + accepted / drafts
    "spec_decode_num_drafts": 4000, "spec_decode_draft_tokens": 12000,
    "spec_decode_accepted_tokens": 7500,
    "spec_decode_per_position_acceptance_rates": [0.8, 0.6, 0.475]   # accepted at position i / drafts

The per-position rates times ``num_drafts`` are the per-position counts (whole numbers, checked),
the input of :func:`sdsl.measure.estimators.alpha_from_position_counts`; ``k`` is their number.
Without rates (a server that exported no per-position counter) only the mean acceptance length is
left: it is inverted with :func:`sdsl.measure.estimators.alpha_from_mean_tokens` for ``k`` from
``--gamma`` or, when every draft had the same length, ``draft_tokens / num_drafts``.
``--append-result`` writes one result per line: each line is read as one run.

``LLM.get_metrics()`` (``vllm/v1/metrics/reader.py``) returns ``Counter``, ``Gauge``, ``Vector``
and ``Histogram`` dataclasses. The JSON read here is the list of their fields, as written by::

    import dataclasses, json
    with open("metrics.json", "w") as f:
        json.dump([dataclasses.asdict(m) for m in llm.get_metrics()], f)

that is ``[{"name": "vllm:spec_decode_num_drafts", "labels": {"model_name": ..., "engine": "0"},
"value": 4000}, ..., {"name": "vllm:spec_decode_num_accepted_tokens_per_pos", "labels": {...},
"values": [3200, 2400, 1900]}, ...]`` (a ``Counter``'s name has no ``_total``; the per-position
counters are one ``Vector`` per engine). ``vllm:spec_decode_num_drafts``, ``num_draft_tokens``,
``num_accepted_tokens`` and ``num_accepted_tokens_per_pos`` of each label set are read like a
``/metrics`` scrape (:func:`sdsl.measure.engines.vllm.readings_from_counters`): idle engines
skipped, the engines of one model pooled. The counts are cumulative since the ``LLM`` was built.
"""

from __future__ import annotations

import json
import math
from typing import Any

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.types import EngineRead, Labels, label_text
from sdsl.measure.engines.vllm import SpecCounters, pool_engines, readings_from_counters
from sdsl.validation import shown

__all__ = [
    "BENCH_KEYS",
    "METRIC_NAMES",
    "looks_like_vllm_bench",
    "looks_like_vllm_metrics",
    "read_vllm_bench",
    "read_vllm_metrics",
]

#: The spec-decode keys of a ``vllm bench serve`` result, all written together.
BENCH_KEYS = (
    "spec_decode_num_drafts",
    "spec_decode_draft_tokens",
    "spec_decode_accepted_tokens",
    "spec_decode_acceptance_length",
    "spec_decode_acceptance_rate",
    "spec_decode_per_position_acceptance_rates",
)
#: The ``LLM.get_metrics()`` names read, with the field of :class:`~.vllm.SpecCounters` each fills.
METRIC_NAMES = {
    "vllm:spec_decode_num_drafts": "num_drafts",
    "vllm:spec_decode_num_draft_tokens": "num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens": "num_accepted_tokens",
    "vllm:spec_decode_num_accepted_tokens_per_pos": "accepted_per_pos",
}
#: vLLM computes the acceptance length and rate from the same integer counts in double precision
#: and Python's json writes every digit (repr round-trips), so they agree with the counts to a few
#: units of the last place; 1e-9 relative leaves room for that and refuses any edited count.
_REL = 1e-9
#: A per-position rate is an integer count / num_drafts in double precision: times num_drafts it is
#: within num_drafts x 2^-52 of that integer, far below 1e-6 for any count below 10^9.
_WHOLE = 1e-6


def looks_like_vllm_bench(text: str) -> bool:
    """A JSON object with a ``spec_decode_*`` key, or with the keys every bench result has."""
    s = text.lstrip()
    if s[:1] != "{" or '"resultType"' in text:
        return False
    return '"spec_decode_' in text or ('"request_throughput"' in text and '"backend"' in text)


def looks_like_vllm_metrics(text: str) -> bool:
    """A JSON list whose entries are named ``vllm:...`` metrics."""
    return text.lstrip()[:1] == "[" and '"vllm:' in text and '"name"' in text


def _truncated(where: str, exc: json.JSONDecodeError) -> ValueError:
    cut = exc.pos >= len(exc.doc.rstrip()) or exc.msg.startswith("Unterminated string")
    end = " (the file ends inside it: cut short?)" if cut else ""
    msg = exc.msg.replace("Unterminated string starting at", "a string not closed")
    return ValueError(f"{where} line {exc.lineno} column {exc.colno}: not valid JSON ({msg}){end}")


def _records(text: str, where: str) -> list[tuple[int, Any]]:
    """``(line, value)`` of a JSON file, or of each line of a JSON-lines file (``--append-result``)."""
    try:
        return [(1, json.loads(text))]
    except json.JSONDecodeError as exc:
        first = exc
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    try:
        json.loads(lines[0][1])
    except (json.JSONDecodeError, IndexError):
        raise _truncated(where, first) from None
    out = []
    for i, ln in lines:
        try:
            out.append((i, json.loads(ln)))
        except json.JSONDecodeError as exc:
            end = " (the last line: cut short?)" if i == lines[-1][0] else ""
            raise ValueError(f"{where} line {i} column {exc.colno}: not valid JSON ({exc.msg}){end}") from None
    return out


def _whole(value: Any, name: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where}: {name} must be a whole number >= 0, got {value!r}")
    if value < 0 or not float(value).is_integer():
        raise ValueError(f"{where}: {name} must be a whole number >= 0, got {value!r}")
    return int(value)


def _number(value: Any, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where}: {name} must be a finite number, got {value!r}")
    return float(value)


def _agrees(x: float, y: float) -> bool:
    return abs(x - y) <= _REL * max(abs(x), abs(y), 1.0)


def _bench_counts(d: Any, where: str) -> tuple[int, int, int, tuple[int, ...]]:
    """``(drafts, draft tokens, accepted, per-position counts)`` of one bench result, checked."""
    if not isinstance(d, dict):
        raise ValueError(f"{where}: a JSON {type(d).__name__}, not a vllm bench serve result (a JSON object)")
    present = [k for k in BENCH_KEYS if k in d]
    if not present:
        raise ValueError(
            f"{where}: a vllm bench serve result without spec_decode_* keys: the server ran without "
            "speculative decoding, its /metrics had no vllm:spec_decode_* counters, or this vLLM is too old to "
            "record them"
        )
    missing = [k for k in BENCH_KEYS if k not in d]
    if missing:
        raise ValueError(f"{where}: {', '.join(missing)} missing (vllm bench serve writes all six spec_decode_* keys)")
    drafts = _whole(d["spec_decode_num_drafts"], "spec_decode_num_drafts", where)
    tokens = _whole(d["spec_decode_draft_tokens"], "spec_decode_draft_tokens", where)
    accepted = _whole(d["spec_decode_accepted_tokens"], "spec_decode_accepted_tokens", where)
    length = _number(d["spec_decode_acceptance_length"], "spec_decode_acceptance_length", where)
    rate = _number(d["spec_decode_acceptance_rate"], "spec_decode_acceptance_rate", where)
    rates = d["spec_decode_per_position_acceptance_rates"]
    if not isinstance(rates, list):
        raise ValueError(f"{where}: spec_decode_per_position_acceptance_rates must be a list, got {rates!r}"[:200])
    if drafts == 0 or tokens == 0:
        raise ValueError(
            f"{where}: spec_decode_num_drafts {drafts} and spec_decode_draft_tokens {tokens}: vllm bench serve "
            "writes the spec_decode_* keys only when the run drafted tokens"
        )
    if not accepted <= tokens:
        raise ValueError(f"{where}: spec_decode_accepted_tokens {accepted} > spec_decode_draft_tokens {tokens}")
    if not _agrees(length, 1.0 + accepted / drafts):
        raise ValueError(
            f"{where}: spec_decode_acceptance_length {length!r} is not 1 + accepted / drafts = "
            f"{1.0 + accepted / drafts!r}: the counts were edited"
        )
    if not _agrees(rate, accepted / tokens * 100):
        raise ValueError(
            f"{where}: spec_decode_acceptance_rate {rate!r} is not 100 x accepted / draft tokens = "
            f"{accepted / tokens * 100!r} (a percentage): the counts were edited"
        )
    counts = []
    for i, r in enumerate(rates):
        x = _number(r, f"spec_decode_per_position_acceptance_rates[{i}]", where) * drafts
        if abs(x - round(x)) > _WHOLE:
            raise ValueError(
                f"{where}: spec_decode_per_position_acceptance_rates[{i}] x spec_decode_num_drafts = {x!r} is not "
                "a whole number of drafts: the rate or the count was edited"
            )
        counts.append(int(round(x)))
    return drafts, tokens, accepted, tuple(counts)


def read_vllm_bench(
    text: str, path: str, *, level: float = 0.95, gamma: int | None = None, detected_by: str = ""
) -> EngineRead:
    """One reading per result of a ``vllm bench serve --save-result`` (or ``--append-result``)
    file, labelled with its ``model_id`` (and its line when the file holds several runs)."""
    records = _records(text, path)
    readings = []
    for lineno, d in records:
        where = path if len(records) == 1 else f"{path} line {lineno}"
        drafts, tokens, accepted, per_pos = _bench_counts(d, where)
        model = d.get("model_id")
        labels: Labels = (("model", model),) if isinstance(model, str) and model else ()
        if len(records) > 1:
            labels = (*labels, ("line", str(lineno)))
        notes = (
            "the difference of the server's /metrics before and after the run, summed over every model and "
            "engine it serves: other clients' traffic during the run is counted too",
        )
        if per_pos:
            if gamma is not None and gamma != len(per_pos):
                raise ValueError(
                    f"{shown('gamma')} {gamma} conflicts with k = {len(per_pos)} (spec_decode_per_position_acceptance_rates "
                    f"has {len(per_pos)} entries) in {where}: drop {shown('gamma')}, which is for exports that do not carry k"
                )
            readings.append(
                E.from_position_counts(
                    source="vllm-bench",
                    path=where,
                    labels=labels,
                    accepted_per_pos=per_pos,
                    num_drafts=drafts,
                    num_draft_tokens=tokens,
                    num_accepted_tokens=accepted,
                    level=level,
                    method="per-position counts (spec_decode_per_position_acceptance_rates x spec_decode_num_drafts), "
                    "truncated-geometric MLE",
                    notes=notes,
                )
            )
            continue
        if gamma is not None:
            k, how = gamma, f"k = {gamma} from {shown('gamma')}"
        elif tokens % drafts == 0:
            k, how = (
                tokens // drafts,
                "k = spec_decode_draft_tokens / spec_decode_num_drafts (every draft counted full)",
            )
        else:
            raise ValueError(
                f"{where}: spec_decode_per_position_acceptance_rates is empty and draft_tokens / num_drafts = "
                f"{tokens}/{drafts} is not whole: give {shown('gamma')} K (num_speculative_tokens)"
            )
        readings.append(
            E.from_mean_length(
                source="vllm-bench",
                path=where,
                labels=labels,
                mean_length=1.0 + accepted / drafts,
                k=k,
                n_iterations=drafts,
                level=level,
                num_drafts=drafts,
                num_draft_tokens=tokens,
                num_accepted_tokens=accepted,
                method="mean acceptance length 1 + accepted / drafts inverted (no per-position rates)",
                notes=(*notes, how),
            )
        )
    return EngineRead(path, "vllm-bench", detected_by, tuple(readings))


def _labels(value: Any, where: str) -> Labels:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError(f"{where}: labels must be an object of text values, got {value!r}"[:200])
    return tuple(sorted(value.items()))


def read_vllm_metrics(text: str, path: str, *, level: float = 0.95, detected_by: str = "") -> EngineRead:
    """The spec-decode counters of ``LLM.get_metrics()`` saved as a JSON list (module docstring),
    one reading per label set and one per model pooled over its engines."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _truncated(path, exc) from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of LLM.get_metrics() entries, got a JSON {type(data).__name__}")
    found: dict[Labels, dict[str, Any]] = {}
    for i, m in enumerate(data):
        where = f"{path} entry {i}"
        if not isinstance(m, dict) or not isinstance(m.get("name"), str):
            raise ValueError(f"{where}: not a metric object with a name (name, labels, value or values)")
        field = METRIC_NAMES.get(m["name"])
        if field is None:
            continue
        where = f"{where} ({m['name']})"
        if "labels" not in m:
            raise ValueError(f"{where}: labels missing")
        labels = _labels(m["labels"], where)
        if field == "accepted_per_pos":
            vals = m.get("values")
            if not isinstance(vals, list) or not vals:
                raise ValueError(f"{where}: values must be a non-empty list of counts (a Vector), got {vals!r}"[:200])
            value: Any = tuple(_whole(v, f"values[{j}]", where) for j, v in enumerate(vals))
        else:
            if "value" not in m:
                raise ValueError(f"{where}: value missing (a Counter has name, labels, value)")
            value = _whole(m["value"], "value", where)
        entry = found.setdefault(labels, {})
        if field in entry:
            raise ValueError(f"{where}: a second {m['name']} for {label_text(labels)}")
        entry[field] = value
    if not found:
        vllm = any(isinstance(m, dict) and str(m.get("name", "")).startswith("vllm:") for m in data)
        raise ValueError(
            f"{path}: "
            + (
                "vLLM metrics without vllm:spec_decode_* counters (is speculative decoding on?)"
                if vllm
                else "no vllm:* metric: not a saved LLM.get_metrics() list"
            )
        )
    counters = []
    for labels, entry in found.items():
        missing = [n for n, f in METRIC_NAMES.items() if f not in entry]
        if missing:
            raise ValueError(f"{path}: {', '.join(missing)} missing for {label_text(labels)} (a cut or edited list?)")
        counters.append(
            SpecCounters(
                labels,
                float(entry["num_drafts"]),
                float(entry["num_draft_tokens"]),
                float(entry["num_accepted_tokens"]),
                tuple(float(x) for x in entry["accepted_per_pos"]),
            )
        )
    kw: dict[str, Any] = {"source": "vllm-get-metrics", "path": path, "prefix": "vllm:", "level": level}
    readings, skipped = readings_from_counters(counters, **kw)
    usable = [c for c in counters if any(r.labels == c.labels for r in readings)]
    pooled, _ = readings_from_counters(pool_engines(usable), **kw)
    note = "cumulative counts since the LLM was built (LLM.get_metrics())"
    return EngineRead(path, "vllm-get-metrics", detected_by, tuple(readings + pooled), tuple(skipped), (note,))
