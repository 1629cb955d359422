"""SGLang's ``/metrics``: alpha by inverting the mean acceptance length (chain drafts only).

SGLang exports no per-position counts. Its scheduler (``python/sglang/srt/metrics/collector.py``,
``SchedulerMetricsCollector``) sets two *interval* gauges at every decode log interval:

* ``sglang:spec_accept_length`` = accepted tokens / verification steps of the interval, the bonus
  token included: the mean acceptance length ``E(alpha, k)`` (method notes, section 1);
* ``sglang:spec_accept_rate`` = accepted tokens / (steps x ``speculative_num_draft_tokens``),
  so ``accept_length / accept_rate`` is ``speculative_num_draft_tokens``, ``k + 1`` for a chain.

A gauge has no count: inverted alone it gives alpha with no sampling interval, and only for the
last interval (a windowed value). Recent SGLang also counts ``sglang:spec_verify_calls_total``
(verification steps), ``sglang:generation_tokens_total`` and ``sglang:num_requests_total``: then
the mean acceptance length of the whole run is ``(generation tokens - requests) / verify calls``
(each request's first token comes from the prefill) over ``verify calls`` steps, which gives the
delta-method interval of :func:`sdsl.measure.estimators.alpha_from_mean_tokens`. It is slightly low when
requests stop in the middle of a step (a stop string or ``max_tokens``).

Newer SGLang (``python/sglang/srt/observability/metrics_collector.py``) also sets the gauges
``sglang:spec_num_steps`` (the active ``speculative_num_steps``) and ``sglang:spec_num_draft_tokens``
(the active ``speculative_num_draft_tokens``): then ``k`` is ``spec_num_steps``, read directly
instead of inverting the two acceptance gauges, and the draft is known to be a chain when
``spec_num_draft_tokens = spec_num_steps + 1`` (a tree, ``topk > 1``, otherwise: alpha is then the
per-step rate of a chain of ``spec_num_steps`` tokens with the same mean acceptance length).
``spec_num_steps = 0`` is a server without speculative decoding. A ``--gamma`` other than
``spec_num_steps`` is refused naming both. Both gauges are the *current* tier: with adaptive
speculative decoding earlier steps of the run may have used another ``k`` (the reading says so).

Without them, ``k`` is ``--gamma`` if given (the reading says when it overrides the gauges), else
``accept_length / accept_rate - 1``, which is ``speculative_num_draft_tokens - 1``: the draft length
of a chain (``speculative_eagle_topk = 1``, ``num_draft_tokens = num_steps + 1``). A tree draft also gives a whole ratio but more draft tokens
than steps; the gauges cannot tell, so the reading says that ``k`` assumes a chain (give
``--gamma`` with the number of steps otherwise). A ratio that is not a whole number (gauges of
different intervals) is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.prometheus import Scrape, counter_values, delta_values
from sdsl.measure.engines.types import EngineRead, Labels, Skipped, label_text
from sdsl.validation import shown

__all__ = ["read_sglang", "PREFIX"]

PREFIX = "sglang:"


def _gauges(scrape: Scrape, name: str) -> dict[Labels, float]:
    return {s.labels: s.value for s in scrape.samples if s.name == name}


def _model(labels: Labels) -> str:
    return dict(labels).get("model_name", "")


def _k_from_gauges(length: float, rate: float, gamma: int | None, where: str) -> int:
    if gamma is not None:
        return int(gamma)
    if rate <= 0:
        raise ValueError(f"{where}: spec_accept_rate is {rate}: k cannot be told; give --gamma K")
    ratio = length / rate
    if abs(ratio - round(ratio)) > 1e-6 * max(ratio, 1.0) or round(ratio) < 2:
        raise ValueError(
            f"{where}: spec_accept_length / spec_accept_rate = {ratio:.6g} is not a whole number "
            "of draft tokens per step: k cannot be told (the inversion is valid for chain drafts only); "
            "give --gamma K for a chain draft of K tokens"
        )
    return int(round(ratio)) - 1


def _gamma_note(gamma: int, from_gauges: int | None) -> str:
    """What ``k`` the reading uses when ``gamma`` is given, and what the gauges said."""
    if from_gauges is None or from_gauges == gamma:
        return f"k = {gamma} from {shown('gamma')}"
    return (
        f"k = {gamma} from {shown('gamma')} overrides spec_accept_length / spec_accept_rate - 1 = {from_gauges} "
        f"(right for a tree draft of {gamma} steps; for a chain draft the gauges give its length)"
    )


def _k_from_config(
    steps: float, draft_tokens: float | None, gamma: int | None, where: str
) -> tuple[int | None, tuple[str, ...]]:
    """``k`` and its notes from the ``spec_num_steps`` / ``spec_num_draft_tokens`` gauges; ``None``
    when ``spec_num_steps`` is 0 (speculative decoding off)."""
    if steps < 0 or not float(steps).is_integer():
        raise ValueError(f"{where}: sglang:spec_num_steps must be a whole number >= 0, got {steps!r}")
    if steps == 0:
        return None, ()
    k = int(steps)
    if gamma is not None and gamma != k:
        raise ValueError(
            f"{shown('gamma')} {gamma} conflicts with k = {k} that {where} carries in sglang:spec_num_steps: "
            f"drop {shown('gamma')}, which is for exports that do not carry k"
        )
    notes = [f"k = {k} from sglang:spec_num_steps (the active speculative_num_steps)"]
    if draft_tokens is None:
        notes.append("no sglang:spec_num_draft_tokens gauge: a chain draft is assumed")
    elif draft_tokens == k + 1:
        notes.append(f"sglang:spec_num_draft_tokens = {k + 1} = k + 1: a chain draft")
    else:
        notes.append(
            f"sglang:spec_num_draft_tokens = {draft_tokens:g}, not k + 1 = {k + 1}: a tree draft (topk > 1); alpha "
            f"is the per-step rate of a chain of {k} tokens with the same mean acceptance length"
        )
    notes.append(
        "spec_num_steps is the currently active tier: with adaptive speculative decoding, earlier steps may "
        "have used another k"
    )
    return k, tuple(notes)


def read_sglang(
    scrapes: Sequence[Scrape],
    paths: Sequence[str],
    *,
    level: float = 0.95,
    gamma: int | None = None,
    delta: bool = False,
    detected_by: str = "",
) -> EngineRead:
    """One reading per model from the counters when exported, else per gauge series."""
    last = scrapes[-1]
    where = paths[-1] if not delta else f"{paths[0]} .. {paths[-1]}"
    lengths = _gauges(last, f"{PREFIX}spec_accept_length")
    rates = _gauges(last, f"{PREFIX}spec_accept_rate")
    steps_g = _gauges(last, f"{PREFIX}spec_num_steps")
    draft_g = _gauges(last, f"{PREFIX}spec_num_draft_tokens")
    if not lengths and not last.has_prefix(f"{PREFIX}spec_verify_calls"):
        raise ValueError(f"{where}: no sglang:spec_accept_length gauge (is speculative decoding on?)")
    names = ("spec_verify_calls", "generation_tokens", "num_requests")
    counts: dict[str, dict[Labels, float]] = {}
    notes: list[str] = []
    for n in names:
        after = counter_values(last, PREFIX + n)
        if delta:
            if len(scrapes) < 2:
                raise ValueError("--delta needs at least two scrapes of one server (earlier first)")
            vals, nts = delta_values(counter_values(scrapes[0], PREFIX + n), after, names=(paths[0], paths[-1]))
            notes += nts
        else:
            vals = {k: v for k, (v, _) in after.items()}
        by_model: dict[Labels, float] = {}
        for key, v in vals.items():
            m = (("model_name", _model(key)),) if _model(key) else ()
            by_model[m] = by_model.get(m, 0.0) + v
        counts[n] = by_model
    readings, skipped = [], []
    ks: dict[str, int] = {}
    ks_gauges: dict[str, int] = {}  # what the gauges say when --gamma overrides them
    k_notes: dict[str, tuple[str, ...]] = {}  # k read from spec_num_steps, per model
    for labels, steps in steps_g.items():
        at = f"{where} ({label_text(labels)})"
        k_cfg, k_cfg_notes = _k_from_config(steps, draft_g.get(labels), gamma, at)
        model = _model(labels)
        if k_cfg is None:
            skipped.append(Skipped(labels, "speculative decoding off: sglang:spec_num_steps is 0"))
            continue
        if ks.setdefault(model, k_cfg) != k_cfg:
            raise ValueError(
                f"{at}: sglang:spec_num_steps {k_cfg} differs from {ks[model]} of another rank of model {model!r}"
            )
        k_notes[model] = k_cfg_notes
    for labels, length in lengths.items():
        at = f"{where} ({label_text(labels)})"
        if _model(labels) in k_notes or labels in steps_g:  # k from spec_num_steps (or speculative decoding off)
            if _model(labels) in k_notes and length <= 0:
                skipped.append(
                    Skipped(labels, "idle: spec_accept_length is 0 (no speculative step in the last interval)")
                )
            continue
        if length <= 0:
            skipped.append(Skipped(labels, "idle: spec_accept_length is 0 (no speculative step in the last interval)"))
            continue
        try:
            ks.setdefault(_model(labels), _k_from_gauges(length, rates.get(labels, 0.0), gamma, at))
        except ValueError as exc:
            skipped.append(Skipped(labels, str(exc).split(": ", 1)[-1]))
        if gamma is not None:
            try:
                ks_gauges.setdefault(_model(labels), _k_from_gauges(length, rates.get(labels, 0.0), None, at))
            except ValueError:
                pass
    for model_key, v in counts["spec_verify_calls"].items():
        model = dict(model_key).get("model_name", "")
        g, r = counts["generation_tokens"].get(model_key), counts["num_requests"].get(model_key)
        if not v or g is None or r is None:
            continue
        k = ks.get(model) if model in k_notes else gamma if gamma is not None else ks.get(model)
        k_note = (
            k_notes[model]
            if model in k_notes
            else (_gamma_note(gamma, ks_gauges.get(model)),)
            if gamma is not None
            else (
                f"k = {k} from spec_accept_length / spec_accept_rate - 1 (speculative_num_draft_tokens - 1): assumes a "
                "chain draft; for a tree draft (topk > 1) give --gamma with the number of steps",
            )
        )
        if k is None:
            skipped.append(Skipped(model_key, "k unknown (no usable gauges): give --gamma K"))
            continue
        mean = (g - r) / v
        try:
            readings.append(
                E.from_mean_length(
                    source="sglang-prometheus",
                    path=where,
                    labels=model_key,
                    mean_length=mean,
                    k=int(k),
                    n_iterations=v,
                    level=level,
                    num_drafts=v,
                    method="(generation_tokens - num_requests) / spec_verify_calls inverted",
                    notes=(
                        "slightly low when requests stop within a step (stop strings, max_tokens)",
                        "SGLang exports no count of draft tokens: drafts shorter than k cannot be detected",
                        *k_note,
                    ),
                )
            )
        except ValueError as exc:
            skipped.append(Skipped(model_key, f"inconsistent: {str(exc).split(': ', 1)[-1]}"))
    counted = {dict(r.labels).get("model_name", "") for r in readings}
    seen: dict[tuple, Labels] = {}
    for labels, length in lengths.items():
        model = _model(labels)
        if length <= 0 or model in counted or model not in ks:
            continue
        # tensor- and pipeline-parallel ranks of one engine report the same gauges: read them once
        gauges_key = (
            tuple((k, v) for k, v in labels if k not in ("tp_rank", "pp_rank", "moe_ep_rank")),
            length,
            rates.get(labels),
        )
        if gauges_key in seen:
            skipped.append(
                Skipped(labels, f"the same gauges as {label_text(seen[gauges_key])} (another rank of one engine)")
            )
            continue
        seen[gauges_key] = labels
        readings.append(
            E.from_mean_length(
                source="sglang-prometheus",
                path=where,
                labels=labels,
                mean_length=length,
                k=ks[model],
                n_iterations=None,
                level=level,
                method="spec_accept_length gauge (last log interval) inverted",
                notes=(
                    "an interval gauge: it describes the last decode log interval only, not the run",
                    *(
                        k_notes[model]
                        if model in k_notes
                        else (_gamma_note(gamma, ks_gauges.get(model)),)
                        if gamma is not None
                        else (
                            f"k = {ks[model]} from spec_accept_length / spec_accept_rate - 1: assumes a chain draft; for "
                            "a tree draft (topk > 1) give --gamma with the number of steps",
                        )
                    ),
                ),
            )
        )
    return EngineRead(where, "sglang-prometheus", detected_by, tuple(readings), tuple(skipped), tuple(notes))
