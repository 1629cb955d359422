"""vLLM's printed summaries of a run into alpha: the printout of
``examples/offline_inference/spec_decode.py`` and the ``Speculative Decoding`` section that
``vllm bench serve`` prints (method notes, section 9).

``examples/offline_inference/spec_decode.py`` sums ``LLM.get_metrics()`` and prints (vLLM main,
e.g. commit ``eb987dffa144e73e064c00de74f60f54da54ff99``; pasted in vLLM PR #26498)::

    --------------------------------------------------
    total_num_output_tokens: 16994
    num_drafts: 4687
    num_draft_tokens: 46870
    num_accepted_tokens: 12368
    mean acceptance length: 3.64
    --------------------------------------------------
    acceptance at token 0: 0.74
    acceptance at token 1: 0.54

The three counts are exact; ``acceptance at token i`` is ``accepted at position i / num_drafts``
with 2 decimals, one line per position of ``--num-spec-tokens`` (so ``k`` is their number). Some
copies of the script print ``Number of drafts:``, ``Draft tokens generated:``, ``Accepted tokens:``
and ``Mean acceptance length:`` instead, without positions.

``vllm bench serve`` (``vllm/benchmarks/serve.py``, pasted in vLLM PR #48892) prints::

    ---------------Speculative Decoding---------------
    Acceptance rate (%):                     43.71
    Acceptance length:                       4.50
    Drafts:                                  11043
    Draft tokens:                            88344
    Accepted tokens:                         38611
    Per-position acceptance (%):
      Position 0:                            76.17

with the rates in percent, 2 decimals.

With the rates, the per-position counts are ``rate x drafts`` rescaled to the exact accepted
total and the evaluated positions are bounded over the rounding of the last rate
(:func:`sdsl.measure.engines.estimate.from_rounded_rates`); without them, the mean acceptance
length ``1 + accepted / drafts`` is inverted for ``k`` from ``--gamma`` or, when every draft had the
same length, ``draft tokens / drafts``. Each summary in a file (a pasted comparison holds several)
is read on its own and labelled with its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.types import AlphaReading, EngineRead, Labels
from sdsl.measure.estimators import AlphaEstimate
from sdsl.validation import shown

__all__ = [
    "Summary",
    "parse_spec_decode_example",
    "parse_bench_text",
    "looks_like_spec_decode_example",
    "looks_like_bench_text",
    "read_spec_decode_example",
    "read_bench_text",
]

_NUM = r"([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
#: ``spec_decode.py``: the count lines (both spellings), the mean and the per-position lines.
_EXAMPLE = {
    "drafts": re.compile(r"^\s*(?:num_drafts|Number of drafts)\s*:\s*" + _NUM + r"\s*$"),
    "draft_tokens": re.compile(r"^\s*(?:num_draft_tokens|Draft tokens generated)\s*:\s*" + _NUM + r"\s*$"),
    "accepted": re.compile(r"^\s*(?:num_accepted_tokens|Accepted tokens)\s*:\s*" + _NUM + r"\s*$"),
    "mean": re.compile(r"^\s*(?:mean acceptance length|Mean acceptance length)\s*:\s*" + _NUM + r"\s*$"),
    "rate": re.compile(r"^\s*acceptance at token\s*(\d+)\s*:\s*" + _NUM + r"\s*$"),
}
#: ``vllm bench serve``: the section's lines.
_BENCH = {
    "drafts": re.compile(r"^\s*Drafts:\s*" + _NUM + r"\s*$"),
    "draft_tokens": re.compile(r"^\s*Draft tokens:\s*" + _NUM + r"\s*$"),
    "accepted": re.compile(r"^\s*Accepted tokens:\s*" + _NUM + r"\s*$"),
    "mean": re.compile(r"^\s*Acceptance length:\s*" + _NUM + r"\s*$"),
    "rate": re.compile(r"^\s*Position\s+(\d+):\s*" + _NUM + r"\s*$"),
}
_BENCH_HEADER = re.compile(r"-+\s*Speculative Decoding\s*-+")
#: Half a unit of the printed decimals: spec_decode.py's rates (2 decimals), bench's (2 decimals of %).
EXAMPLE_ROUNDING = 5e-3
BENCH_ROUNDING = 5e-5
MEAN_ROUNDING = 5e-3


@dataclass(frozen=True)
class Summary:
    """One printed summary: its first line, the exact counts, the mean length and the rates."""

    lineno: int
    drafts: int | None
    draft_tokens: int | None
    accepted: int | None
    mean: float | None
    rates: tuple[float, ...]
    """None counts: an early copy of the script printed only the mean length and the rates."""


def looks_like_spec_decode_example(text: str) -> bool:
    lines = text.splitlines()
    counts = any(_EXAMPLE["drafts"].match(ln) for ln in lines) and any(_EXAMPLE["accepted"].match(ln) for ln in lines)
    return counts or any(_EXAMPLE["rate"].match(ln) for ln in lines)


def looks_like_bench_text(text: str) -> bool:
    return bool(_BENCH_HEADER.search(text)) and any(_BENCH["drafts"].match(ln) for ln in text.splitlines())


def _count(value: str, name: str, where: str) -> int:
    x = float(value)
    if x < 0 or x != round(x):
        raise ValueError(f"{where}: {name} must be a whole count >= 0, got {value}")
    return int(round(x))


def _parse(text: str, where: str, rx: dict[str, re.Pattern], scale: float, start: re.Pattern | None) -> list[Summary]:
    """Every summary of ``text``: a block starts at its drafts line (or at ``start``) and ends at
    the next one; the rates are divided by ``scale`` (100 for percentages)."""
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if (start.search(ln) if start is not None else rx["drafts"].match(ln))]
    if not starts and start is None and any(rx["rate"].match(ln) for ln in lines):
        starts = [0]  # an early printout: the mean length and the rates, no counts
    if not starts:
        raise ValueError(f"{where}: no speculative-decoding summary (no drafts line)")
    out = []
    for j, i0 in enumerate(starts):
        i1 = starts[j + 1] if j + 1 < len(starts) else len(lines)
        vals: dict[str, tuple[int, str]] = {}
        rates: dict[int, float] = {}
        for i in range(i0, i1):
            for key, r in rx.items():
                m = r.match(lines[i])
                if not m:
                    continue
                if key == "rate":
                    pos, v = int(m.group(1)), float(m.group(2)) / scale
                    if pos in rates:
                        raise ValueError(f"{where} line {i + 1}: position {pos} given twice")
                    if not 0 <= v <= 1:
                        raise ValueError(f"{where} line {i + 1}: the rate at position {pos} must lie in [0, 1]")
                    rates[pos] = v
                elif key not in vals:
                    vals[key] = (i + 1, m.group(1))
        at = f"{where} line {i0 + 1}"
        missing = [k for k in ("drafts", "draft_tokens", "accepted") if k not in vals]
        if missing and not (len(missing) == 3 and rates):
            raise ValueError(f"{at}: the summary has no {', '.join(missing)} line")
        if rates and sorted(rates) != list(range(len(rates))):
            raise ValueError(f"{at}: positions must be 0..k-1, got {sorted(rates)}")
        counts = {k: _count(v, k, f"{where} line {n}") for k, (n, v) in vals.items() if k != "mean"}
        mean = float(vals["mean"][1]) if "mean" in vals else None
        out.append(
            Summary(
                i0 + 1,
                counts.get("drafts"),
                counts.get("draft_tokens"),
                counts.get("accepted"),
                mean,
                tuple(rates[i] for i in range(len(rates))),
            )
        )
    return out


def parse_spec_decode_example(text: str, where: str = "printout") -> list[Summary]:
    """The summaries of ``spec_decode.py`` printouts (one per ``num_drafts:`` line)."""
    return _parse(text, where, _EXAMPLE, 1.0, None)


def parse_bench_text(text: str, where: str = "printout") -> list[Summary]:
    """The ``Speculative Decoding`` sections of ``vllm bench serve`` printouts."""
    return _parse(text, where, _BENCH, 100.0, _BENCH_HEADER)


def _check(x: Summary, at: str, rounding: float) -> None:
    """Refuse counts that contradict each other (an edited or mis-pasted summary)."""
    assert x.drafts is not None and x.draft_tokens is not None and x.accepted is not None
    if x.drafts == 0 or x.draft_tokens == 0:
        raise ValueError(f"{at}: {x.drafts} drafts and {x.draft_tokens} draft tokens: nothing was drafted")
    if not x.accepted <= x.draft_tokens:
        raise ValueError(f"{at}: accepted tokens ({x.accepted}) > draft tokens ({x.draft_tokens})")
    if x.mean is not None and abs(x.mean - (1 + x.accepted / x.drafts)) > MEAN_ROUNDING + 1e-9:
        raise ValueError(
            f"{at}: the mean acceptance length {x.mean} is not 1 + accepted / drafts = "
            f"{1 + x.accepted / x.drafts:.4f}: the counts contradict each other"
        )
    if x.rates:
        total = sum(x.rates) * x.drafts
        if abs(total - x.accepted) > len(x.rates) * rounding * x.drafts + 1e-6:
            raise ValueError(
                f"{at}: the per-position rates x drafts sum to {total:.1f}, not the {x.accepted} accepted tokens: "
                "the counts contradict each other"
            )
        if x.draft_tokens > len(x.rates) * x.drafts:
            raise ValueError(
                f"{at}: {x.draft_tokens} draft tokens > k x drafts = {len(x.rates)} x {x.drafts}: the positions do not "
                "cover the drafts"
            )


def _reading(
    x: Summary, *, source: str, where: str, labels: Labels, rounding: float, gamma: int | None, level: float, what: str
) -> AlphaReading:
    at = f"{where} line {x.lineno}"
    if x.drafts is None or x.draft_tokens is None or x.accepted is None:
        return _rates_only(x, source=source, where=where, labels=labels, gamma=gamma, level=level, what=what)
    _check(x, at, rounding)
    drafts, tokens, accepted = x.drafts, x.draft_tokens, x.accepted
    notes: tuple[str, ...] = ()
    m = tokens / drafts
    if x.rates and float(m).is_integer() and m < len(x.rates) and not any(x.rates[int(m) :]):
        # the script sizes its positions by --num-spec-tokens, the engine by its own k: positions past
        # draft tokens / drafts that are all 0 were not drafted
        notes = (
            f"positions {int(m)}..{len(x.rates) - 1} print 0 and draft tokens / drafts = {int(m)}: k = {int(m)} (the "
            "printout's positions follow the script's --num-spec-tokens, not the drafts)",
        )
        x = Summary(x.lineno, drafts, tokens, accepted, x.mean, x.rates[: int(m)])
    if x.rates:
        k = len(x.rates)
        if gamma is not None and gamma != k:
            raise ValueError(
                f"{shown('gamma')} {gamma} conflicts with k = {k} ({k} per-position rates) in {at}: drop "
                f"{shown('gamma')}, which is for exports that do not carry k"
            )
        part = E.RoundedRates(accepted, tokens, drafts, drafts, drafts, x.rates, rounding)
        return E.from_rounded_rates(
            [part],
            source=source,
            path=where,
            labels=labels,
            k=k,
            level=level,
            method=f"{what}: per-position rates x drafts, truncated-geometric MLE; the counts are exact, the rates "
            f"rounded to within {rounding:g}",
            notes=notes,
        )
    if gamma is not None:
        k, how = gamma, f"k = {gamma} from {shown('gamma')}"
    elif tokens % drafts == 0:
        k, how = tokens // drafts, "k = draft tokens / drafts (every draft counted full)"
    else:
        raise ValueError(
            f"{at}: no per-position rates and draft tokens / drafts = {tokens}/{drafts} is not whole: give "
            f"{shown('gamma')} K (num_speculative_tokens)"
        )
    return E.from_mean_length(
        source=source,
        path=where,
        labels=labels,
        mean_length=min(1.0 + accepted / drafts, k + 1.0),
        k=int(k),
        n_iterations=drafts,
        level=level,
        num_drafts=drafts,
        num_draft_tokens=tokens,
        num_accepted_tokens=accepted,
        method=f"{what}: mean acceptance length 1 + accepted / drafts inverted (no per-position rates)",
        notes=(how,),
    )


def _rates_only(
    x: Summary, *, source: str, where: str, labels: Labels, gamma: int | None, level: float, what: str
) -> AlphaReading:
    """An early printout (the mean length and the rates, no counts): the MLE's point
    ``sum(r) / (1 + sum(r[:-1]))`` (:func:`sdsl.measure.estimators.alpha_from_position_counts` divided
    through by the drafts), no interval (the number of drafts is not printed)."""
    k = len(x.rates)
    if gamma is not None and gamma != k:
        raise ValueError(
            f"{shown('gamma')} {gamma} conflicts with k = {k} ({k} per-position rates) in {where} line {x.lineno}: "
            f"drop {shown('gamma')}, which is for exports that do not carry k"
        )
    for i in range(1, k):
        if x.rates[i] > x.rates[i - 1] + 0.01:
            raise ValueError(f"{where} line {x.lineno}: the rate at position {i} exceeds the one at position {i - 1}")
    total = 1.0 + sum(x.rates[:-1])
    a = sum(x.rates) / total
    est = AlphaEstimate(
        a,
        float("nan"),
        float("nan"),
        float("nan"),
        n=0,
        method="position_rates_only",
        interval="none (no count of drafts)",
        level=level,
    )
    return AlphaReading(
        source=source,
        path=where,
        labels=labels,
        gamma=k,
        estimate=est,
        method=f"{what}: per-position rates only, sum(r) / (1 + sum(r[:-1])) (the MLE with the drafts divided out)",
        position_rates=tuple(r / p if p > 0 else 0.0 for r, p in zip(x.rates, (1.0, *x.rates[:-1]))),
        notes=("no count of drafts in the printout: no sampling interval can be given; the rates have 2 decimals",),
    )


def _read(
    summaries: list[Summary],
    path: str,
    *,
    source: str,
    rounding: float,
    gamma: int | None,
    level: float,
    detected_by: str,
    what: str,
) -> EngineRead:
    readings = []
    for x in summaries:
        labels: Labels = (("line", str(x.lineno)),) if len(summaries) > 1 else ()
        readings.append(
            _reading(
                x, source=source, where=path, labels=labels, rounding=rounding, gamma=gamma, level=level, what=what
            )
        )
    note = "several summaries in one file: each is read on its own (they are separate runs)"
    return EngineRead(path, source, detected_by, tuple(readings), (), (note,) if len(summaries) > 1 else ())


def read_spec_decode_example(
    text: str, path: str, *, level: float = 0.95, gamma: int | None = None, detected_by: str = ""
) -> EngineRead:
    """One reading per ``spec_decode.py`` summary of the file."""
    return _read(
        parse_spec_decode_example(text, path),
        path,
        source="vllm-spec-decode",
        rounding=EXAMPLE_ROUNDING,
        gamma=gamma,
        level=level,
        detected_by=detected_by,
        what="spec_decode.py printout",
    )


def read_bench_text(
    text: str, path: str, *, level: float = 0.95, gamma: int | None = None, detected_by: str = ""
) -> EngineRead:
    """One reading per ``Speculative Decoding`` section of a ``vllm bench serve`` printout."""
    return _read(
        parse_bench_text(text, path),
        path,
        source="vllm-bench-text",
        rounding=BENCH_ROUNDING,
        gamma=gamma,
        level=level,
        detected_by=detected_by,
        what="vllm bench serve printout",
    )
