"""Speculative-decoding counters from a vLLM ``/metrics`` scrape, into the estimators of
:mod:`sdsl.measure.estimators` (method notes, section 9).

vLLM's V1 engine exports four Prometheus counters when speculative decoding is on (source:
``vllm/v1/spec_decode/metrics.py``, class ``SpecDecodingProm``), each labelled by ``model_name`` and
``engine`` (one label set per engine core in data-parallel serving):

* ``vllm:spec_decode_num_drafts_total`` -- verification steps that carried a draft;
* ``vllm:spec_decode_num_draft_tokens_total`` -- draft tokens proposed;
* ``vllm:spec_decode_num_accepted_tokens_total`` -- draft tokens accepted. This **excludes the bonus
  token** the target adds at every step; vLLM's "mean acceptance length"
  ``1 + accepted / drafts`` **includes** it (it is ``E(alpha, gamma)`` of method notes, section 1);
* ``vllm:spec_decode_num_accepted_tokens_per_pos_total{position="i"}`` -- drafts whose token at
  0-based position ``i`` was accepted (which requires positions ``0..i-1`` accepted too).

vLLM's own "draft acceptance rate" ``accepted / draft_tokens`` is *not* alpha: it is the mean
fraction of the ``gamma`` drafted tokens kept, ``alpha (1 - alpha**gamma) / (gamma (1 - alpha))``,
which is below alpha for ``gamma > 1``. The MLE of alpha from the per-position counters is
:func:`sdsl.measure.estimators.alpha_from_position_counts`.

The text exposition format is parsed by :func:`parse_prometheus_text` (comments, ``HELP``/``TYPE``,
label escaping, ``NaN``/``Inf``, timestamps; ``_created`` samples are kept but not used).
"""

from __future__ import annotations

import math
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sdsl.measure.estimators import (
    AlphaEstimate,
    ConstantAlphaTest,
    alpha_from_mean_tokens,
    alpha_from_position_counts,
    constant_alpha_test,
)

__all__ = [
    "Sample",
    "SpecDecodeCounters",
    "METRIC_NAMES",
    "parse_prometheus_text",
    "read_spec_decode_counters",
    "spec_decode_counters",
    "counters_delta",
    "combine_counters",
]

#: Metric family names of vLLM V1's spec-decode counters (without the ``_total`` suffix).
METRIC_NAMES = {
    "num_drafts": "spec_decode_num_drafts",
    "num_draft_tokens": "spec_decode_num_draft_tokens",
    "num_accepted_tokens": "spec_decode_num_accepted_tokens",
    "accepted_per_pos": "spec_decode_num_accepted_tokens_per_pos",
}


@dataclass(frozen=True)
class Sample:
    """One sample line of the exposition: metric name, labels (sorted tuple of pairs), value."""

    name: str
    labels: tuple[tuple[str, str], ...]
    value: float
    timestamp: float | None = None

    @property
    def label_dict(self) -> dict[str, str]:
        return dict(self.labels)


