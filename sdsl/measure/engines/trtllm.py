"""TensorRT-LLM's ``trtllm-serve`` ``/metrics``: alpha by inverting the mean acceptance length
(chain drafts only).

``tensorrt_llm/metrics/collector.py`` (``MetricsCollector.log_iteration_stats``) exports, labelled
by ``model_name`` and ``engine_type``:

* ``trtllm_spec_decode_num_draft_tokens_total`` and ``trtllm_spec_decode_num_accepted_tokens_total``:
  counters of draft tokens proposed and accepted (bonus excluded), incremented per iteration only
  when positive and created on the first increment (a fresh server shows only their ``# TYPE``);
* ``trtllm_spec_decode_acceptance_length``: a gauge of the *last iteration's* acceptance length
  ``(accepted + requests with drafts) / requests with drafts`` (bonus included);
* no count of verification steps (``numRequestsWithDraftTokens`` stays in the JSON iteration
  stats) and no per-position counts.

With ``k`` the draft length (``--gamma``, or the ``max_draft_len`` label of
``trtllm_speculative_config_info`` when exported; a ``--gamma`` that differs from it is refused)
the steps are ``draft tokens / k``, the mean acceptance length ``1 + k x accepted / draft tokens``,
inverted with its delta-method interval
(:func:`sdsl.measure.estimators.alpha_from_mean_tokens`). Drafts shorter than ``k`` mean more steps than
``draft tokens / k``: the estimate is then too high, which the reading says when ``draft tokens``
is not a multiple of ``k``. The gauge alone gives a point for one iteration only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from sdsl.measure.engines import estimate as E
from sdsl.measure.engines.prometheus import Scrape, counter_values, delta_values
from sdsl.measure.engines.types import (
    EngineRead,
    Labels,
    ShortDrafts,
    Skipped,
    label_text,
)
from sdsl.validation import shown

__all__ = ["read_trtllm", "PREFIX"]

PREFIX = "trtllm_"


def _k_from_info(scrape: Scrape) -> int | None:
    for s in scrape.samples:
        if s.name == f"{PREFIX}speculative_config_info":
            v = dict(s.labels).get("max_draft_len")
            if v is not None and v.isdigit() and int(v) > 0:
                return int(v)
    return None


def read_trtllm(
    scrapes: Sequence[Scrape],
    paths: Sequence[str],
    *,
    level: float = 0.95,
    gamma: int | None = None,
    delta: bool = False,
    detected_by: str = "",
) -> EngineRead:
    """One reading per label set of the spec-decode counters (or of the gauge when no counter)."""
    last = scrapes[-1]
    where = paths[-1] if not delta else f"{paths[0]} .. {paths[-1]}"
    if not last.has_prefix(f"{PREFIX}spec_decode"):
        raise ValueError(f"{where}: no trtllm_spec_decode_* metric (is speculative decoding on?)")
    k_info = _k_from_info(last)
    if gamma is not None and k_info is not None and gamma != k_info:
        raise ValueError(
            f"{where}: {shown('gamma')} {gamma} conflicts with max_draft_len = {k_info} of "
            f"{PREFIX}speculative_config_info: drop {shown('gamma')} (the export carries k) or correct it"
        )
    k = gamma if gamma is not None else k_info
    notes: list[str] = []
    series: dict[str, dict[Labels, float]] = {}
    for kind, name in (("draft", "spec_decode_num_draft_tokens"), ("accepted", "spec_decode_num_accepted_tokens")):
        after = counter_values(last, PREFIX + name)
        if delta:
            if len(scrapes) < 2:
                raise ValueError("--delta needs at least two scrapes of one server (earlier first)")
            vals, nts = delta_values(counter_values(scrapes[0], PREFIX + name), after, names=(paths[0], paths[-1]))
            notes += nts
        else:
            vals = {key: v for key, (v, _) in after.items()}
        series[kind] = vals
    gauges = {s.labels: s.value for s in last.samples if s.name == f"{PREFIX}spec_decode_acceptance_length"}
    readings, skipped = [], []
    keys = list(dict.fromkeys([*series["draft"], *gauges]))
    if not keys:
        skipped.append(
            Skipped(
                (),
                "idle: the spec-decode counters are declared but have no sample yet (they are "
                "created on the first speculative step)",
            )
        )
    for key in keys:
        dt, acc = series["draft"].get(key), series["accepted"].get(key, 0.0)
        k_key, k_note = k, ()
        if k_key is None:
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
            steps = dt / k_key
            short: ShortDrafts | None = None
            extra = []
            if not float(dt / k_key).is_integer():
                short = ShortDrafts(
                    int(math.ceil(steps)) * k_key - int(dt), 1, int(math.ceil(steps)), float("nan"), float("nan")
                )
                extra.append(
                    f"draft tokens ({dt:.0f}) are not a multiple of k = {k_key}: some drafts were shorter "
                    "than k, the steps are more than draft tokens / k and the estimate is too high"
                )
            try:
                r = E.from_mean_length(
                    source="trtllm-prometheus",
                    path=where,
                    labels=key,
                    mean_length=1 + acc / steps,
                    k=int(k_key),
                    n_iterations=steps,
                    level=level,
                    num_drafts=steps,
                    num_draft_tokens=dt,
                    num_accepted_tokens=acc,
                    method="1 + k x accepted / draft tokens (steps = draft tokens / k) inverted",
                    notes=(
                        "TensorRT-LLM exports no count of verification steps: every draft is taken as k long",
                        *k_note,
                        *extra,
                    ),
                )
            except ValueError as exc:
                skipped.append(Skipped(key, f"inconsistent: {str(exc).split(': ', 1)[-1]}"))
                continue
            readings.append(r if short is None else replace(r, short_drafts=short))
        elif key in gauges and gauges[key] >= 1.0 and not delta:
            readings.append(
                E.from_mean_length(
                    source="trtllm-prometheus",
                    path=where,
                    labels=key,
                    mean_length=gauges[key],
                    k=int(k_key),
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
