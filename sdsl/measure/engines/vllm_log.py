"""vLLM's spec-decode log lines, as users paste them in issues, into alpha.

V1 (``SpecDecodingLogging.log`` in ``vllm/v1/spec_decode/metrics.py``), one line per logging
interval (counts of that interval only)::

    SpecDecoding metrics: Mean acceptance length: 2.93, Accepted throughput: 41.90 tokens/s,
    Drafted throughput: 43.39 tokens/s, Accepted: 419 tokens, Drafted: 434 tokens,
    Per-position acceptance rate: 0.982, 0.949, Avg Draft acceptance rate: 96.5%

(older releases put ``Draft acceptance rate: 88.8%`` first and had no throughputs). ``Accepted``
and ``Drafted`` are exact; the mean acceptance length ``1 + accepted / drafts`` has 2 decimals and
each per-position rate ``accepted at position i / drafts`` has 3. The number of drafts is
recovered as ``Drafted / k`` when that agrees with the rounded mean length and rates (every draft
``k`` long), otherwise from the mean length and rates within their rounding (then some drafts
were shorter than ``k``). The per-position counts are ``rate x drafts``. Lines are summed per
engine (the ``Engine 000:`` line the same logger writes before it, when present) and process.

V0 (``Speculative metrics: Draft acceptance rate: 0.607, System efficiency: 0.510, Number of
speculative tokens: 4, Number of accepted tokens: 32594, Number of draft tokens: 53716, Number of
emitted tokens: 34244.``) is cumulative since start: the last line of each process is used. V0
counted accepted tokens at every position, not only the accepted prefix, so its "draft acceptance
rate" is not the prefix acceptance; alpha inverts the emitted tokens per draft, the mean
acceptance length (:func:`sdsl.measure.engines.estimate.from_mean_length`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.types import EngineRead, Labels, Skipped

__all__ = ["LogLine", "parse_log", "read_vllm_log", "looks_like_vllm_log", "RATE_ROUNDING", "MEAN_ROUNDING"]

#: Half a unit of the printed decimals: per-position rates (3 decimals), mean length (2 decimals).
RATE_ROUNDING = 5e-4
MEAN_ROUNDING = 5e-3

_V1 = re.compile(r"SpecDecoding metrics:(?P<body>.*)$")
_V0 = re.compile(r"Speculative metrics:(?P<body>.*)$")
_ENGINE = re.compile(r"Engine (\d+):")
_PID = re.compile(r"\((?P<proc>[A-Za-z_]+[A-Za-z0-9_]*) pid=(?P<pid>\d+)\)")
_NUM = r"([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_FIELDS_V1 = {
    "mean": re.compile(r"Mean acceptance length:\s*" + _NUM),
    "accepted": re.compile(r"\bAccepted:\s*" + _NUM + r"\s*tokens"),
    "drafted": re.compile(r"\bDrafted:\s*" + _NUM + r"\s*tokens"),
    "rates": re.compile(r"Per-position acceptance rate:\s*((?:\s*[-+]?\d+(?:\.\d+)?\s*,?)+)"),
}
_FIELDS_V0 = {
    "k": re.compile(r"Number of speculative tokens:\s*" + _NUM),
    "accepted": re.compile(r"Number of accepted tokens:\s*" + _NUM),
    "drafted": re.compile(r"Number of draft tokens:\s*" + _NUM),
    "emitted": re.compile(r"Number of emitted tokens:\s*" + _NUM),
}


@dataclass(frozen=True)
class LogLine:
    """One parsed spec-decode log line."""

    lineno: int
    version: str  # "v1" (per interval) or "v0" (cumulative)
    group: Labels
    accepted: int
    drafted: int
    mean: float | None = None
    rates: tuple[float, ...] = ()
    k: int | None = None
    emitted: int | None = None
    extra: dict = field(default_factory=dict, compare=False)


def looks_like_vllm_log(text: str) -> bool:
    return bool(re.search(r"SpecDecoding metrics:|Speculative metrics:", text))


def _field(rx: re.Pattern, body: str, name: str, where: str) -> str:
    m = rx.search(body)
    if not m:
        raise ValueError(f"{where}: no '{name}' in the spec-decode line")
    return m.group(1)


def _int(text: str, name: str, where: str) -> int:
    x = float(text)
    if not math.isfinite(x) or x < 0 or x != round(x):
        raise ValueError(f"{where}: {name} must be a whole count >= 0, got {text}")
    return int(round(x))


def parse_log(text: str, where: str = "log") -> list[LogLine]:
    """Every spec-decode line of a log, with its group (process, engine) and line number."""
    out: list[LogLine] = []
    engine: dict[str, str] = {}
    lines = text.splitlines()
    for lineno, line in enumerate(lines, start=1):
        if lineno == len(lines) and not text.endswith(("\n", "\r")) and (_V1.search(line) or _V0.search(line)):
            # a logger ends every line: a spec-decode line without its end was cut, its counts may be too
            raise ValueError(
                f"{where} line {lineno}: the log ends inside this spec-decode line (no final newline): "
                "the file is truncated, and its counts may have lost digits; give the whole log"
            )
        pm = _PID.search(line)
        proc = f"{pm.group('proc')} pid={pm.group('pid')}" if pm else ""
        em = _ENGINE.search(line)
        if em and "SpecDecoding" not in line:
            engine[proc] = str(int(em.group(1)))
        at = f"{where} line {lineno}"
        m1, m0 = _V1.search(line), _V0.search(line)
        if m1:
            body = m1.group("body")
            rm = _FIELDS_V1["rates"].search(body)  # absent from the earliest V1 releases
            rates_text = rm.group(1) if rm else ""
            rates = tuple(float(x) for x in re.findall(r"[-+]?\d+(?:\.\d+)?", rates_text))
            if any(not 0 <= r <= 1 for r in rates):
                raise ValueError(f"{at}: per-position acceptance rates must lie in [0, 1], got {rates_text.strip()}")
            mm = _FIELDS_V1["mean"].search(body)
            group = tuple(sorted({"process": proc, "engine": engine.get(proc, "")}.items()))
            out.append(
                LogLine(
                    lineno,
                    "v1",
                    tuple((k, v) for k, v in group if v),
                    _int(_field(_FIELDS_V1["accepted"], body, "Accepted", at), "Accepted", at),
                    _int(_field(_FIELDS_V1["drafted"], body, "Drafted", at), "Drafted", at),
                    mean=float(mm.group(1)) if mm else None,
                    rates=rates,
                )
            )
        elif m0:
            body = m0.group("body")
            vals = {k: _int(_field(rx, body, k, at), k, at) for k, rx in _FIELDS_V0.items()}
            group = (("process", proc),) if proc else ()
            out.append(
                LogLine(lineno, "v0", group, vals["accepted"], vals["drafted"], k=vals["k"], emitted=vals["emitted"])
            )
    if not out:
        raise ValueError(f"{where}: no 'SpecDecoding metrics:' or 'Speculative metrics:' line")
    # one engine per process (or an excerpt that starts after the engine's line): one group per process
    merged = []
    for x in out:
        proc = dict(x.group).get("process", "")
        engines = {dict(y.group).get("engine", "") for y in out if dict(y.group).get("process", "") == proc}
        named = sorted(e for e in engines if e)
        if len(named) <= 1:
            g = {"process": proc, "engine": named[0] if named else ""}
            x = LogLine(
                x.lineno,
                x.version,
                tuple((k, v) for k, v in sorted(g.items()) if v),
                x.accepted,
                x.drafted,
                x.mean,
                x.rates,
                x.k,
                x.emitted,
            )
        merged.append(x)
    return merged


def _drafts(line: LogLine, where: str) -> tuple[float, float, float]:
    """Point, low and high number of drafts of a V1 line (:func:`~.estimate.drafts_from_summary`)."""
    return E.drafts_from_summary(
        accepted=line.accepted,
        drafted=line.drafted,
        k=len(line.rates),
        mean=line.mean,
        mean_rounding=MEAN_ROUNDING,
        rates=line.rates,
        rate_rounding=RATE_ROUNDING,
        where=f"{where} line {line.lineno}",
    )


def _read_v1(lines: list[LogLine], group: Labels, path: str, level: float):
    ks = {len(x.rates) for x in lines}
    if len(ks) != 1:
        raise ValueError(f"{path}: lines of one engine have different draft lengths {sorted(ks)}")
    k = ks.pop()
    parts = []
    for x in lines:
        n, n_lo, n_hi = _drafts(x, path)
        parts.append(E.RoundedRates(x.accepted, x.drafted, n, n_lo, n_hi, x.rates, RATE_ROUNDING))
    return E.from_rounded_rates(
        parts,
        source="vllm-log",
        path=path,
        labels=group,
        k=k,
        level=level,
        method=(
            f"{len(lines)} log line(s): per-position rates x drafts, truncated-geometric MLE; rates rounded "
            "to 3 decimals, mean length to 2"
        ),
    )


def _read_v1_mean(lines: list[LogLine], group: Labels, path: str, level: float):
    """Lines without per-position rates (the earliest V1 releases): drafts ``Accepted / (mean - 1)``
    per line, ``k = Drafted / drafts`` when that is a whole number, mean acceptance length inverted."""
    usable = [x for x in lines if x.mean is not None and x.mean > 1 + MEAN_ROUNDING and x.accepted > 0]
    if not usable:
        raise ValueError(
            f"{path}: the lines carry neither per-position rates nor a mean acceptance length above 1: "
            "the number of drafts and k are unknown"
        )
    n = sum(x.accepted / (x.mean - 1) for x in usable if x.mean is not None)  # every usable line has a mean
    a, dt = sum(x.accepted for x in usable), sum(x.drafted for x in usable)
    k_f = dt / n
    if abs(k_f - round(k_f)) > 0.1 * max(round(k_f), 1) or round(k_f) < 1:
        raise ValueError(
            f"{path}: Drafted / drafts = {k_f:.3g} is not a whole draft length (drafts shorter than k?): k is unknown"
        )
    return E.from_mean_length(
        source="vllm-log",
        path=path,
        labels=group,
        mean_length=min(1 + a / n, round(k_f) + 1.0),
        k=int(round(k_f)),
        n_iterations=n,
        level=level,
        num_drafts=n,
        num_draft_tokens=dt,
        num_accepted_tokens=a,
        method=f"{len(usable)} log line(s) without per-position rates: mean acceptance length inverted, k = Drafted / "
        "drafts",
        notes=("drafts recovered from the mean acceptance length, rounded to 2 decimals",),
    )


def read_vllm_log(text: str, path: str, *, level: float = 0.95, detected_by: str = "") -> EngineRead:
    """Alpha from the spec-decode lines of a vLLM log (V1 intervals summed per engine; V0's last
    cumulative line per process)."""
    lines = parse_log(text, path)
    groups: dict[tuple[str, Labels], list[LogLine]] = {}
    for x in lines:
        groups.setdefault((x.version, x.group), []).append(x)
    readings, skipped = [], []
    notes: list[str] = []
    for (version, group), xs in groups.items():
        if version == "v1":
            active = [x for x in xs if x.drafted > 0]
            if not active:
                skipped.append(Skipped(group, "idle: every line has Drafted: 0 tokens"))
                continue
            full = [x for x in active if x.rates and x.mean is not None]
            try:
                if full:
                    r = _read_v1(full, group, path, level)
                    if len(full) < len(active):
                        r = r.with_notes(f"{len(active) - len(full)} line(s) without per-position rates not used")
                    readings.append(r)
                else:
                    readings.append(_read_v1_mean(active, group, path, level))
            except ValueError as exc:
                skipped.append(Skipped(group, f"inconsistent: {exc}"))
            continue
        last = xs[-1]
        drops = [b.lineno for a, b in zip(xs, xs[1:]) if b.drafted < a.drafted]
        note = f"V0 counts are cumulative: the last line ({last.lineno}) is used" + (
            f"; the counts fell at line(s) {drops} (a restart): the last line counts since then" if drops else ""
        )
        if last.drafted == 0 or not last.k:
            skipped.append(Skipped(group, "idle: no draft token counted"))
            continue
        k = int(last.k)
        assert last.emitted is not None  # a V0 line always counts its emitted tokens
        n = last.drafted / k
        readings.append(
            E.from_mean_length(
                source="vllm-log",
                path=path,
                labels=group,
                mean_length=last.emitted / n,
                k=k,
                n_iterations=n,
                level=level,
                num_drafts=n,
                num_draft_tokens=last.drafted,
                num_accepted_tokens=None,
                method="vLLM V0 log: emitted tokens per draft (mean acceptance length) inverted",
                notes=(
                    note,
                    "V0's 'Draft acceptance rate' counts accepted tokens at every position, not only the "
                    "accepted prefix, so it is not the prefix acceptance alpha",
                ),
            )
        )
    return EngineRead(path, "vllm-log", detected_by, tuple(readings), tuple(skipped), tuple(notes))
