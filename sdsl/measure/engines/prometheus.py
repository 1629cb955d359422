"""The Prometheus text exposition, parsed by ``prometheus_client`` (the library vLLM, SGLang and
TensorRT-LLM export with), flattened into samples keyed by name and label set.

``prometheus_client.parser.text_string_to_metric_families`` reads the 0.0.4 text format and
OpenMetrics' ``# EOF``, unescapes label values, reads ``NaN``/``Inf``, Prometheus 3's quoted UTF-8
metric names (``{"vllm:spec_decode_num_drafts_total", engine="0"} 5``) and converts timestamps
to seconds. On top of it this module:

* reports a malformed line by its line number (the library's error names no line);
* accepts a Prometheus query-result table as pasted in issues and pull requests
  (``name{labels} | value`` rows, e.g. vLLM PR #24049), by rewriting each row as a sample, and the
  JSON of Prometheus' HTTP API (``/api/v1/query``, ``resultType`` ``vector``);
* gives each series' ``_created`` timestamp (``prometheus_client`` exports one per counter
  child), which detects a counter reset between two scrapes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from sdsl.measure.engines.types import Labels

__all__ = ["Sample", "Scrape", "parse_scrape", "looks_like_prometheus"]

_TABLE_ROW = re.compile(r"^\s*(\S.*?\}|[A-Za-z_:][A-Za-z0-9_:]*)\s*\|\s*(\S+)\s*$")
_SAMPLE_START = re.compile(
    r'^\s*(\{\s*"[^"]*"|[A-Za-z_:][A-Za-z0-9_:]*)\s*(\{.*\})?\s+'
    r"[-+]?(\d|\.\d|Inf|NaN|inf|nan)"
)


@dataclass(frozen=True)
class Sample:
    """One sample: name (with its ``_total`` / ``_created`` suffix), labels, value, timestamp (s)."""

    name: str
    labels: Labels
    value: float
    timestamp: float | None = None


@dataclass(frozen=True)
class Scrape:
    """All samples of one exposition, with ``# TYPE`` of each family."""

    samples: tuple[Sample, ...]
    types: dict[str, str]
    table: bool = False
    """True when the input was a query-result table (``name{labels} | value``)."""

    def named(self, *names: str) -> list[Sample]:
        """Samples whose name is one of ``names``."""
        wanted = set(names)
        return [s for s in self.samples if s.name in wanted]

    def has_prefix(self, prefix: str) -> bool:
        return any(s.name.startswith(prefix) for s in self.samples) or any(n.startswith(prefix) for n in self.types)


def _table_to_exposition(text: str) -> str | None:
    """Rewrite a pasted query-result table (``metric{labels} | value`` rows, a ``-- | --`` rule
    and free text around it) as exposition lines; None if ``text`` has no such row."""
    out, rows = [], 0
    for line in text.splitlines():
        m = _TABLE_ROW.match(line)
        if m and not set(m.group(2)) <= set("-:"):
            out.append(f"{m.group(1)} {m.group(2)}")
            rows += 1
        else:
            out.append("")  # keep line numbers
    return "\n".join(out) if rows else None


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def api_json_to_exposition(text: str) -> str | None:
    """The samples of a Prometheus HTTP API answer (``{"status": "success", "data": {"resultType":
    "vector", "result": [{"metric": {"__name__": ..., ...}, "value": [t, "v"]}]}}``) as exposition
    lines; None if ``text`` is not such an answer."""
    import json

    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return None
    data = obj.get("data") if isinstance(obj, dict) else None
    if not isinstance(data, dict) or data.get("resultType") != "vector" or not isinstance(data.get("result"), list):
        return None
    lines = []
    for item in data["result"]:
        metric, value = item.get("metric", {}), item.get("value")
        if "__name__" not in metric or not isinstance(value, list) or len(value) != 2:
            continue
        labels = ",".join(f'{k}="{_escape(str(v))}"' for k, v in sorted(metric.items()) if k != "__name__")
        lines.append(f"{metric['__name__']}{{{labels}}} {value[1]}")
    return "\n".join(lines) + "\n" if lines else None


