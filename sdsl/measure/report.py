"""The report of ``sdsl alpha FILE...`` (:mod:`sdsl.cli` runs it): alpha with its interval from
whatever a serving engine wrote, and what the measured alpha implies through the plan.

For each file (:func:`sdsl.measure.engines.read_files`, format detected from the content): alpha
with its interval per model and engine, how it was obtained, the per-position conditional rates
with the constant-alpha test (:func:`sdsl.measure.estimators.constant_alpha_test`), how many drafts were
shorter than ``k`` and what that does, the idle or unusable series and why.

With the target and the draft behind the measurement (``--preset`` or ``--target-params``, and
``--draft-params``), what the measured alpha implies through the plan's cost model: the integer
``gamma*``, the speedup and ``N*`` (:mod:`sdsl.measure.implications`).

Exit status: 0 with at least one alpha, 1 when every series was idle or unusable, 2 on bad input
(one line on stderr).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sdsl.measure.implications import Implication, PlanContext, implications

__all__ = ["Report", "build_report", "report_text", "report_dict"]


@dataclass(frozen=True)
class Report:
    reads: tuple[Any, ...]
    implications: dict[tuple[int, int], Implication] = field(default_factory=dict)
    context: PlanContext = PlanContext()
    notes: tuple[str, ...] = ()

    @property
    def n_readings(self) -> int:
        return sum(len(r.readings) for r in self.reads)


#: No target and no draft: the report without implications.
_NO_CONTEXT = PlanContext()


def build_report(
    paths: Sequence[str],
    *,
    delta: bool = False,
    fmt: str | None = None,
    level: float = 0.95,
    gamma: int | None = None,
    seed: int = 0,
    context: PlanContext = _NO_CONTEXT,
) -> Report:
    """Read every file and compute the implications of each reading."""
    from sdsl.measure.engines.detect import read_files

    reads = tuple(read_files(list(paths), fmt=fmt, level=level, gamma=gamma, seed=seed, delta=delta))
    imps = {}
    for i, r in enumerate(reads):
        for j, x in enumerate(r.readings):
            e = x.estimate
            imp = implications(e.alpha, (e.ci_low, e.ci_high), x.gamma, context)
            if imp is not None:
                imps[(i, j)] = imp
    notes = []
    if not delta and len(reads) > 1:
        by_labels = [frozenset(x.labels for x in r.readings) for r in reads]
        if any(a & b for i, a in enumerate(by_labels) for b in by_labels[i + 1 :]):
            notes.append(
                "several files report the same series; their counters are cumulative: use --delta for the "
                "traffic between successive scrapes"
            )
    return Report(reads, imps, context, tuple(notes))


def _fmt(x: float | None, spec: str = ".4f") -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def _who(x) -> str:
    d = dict(x.labels)
    parts = [f"model {x.model}" if x.model else None, f"engine {d['engine']}" if "engine" in d else None]
    rest = [f"{k}={v}" for k, v in x.labels if k not in ("model_name", "model", "engine")]
    head = ", ".join(p for p in parts if p)
    if not head:
        return ", ".join(rest) or "(no labels)"
    return head + (f" ({', '.join(rest)})" if rest else "")


def report_text(rep: Report) -> str:
    """The human-readable report."""
    from sdsl.measure.engines.detect import FORMATS

    out = []
    pct = None
    for i, r in enumerate(rep.reads):
        out.append(f"{r.path}: {FORMATS.get(r.source, r.source)}" + (f" [{r.detected_by}]" if r.detected_by else ""))
        for j, x in enumerate(r.readings):
            e = x.estimate
            pct = f"{100 * e.level:g} %"
            counts = f"k = {x.gamma}" if x.gamma else "k unknown"
            if x.num_drafts:
                counts += f", {x.num_drafts:.0f} drafts"
            out.append(
                f"  {_who(x)}: alpha = {_fmt(e.alpha)}, {pct} interval [{_fmt(e.ci_low)}, {_fmt(e.ci_high)}] ({counts})"
            )
            out.append(f"    method: {x.method}")
            if x.mean_acceptance_length is not None:
                out.append(f"    mean acceptance length (bonus token included): {x.mean_acceptance_length:.4f}")
            if x.bootstrap is not None:
                b = x.bootstrap
                out.append(
                    f"    bootstrap over {b.extra.get('n_prompts', '?')} requests: [{_fmt(b.ci_low)}, "
                    f"{_fmt(b.ci_high)}]"
                )
            if x.position_rates:
                rates = " ".join(f"{v:.3f}" for v in x.position_rates)
                out.append(f"    conditional rate at positions 1..{len(x.position_rates)}: {rates}")
            t = x.constant_alpha
            if t is not None and t.p_value is None:
                out.append(
                    f"    constant alpha across positions: chi-square {t.statistic:.3g} (dof {t.dof}); "
                    "no p-value: scipy is not installed (pip install 'sdsl[analysis]')"
                )
            elif t is not None:
                verdict = "rejected" if t.rejects() else "not rejected"
                out.append(
                    f"    constant alpha across positions: chi-square {t.statistic:.3g} (dof {t.dof}), "
                    f"p = {t.p_value:.3g}: {verdict} at 5 %"
                )
            if x.short_drafts is not None:
                out.append(f"    drafts shorter than k: {x.short_drafts.effect()}")
            if x.chain_only:
                out.append("    valid for chain drafts only (alpha inverts the mean acceptance length)")
            for n in x.notes:
                if not n.startswith("inverts the mean acceptance length"):
                    out.append(f"    note: {n}")
            imp = rep.implications.get((i, j))
            if imp is not None:
                out += _implication_lines(imp, rep.context)
        for s in r.skipped:
            who = ", ".join(f"{k}={v}" for k, v in s.labels) or "(no labels)"
            out.append(f"  skipped {who}: {s.reason}")
        for n in r.notes:
            out.append(f"  note: {n}")
    for n in rep.notes:
        out.append(f"note: {n}")
    if rep.n_readings == 0:
        out.append("no alpha: every series is idle or unusable (see 'skipped' above)")
    elif not rep.context.active:
        out.append(
            "for the integer gamma*, the speedup and N* this alpha implies, give the target (--preset NAME or "
            "--target-params M) and the measured draft's size (--draft-params N)"
        )
    return "\n".join(out)


def _implication_lines(imp: Implication, ctx: PlanContext) -> list[str]:
    lines = [f"    plan ({ctx.target_name}, draft N = {ctx.draft_params:.4g}; cost 2N gamma + 2M, Eq. 9):"]
    rng = imp.gamma_star_range
    no_ci = imp.alpha_range[0] == imp.alpha_range[1]
    span = (
        "no interval"
        if no_ci
        else (f"{rng[0]}" if rng[0] == rng[1] else f"{rng[0]} to {rng[1]}") + " over the interval of alpha"
    )
    lines.append(
        f"      integer gamma* = {imp.gamma_star} ({span}), speedup {imp.speedup_star:.3f}x in tokens per FLOP"
    )
    if imp.gamma_engine and imp.speedup_engine is not None:
        lines.append(f"      at the engine's k = {imp.gamma_engine}: speedup {imp.speedup_engine:.3f}x")
    if imp.n_star is not None and imp.n_star_range is not None:  # set together
        lo, hi = imp.n_star_range
        span = "no interval" if no_ci else f"{lo:.4g} to {hi:.4g} over the interval of alpha"
        lines.append(
            f"      N* = {imp.n_star:.4g} parameters ({span}), "
            f"gamma {imp.gamma_at_n_star:.0f}, speedup {imp.speedup_at_n_star:.3f}x (Eq. 5 plane through the "
            f"measurement: C = {imp.plane_intercept:.4f})"
        )
    if imp.note:
        lines.append(f"      {imp.note}")
    return lines


def _num(x: Any) -> Any:
    if isinstance(x, float):
        return None if math.isnan(x) or math.isinf(x) else x
    if isinstance(x, (tuple, list)):
        return [_num(v) for v in x]
    if isinstance(x, dict):
        return {k: _num(v) for k, v in x.items()}
    return x


def report_dict(rep: Report) -> dict:
    """The report as one JSON-ready dict (NaN as null)."""
    files = []
    for i, r in enumerate(rep.reads):
        readings = []
        for j, x in enumerate(r.readings):
            e = x.estimate
            t = x.constant_alpha
            sd = x.short_drafts
            imp = rep.implications.get((i, j))
            readings.append(
                {
                    "labels": dict(x.labels),
                    "model": x.model,
                    "engine": x.engine,
                    "k": x.gamma,
                    "alpha": e.alpha,
                    "se": e.se,
                    "ci": [e.ci_low, e.ci_high],
                    "level": e.level,
                    "method": x.method,
                    "estimator": e.method,
                    "interval": e.interval,
                    "num_drafts": x.num_drafts,
                    "num_draft_tokens": x.num_draft_tokens,
                    "num_accepted_tokens": x.num_accepted_tokens,
                    "mean_acceptance_length": x.mean_acceptance_length,
                    "position_rates": list(x.position_rates),
                    "constant_alpha": None
                    if t is None
                    else {
                        "chi2": t.statistic,
                        "dof": t.dof,
                        "p_value": t.p_value,
                        "rejected_at_5pct": None if t.p_value is None else t.rejects(),
                    },
                    "short_drafts": None
                    if sd is None
                    else {
                        "missing_tokens": sd.missing_tokens,
                        "drafts_min": sd.drafts_min,
                        "drafts_max": sd.drafts_max,
                        "alpha_full": sd.alpha_full,
                        "alpha_upper": sd.alpha_upper,
                        "exact": sd.exact,
                        "effect": sd.effect(),
                    },
                    "chain_only": x.chain_only,
                    "bootstrap": None
                    if x.bootstrap is None
                    else {
                        "alpha": x.bootstrap.alpha,
                        "se": x.bootstrap.se,
                        "ci": [x.bootstrap.ci_low, x.bootstrap.ci_high],
                        "requests": x.bootstrap.extra.get("n_prompts"),
                    },
                    "notes": list(x.notes),
                    "plan": None
                    if imp is None
                    else {
                        "gamma_star": imp.gamma_star,
                        "gamma_star_range": list(imp.gamma_star_range),
                        "speedup_at_gamma_star": imp.speedup_star,
                        "k": imp.gamma_engine,
                        "speedup_at_k": imp.speedup_engine,
                        "n_star": imp.n_star,
                        "n_star_range": None if imp.n_star_range is None else list(imp.n_star_range),
                        "gamma_at_n_star": imp.gamma_at_n_star,
                        "speedup_at_n_star": imp.speedup_at_n_star,
                        "plane_intercept_C": imp.plane_intercept,
                        "note": imp.note or None,
                    },
                }
            )
        files.append(
            {
                "path": r.path,
                "format": r.source,
                "detected_by": r.detected_by,
                "readings": readings,
                "skipped": [{"labels": dict(s.labels), "reason": s.reason} for s in r.skipped],
                "notes": list(r.notes),
            }
        )
    c = rep.context
    ctx = (
        None
        if not c.active
        else {
            "target": c.target_name,
            "target_params": c.target_params,
            "target_tokens": c.target_tokens,
            "draft_params": c.draft_params,
            "draft_tokens": c.draft_tokens,
        }
    )
    return _num({"files": files, "plan_inputs": ctx, "notes": list(rep.notes), "n_readings": rep.n_readings})
