"""Checks of the method's inputs (:mod:`sdsl._validate`): loss-law constants, the acceptance plane's
coefficients, and that a plan has its optimum inside the search range and alpha inside (0, 1).

The model layer is imported inside the functions: it checks its own arguments with
:mod:`sdsl._validate`, which must not import it back."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from sdsl._validate.messages import one_line, shown
from sdsl._validate.parameters import rule
from sdsl._validate.values import number, sequence

__all__ = ["loss_constants", "coefficients", "optimum_inside", "plane_inside"]


def loss_constants(value: Any, name: str = "constants") -> Any:
    """Loss-law constants: a set's name (``"besiroglu2024"``, ``"hoffmann2022"``), five numbers
    ``[E, A, B, a, b]`` or a :class:`sdsl.model.laws.LossConstants`; returns the latter."""
    from sdsl.model.laws import LOSS_CONSTANTS, LossConstants, resolve_constants

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


def coefficients(value: Any, name: str = "coefficients") -> tuple[float, float, float]:
    """Coefficients ``[A, B, C]`` of the acceptance plane (Eq. 5): three finite numbers."""
    a, b, c = sequence(
        value, name, rule(number), min_len=3, max_len=3, what="A, B, C of alpha = A x + B y + C", noun="numbers"
    )
    return a, b, c


def optimum_inside(
    configs: Iterable[tuple[float, float, float]],
    constants: Any,
    coefficients: Any,
    integer: bool,
    names: str = "constants and coefficients",
) -> None:
    """Each configuration ``(M, D, D')`` has its optimum ``N*`` strictly inside the default search
    range (:func:`sdsl.model.optimum.optimal_draft_size`) with these loss-law constants and
    plane coefficients; otherwise one line naming ``names``."""
    from sdsl.model.optimum import optimal_draft_size

    for m, d, dp in configs:
        try:
            o = optimal_draft_size(m, d, dp, constants, coefficients, integer)
        except ValueError as exc:
            raise ValueError(
                f"{names} leave no plan for M = {m:.4g}, D = {d:.3g}, D' = {dp:.3g}: {one_line(exc)}"
            ) from None
        if not o.interior:
            raise ValueError(f"{names} leave no optimum for M = {m:.4g}, D = {d:.3g}, D' = {dp:.3g}: {o.status}")


def plane_inside(
    configs: Iterable[tuple[float, float, float]],
    sizes: tuple[float, float],
    constants: Any,
    coefficients: Any,
    names: str,
) -> None:
    """Draft sizes ``sizes = (low, high)`` below each configuration's target ``M`` and the acceptance
    plane (Eq. 5 through the loss law) inside (0, 1) at both (alpha is monotone in N); otherwise one
    line naming ``names`` (the parameters that set the sizes)."""
    from sdsl.model.laws import acceptance_rate, perplexity

    for m, d, dp in configs:
        if sizes[1] >= m:
            raise ValueError(f"{names}: the draft size {sizes[1]:g} is not below the target size M = {m:.4g}")
        a = acceptance_rate(
            perplexity(np.array(sizes), d, constants), float(perplexity(m, dp, constants)), coefficients
        )
        bad = [(n, x) for n, x in zip(sizes, a) if not 0 < x < 1]
        if bad:
            raise ValueError(
                f"{names}: the acceptance rate leaves (0, 1) at draft size {bad[0][0]:g} (alpha = "
                f"{bad[0][1]:.4g}) for M = {m:.4g}, D = {d:.3g}: choose draft sizes where 0 < alpha < 1"
            )