def looks_like_prometheus(text: str) -> bool:
    """Whether ``text`` has a Prometheus sample or ``# TYPE``/``# HELP`` line (or table row)."""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(("# TYPE ", "# HELP ")):
            return True
        if s and not s.startswith("#") and (_SAMPLE_START.match(s) or _TABLE_ROW.match(s)):
            return True
    return False


def _bad_line(text: str, where: str) -> str:
    """The first line ``prometheus_client`` cannot parse on its own, as ``where line N: ...``."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        try:
            list(text_string_to_metric_families(s + "\n"))
        except Exception:  # noqa: BLE001 -- the library raises ValueError, TypeError, IndexError
            return f"{where} line {lineno}: not a Prometheus sample: {line.strip()[:120]!r}"
    return f"{where}: not a Prometheus text exposition"


def parse_scrape(text: str, where: str = "scrape") -> Scrape:
    """Parse a ``/metrics`` scrape (or a pasted query-result table) into a :class:`Scrape`.

    Parameters
    ----------
    text : the exposition.
    where : name used in error messages (usually the file path).

    Returns
    -------
    Scrape with every sample of every family; a malformed line raises ``ValueError`` naming
    ``where`` and the line number.
    """
    if not isinstance(text, str):
        raise ValueError(f"{where}: expected text, got {type(text).__name__}")
    table = False
    body = text
    api = api_json_to_exposition(text) if text.lstrip().startswith("{") else None
    if api is not None:
        body, table = api, True
    elif not any(
        _SAMPLE_START.match(ln.strip())
        for ln in text.splitlines()
        if ln.strip() and not ln.strip().startswith("#") and "|" not in ln
    ):
        rewritten = _table_to_exposition(text)
        if rewritten is not None:
            body, table = rewritten, True
    samples: list[Sample] = []
    types: dict[str, str] = {}
    try:
        for fam in text_string_to_metric_families(body):
            types[fam.name] = fam.type
            for s in fam.samples:
                labels = tuple(sorted((str(k), str(v)) for k, v in s.labels.items()))
                ts = None if s.timestamp is None else float(s.timestamp)
                samples.append(Sample(s.name, labels, float(s.value), ts))
    except Exception:  # noqa: BLE001 -- see _bad_line
        raise ValueError(_bad_line(body, where)) from None
    return Scrape(tuple(samples), types, table)


def count(value: float, what: str, *, tolerance: float = 0.0) -> float:
    """A counter value as a count: finite, >= 0 and (within ``tolerance``) whole."""
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a finite count >= 0, got {value!r}")
    if tolerance == 0.0 and value != round(value):
        raise ValueError(f"{what} must be a whole count, got {value!r}")
    return float(value)


def counter_values(
    scrape: Scrape, name: str, *, drop: tuple[str, ...] = ()
) -> dict[Labels, tuple[float, float | None]]:
    """``{labels: (value, created)}`` of counter ``name`` (given without ``_total``), labels in
    ``drop`` removed from the key."""
    out: dict[Labels, list] = {}
    for s in scrape.samples:
        if s.name in (f"{name}_total", name, f"{name}_created"):
            key = tuple((k, v) for k, v in s.labels if k not in drop)
            entry = out.setdefault(key, [None, None])
            if s.name.endswith("_created"):
                entry[1] = s.value
            else:
                entry[0] = (entry[0] or 0.0) + s.value
    return {k: (v[0], v[1]) for k, v in out.items() if v[0] is not None}


def delta_values(
    before: dict[Labels, tuple[float, float | None]],
    after: dict[Labels, tuple[float, float | None]],
) -> tuple[dict[Labels, float], list[str]]:
    """``after - before`` per label set, a reset (``_created`` moved, or a decrease) keeping
    ``after``'s value (counts since the restart), with a note per reset."""
    out, notes = {}, []
    for key, (v, created) in after.items():
        b = before.get(key)
        if b is None:
            out[key] = v
            continue
        bv, bc = b
        if (created is not None and bc is not None and created > bc + 1e-3) or v < bv:
            notes.append(
                "counter reset between the scrapes (the server restarted): the counts since the restart "
                "are used and the traffic before it is lost"
            )
            out[key] = v
        else:
            out[key] = v - bv
    return out, sorted(set(notes))
