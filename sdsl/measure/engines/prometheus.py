"""The Prometheus text exposition, parsed by ``prometheus_client`` (the library vLLM, SGLang and
TensorRT-LLM export with), flattened into samples keyed by name and label set.

``prometheus_client.parser.text_string_to_metric_families`` reads the 0.0.4 text format and
OpenMetrics' ``# EOF``, unescapes label values, reads ``NaN``/``Inf``, Prometheus 3's quoted UTF-8
metric names (``{"vllm:spec_decode_num_drafts_total", engine="0"} 5``) and converts timestamps
to seconds. On top of it this module:

* reports a malformed line by its line number (the library's error names no line);
* refuses an exposition that ends inside a line: the format ends every line with a line feed (or
  the whole exposition with OpenMetrics' ``# EOF``), so a last line without one is a cut file
  whose last value may have lost digits;
* reads a byte-order mark and CRLF line ends as the exposition without them;
* accepts a Prometheus query-result table as pasted in issues and pull requests
  (``name{labels} | value`` rows, e.g. vLLM PR #24049), by rewriting each row as a sample, and the
  JSON of Prometheus' HTTP API (``/api/v1/query``, ``resultType`` ``vector``);
* gives each series' ``_created`` timestamp (``prometheus_client`` exports one per counter
  child), which tells a counter reset between two scrapes (``_created`` moved on) from scrapes given
  in the wrong order (a counter decreased under the same ``_created``) (:func:`counter_change`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from sdsl.measure.engines.types import Labels, label_text

__all__ = ["Sample", "Scrape", "parse_scrape", "looks_like_prometheus", "normalise_text", "counter_change"]

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
    """Whether ``text`` has a Prometheus sample or ``# TYPE``/``# HELP`` line (or table row). A
    ``key: value`` line (a printout such as ``num_drafts: 4687``) is not a sample: a metric name
    may hold colons, but none ends with one before its value."""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(("# TYPE ", "# HELP ")):
            return True
        m = _SAMPLE_START.match(s) if s and not s.startswith("#") else None
        if m and not (m.group(1).endswith(":") and m.group(2) is None):
            return True
        if s and not s.startswith("#") and _TABLE_ROW.match(s):
            return True
    return False


def normalise_text(text: str) -> str:
    """``text`` without a leading byte-order mark and with CRLF line ends as LF (what a file saved
    on Windows or by some editors holds)."""
    return text.removeprefix("\ufeff").replace("\r\n", "\n")


def _parses(text: str) -> bool:
    try:
        list(text_string_to_metric_families(text))
    except Exception:  # noqa: BLE001 -- the library raises ValueError, TypeError, IndexError
        return False
    return True


def _bad_line(text: str, where: str) -> str:
    """The first line at which ``prometheus_client`` fails, as ``where line N: ...``.

    The library reads line by line, so the shortest failing prefix of the lines ends at the bad
    line (found by bisection); its error names no line."""
    lines = text.split("\n")
    if _parses("\n".join(lines) + "\n"):
        return f"{where}: not a Prometheus text exposition"
    good, bad = 0, len(lines)  # lines[:good] parse, lines[:bad] do not
    while bad - good > 1:
        mid = (good + bad) // 2
        if _parses("\n".join(lines[:mid]) + "\n"):
            good = mid
        else:
            bad = mid
    line = lines[bad - 1].strip()
    if line.startswith("#"):
        return f"{where} line {bad}: not a Prometheus '# TYPE name type' line: {line[:120]!r}"
    return f"{where} line {bad}: not a Prometheus sample: {line[:120]!r}"


def _check_complete(text: str, where: str) -> None:
    """Refuse an exposition cut inside its last line: every line of the text format ends with a line
    feed, and an OpenMetrics exposition ends with ``# EOF``."""
    if not text or text.endswith("\n"):
        return
    lines = text.split("\n")
    last = lines[-1].strip()
    if not last or last == "# EOF":
        return
    lost = ", and its value may have lost digits" if _SAMPLE_START.match(last) else ""
    raise ValueError(
        f"{where} line {len(lines)}: the exposition ends inside this line (no final newline and no "
        f"OpenMetrics '# EOF'): the file is truncated{lost}: {last[:120]!r}"
    )


