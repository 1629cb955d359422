"""TensorRT-LLM's ``trtllm-serve`` Prometheus text (``GET /prometheus/metrics``; ``GET /metrics`` is
the iteration-stats JSON, :mod:`.trtllm_stats`): alpha from the per-position counters where they
are exported, else by inverting the mean acceptance length (chain drafts only).

``tensorrt_llm/metrics/collector.py`` (``MetricsCollector``) exports, labelled by ``model_name``
and ``engine_type``:

* ``trtllm_spec_decode_drafted_tokens_total{token_position="i"}`` and
  ``trtllm_spec_decode_accepted_tokens_total{token_position="i"}`` (TensorRT-LLM PR #12636,
  ``log_request_metrics_dict``): per finished request, the drafts that had a token at 0-based
  position ``i`` and the drafts whose token there was accepted (the prefix, as vLLM's
  ``num_accepted_tokens_per_pos``); a counter is only incremented by a positive value, so a
  position never accepted has no accepted sample (read as 0);
* ``trtllm_spec_decode_num_draft_tokens_total`` and ``trtllm_spec_decode_num_accepted_tokens_total``
  (``log_iteration_stats``): counters of draft tokens proposed and accepted (bonus excluded),
  created on the first increment (a fresh server shows only their ``# TYPE``);
* ``trtllm_spec_decode_acceptance_length``: a gauge of the *last iteration's* acceptance length
  ``(accepted + requests with drafts) / requests with drafts`` (bonus included);
* ``trtllm_speculative_config_info{max_draft_len=...}`` (PR #12545): the draft length ``k``.

Per-position counters (:func:`_from_positions`): the drafts are ``drafted[0]`` exactly and the
evaluated positions ``drafts + sum_i trials_i`` with ``trials_i`` the drafts that had position
``i`` and accepted every earlier one. When every draft had ``k`` tokens (``drafted[i] = drafts``)
``trials_i = accepted[i-1]`` and the MLE is exact (:func:`sdsl.measure.estimators.
alpha_from_position_counts`); otherwise ``trials_i`` lies between ``accepted[i-1]`` less the drafts
that ended at ``i`` accepted in full and ``min(accepted[i-1], drafted[i])``, and the interval
covers the range.

Totals only: with ``k`` the draft length (``--gamma``, or ``max_draft_len``; a ``--gamma`` that
differs from it is refused) the steps are ``draft tokens / k``, the mean acceptance length
``1 + k x accepted / draft tokens``, inverted with its delta-method interval
(:func:`sdsl.measure.estimators.alpha_from_mean_tokens`). Counting every draft as ``k`` long gives
the highest alpha the totals allow (a short draft has fewer chances to be rejected). Draft tokens
that are not a multiple of ``k`` prove a short draft: the steps are then at least
``ceil(draft tokens / k)``, which gives the lower end; more short drafts, which would lower alpha
further, cannot be excluded without a count of steps, and the reading says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.prometheus import Scrape, counter_values, delta_values
from sdsl.measure.engines.types import (
    AlphaReading,
    EngineRead,
    Labels,
    ShortDrafts,
    Skipped,
    label_text,
)
from sdsl.measure.estimators import alpha_from_position_counts, alpha_from_trial_bounds, constant_alpha_test
from sdsl.validation import shown

__all__ = ["read_trtllm", "PREFIX", "POSITION_LABEL"]

PREFIX = "trtllm_"
#: The label of the per-position counters.
POSITION_LABEL = "token_position"


def _k_from_info(scrape: Scrape) -> int | None:
    for s in scrape.samples:
        if s.name == f"{PREFIX}speculative_config_info":
            v = dict(s.labels).get("max_draft_len")
            if v is not None and v.isdigit() and int(v) > 0:
                return int(v)
    return None


def _per_position(vals: dict[Labels, float], name: str, where: str) -> dict[Labels, dict[int, float]]:
    """``{labels without token_position: {position: value}}`` of one per-position counter."""
    out: dict[Labels, dict[int, float]] = {}
    for labels, v in vals.items():
        d = dict(labels)
        raw = d.pop(POSITION_LABEL, None)
        if raw is None or not raw.isdigit():
            raise ValueError(f"{where}: {name} sample without a whole {POSITION_LABEL} label: {label_text(labels)}")
        if not math.isfinite(v) or v < 0 or v != round(v):
            raise ValueError(f"{where}: {name} ({label_text(labels)}) must be a whole count >= 0, got {v!r}")
        out.setdefault(tuple(sorted(d.items())), {})[int(raw)] = v
    return out


def _from_positions(
    key: Labels, drafted: dict[int, float], accepted: dict[int, float], k_cfg: int | None, where: str, level: float
) -> AlphaReading:
    """Alpha from the per-position drafted and accepted counters of one series (module docstring)."""
    at = f"{where} ({label_text(key)})"
    m = max([*drafted, *accepted]) + 1
    k = max(m, k_cfg or 0)
    g = [drafted.get(i, 0.0) for i in range(k)]
    a = [accepted.get(i, 0.0) for i in range(k)]
    d = g[0]
    if d <= 0:
        raise ValueError(f"{at}: no draft at position 0 ({PREFIX}spec_decode_drafted_tokens_total)")
    for i in range(k):
        if a[i] > g[i]:
            raise ValueError(f"{at}: position {i} accepted {a[i]:.0f} of {g[i]:.0f} drafted tokens")
        if i and g[i] > g[i - 1]:
            raise ValueError(
                f"{at}: drafted at position {i} ({g[i]:.0f}) > drafted at position {i - 1} ({g[i - 1]:.0f}); a draft "
                "has every position before its last"
            )
        if i and a[i] > a[i - 1]:
            raise ValueError(
                f"{at}: accepted at position {i} ({a[i]:.0f}) > accepted at position {i - 1} ({a[i - 1]:.0f}); a "
                "position is only reached when the previous one was accepted"
            )
    s = sum(a)
    hi = [min(a[i - 1], g[i]) for i in range(1, k)]
    lo = [max(a[i - 1] - min(g[i - 1] - g[i], a[i - 1] - a[i]), a[i]) for i in range(1, k)]
    t_hi, t_lo = d + sum(hi), d + sum(lo)
    dt = sum(g)
    n_short = int(d - g[k - 1])
    if t_lo == t_hi:
        est = alpha_from_position_counts([int(x) for x in a], int(d), level=level) if n_short == 0 else None
        if est is None:
            est = alpha_from_trial_bounds(s, t_hi, t_hi, t_hi, level=level, n=int(d), method="mle_position_counts")
    else:
        est = alpha_from_trial_bounds(
            s, t_hi, max(t_lo, s), t_hi, level=level, n=int(d), method="mle_position_counts_bounded"
        )
    trials = [d, *hi]
    test = (
        constant_alpha_test(accepted_per_pos=[int(x) for x in a], num_drafts=int(d)) if k > 1 and n_short == 0 else None
    )
    rates = test.rates if test is not None else tuple(x / t for x, t in zip(a, trials) if t > 0)
    short = ShortDrafts(
        int(k * d - dt),
        n_short,
        n_short,
        s / t_hi if t_hi > 0 else 0.0,
        s / max(t_lo, s) if s > 0 else 0.0,
    )
    notes = [f"k = {k}: the longest draft position counted" + (f" (max_draft_len {k_cfg})" if k_cfg else "")]
    if n_short:
        notes.append(
            f"{n_short} of {d:.0f} drafts shorter than k (drafted per position: "
            + ", ".join(f"{x:.0f}" for x in g)
            + "): which of them were accepted in full is not exported; the interval covers every case"
        )
    return AlphaReading(
        source="trtllm-prometheus",
        path=where,
        labels=key,
        gamma=k,
        estimate=est,
        method=f"per-position counters ({PREFIX}spec_decode_{{drafted,accepted}}_tokens_total{{{POSITION_LABEL}}}), "
        "truncated-geometric MLE",
        num_drafts=d,
        num_draft_tokens=dt,
        num_accepted_tokens=s,
        position_rates=rates,
        constant_alpha=test,
        short_drafts=short,
        notes=tuple(notes),
    )


def _from_totals(
    key: Labels, dt: float, acc: float, k: int, where: str, level: float
) -> tuple[AlphaReading, ShortDrafts | None]:
    """Alpha from the draft and accepted token totals with ``k`` (module docstring): the reading and,
    when the draft tokens are not a multiple of ``k``, its short-draft record."""
    steps = dt / k

    def inverted(n: float, notes: tuple[str, ...] = ()) -> AlphaReading:
        return E.from_mean_length(
            source="trtllm-prometheus",
            path=where,
            labels=key,
            mean_length=1 + acc / n,
            k=int(k),
            n_iterations=n,
            level=level,
            num_drafts=n,
            num_draft_tokens=dt,
            num_accepted_tokens=acc,
            method="1 + k x accepted / draft tokens (steps = draft tokens / k) inverted",
            notes=notes,
        )

    notes = ["TensorRT-LLM exports no count of verification steps here: every draft is taken as k long"]
    if float(steps).is_integer():
        return inverted(steps, tuple(notes)), None
    n_min = math.ceil(steps)
    low, high = inverted(n_min), inverted(steps)
    lo_e, hi_e = low.estimate, high.estimate
    est = replace(
        lo_e,
        ci_low=min(lo_e.ci_low, hi_e.ci_low),
        ci_high=max(lo_e.ci_high, hi_e.ci_high),
        interval="wald_delta_union_over_steps",
    )
    missing = int(n_min * k - dt)
    short = ShortDrafts(
        missing,
        1,
        None,
        lo_e.alpha,
        hi_e.alpha,
        detail=(
            f"counted as {n_min} drafts of k tokens (the fewest the draft tokens allow, one of them short) alpha is "
            f"{lo_e.alpha:.4f}, with draft tokens / k = {steps:.2f} drafts {hi_e.alpha:.4f}; the interval covers both. "
            "The export has no count of steps, so more short drafts, which would lower alpha further, cannot be "
            "excluded: the per-position counters of /prometheus/metrics or the iteration stats of GET /metrics "
            "carry it"
        ),
    )
    notes.append(
        f"draft tokens ({dt:.0f}) are not a multiple of k = {k}: at least one draft was shorter than k, the steps "
        f"are at least {n_min}"
    )
    r = replace(low, estimate=est, short_drafts=short, notes=low.notes + tuple(notes))
    return r, short


def read_trtllm(
    scrapes: Sequence[Scrape],
    paths: Sequence[str],
    *,
    level: float = 0.95,
    gamma: int | None = None,
    delta: bool = False,
    detected_by: str = "",
) -> EngineRead:
    """One reading per label set: from the per-position counters when exported, else from the
    token totals (or the gauge when no counter)."""
    last = scrapes[-1]
    where = paths[-1] if not delta else f"{paths[0]} .. {paths[-1]}"
    if not last.has_prefix(f"{PREFIX}spec_decode"):
        raise ValueError(f"{where}: no trtllm_spec_decode_* metric (is speculative decoding on?)")
    if delta and len(scrapes) < 2:
        raise ValueError("--delta needs at least two scrapes of one server (earlier first)")
    k_info = _k_from_info(last)
    if gamma is not None and k_info is not None and gamma != k_info:
        raise ValueError(
            f"{where}: {shown('gamma')} {gamma} conflicts with max_draft_len = {k_info} of "
            f"{PREFIX}speculative_config_info: drop {shown('gamma')} (the export carries k) or correct it"
        )
    k = gamma if gamma is not None else k_info
    notes: list[str] = []

    def values(name: str) -> dict[Labels, float]:
        after = counter_values(last, PREFIX + name)
        if not delta:
            return {key: v for key, (v, _) in after.items()}
        vals, nts = delta_values(counter_values(scrapes[0], PREFIX + name), after, names=(paths[0], paths[-1]))
        notes.extend(n for n in nts if n not in notes)
        return vals

    series = {"draft": values("spec_decode_num_draft_tokens"), "accepted": values("spec_decode_num_accepted_tokens")}
    pos_drafted = _per_position(values("spec_decode_drafted_tokens"), f"{PREFIX}spec_decode_drafted_tokens", where)
    pos_accepted = _per_position(values("spec_decode_accepted_tokens"), f"{PREFIX}spec_decode_accepted_tokens", where)
    gauges = {s.labels: s.value for s in last.samples if s.name == f"{PREFIX}spec_decode_acceptance_length"}
    readings, skipped = [], []
    for key, drafted in pos_drafted.items():
        try:
            readings.append(_from_positions(key, drafted, pos_accepted.get(key, {}), k, where, level))
        except ValueError as exc:
            skipped.append(Skipped(key, f"inconsistent: {str(exc).split(': ', 1)[-1]}"))
    done = set(pos_drafted)
    keys = [x for x in dict.fromkeys([*series["draft"], *gauges]) if x not in done]
    if not keys and not pos_drafted:
        skipped.append(
            Skipped(
                (),
                "idle: the spec-decode counters are declared but have no sample yet (they are "
                "created on the first speculative step)",
            )
        )
    for key in keys:
        dt, acc = series["draft"].get(key), series["accepted"].get(key, 0.0)
        if k is None:
            hint = ""
            if dt and acc and key in gauges and gauges[key] > 1.0:
                # a hint only: one iteration's acceptance length is too noisy to set k from
                hint = (
                    f"; the last iteration's acceptance length suggests about {(gauges[key] - 1.0) * dt / acc:.1f} "
                    "draft tokens per step"
                )
            skipped.append(
                Skipped(key, f"k (the draft length) is not in the scrape: give --gamma K (max_draft_len){hint}")
            )
            continue
        if dt:
            try:
                r, _ = _from_totals(key, dt, acc, int(k), where, level)
            except ValueError as exc:
                skipped.append(Skipped(key, f"inconsistent: {str(exc).split(': ', 1)[-1]}"))
                continue
            readings.append(r)
        elif key in gauges and gauges[key] >= 1.0 and not delta:
            readings.append(
                E.from_mean_length(
                    source="trtllm-prometheus",
                    path=where,
                    labels=key,
                    mean_length=gauges[key],
                    k=int(k),
                    n_iterations=None,
                    level=level,
                    method="trtllm_spec_decode_acceptance_length gauge inverted",
                    notes=("the gauge is the last iteration's acceptance length only",),
                )
            )
        else:
            skipped.append(Skipped(key, "idle: no draft token counted"))
    for key, g in gauges.items():
        if key in series["draft"] and k is not None and g >= 1.0:
            try:
                a = E.invert_mean_length(min(g, k + 1.0), int(k))
                notes.append(
                    f"{label_text(key)}: the last iteration's acceptance length {g:.4g} inverts to "
                    f"alpha {a:.4f} (one iteration, no interval)"
                )
            except ValueError:
                pass
    return EngineRead(where, "trtllm-prometheus", detected_by, tuple(readings), tuple(skipped), tuple(notes))
