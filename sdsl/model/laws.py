"""Scaling laws that feed the throughput model: loss from size and data, acceptance from perplexity.

Equations (method notes, sections 4 and 5; Bozorgkhoo and Molybog 2026, arXiv 2603.11053):

* Chinchilla loss law      ``L(N, D) = E + A / N**a + B / D**b``            (method Eq. 4)
* perplexity               ``exp(L(N, D))``
* acceptance plane (Eq. 5) ``alpha = A x + B y + C`` with ``x``, ``y`` the draft's and the
  target's perplexities.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sdsl.validation import as_positive, number, one_line, rule, sequence, shown

if TYPE_CHECKING:  # numpy.typing costs import time; the annotations are strings
    from numpy.typing import ArrayLike

__all__ = [
    "LossConstants",
    "AcceptanceCoefficients",
    "BESIROGLU_2024",
    "HOFFMANN_2022",
    "LOSS_CONSTANTS",
    "PAPER_EQ5",
    "loss_law",
    "loss",
    "perplexity",
    "acceptance_rate",
    "resolve_constants",
]


@dataclass(frozen=True)
class LossConstants:
    """The five constants of the Chinchilla loss law ``L = E + A/N**a + B/D**b``."""

    E: float
    A: float
    B: float
    a: float
    b: float
    name: str = "custom"
    source: str = ""

    def __post_init__(self) -> None:
        for field in ("E", "A", "B", "a", "b"):
            value = getattr(self, field)
            if not np.isfinite(value):
                raise ValueError(f"loss-law constant {field} must be finite, got {value!r}")
        for field in ("A", "B", "a", "b"):
            if getattr(self, field) <= 0:
                raise ValueError(
                    f"loss-law constant {field} must be > 0 (the law is L = E + A/N^a + B/D^b), "
                    f"got {getattr(self, field)!r}"
                )
        if self.E < 0:
            raise ValueError(f"loss-law constant E (irreducible loss) must be >= 0, got {self.E!r}")

    def as_tuple(self) -> tuple[float, float, float, float, float]:
        return (self.E, self.A, self.B, self.a, self.b)


#: Besiroglu et al. (2024), "Chinchilla Scaling: A replication attempt" (Epoch AI); reproduces
#: the paper's Table 5 (method notes, section 4).
BESIROGLU_2024 = LossConstants(
    E=1.8172,
    A=482.01,
    B=2085.43,
    a=0.3478,
    b=0.3658,
    name="besiroglu2024",
    source="Besiroglu et al. 2024, Chinchilla replication (Epoch AI)",
)
#: Hoffmann et al. (2022), "Training Compute-Optimal Large Language Models", Approach 3.
HOFFMANN_2022 = LossConstants(
    E=1.69,
    A=406.4,
    B=410.7,
    a=0.34,
    b=0.28,
    name="hoffmann2022",
    source="Hoffmann et al. 2022, Chinchilla, Approach 3",
)
#: Named constant sets, by the name used in notebook parameters and on the command line.
LOSS_CONSTANTS: dict[str, LossConstants] = {c.name: c for c in (BESIROGLU_2024, HOFFMANN_2022)}


def resolve_constants(constants: LossConstants | str | tuple | list) -> LossConstants:
    """A :class:`LossConstants` from a name, five numbers or an existing instance.

    Parameters
    ----------
    constants : LossConstants, str or sequence of five numbers
        ``"besiroglu2024"``, ``"hoffmann2022"`` (case, ``-`` and ``_`` ignored), ``(E, A, B, a, b)``
        or an instance.

    Returns
    -------
    LossConstants

    Raises ``ValueError`` for an unknown name or anything but five valid numbers.
    """
    if isinstance(constants, LossConstants):
        return constants
    if isinstance(constants, str):
        key = constants.strip().lower().replace("_", "").replace("-", "")
        if key not in LOSS_CONSTANTS:
            raise ValueError(
                f"unknown loss-law constant set {constants!r}; choose one of "
                f"{sorted(LOSS_CONSTANTS)} or give five numbers (E, A, B, a, b)"
            )
        return LOSS_CONSTANTS[key]
    values = list(constants)
    if len(values) != 5:
        raise ValueError(f"loss-law constants must be a name or five numbers (E, A, B, a, b), got {len(values)} values")
    try:
        floats = [float(v) for v in values]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"loss-law constants must be numbers (E, A, B, a, b), got {values!r}") from exc
    E, A, B, a, b = floats
    return LossConstants(E, A, B, a, b)


@dataclass(frozen=True)
class AcceptanceCoefficients:
    """Coefficients of the acceptance plane ``alpha = A x + B y + C`` (the paper's Eq. 5)."""

    A: float
    B: float
    C: float
    source: str = "custom"

    def __post_init__(self) -> None:
        for field in ("A", "B", "C"):
            if not np.isfinite(getattr(self, field)):
                raise ValueError(f"acceptance coefficient {field} must be finite, got {getattr(self, field)!r}")


#: The paper's Table 3 estimates of Eq. 5, fitted on its 13 targets.
PAPER_EQ5 = AcceptanceCoefficients(A=-0.0067, B=0.012971, C=0.642084, source="paper Table 3")


def loss_law(
    n: ArrayLike, d: ArrayLike, E: ArrayLike, A: ArrayLike, B: ArrayLike, a: ArrayLike, b: ArrayLike
) -> np.ndarray:
    """``L(N, D) = E + A / N**a + B / D**b`` (method notes, Eq. 4) with every argument an array that
    broadcasts against the others (one set of constants per row, e.g. for perturbed or bootstrapped
    constants), without argument checks: the kernel behind :func:`loss` and
    :func:`sdsl.model.optimum.plane_alpha`."""
    E, A, B = np.asarray(E), np.asarray(A), np.asarray(B)
    return E + A * np.power(n, np.negative(a)) + B * np.power(d, np.negative(b))


def loss(n: ArrayLike, d: ArrayLike, constants: LossConstants | str = BESIROGLU_2024) -> np.ndarray:
    """Pre-training loss ``L(N, D) = E + A / N**a + B / D**b`` (method notes, Eq. 4).

    Parameters
    ----------
    n : parameters of the model (> 0).
    d : tokens it was pre-trained on (> 0).
    constants : a :class:`LossConstants`, a set's name or five numbers.

    Returns
    -------
    numpy.ndarray
        The loss in nats per token, broadcast over ``n`` and ``d``.
    """
    c = resolve_constants(constants)
    n = as_positive(n, "n (model parameters)")
    d = as_positive(d, "d (pre-training tokens)")
    return loss_law(n, d, c.E, c.A, c.B, c.a, c.b)


def perplexity(n: ArrayLike, d: ArrayLike, constants: LossConstants | str = BESIROGLU_2024) -> np.ndarray:
    """Perplexity ``exp(L(N, D))`` predicted by the loss law (method notes, section 4).

    Parameters
    ----------
    n : parameters of the model (> 0).
    d : tokens it was pre-trained on (> 0).
    constants : a :class:`LossConstants`, a set's name or five numbers.

    Returns
    -------
    numpy.ndarray
        The perplexity, broadcast over ``n`` and ``d``.
    """
    return np.exp(loss(n, d, constants))


def acceptance_rate(
    draft_ppl: ArrayLike,
    target_ppl: ArrayLike,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
) -> np.ndarray:
    """Acceptance rate from perplexities, the paper's Eq. 5: ``alpha = A x + B y + C``.

    ``x`` is the draft's perplexity and ``y`` the target's (both >= 1). The plane is an empirical
    fit: far from the paper's data it can leave (0, 1); callers that need a valid rate check it
    (see :func:`sdsl.model.optimum.optimal_draft_size`).

    Parameters
    ----------
    draft_ppl : perplexity ``x`` of the draft (> 0).
    target_ppl : perplexity ``y`` of the target (> 0).
    coefficients : the plane's ``A, B, C``; the paper's Table 3 by default.

    Returns
    -------
    numpy.ndarray
        ``alpha``, broadcast over the two perplexities (not clipped to (0, 1)).
    """
    x = as_positive(draft_ppl, "draft_ppl (draft perplexity)")
    y = as_positive(target_ppl, "target_ppl (target perplexity)")
    return coefficients.A * x + coefficients.B * y + coefficients.C


def check_loss_constants(value: Any, name: str = "constants") -> LossConstants:
    """Loss-law constants as an argument: a set's name (``"besiroglu2024"``, ``"hoffmann2022"``),
    five numbers ``[E, A, B, a, b]`` or a :class:`LossConstants`; returns the latter, or raises one
    line naming ``name``."""
    if isinstance(value, LossConstants):
        return value
    if not isinstance(value, str):
        value = sequence(value, name, rule(number), min_len=5, max_len=5, what="E, A, B, a, b", noun="numbers")
    try:
        return resolve_constants(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{shown(name)} must be {' or '.join(repr(k) for k in LOSS_CONSTANTS)} or five numbers "
            f"[E, A, B, a, b]: {one_line(exc)}"
        ) from None


def check_coefficients(value: Any, name: str = "coefficients") -> tuple[float, float, float]:
    """Coefficients ``[A, B, C]`` of the acceptance plane (Eq. 5) as an argument: three finite numbers."""
    a, b, c = sequence(
        value, name, rule(number), min_len=3, max_len=3, what="A, B, C of alpha = A x + B y + C", noun="numbers"
    )
    return a, b, c
