"""vLLM's speculative-decoding counters from ``/metrics`` scrapes (one file or the difference of
successive scrapes), into alpha per model and engine (method notes, section 9).

vLLM V1 exports four counters (``vllm/v1/spec_decode/metrics.py``, class ``SpecDecodingProm``),
labelled by ``model_name`` and ``engine`` (one label set per engine core in data-parallel serving;
vLLM PR #24049), each with a ``_created`` timestamp:

* ``vllm:spec_decode_num_drafts_total`` -- verification steps that carried a draft;
* ``vllm:spec_decode_num_draft_tokens_total`` -- draft tokens proposed (fewer than ``k`` per draft
  when a proposer finds fewer tokens or structured output invalidates some);
* ``vllm:spec_decode_num_accepted_tokens_total`` -- draft tokens accepted, *excluding* the bonus
  token; vLLM's "mean acceptance length" ``1 + accepted / drafts`` *includes* it;
* ``vllm:spec_decode_num_accepted_tokens_per_pos_total{position="i"}`` -- drafts whose token at
  0-based position ``i`` was accepted (positions ``0..i-1`` accepted too).

What real scrapes contain and how it is read:

* an idle engine of a data-parallel deployment may show only some counters, or all at 0: it is
  reported and skipped, the other engines are read (the read does not abort);
* a freshly started server shows every counter at 0: skipped when read alone, and a valid
  "before" scrape of a difference;
* a restart between two scrapes resets the counters: detected when a series' ``_created``
  timestamp moved (or, without ``_created``, when a counter decreased); the difference then uses
  the counts since the restart and says that the traffic before it is lost;
* drafts shorter than ``k``: ``num_draft_tokens < k x num_drafts``; the estimate is bounded
  (:mod:`sdsl.measure.estimators`) and the reading says how many drafts may be short;
* several engines of one model are also pooled (counters are additive).

llama.cpp exports the same schema with the ``llamacpp:`` prefix (:mod:`.llamacpp`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.prometheus import Scrape, count, counter_change
from sdsl.measure.engines.types import (
    AlphaReading,
    EngineRead,
    Labels,
    Skipped,
    label_text,
)

__all__ = [
    "SpecCounters",
    "spec_counters",
    "counters_delta",
    "pool_engines",
    "readings_from_counters",
    "read_scrapes",
    "COUNTERS",
]

#: Counter base names (after the prefix, before ``_total``).
COUNTERS = {
    "num_drafts": "spec_decode_num_drafts",
    "num_draft_tokens": "spec_decode_num_draft_tokens",
    "num_accepted_tokens": "spec_decode_num_accepted_tokens",
    "accepted_per_pos": "spec_decode_num_accepted_tokens_per_pos",
}
_TOTALS = ("num_drafts", "num_draft_tokens", "num_accepted_tokens")


@dataclass(frozen=True)
class SpecCounters:
    """The spec-decode counters of one series (label set without ``position``); None: not exported."""

    labels: Labels
    num_drafts: float | None
    num_draft_tokens: float | None
    num_accepted_tokens: float | None
    accepted_per_pos: tuple[float, ...] | None
    created: float | None = None
    notes: tuple[str, ...] = ()

    def values(self) -> list[float]:
        vals = [v for v in (self.num_drafts, self.num_draft_tokens, self.num_accepted_tokens) if v is not None]
        return vals + list(self.accepted_per_pos or ())


def _names(prefix: str, base: str) -> tuple[str, str, str]:
    return f"{prefix}{base}_total", f"{prefix}{base}", f"{prefix}{base}_created"


def spec_counters(
    scrape: Scrape, prefix: str = "vllm:", where: str = "scrape", rel_tolerance: float = 0.0
) -> list[SpecCounters]:
    """The spec-decode counters of a scrape, one :class:`SpecCounters` per label set, in order of
    first appearance. Only the structure is checked here (duplicate samples, the ``position``
    label); the counts are checked when estimating (:func:`readings_from_counters`)."""
    totals: dict[Labels, dict[str, float]] = {}
    per_pos: dict[Labels, dict[int, float]] = {}
    created: dict[Labels, float] = {}
    order: dict[Labels, None] = {}
    for field_name, base in COUNTERS.items():
        total, bare, cre = _names(prefix, base)
        for s in scrape.samples:
            if s.name not in (total, bare, cre):
                continue
            lab = dict(s.labels)
            pos = None
            if field_name == "accepted_per_pos":
                if "position" not in lab:
                    raise ValueError(f"{where}: {s.name} sample without a position label: {label_text(s.labels)}")
                try:
                    pos = int(lab.pop("position"))
                except ValueError:
                    raise ValueError(
                        f"{where}: {s.name}: position must be an integer, got {dict(s.labels)['position']!r}"
                    ) from None
            key = tuple(sorted(lab.items()))
            order.setdefault(key, None)
            if s.name == cre:
                created[key] = min(created.get(key, s.value), s.value)
                continue
            what = f"{where}: {s.name} ({label_text(key)})"
            value = count(s.value, what, tolerance=rel_tolerance)
            if pos is None:
                entry = totals.setdefault(key, {})
                if field_name in entry:
                    raise ValueError(f"{where}: duplicate sample of {s.name} for {label_text(key)}")
                entry[field_name] = value
            else:
                pos_entry = per_pos.setdefault(key, {})
                if pos in pos_entry:
                    raise ValueError(f"{where}: duplicate sample of {s.name} position {pos} for {label_text(key)}")
                pos_entry[pos] = value
    out = []
    for key in order:
        t = totals.get(key, {})
        pp = per_pos.get(key)
        pos_tuple = None
        if pp:
            if sorted(pp) != list(range(len(pp))):
                raise ValueError(f"{where}: {label_text(key)}: positions must be 0..k-1, got {sorted(pp)}")
            pos_tuple = tuple(pp[i] for i in range(len(pp)))
        if not t and pos_tuple is None and key not in created:
            continue
        out.append(
            SpecCounters(
                key,
                t.get("num_drafts"),
                t.get("num_draft_tokens"),
                t.get("num_accepted_tokens"),
                pos_tuple,
                created.get(key),
            )
        )
    return out


def _sub(a: float | None, b: float | None) -> float | None:
    return None if a is None else a - (b or 0.0)


def counters_delta(
    before: Sequence[SpecCounters],
    after: Sequence[SpecCounters],
    where: str = "scrapes",
    *,
    names: tuple[str, str] = ("the earlier scrape", "the later scrape"),
) -> list[SpecCounters]:
    """``after - before`` per series: the counts of the traffic between two scrapes.

    A series new in ``after`` counts from zero. A reset (the series' ``_created`` timestamp moved
    on, or without ``_created`` a counter decreased) keeps ``after``'s counts, which start at the
    restart, with a note; scrapes in the wrong order (``_created`` went back, or a counter
    decreased under the same ``_created``: :func:`~.prometheus.counter_change`) raise naming
    ``names`` (the files of ``before`` and ``after``), and so does a series whose draft length
    changed without a reset.
    """
    prev = {c.labels: c for c in before}
    out = []
    for c in after:
        b = prev.get(c.labels)
        if b is None:
            out.append(replace(c, notes=c.notes + ("series absent from the earlier scrape: counted from 0",)))
            continue
        dropped = any(x < y - 1e-9 for x, y in zip(c.values(), b.values()))
        reset = counter_change(b.created, c.created, dropped, names=names, series=label_text(c.labels))
        if reset is not None:
            out.append(replace(c, notes=c.notes + (reset,)))
            continue
        if (
            b.accepted_per_pos is not None
            and c.accepted_per_pos is not None
            and len(b.accepted_per_pos) != len(c.accepted_per_pos)
        ):
            raise ValueError(
                f"{where}: {label_text(c.labels)}: draft length changed between scrapes "
                f"({len(b.accepted_per_pos)} -> {len(c.accepted_per_pos)}) without a restart"
            )
        pos = (
            None
            if c.accepted_per_pos is None
            else tuple(
                x - y for x, y in zip(c.accepted_per_pos, b.accepted_per_pos or (0.0,) * len(c.accepted_per_pos))
            )
        )
        out.append(
            SpecCounters(
                c.labels,
                _sub(c.num_drafts, b.num_drafts),
                _sub(c.num_draft_tokens, b.num_draft_tokens),
                _sub(c.num_accepted_tokens, b.num_accepted_tokens),
                pos,
                c.created,
                c.notes + b.notes,
            )
        )
    gone = [label_text(k) for k in prev if k not in {c.labels for c in after}]
    if gone:
        out = (
            [replace(out[0], notes=out[0].notes + (f"series absent from the later scrape: {', '.join(gone)}",))]
            + out[1:]
            if out
            else out
        )
    return out


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def pool_engines(counters: Sequence[SpecCounters], by: str = "model_name") -> list[SpecCounters]:
    """Sum the series of each ``by`` value over their other labels (the engines of one model share
    one draft/target pair); only series with drafts and the same ``k`` are pooled."""
    groups: dict[str, list[SpecCounters]] = {}
    for c in counters:
        d = dict(c.labels)
        if by in d and c.num_drafts and c.accepted_per_pos is not None:
            groups.setdefault(d[by], []).append(c)
    out = []
    for value, cs in groups.items():
        per_pos = [c.accepted_per_pos or () for c in cs]  # every grouped series has them
        if len(cs) < 2 or len({len(p) for p in per_pos}) != 1:
            continue
        acc = cs[0]
        for c, p in zip(cs[1:], per_pos[1:]):
            acc = SpecCounters(
                acc.labels,
                _add(acc.num_drafts, c.num_drafts),
                _add(acc.num_draft_tokens, c.num_draft_tokens),
                _add(acc.num_accepted_tokens, c.num_accepted_tokens),
                tuple(x + y for x, y in zip(acc.accepted_per_pos or (), p)),
            )
        engines = ", ".join(dict(c.labels).get("engine", "?") for c in cs)
        out.append(
            SpecCounters(
                ((by, value), ("engine", "all")),
                acc.num_drafts,
                acc.num_draft_tokens,
                acc.num_accepted_tokens,
                acc.accepted_per_pos,
                notes=(f"pooled over engines {engines}",),
            )
        )
    return out


def _idle(c: SpecCounters) -> bool:
    return not c.num_drafts and all(v == 0 for v in c.values())


def readings_from_counters(
    counters: Sequence[SpecCounters],
    *,
    source: str,
    path: str,
    prefix: str,
    level: float = 0.95,
    rel_tolerance: float = 0.0,
) -> tuple[list[AlphaReading], list[Skipped]]:
    """One :class:`AlphaReading` per usable series; the others as :class:`Skipped` with the reason."""
    readings, skipped = [], []
    for c in counters:
        name = {f: f"{prefix}{base}_total" for f, base in COUNTERS.items()}
        if _idle(c):
            present = sum(v is not None for v in (c.num_drafts, c.num_draft_tokens, c.num_accepted_tokens)) + (
                c.accepted_per_pos is not None
            )
            why = (
                (
                    "idle: every counter is 0 (no speculative step recorded yet, e.g. a freshly started server "
                    "or an idle data-parallel engine)"
                )
                if present == 4
                else ("idle: only _created timestamps, no counter value")
                if present == 0
                else (
                    f"idle: {present} of the 4 spec-decode counters exported and all are 0 (an engine that has not "
                    "served a speculative step)"
                )
            )
            skipped.append(Skipped(c.labels, why))
            continue
        missing = [name[f] for f in ("num_drafts", "num_accepted_tokens") if getattr(c, f) is None]
        if missing:
            skipped.append(Skipped(c.labels, f"incomplete: {', '.join(missing)} not exported for this series"))
            continue
        drafts, accepted = c.num_drafts, c.num_accepted_tokens
        assert drafts is not None and accepted is not None  # not missing
        if drafts == 0:
            skipped.append(Skipped(c.labels, "inconsistent: num_drafts is 0 but other counters are not"))
            continue
        try:
            if c.accepted_per_pos is not None:
                r = E.from_position_counts(
                    source=source,
                    path=path,
                    labels=c.labels,
                    accepted_per_pos=c.accepted_per_pos,
                    num_drafts=drafts,
                    num_draft_tokens=c.num_draft_tokens,
                    num_accepted_tokens=c.num_accepted_tokens,
                    level=level,
                    rel_tolerance=rel_tolerance,
                    notes=c.notes,
                )
            else:
                k_f = (c.num_draft_tokens or 0.0) / drafts
                if c.num_draft_tokens is None or abs(k_f - round(k_f)) > 1e-9 or round(k_f) < 1:
                    skipped.append(
                        Skipped(
                            c.labels,
                            "incomplete: no per-position counters, and k cannot be "
                            "told from num_draft_tokens / num_drafts",
                        )
                    )
                    continue
                k = int(round(k_f))
                r = E.from_mean_length(
                    source=source,
                    path=path,
                    labels=c.labels,
                    mean_length=1 + accepted / drafts,
                    k=k,
                    n_iterations=drafts,
                    level=level,
                    num_drafts=drafts,
                    num_draft_tokens=c.num_draft_tokens,
                    num_accepted_tokens=c.num_accepted_tokens,
                    method="mean acceptance length 1 + accepted / drafts inverted (no per-position counters)",
                    notes=c.notes,
                )
        except ValueError as exc:
            skipped.append(Skipped(c.labels, f"inconsistent: {str(exc).split(': ', 1)[-1]}"))
            continue
        readings.append(r)
    return readings, skipped


def read_scrapes(
    scrapes: Sequence[Scrape],
    paths: Sequence[str],
    *,
    source: str = "vllm-prometheus",
    prefix: str = "vllm:",
    level: float = 0.95,
    rel_tolerance: float = 0.0,
    delta: bool = False,
    detected_by: str = "",
) -> EngineRead:
    """Read one scrape, or (``delta=True``) the traffic between the first and the last of
    successive scrapes of one server: the sum of the differences of consecutive scrapes, so that a
    restart in between loses only the traffic before it."""
    where = paths[-1] if not delta else f"{paths[0]} .. {paths[-1]}"
    counters = [spec_counters(s, prefix, p, rel_tolerance) for s, p in zip(scrapes, paths)]
    notes: list[str] = []
    if delta:
        if len(counters) < 2:
            raise ValueError("--delta needs at least two scrapes of one server (earlier first)")
        total = counters_delta(counters[0], counters[1], where, names=(paths[0], paths[1]))
        for i in range(2, len(counters)):
            piece = counters_delta(counters[i - 1], counters[i], where, names=(paths[i - 1], paths[i]))
            prev = {c.labels: c for c in total}
            merged = []
            for c in piece:
                p = prev.get(c.labels)
                if (
                    p is None
                    or p.accepted_per_pos is None
                    or c.accepted_per_pos is None
                    or len(p.accepted_per_pos) != len(c.accepted_per_pos)
                ):
                    merged.append(c)
                    continue
                merged.append(
                    SpecCounters(
                        c.labels,
                        _add(p.num_drafts, c.num_drafts),
                        _add(p.num_draft_tokens, c.num_draft_tokens),
                        _add(p.num_accepted_tokens, c.num_accepted_tokens),
                        tuple(x + y for x, y in zip(p.accepted_per_pos, c.accepted_per_pos)),
                        c.created,
                        p.notes + c.notes,
                    )
                )
            total = merged
        counters_used = total
        notes.append(f"difference of {len(scrapes)} successive scrapes (the traffic between the first and the last)")
    else:
        counters_used = counters[0]
    if not counters_used:
        raise ValueError(f"{where}: no {prefix}spec_decode_* counters (is speculative decoding on?)")
    readings, skipped = readings_from_counters(
        counters_used, source=source, path=where, prefix=prefix, level=level, rel_tolerance=rel_tolerance
    )
    usable = [c for c in counters_used if any(r.labels == c.labels for r in readings)]
    pooled, _ = readings_from_counters(
        pool_engines(usable), source=source, path=where, prefix=prefix, level=level, rel_tolerance=rel_tolerance
    )
    return EngineRead(where, source, detected_by, tuple(readings + pooled), tuple(skipped), tuple(notes))
