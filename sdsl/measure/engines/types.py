"""Typed results shared by the engine readers: what one series (model x engine) says about alpha.

Every reader returns an :class:`EngineRead` (one file): the :class:`AlphaReading` of each usable
series, the series it skipped with the reason (an idle data-parallel engine, a fresh server, an
incomplete label set), and notes. An :class:`AlphaReading` carries the
:class:`sdsl.measure.estimators.AlphaEstimate`, how it was obtained, the per-position conditional rates with
the constant-alpha test, and a :class:`ShortDrafts` record: how many drafts were shorter than the
configured length ``k`` and what that does to the estimate (:mod:`sdsl.measure.estimators`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from sdsl.measure.estimators import AlphaEstimate, ConstantAlphaTest

__all__ = ["Labels", "ShortDrafts", "AlphaReading", "Skipped", "EngineRead", "label_text"]

#: A label set as a sorted tuple of ``(name, value)`` pairs (hashable, order-independent).
Labels = tuple[tuple[str, str], ...]


def label_text(labels: Labels) -> str:
    """``model_name=..., engine=...`` (or ``(no labels)``) for messages."""
    return ", ".join(f"{k}={v}" for k, v in labels) or "(no labels)"


@dataclass(frozen=True)
class ShortDrafts:
    """Drafts shorter than the configured length ``k`` and their effect on alpha.

    ``missing_tokens = k * drafts - draft tokens`` at the point estimate of the drafts (0: every
    draft was ``k`` long); where the number of drafts is itself known only within a range (a log
    line whose rates are all 0 says nothing of it), ``missing_max`` is the most the range allows.
    Without per-draft lengths the number of short drafts is known only within
    ``[drafts_min, drafts_max]`` (each short draft misses 1 to ``k - 1`` tokens; ``drafts_max``
    None: the export cannot bound it). ``alpha_full`` is the estimate that counts every draft as
    ``k`` long (a short draft accepted in full then counts as a rejection, so it is a lower bound);
    ``alpha_upper`` the largest value the missing tokens allow
    (:func:`sdsl.measure.engines.estimate.reduction_bound`); None where they cannot be computed.
    ``exact``: per-draft lengths were known and the estimate used them. ``detail`` replaces the
    sentence on the two bounds where a reader knows more (or less) than the counts say.
    """

    missing_tokens: int
    drafts_min: int
    drafts_max: int | None
    alpha_full: float | None
    alpha_upper: float | None
    exact: bool = False
    missing_max: int | None = None
    detail: str = ""

    @property
    def missing_high(self) -> int | None:
        """The most draft tokens that may be missing (None: the export does not bound it)."""
        if self.missing_max is None:
            return None if self.drafts_max is None else self.missing_tokens
        return max(self.missing_max, self.missing_tokens)

    @property
    def any(self) -> bool:
        return (
            self.missing_tokens > 0
            or self.drafts_max is None
            or self.drafts_max > 0
            or (self.missing_max is not None and self.missing_max > 0)
        )

    def effect(self) -> str:
        """One line for the report (every number finite: a bound that cannot be computed is left out)."""
        if not self.any:
            return "every draft had k tokens"
        if self.exact:
            n = self.drafts_min
            return (
                f"{n} draft(s) shorter than k ({self.missing_tokens} tokens missing); their per-step "
                "lengths were used, so the estimate is exact"
            )
        high = self.missing_high
        if self.drafts_max is None and self.drafts_min == 0 and self.missing_tokens == 0:
            head = "how many drafts were shorter than k is not printed"
        else:
            if self.drafts_max is None:
                span = f"at least {self.drafts_min}"
            elif self.drafts_min == self.drafts_max:
                span = f"{self.drafts_min}"
            else:
                span = f"{self.drafts_min} to {self.drafts_max}"
            if high is None:
                missing = f"at least {self.missing_tokens}"
            elif high == self.missing_tokens:
                missing = f"{self.missing_tokens}"
            else:
                missing = f"{self.missing_tokens} to {high}"
            head = f"{span} draft(s) shorter than k ({missing} draft tokens missing)"
        if self.detail:
            return f"{head}: {self.detail}"
        full, upper = self.alpha_full, self.alpha_upper
        if full is not None and upper is not None and full == 0 and upper == 0:
            return (
                f"{head}: no draft token was accepted, so alpha is 0 whatever the drafts' lengths; the number "
                "of drafts only sets the width of the interval, which is taken at the fewest drafts (the widest)"
            )
        parts = []
        if full is not None and math.isfinite(full):
            parts.append(
                f"counted as full drafts alpha is {full:.4f} (a lower bound: a short draft accepted in full "
                "counts as a rejection)"
            )
        if upper is not None and math.isfinite(upper):
            parts.append(f"at most {upper:.4f} if the missing tokens fell on the most drafts accepted in full")
        if not parts:
            return f"{head}: the export does not bound their effect on alpha"
        return f"{head}: " + "; ".join(parts) + "; the interval covers both"


@dataclass(frozen=True)
class AlphaReading:
    """Alpha of one series of one source, with what it rests on."""

    source: str
    """Format key (:data:`sdsl.measure.engines.detect.FORMATS`)."""
    path: str
    labels: Labels
    gamma: int | None
    """Configured draft length ``k`` (``num_speculative_tokens``), if known."""
    estimate: AlphaEstimate
    method: str
    """How alpha was obtained, in words."""
    num_drafts: float | None = None
    num_draft_tokens: float | None = None
    num_accepted_tokens: float | None = None
    position_rates: tuple[float, ...] = ()
    """Conditional acceptance rate at draft positions 1..k (accepted / reached)."""
    constant_alpha: ConstantAlphaTest | None = None
    short_drafts: ShortDrafts | None = None
    chain_only: bool = False
    """True when alpha inverts the mean acceptance length: valid for chain (not tree) drafts only."""
    bootstrap: AlphaEstimate | None = None
    """Cluster bootstrap over requests, when per-request data allow it."""
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def label_dict(self) -> dict[str, str]:
        return dict(self.labels)

    @property
    def model(self) -> str | None:
        d = self.label_dict
        return d.get("model_name") or d.get("model")

    @property
    def engine(self) -> str | None:
        return self.label_dict.get("engine")

    @property
    def mean_acceptance_length(self) -> float | None:
        """``1 + accepted / drafts`` (includes the bonus token), when both counts are known."""
        if self.num_drafts and self.num_accepted_tokens is not None:
            return 1.0 + float(self.num_accepted_tokens) / float(self.num_drafts)
        return None

    def with_notes(self, *notes: str) -> AlphaReading:
        return replace(self, notes=self.notes + tuple(n for n in notes if n))


@dataclass(frozen=True)
class Skipped:
    """A series that was read but gives no alpha, and why (one line)."""

    labels: Labels
    reason: str


@dataclass(frozen=True)
class EngineRead:
    """Everything one file gave."""

    path: str
    source: str
    detected_by: str
    readings: tuple[AlphaReading, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    notes: tuple[str, ...] = ()
