"""Typed results shared by the engine readers: what one series (model x engine) says about alpha.

Every reader returns an :class:`EngineRead` (one file): the :class:`AlphaReading` of each usable
series, the series it skipped with the reason (an idle data-parallel engine, a fresh server, an
incomplete label set), and notes. An :class:`AlphaReading` carries the
:class:`sdsl.measure.estimators.AlphaEstimate`, how it was obtained, the per-position conditional rates with
the constant-alpha test, and a :class:`ShortDrafts` record: how many drafts were shorter than the
configured length ``k`` and what that does to the estimate (:mod:`sdsl.measure.estimators`).
"""

from __future__ import annotations

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

    ``missing_tokens = k * drafts - draft tokens`` (0: every draft was ``k`` long). Without
    per-draft lengths the number of short drafts is known only within
    ``[drafts_min, drafts_max]`` (each short draft misses 1 to ``k`` tokens). ``alpha_full`` is the
    estimate that counts every draft as ``k`` long (a short draft accepted in full then counts as a
    rejection, so it is a lower bound); ``alpha_upper`` the largest value the missing tokens allow
    (:func:`sdsl.measure.engines.estimate.reduction_bound`). ``exact``: per-draft lengths were known and the estimate used them.
    """

    missing_tokens: int
    drafts_min: int
    drafts_max: int
    alpha_full: float
    alpha_upper: float
    exact: bool = False

    @property
    def any(self) -> bool:
        return self.missing_tokens > 0 or self.drafts_max > 0

    def effect(self) -> str:
        """One line for the report."""
        if not self.any:
            return "every draft had k tokens"
        if self.exact:
            n = self.drafts_min
            return (
                f"{n} draft(s) shorter than k ({self.missing_tokens} tokens missing); their per-step "
                "lengths were used, so the estimate is exact"
            )
        span = f"{self.drafts_min}" if self.drafts_min == self.drafts_max else f"{self.drafts_min} to {self.drafts_max}"
        return (
            f"{span} draft(s) shorter than k ({self.missing_tokens} draft tokens missing): counted as "
            f"full drafts alpha is {self.alpha_full:.4f} (a lower bound: a short draft accepted in full "
            f"counts as a rejection); at most {self.alpha_upper:.4f} if the missing tokens fell on the most "
            f"drafts accepted in full; the interval covers both"
        )


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