def parse_scrape(text: str, where: str = "scrape") -> Scrape:
    """Parse a ``/metrics`` scrape (or a pasted query-result table) into a :class:`Scrape`.

    Parameters
    ----------
    text : the exposition.
    where : name used in error messages (usually the file path).

    Returns
    -------
    Scrape with every sample of every family; a malformed line, or an exposition that ends inside
    a line (truncated), raises ``ValueError`` naming ``where`` and the line number.
    """
    if not isinstance(text, str):
        raise ValueError(f"{where}: expected text, got {type(text).__name__}")
    text = normalise_text(text)
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
    if not table:
        _check_complete(body, where)
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


#: Two ``_created`` timestamps closer than this (seconds) are one start of the series.
SAME_START_S = 1e-3


def counter_change(
    before_created: float | None,
    after_created: float | None,
    decreased: bool,
    *,
    names: tuple[str, str] = ("the earlier scrape", "the later scrape"),
    series: str = "",
) -> str | None:
    """How a counter series changed between two scrapes given earliest first.

    ``_created`` is when the series started counting: later in the second scrape, the server
    restarted in between; earlier, or the same with a counter that decreased, the scrapes are in the
    wrong order (a counter of one server run never decreases).

    Returns
    -------
    None when the second scrape goes on from the first; the note of a counter reset (the counts
    since the restart are the traffic) otherwise. Raises ``ValueError`` naming both files when
    they are in the wrong order.
    """
    of = f" of {series}" if series else ""
    if before_created is not None and after_created is not None:
        if after_created > before_created + SAME_START_S:
            return (
                f"counter reset between the scrapes (_created moved from {before_created:.3f} to "
                f"{after_created:.3f}): the server restarted; the counts since the restart are used and "
                "the traffic between the earlier scrape and the restart is lost"
            )
        if after_created < before_created - SAME_START_S:
            raise ValueError(
                f"{names[0]} is later than {names[1]}: the _created timestamp{of} goes back from "
                f"{before_created:.3f} to {after_created:.3f} (the first file is from a later server run): "
                "swap them (give the scrapes earliest first)"
            )
        if decreased:
            raise ValueError(
                f"{names[0]} is later than {names[1]}: the counters{of} decrease under the same _created "
                f"timestamp {before_created:.3f} (one server run, no restart in between): swap them (give the "
                "scrapes earliest first)"
            )
        return None
    if decreased:
        return (
            "counter reset between the scrapes (a counter decreased, and no _created timestamp tells a "
            "restart from scrapes in the wrong order): read as a restart, the counts since it are used and "
            "the traffic before it is lost; if the files are not earliest first, swap them"
        )
    return None


def delta_values(
    before: dict[Labels, tuple[float, float | None]],
    after: dict[Labels, tuple[float, float | None]],
    *,
    names: tuple[str, str] = ("the earlier scrape", "the later scrape"),
) -> tuple[dict[Labels, float], list[str]]:
    """``after - before`` per label set, a reset (:func:`counter_change`: ``_created`` moved on,
    or without ``_created`` a decrease) keeping ``after``'s value (counts since the restart), with
    a note per reset; scrapes in the wrong order raise ``ValueError`` naming ``names``."""
    out, notes = {}, []
    for key, (v, created) in after.items():
        b = before.get(key)
        if b is None:
            out[key] = v
            continue
        bv, bc = b
        note = counter_change(bc, created, v < bv, names=names, series=label_text(key))
        if note is not None:
            notes.append(note)
            out[key] = v
        else:
            out[key] = v - bv
    return out, sorted(set(notes))