_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LINE = re.compile(rf"^\s*({_NAME})\s*(\{{.*\}})?\s+(\S+)(?:\s+(\S+))?\s*$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')
_ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def _unescape(value: str) -> str:
    return re.sub(r'\\[\\"n]', lambda m: _ESCAPES[m.group(0)], value)


def _parse_labels(text: str, lineno: int) -> tuple[tuple[str, str], ...]:
    body = text[1:-1]
    labels: dict[str, str] = {}
    pos = 0
    while pos < len(body):
        if body[pos:].strip() == "":
            break
        m = _LABEL.match(body, pos)
        if not m:
            raise ValueError(f"line {lineno}: malformed label set {text!r}")
        name, value = m.group(1), _unescape(m.group(2))
        if name in labels:
            raise ValueError(f"line {lineno}: duplicate label {name!r}")
        labels[name] = value
        pos = m.end()
    return tuple(sorted(labels.items()))


def _parse_float(text: str, lineno: int) -> float:
    special = {"nan": math.nan, "+inf": math.inf, "inf": math.inf, "-inf": -math.inf}
    if text.lower() in special:
        return special[text.lower()]
    try:
        return float(text)
    except ValueError as exc:
        raise ValueError(f"line {lineno}: value {text!r} is not a number") from exc


def parse_prometheus_text(text: str) -> tuple[list[Sample], dict[str, str]]:
    """Parse the Prometheus text exposition format (version 0.0.4; OpenMetrics' ``# EOF`` is
    accepted). Returns ``(samples, types)`` with ``types`` mapping a family name to its ``# TYPE``.

    Blank lines and comments are skipped; label values are unescaped (``\\\\``, ``\\"``, ``\\n``);
    a malformed line raises ``ValueError`` with its line number.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    samples: list[Sample] = []
    types: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 4 and parts[1] == "TYPE":
                types[parts[2]] = parts[3].strip()
            continue
        m = _LINE.match(line)
        if not m:
            raise ValueError(f"line {lineno}: not a Prometheus sample: {raw!r}")
        name, label_text, value, ts = m.groups()
        labels = _parse_labels(label_text, lineno) if label_text else ()
        samples.append(Sample(name, labels, _parse_float(value, lineno),
                              _parse_float(ts, lineno) if ts else None))
    return samples, types


@dataclass(frozen=True)
class SpecDecodeCounters:
    """vLLM's spec-decode counters for one label set (model name, engine, ...).

    ``accepted_per_pos[i]``: drafts whose token at 0-based position ``i`` was accepted; ``gamma`` is
    its length (vLLM's ``num_speculative_tokens``).
    """

    labels: tuple[tuple[str, str], ...]
    num_drafts: int
    num_draft_tokens: int
    num_accepted_tokens: int
    accepted_per_pos: tuple[int, ...]
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def label_dict(self) -> dict[str, str]:
        return dict(self.labels)

    @property
    def model_name(self) -> str | None:
        return self.label_dict.get("model_name")

    @property
    def engine(self) -> str | None:
        return self.label_dict.get("engine")

    @property
    def gamma(self) -> int:
        return len(self.accepted_per_pos)

    @property
    def mean_acceptance_length(self) -> float:
        """vLLM's mean acceptance length ``1 + accepted / drafts`` (includes the bonus token)."""
        return 1.0 + self.num_accepted_tokens / self.num_drafts

    @property
    def draft_acceptance_rate(self) -> float:
        """vLLM's ``accepted / draft_tokens``: the fraction of drafted tokens kept, NOT alpha."""
        return self.num_accepted_tokens / self.num_draft_tokens

    def alpha(self, *, level: float = 0.95, interval: str = "profile") -> AlphaEstimate:
        """MLE of alpha from the per-position counters
        (:func:`sdsl.measure.estimators.alpha_from_position_counts`)."""
        return alpha_from_position_counts(self.accepted_per_pos, self.num_drafts, level=level,
                                          interval=interval)

    def alpha_from_mean_length(self, *, level: float = 0.95) -> AlphaEstimate:
        """Alpha from the mean acceptance length alone, inverting ``E(alpha, gamma)``
        (:func:`sdsl.measure.estimators.alpha_from_mean_tokens`); approximate, for scrapes without the
        per-position counters."""
        return alpha_from_mean_tokens(self.mean_acceptance_length, self.gamma, self.num_drafts,
                                      level=level)

    def constant_alpha_test(self) -> ConstantAlphaTest:
        """Chi-square test of a constant alpha across positions
        (:func:`sdsl.measure.estimators.constant_alpha_test`)."""
        return constant_alpha_test(accepted_per_pos=self.accepted_per_pos, num_drafts=self.num_drafts)


def _as_int(value: float, what: str) -> int:
    if not math.isfinite(value) or value < 0 or value != round(value):
        raise ValueError(f"{what} must be a non-negative whole count, got {value!r}")
    return int(round(value))


def _validate_counters(c: SpecDecodeCounters, where: str) -> SpecDecodeCounters:
    notes = list(c.notes)
    if c.num_drafts == 0:
        raise ValueError(f"{where}: num_drafts is 0 (no speculative step was recorded)")
    if c.num_accepted_tokens > c.num_draft_tokens:
        raise ValueError(f"{where}: num_accepted_tokens ({c.num_accepted_tokens}) > "
                         f"num_draft_tokens ({c.num_draft_tokens})")
    if c.accepted_per_pos:
        if sum(c.accepted_per_pos) != c.num_accepted_tokens:
            raise ValueError(
                f"{where}: accepted_per_pos sums to {sum(c.accepted_per_pos)} but "
                f"num_accepted_tokens is {c.num_accepted_tokens}")
        if c.num_draft_tokens != c.gamma * c.num_drafts:
            msg = (f"{where}: num_draft_tokens ({c.num_draft_tokens}) != gamma x num_drafts "
                   f"({c.gamma} x {c.num_drafts}): some drafts were shorter than gamma; the "
                   "per-position estimate assumes full drafts and is biased low")
            warnings.warn(msg, stacklevel=3)
            notes.append(msg)
    return SpecDecodeCounters(c.labels, c.num_drafts, c.num_draft_tokens, c.num_accepted_tokens,
                              c.accepted_per_pos, tuple(notes))


def spec_decode_counters(text: str, *, prefix: str = "vllm:") -> list[SpecDecodeCounters]:
    """The spec-decode counters of a ``/metrics`` scrape, one :class:`SpecDecodeCounters` per
    label set (e.g. per ``model_name`` x ``engine``), in the order they first appear.

    Counters are read from their ``_total`` samples (``_created`` timestamps are ignored). A label
    set with the total counters but no per-position counter gets ``accepted_per_pos = ()``.
    """
    samples, _ = parse_prometheus_text(text)
    names = {key: f"{prefix}{base}_total" for key, base in METRIC_NAMES.items()}
    totals: dict[tuple, dict] = {}
    per_pos: dict[tuple, dict[int, float]] = {}
    for s in samples:
        if s.name == names["accepted_per_pos"]:
            lab = dict(s.labels)
            if "position" not in lab:
                raise ValueError(f"{s.name} sample without a position label: {s.labels}")
            try:
                p = int(lab.pop("position"))
            except ValueError as exc:
                raise ValueError(f"{s.name}: position label must be an integer, got {s.labels}") from exc
            key = tuple(sorted(lab.items()))
            if p in per_pos.setdefault(key, {}):
                raise ValueError(f"{s.name}: duplicate sample for position {p} and labels {key}")
            per_pos[key][p] = s.value
            continue
        for field_name in ("num_drafts", "num_draft_tokens", "num_accepted_tokens"):
            if s.name == names[field_name]:
                entry = totals.setdefault(s.labels, {})
                if field_name in entry:
                    raise ValueError(f"{s.name}: duplicate sample for labels {s.labels}")
                entry[field_name] = s.value
    if not totals and not per_pos:
        raise ValueError(f"no {prefix}spec_decode_* counters in the scrape (is speculative decoding on?)")
    out = []
    for key in dict.fromkeys([*totals, *per_pos]):  # order of first appearance in the scrape
        where = ", ".join(f"{k}={v}" for k, v in key) or "(no labels)"
        entry = totals.get(key, {})
        missing = [f for f in ("num_drafts", "num_draft_tokens", "num_accepted_tokens") if f not in entry]
        if missing:
            raise ValueError(f"{where}: missing counter(s) {', '.join(names[m] for m in missing)}")
        pos = per_pos.get(key, {})
        if pos and sorted(pos) != list(range(len(pos))):
            raise ValueError(f"{where}: positions must be 0..gamma-1, got {sorted(pos)}")
        acc_pos = tuple(_as_int(pos[i], f"{names['accepted_per_pos']}{{position={i}}} ({where})")
                        for i in range(len(pos)))
        for i in range(1, len(acc_pos)):
            if acc_pos[i] > acc_pos[i - 1]:
                raise ValueError(f"{where}: accepted at position {i} ({acc_pos[i]}) > accepted at "
                                 f"position {i - 1} ({acc_pos[i - 1]})")
        c = SpecDecodeCounters(
            key,
            _as_int(entry["num_drafts"], f"{names['num_drafts']} ({where})"),
            _as_int(entry["num_draft_tokens"], f"{names['num_draft_tokens']} ({where})"),
            _as_int(entry["num_accepted_tokens"], f"{names['num_accepted_tokens']} ({where})"),
            acc_pos,
        )
        out.append(_validate_counters(c, where))
    return out


def read_spec_decode_counters(path: str | os.PathLike, *, prefix: str = "vllm:") -> list[SpecDecodeCounters]:
    """:func:`spec_decode_counters` of a saved scrape file (``curl -s host:8000/metrics > f``)."""
    return spec_decode_counters(Path(path).read_text(encoding="utf-8"), prefix=prefix)


def combine_counters(counters: list[SpecDecodeCounters], *, by: tuple[str, ...] = ("model_name",)) -> list[SpecDecodeCounters]:
    """Sum counters over every label not in ``by`` (e.g. over the engines of one model, which
    share one draft/target pair). Counters are additive, so the sum is the pooled measurement."""
    if not counters:
        raise ValueError("counters is empty")
    groups: dict[tuple, list[SpecDecodeCounters]] = {}
    for c in counters:
        key = tuple((k, v) for k, v in c.labels if k in by)
        groups.setdefault(key, []).append(c)
    out = []
    for key, cs in sorted(groups.items()):
        gammas = {c.gamma for c in cs}
        if len(gammas) != 1:
            raise ValueError(f"cannot combine label sets {key} with different gamma {sorted(gammas)}")
        out.append(_validate_counters(SpecDecodeCounters(
            key,
            sum(c.num_drafts for c in cs),
            sum(c.num_draft_tokens for c in cs),
            sum(c.num_accepted_tokens for c in cs),
            tuple(int(x) for x in np.sum([c.accepted_per_pos for c in cs], axis=0)) if cs[0].gamma else (),
        ), ", ".join(f"{k}={v}" for k, v in key) or "(all)"))
    return out


def counters_delta(before: list[SpecDecodeCounters], after: list[SpecDecodeCounters]) -> list[SpecDecodeCounters]:
    """``after - before`` per label set: the counters of exactly the traffic between two scrapes
    of a server that had served other requests before. A label set missing from ``before`` counts
    from zero; a decrease (server restart) raises ``ValueError``."""
    prev = {c.labels: c for c in before}
    out = []
    for c in after:
        b = prev.get(c.labels)
        if b is None:
            out.append(c)
            continue
        where = ", ".join(f"{k}={v}" for k, v in c.labels)
        if b.gamma != c.gamma:
            raise ValueError(f"{where}: gamma changed between scrapes ({b.gamma} -> {c.gamma})")
        d = (c.num_drafts - b.num_drafts, c.num_draft_tokens - b.num_draft_tokens,
             c.num_accepted_tokens - b.num_accepted_tokens)
        dp = tuple(x - y for x, y in zip(c.accepted_per_pos, b.accepted_per_pos))
        if min(d + dp, default=0) < 0:
            raise ValueError(f"{where}: a counter decreased between scrapes (server restarted?)")
        out.append(_validate_counters(SpecDecodeCounters(c.labels, *d, dp), where))
    return out
