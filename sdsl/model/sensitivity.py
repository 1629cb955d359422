"""How sensitive ``N*`` and ``T(N*)`` are to every constant they are built from: log
elasticities ``d ln N* / d ln theta`` by central differences, all perturbed optima solved at once by
the kernel :func:`sdsl.model.optimum.solve`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from sdsl.model.laws import (
    BESIROGLU_2024,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    resolve_constants,
)
from sdsl.model.optimum import LawOptimum, _batch_optima, plane_alpha
from sdsl.validation import as_positive

__all__ = ["PLANE_PARAMETERS", "LOSS_PARAMETERS", "log_elasticity", "elasticities"]


PLANE_PARAMETERS = ("A", "B", "C")
LOSS_PARAMETERS = ("E", "A_loss", "B_loss", "a", "b")


def log_elasticity(f: Callable[[float], float], theta: float, h: float = 1e-3) -> float:
    """``d ln f / d ln |theta|`` by a central difference in log space:
    ``(ln f(theta e^h) - ln f(theta e^-h)) / (2 h)``. ``f`` must be positive; ``theta`` non-zero
    (its sign is kept)."""
    if theta == 0 or not np.isfinite(theta):
        raise ValueError(f"theta must be finite and non-zero for an elasticity, got {theta!r}")
    if not h > 0:
        raise ValueError(f"h (log step) must be > 0, got {h!r}")
    up, down = f(theta * np.exp(h)), f(theta * np.exp(-h))
    if not (up > 0 and down > 0):
        raise ValueError(f"f must be positive around theta = {theta!r}, got {down!r} and {up!r}")
    return float((np.log(up) - np.log(down)) / (2.0 * h))


def _perturbed(coefficients: AcceptanceCoefficients, constants: LossConstants, name: str, value: float):
    if name in PLANE_PARAMETERS:
        plane_field: dict[str, Any] = {name: value}
        return replace(coefficients, **plane_field), constants
    loss_field: dict[str, Any] = {{"A_loss": "A", "B_loss": "B"}.get(name, name): value}
    return coefficients, replace(constants, **loss_field)


def _plane_optima(
    m: np.ndarray,
    d_draft: np.ndarray,
    d_target: np.ndarray,
    coefs: Sequence[AcceptanceCoefficients],
    consts: Sequence[LossConstants],
    integer: bool,
) -> list[LawOptimum]:
    """``N*`` of Eq. 5 (each row with its own coefficients and loss-law constants) as
    :func:`sdsl.optimal_draft_size` searches it (range ``(min(1e7, M), M)``, a 97-point scan over
    ``log N``, the kernel's refinement), for all rows at once."""
    alpha = plane_alpha(m, d_draft, d_target, list(consts), list(coefs))
    return _batch_optima(alpha, m, np.minimum(1e7, m), m.copy(), np.full(m.size, bool(integer)), 97)


def _elasticity_frame(
    configs: Sequence[tuple[float, float, float]],
    coefficients: AcceptanceCoefficients,
    constants: LossConstants | str,
    integer: bool,
    h: float,
) -> list[pd.DataFrame]:
    """:func:`elasticities` of several configurations ``(m, d_draft, d_target)``: every perturbed
    ``N*`` of all of them solved at once (:func:`_plane_optima`)."""
    c = resolve_constants(constants)
    if not h > 0:
        raise ValueError(f"h (log step) must be > 0, got {h!r}")
    names = (*PLANE_PARAMETERS, *LOSS_PARAMETERS)
    base = {
        name: (
            getattr(coefficients, name)
            if name in PLANE_PARAMETERS
            else getattr(c, {"A_loss": "A", "B_loss": "B"}.get(name, name))
        )
        for name in names
    }
    keys, coefs, consts = [], [], []
    for i, _ in enumerate(configs):
        for name in names:
            theta = base[name]
            if theta == 0 or not np.isfinite(theta):
                raise ValueError(f"theta must be finite and non-zero for an elasticity, got {theta!r}")
            for v in (theta * np.exp(h), theta * np.exp(-h)):  # the two points log_elasticity asks for
                co, cs = _perturbed(coefficients, c, name, v)
                keys.append((i, name, v))
                coefs.append(co)
                consts.append(cs)
    cfg = np.array(configs, dtype=float).reshape(-1, 3)
    idx = np.array([k[0] for k in keys])
    opts = _plane_optima(cfg[idx, 0], cfg[idx, 1], cfg[idx, 2], coefs, consts, integer)
    bad = [k for k, o in zip(keys, opts) if o.status != "interior"]
    if bad:
        i, name, v = bad[0]
        raise ValueError(f"no interior optimum of N at configuration {configs[i]} with {name} = {v!r}")
    found = dict(zip(keys, opts))
    frames = []
    for i, _ in enumerate(configs):
        rows = []
        for name in names:
            rows.append(
                {
                    "parameter": name,
                    "value": float(base[name]),
                    "elasticity_n_star": log_elasticity(lambda v: found[(i, name, v)].n_star, base[name], h),
                    "elasticity_t": log_elasticity(lambda v: found[(i, name, v)].tokens_per_flop, base[name], h),
                }
            )
        frames.append(pd.DataFrame(rows))
    return frames


def elasticities(
    m: float,
    d_draft: float,
    d_target: float,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    constants: LossConstants | str = BESIROGLU_2024,
    integer: bool = False,
    h: float = 1e-3,
) -> pd.DataFrame:
    """Elasticities of ``N*`` and of ``T(N*)`` with respect to the Eq. 5 coefficients ``A, B, C``
    and the loss-law constants ``E, A, B, a, b`` (``A_loss``, ``B_loss``), by central finite
    differences in log space (:func:`log_elasticity`), at one configuration, with ``N*`` searched
    as :func:`sdsl.optimal_draft_size` does (range ``(1e7, M)``, 97-point scan, refinement to
    1e-12 in ``log N``), all perturbed optima at once."""
    m = float(as_positive(m, "m (target parameters)"))
    d_draft = float(as_positive(d_draft, "d_draft (draft pre-training tokens)"))
    d_target = float(as_positive(d_target, "d_target (target pre-training tokens)"))
    return _elasticity_frame([(m, d_draft, d_target)], coefficients, constants, integer, h)[0]
