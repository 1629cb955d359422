"""llama.cpp's speculative-decoding log lines into alpha (method notes, section 9).

Three kinds of lines, read in this order of preference (the first kind a log holds is used):

* ``statistics`` (``common_speculative_print_stats`` in ``common/speculative.cpp``; printed after
  every request at trace level ``-lv 4``, and by ``llama-speculative-simple``), one per
  implementation, *cumulative* since the process started::

      statistics     draft-eagle3: #calls(b,g,a) =    1     87     87, #gen drafts =     87,
      #acc drafts =    70, #gen tokens =    259, #acc tokens =   167, #mean acc len = 2.92,
      #acc rate/pos = (0.805, 0.632, 0.483), dur(b,g,a) = 0.005, 325.555, 0.114 ms

  (llama.cpp PR #24536). ``#calls(b,g,a)``'s third number counts the verified drafts (``accept``
  calls), ``#acc drafts`` the drafts with at least their first token accepted (exact), ``#acc
  tokens`` the accepted tokens; ``#acc rate/pos`` is accepted at position ``i`` / verified drafts,
  3 decimals, over the positions ever accepted (the vector grows to the longest accepted run, so a
  position beyond it has exactly 0). Older builds print ``#calls = N`` and no rates. The last line
  of each implementation is used (the sum over restarts, when a count falls back);
* ``print_timing`` (``tools/server``), one per finished request (task), *per request*::

      slot print_timing: id  1 | task 0 | draft acceptance = 0.64479 (  167 accepted /   259
      generated), mean acceptance length =  2.92, acceptance rate per position = (0.805, 0.632, 0.483)

  with ``mean len =`` in some builds and only ``draft acceptance rate = ... (N accepted / M
  generated)`` in older ones; the rates run over ``--spec-draft-n-max`` positions (``k``). The
  lines are summed over the requests;
* the printout of ``llama-speculative`` / ``llama-speculative-simple``: ``n_draft = 16``,
  ``n_predict``, ``n_drafted``, ``n_accept`` (``k`` and the run's totals; one draft per iteration,
  so the drafts lie between ``n_drafted / n_draft`` and ``n_predict - n_accept``).

With per-position rates, the counts are ``rate x drafts`` rescaled to the exact accepted total
(:func:`sdsl.measure.engines.estimate.from_rounded_rates`); with totals only, alpha is bounded over
every split of the draft tokens into drafts (:func:`sdsl.measure.engines.estimate.from_totals_bounded`).
llama.cpp's drafts vary in length (``--spec-draft-p-min``, the tokens left to generate), so
drafts shorter than ``k`` are the rule.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.types import AlphaReading, EngineRead, Labels, Skipped
from sdsl.validation import shown

__all__ = ["Stats", "Timing", "looks_like_llamacpp_log", "parse_llamacpp_log", "read_llamacpp_log"]

_NUM = r"(\d+(?:\.\d+)?)"
_STATS = re.compile(
    r"statistics\s+(?P<impl>[\w.\-]+)\s*:\s*#calls(?:\(b,g,a\))?\s*=\s*(?P<c1>\d+)(?:\s+(?P<c2>\d+)\s+(?P<c3>\d+))?\s*,"
    r"\s*#gen drafts\s*=\s*(?P<gd>\d+)\s*,\s*#acc drafts\s*=\s*(?P<ad>\d+)\s*,\s*#gen tokens\s*=\s*(?P<gt>\d+)\s*,"
    r"\s*#acc tokens\s*=\s*(?P<at>\d+)"
    r"(?:\s*,\s*#mean acc len\s*=\s*(?P<mean>[\d.]+)\s*,\s*#acc rate/pos\s*=\s*\((?P<rates>[^)]*)\))?"
)
_TIMING = re.compile(
    r"draft acceptance(?: rate)?\s*=\s*[\d.]+\s*\(\s*(?P<acc>\d+)\s+accepted\s*/\s*(?P<gen>\d+)\s+generated\s*\)"
    r"(?:\s*,\s*mean (?:acceptance length|len)\s*=\s*(?P<mean>[\d.]+))?"
    r"(?:\s*,\s*acceptance rate per position\s*=\s*\((?P<rates>[^)]*)\))?"
)
_PER_POS = re.compile(r"acc per pos\s*=\s*\((?P<rates>[^)]*)\)")
_TASK = re.compile(r"task\s+(-?\d+)")
_BLOCK = {
    "n_draft": re.compile(r"\bn_draft\s*=\s*(\d+)"),
    "n_predict": re.compile(r"\bn_predict\s*=\s*(\d+)"),
    "n_drafted": re.compile(r"\bn_drafted\s*=\s*(\d+)"),
    "n_accept": re.compile(r"\bn_accept\s*=\s*(\d+)"),
}
#: Half a unit of the printed decimals: the rates (3), the mean lengths (2).
RATE_ROUNDING = 5e-4
MEAN_ROUNDING = 5e-3


@dataclass(frozen=True)
class Stats:
    """One ``statistics`` line."""

    lineno: int
    impl: str
    verified: int | None
    gen_drafts: int
    acc_drafts: int
    gen_tokens: int
    acc_tokens: int
    rates: tuple[float, ...]


@dataclass(frozen=True)
class Timing:
    """One ``print_timing`` draft-acceptance line."""

    lineno: int
    accepted: int
    generated: int
    mean: float | None
    rates: tuple[float, ...]


def looks_like_llamacpp_log(text: str) -> bool:
    if _STATS.search(text) or _TIMING.search(text):
        return True
    return all(rx.search(text) for rx in _BLOCK.values())


def _rates(text: str | None, where: str) -> tuple[float, ...]:
    if not text or not text.strip():
        return ()
    try:
        vals = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise ValueError(f"{where}: the per-position rates ({text.strip()}) are not numbers") from None
    if any(not 0 <= v <= 1 for v in vals):
        raise ValueError(f"{where}: per-position rates must lie in [0, 1], got ({text.strip()})")
    return vals


def parse_llamacpp_log(text: str, where: str = "log") -> tuple[list[Stats], list[Timing], dict[str, int] | None]:
    """The ``statistics`` lines, the ``print_timing`` draft lines and the ``llama-speculative``
    totals of a log."""
    stats: list[Stats] = []
    timing: list[Timing] = []
    pending: dict[str, int] = {}  # task -> index of its draft line without rates
    lines = text.splitlines()
    for lineno, line in enumerate(lines, start=1):
        at = f"{where} line {lineno}"
        if m := _STATS.search(line):
            verified = int(m.group("c3")) if m.group("c3") is not None else None
            stats.append(
                Stats(
                    lineno,
                    m.group("impl"),
                    verified,
                    int(m.group("gd")),
                    int(m.group("ad")),
                    int(m.group("gt")),
                    int(m.group("at")),
                    _rates(m.group("rates"), at),
                )
            )
            continue
        tm = _TASK.search(line)
        task = tm.group(1) if tm else ""
        if m := _TIMING.search(line):
            mean = float(m.group("mean")) if m.group("mean") else None
            timing.append(Timing(lineno, int(m.group("acc")), int(m.group("gen")), mean, _rates(m.group("rates"), at)))
            if not timing[-1].rates:
                pending[task] = len(timing) - 1
            continue
        if (m := _PER_POS.search(line)) and task in pending:
            i = pending.pop(task)
            t = timing[i]
            timing[i] = Timing(t.lineno, t.accepted, t.generated, t.mean, _rates(m.group("rates"), at))
    block = None
    found = {k: [int(x) for x in rx.findall(text)] for k, rx in _BLOCK.items()}
    if all(found.values()):
        block = {k: v[-1] for k, v in found.items()}
    if not stats and not timing and block is None:
        raise ValueError(
            f"{where}: no llama.cpp 'statistics', 'draft acceptance' or n_drafted / n_accept line (the statistics "
            "lines need -lv 4)"
        )
    return stats, timing, block


def _totals(lines: list[Stats]) -> Stats:
    """The cumulative totals of one implementation: its last line, plus the last line before each
    restart (a count that falls back)."""
    total = None
    prev = None
    for x in lines:
        if prev is not None and (x.gen_drafts < prev.gen_drafts or x.acc_tokens < prev.acc_tokens):
            total = prev if total is None else _add(total, prev)
        prev = x
    assert prev is not None
    return prev if total is None else _add(total, prev)


def _add(a: Stats, b: Stats) -> Stats:
    if len(a.rates) != len(b.rates) and a.rates and b.rates:
        n = max(len(a.rates), len(b.rates))
        ra = a.rates + (0.0,) * (n - len(a.rates))
        rb = b.rates + (0.0,) * (n - len(b.rates))
    else:
        ra, rb = a.rates, b.rates
    va, vb = (a.verified or a.gen_drafts), (b.verified or b.gen_drafts)
    rates = tuple((x * va + y * vb) / (va + vb) for x, y in zip(ra, rb)) if ra and rb else ()
    return Stats(
        b.lineno,
        b.impl,
        None if a.verified is None or b.verified is None else a.verified + b.verified,
        a.gen_drafts + b.gen_drafts,
        a.acc_drafts + b.acc_drafts,
        a.gen_tokens + b.gen_tokens,
        a.acc_tokens + b.acc_tokens,
        rates,
    )


def _from_stats(x: Stats, path: str, gamma: int | None, level: float, restarted: bool) -> AlphaReading:
    labels: Labels = (("implementation", x.impl),)
    at = f"{path} line {x.lineno} ({x.impl})"
    d = x.verified if x.verified is not None else x.gen_drafts
    if d == 0:
        raise ValueError(f"{at}: no verified draft")
    if x.acc_tokens > x.gen_tokens or x.acc_drafts > d:
        raise ValueError(
            f"{at}: the counts contradict each other (#acc tokens {x.acc_tokens} of {x.gen_tokens}, #acc drafts "
            f"{x.acc_drafts} of {d} verified)"
        )
    notes = []
    if restarted:
        notes.append("the counts fell back within the log (a restart): the totals before and after are summed")
    dt: float | None = float(x.gen_tokens)
    if x.verified is not None and x.verified != x.gen_drafts:
        notes.append(
            f"{x.gen_drafts} drafts generated, {x.verified} verified (#calls a): the draft tokens include the unverified "
            "drafts', so drafts shorter than k are bounded from the rates only"
        )
        dt = None
    if not x.rates:
        return E.from_totals_bounded(
            source="llamacpp-log",
            path=path,
            labels=labels,
            accepted=x.acc_tokens,
            draft_tokens=x.gen_tokens,
            drafts_low=d,
            drafts_high=d,
            first=x.acc_drafts,
            k=gamma,
            level=level,
            method="statistics line without per-position rates: totals, bounded truncated-geometric MLE",
            notes=tuple(notes),
        )
    m = len(x.rates)
    k = max(m, math.ceil(x.gen_tokens / d) if dt is not None else m)
    if gamma is not None:
        if gamma < m:
            raise ValueError(
                f"{shown('gamma')} {gamma} conflicts with the {m} positions accepted in {at}: drop or raise "
                f"{shown('gamma')}"
            )
        k = max(k, gamma)
    if abs(x.rates[0] * d - x.acc_drafts) > RATE_ROUNDING * d + 0.5:
        raise ValueError(
            f"{at}: #acc drafts {x.acc_drafts} is not the first rate x verified drafts ({x.rates[0]} x {d})"
        )
    part = E.RoundedRates(
        float(x.acc_tokens), dt, float(d), float(d), float(d), x.rates, RATE_ROUNDING, first=float(x.acc_drafts)
    )
    if k > m:
        notes.append(
            f"k = {k}: the statistics line prints rates up to the longest accepted run ({m}); "
            + ("--gamma" if gamma is not None and gamma == k else "draft tokens / drafts")
            + " sets the draft length (positions beyond the rates were never accepted)"
        )
    return E.from_rounded_rates(
        [part],
        source="llamacpp-log",
        path=path,
        labels=labels,
        k=k,
        level=level,
        method="statistics line (cumulative): #acc rate/pos x verified drafts, truncated-geometric MLE; rates "
        "rounded to 3 decimals",
        notes=tuple(notes),
    )


def _from_timing(lines: list[Timing], path: str, gamma: int | None, level: float) -> AlphaReading:
    labels: Labels = (("lines", "print_timing"),)
    active = [t for t in lines if t.generated > 0]
    if not active:
        raise ValueError(f"{path}: every draft acceptance line has 0 generated draft tokens")
    with_rates = [t for t in active if t.rates]
    notes = [f"{len(active)} request(s) (print_timing lines) summed"]
    if with_rates:
        k = max(len(t.rates) for t in with_rates)
        if gamma is not None and gamma != k:
            raise ValueError(
                f"{shown('gamma')} {gamma} conflicts with k = {k} ({k} per-position rates, --spec-draft-n-max) in "
                f"{path}: drop {shown('gamma')}, which is for exports that do not carry k"
            )
        if len(with_rates) < len(active):
            notes.append(f"{len(active) - len(with_rates)} line(s) without per-position rates not used")
        parts = []
        for t in with_rates:
            rates = t.rates + (0.0,) * (k - len(t.rates))
            n, lo, hi = E.drafts_from_summary(
                accepted=t.accepted,
                drafted=t.generated,
                k=k,
                mean=t.mean,
                mean_rounding=MEAN_ROUNDING,
                rates=rates,
                rate_rounding=RATE_ROUNDING,
                where=f"{path} line {t.lineno}",
            )
            parts.append(E.RoundedRates(float(t.accepted), float(t.generated), n, lo, hi, rates, RATE_ROUNDING))
        return E.from_rounded_rates(
            parts,
            source="llamacpp-log",
            path=path,
            labels=labels,
            k=k,
            level=level,
            method="print_timing lines: per-position rates x drafts, truncated-geometric MLE; rates rounded to 3 "
            "decimals, mean length to 2",
            notes=tuple(notes),
        )
    with_mean = [t for t in active if t.mean is not None]
    if not with_mean:
        raise ValueError(
            f"{path}: the draft acceptance lines print no mean length and no rates, so the number of drafts is "
            "unknown: give the statistics lines (-lv 4) or a /metrics scrape"
        )
    lo = hi = 0.0
    for t in with_mean:
        mean = t.mean or 1.0
        if t.accepted == 0:
            lo, hi = lo + 1, hi + t.generated
            continue
        lo += max(math.ceil(t.accepted / (mean - 1 + MEAN_ROUNDING) - 1e-9), 1)
        hi += min(math.floor(t.accepted / max(mean - 1 - MEAN_ROUNDING, 1e-12) + 1e-9), t.generated)
    if len(with_mean) < len(active):
        notes.append(f"{len(active) - len(with_mean)} line(s) without a mean length not used")
    return E.from_totals_bounded(
        source="llamacpp-log",
        path=path,
        labels=labels,
        accepted=sum(t.accepted for t in with_mean),
        draft_tokens=sum(t.generated for t in with_mean),
        drafts_low=lo,
        drafts_high=max(hi, lo),
        k=gamma,
        level=level,
        method="print_timing lines without per-position rates: drafts from the rounded mean length, bounded "
        "truncated-geometric MLE",
        notes=tuple(notes),
    )


def _from_block(b: dict[str, int], path: str, gamma: int | None, level: float) -> AlphaReading:
    k = b["n_draft"]
    if gamma is not None and gamma != k:
        raise ValueError(
            f"{shown('gamma')} {gamma} conflicts with n_draft = {k} in {path}: drop {shown('gamma')}, which is for "
            "exports that do not carry k"
        )
    s, dt, iterations = b["n_accept"], b["n_drafted"], b["n_predict"] - b["n_accept"]
    if dt == 0 or k == 0:
        raise ValueError(f"{path}: n_drafted {dt}, n_draft {k}: nothing was drafted")
    lo = math.ceil(dt / k)
    hi = min(max(iterations, lo), dt)
    return E.from_totals_bounded(
        source="llamacpp-log",
        path=path,
        labels=(("lines", "llama-speculative"),),
        accepted=s,
        draft_tokens=dt,
        drafts_low=lo,
        drafts_high=hi,
        k=k,
        level=level,
        method="llama-speculative totals (n_draft, n_predict, n_drafted, n_accept): bounded truncated-geometric MLE",
        notes=(
            f"drafts between n_drafted / n_draft = {lo} and n_predict - n_accept = {iterations} iterations (one draft "
            "each, chain drafts)",
        ),
    )


def read_llamacpp_log(
    text: str, path: str, *, level: float = 0.95, gamma: int | None = None, detected_by: str = ""
) -> EngineRead:
    """One reading per implementation from the ``statistics`` lines, else one from the
    ``print_timing`` lines, else one from the ``llama-speculative`` totals."""
    stats, timing, block = parse_llamacpp_log(text, path)
    readings: list[AlphaReading] = []
    skipped: list[Skipped] = []
    notes: list[str] = []
    if stats:
        for impl in dict.fromkeys(x.impl for x in stats):
            xs = [x for x in stats if x.impl == impl]
            total = _totals(xs)
            try:
                readings.append(
                    _from_stats(
                        total,
                        path,
                        gamma,
                        level,
                        restarted=total.lineno != xs[-1].lineno or (total.gen_drafts != xs[-1].gen_drafts),
                    )
                )
            except ValueError as exc:
                if "conflicts with" in str(exc):
                    raise
                skipped.append(Skipped((("implementation", impl),), f"inconsistent: {str(exc).split(': ', 1)[-1]}"))
        if timing:
            notes.append(f"{len(timing)} print_timing line(s) not used: the statistics lines carry the same drafts")
    elif timing:
        try:
            readings.append(_from_timing(timing, path, gamma, level))
        except ValueError as exc:
            if "conflicts with" in str(exc):
                raise
            skipped.append(Skipped((("lines", "print_timing"),), f"unusable: {str(exc).split(': ', 1)[-1]}"))
    elif block is not None:
        readings.append(_from_block(block, path, gamma, level))
    if block is not None and (stats or timing):
        notes.append("the n_drafted / n_accept totals not used: the other lines carry the drafts")
    return EngineRead(path, "llamacpp-log", detected_by, tuple(readings), tuple(skipped), tuple(notes))
