"""The grids of the paper's Table 7 and the optimal draft over them, as tables (method notes,
section 8): the axes (:func:`axis`, :func:`n_grid`, :func:`table7_grid`), the search
:func:`sdsl.model.optimum.optimal_draft_table` on them (:func:`solve_table7`; :func:`solve_checked`
times it and checks it against the one-configuration front end) and ``N*`` for arbitrary targets
on their own grids (:func:`size_ratio`). The chapter ``scaling`` builds its Tables 7 to 9 and
Figure 5 on these."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from sdsl import data as _data
from sdsl.model.laws import BESIROGLU_2024, PAPER_EQ5, AcceptanceCoefficients, LossConstants
from sdsl.model.optimum import optimal_draft_size, optimal_draft_table
from sdsl.validation import as_positive

__all__ = [
    "SPACINGS",
    "axis",
    "n_grid",
    "table7_grid",
    "solve_table7",
    "solve_checked",
    "size_ratio",
]

#: Grid spacings: ``"log"`` (``numpy.geomspace``) and ``"linear"`` (``numpy.linspace``).
SPACINGS = ("log", "linear")


# --------------------------------------------------------------------------------------------
# grids


def axis(low: float, high: float, points: int, spacing: str = "log", name: str = "axis") -> np.ndarray:
    """``points`` values from ``low`` to ``high`` (both included), log or linear spacing.

    Raises ``ValueError`` for a spacing other than :data:`SPACINGS`, fewer than one point,
    non-positive or non-finite ends, ``low > high``, or ``low == high`` with more than one point.
    """
    if spacing not in SPACINGS:
        raise ValueError(f"spacing of {name} must be one of {SPACINGS}, got {spacing!r}")
    if isinstance(points, bool) or not float(points).is_integer() or int(points) < 1:
        raise ValueError(f"points of {name} must be an integer >= 1, got {points!r}")
    points = int(points)
    lo = float(as_positive(low, f"low end of {name}"))
    hi = float(as_positive(high, f"high end of {name}"))
    if lo > hi or (lo == hi and points > 1):
        raise ValueError(f"{name} must satisfy low < high (or one point), got ({lo:.6g}, {hi:.6g})")
    values = np.geomspace(lo, hi, points) if spacing == "log" else np.linspace(lo, hi, points)
    values[0], values[-1] = lo, hi  # exact ends (geomspace can be off by an ulp)
    return values


def _table7_row(table7: pd.DataFrame | None, parameter: str) -> tuple[float, float, int]:
    t7 = _data.load("paper_table7") if table7 is None else table7
    rows = t7.set_index("parameter")
    if parameter not in rows.index:
        raise ValueError(f"Table 7 has no row {parameter!r}; rows: {list(rows.index)}")
    row = rows.loc[parameter]
    return float(row["low"]), float(row["high"]), int(row["points"])


def n_grid(
    spacing: str = "log",
    points: int | None = None,
    low: float | None = None,
    high: float | None = None,
    table7: pd.DataFrame | None = None,
) -> np.ndarray:
    """The draft-size grid of Table 7 (10,000 points in [1e8, 1e10]; ends and count from
    ``data/paper_table7.csv`` unless given), log or linear spacing (the paper does not say)."""
    t_lo, t_hi, t_k = _table7_row(table7, "N")
    return axis(
        t_lo if low is None else low,
        t_hi if high is None else high,
        t_k if points is None else points,
        spacing,
        "the draft-size grid N",
    )


def table7_grid(
    spacing: str = "log",
    d_high: float | None = None,
    d_target_high: float | None = None,
    table7: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The configurations of Table 7: every ``(M, D, D')`` of the product of three axes
    (8 x 6 x 6 = 288 rows), columns ``m, d_draft, d_target``, ``M`` slowest.

    ``spacing`` applies to all three axes. ``d_high`` and ``d_target_high`` replace the upper
    end of the ``D`` and ``D'`` axes (the printed Table 7 says 1e13; the paper's Tables 8 and 9
    are reproduced with 1e14, see :func:`variants`).
    """
    m_lo, m_hi, m_k = _table7_row(table7, "M")
    d_lo, d_hi, d_k = _table7_row(table7, "D")
    p_lo, p_hi, p_k = _table7_row(table7, "D_prime")
    ms = axis(m_lo, m_hi, m_k, spacing, "M (target parameters)")
    ds = axis(d_lo, d_hi if d_high is None else d_high, d_k, spacing, "D (draft tokens)")
    ps = axis(p_lo, p_hi if d_target_high is None else d_target_high, p_k, spacing, "D' (target tokens)")
    m, d, p = np.meshgrid(ms, ds, ps, indexing="ij")
    return pd.DataFrame({"m": m.ravel(), "d_draft": d.ravel(), "d_target": p.ravel()})


# --------------------------------------------------------------------------------------------
# the vectorised solver


def _configs(m: ArrayLike, d_draft: ArrayLike, d_target: ArrayLike) -> tuple[np.ndarray, ...]:
    m = as_positive(m, "m (target parameters)")
    d = as_positive(d_draft, "d_draft (draft pre-training tokens)")
    p = as_positive(d_target, "d_target (target pre-training tokens)")
    try:
        m, d, p = np.broadcast_arrays(np.atleast_1d(m), np.atleast_1d(d), np.atleast_1d(p))
    except ValueError as exc:
        raise ValueError(f"m, d_draft and d_target must broadcast together: {exc}") from None
    if m.ndim != 1:
        raise ValueError(f"m, d_draft and d_target must be scalars or 1-D arrays, got shape {m.shape}")
    return np.ascontiguousarray(m, float), np.ascontiguousarray(d, float), np.ascontiguousarray(p, float)


def solve_table7(
    spacing: str = "log",
    n_spacing: str = "log",
    d_high: float | None = None,
    d_target_high: float | None = None,
    refine: bool = True,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    integer: bool = False,
    table7: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """``N*`` for every configuration of Table 7's grid (:func:`table7_grid`) on Table 7's
    ``N`` grid (:func:`n_grid`): :func:`~sdsl.model.optimum.optimal_draft_table` on the 288 configurations."""
    cfg = table7_grid(spacing, d_high, d_target_high, table7)
    grid_n = n_grid(n_spacing, table7=table7)
    return optimal_draft_table(
        cfg["m"], cfg["d_draft"], cfg["d_target"], grid_n, constants, coefficients, integer=integer, refine=refine
    )


def size_ratio(
    m: ArrayLike,
    d_draft: ArrayLike,
    d_target: ArrayLike,
    n_low: float = 1e7,
    points: int = 4000,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
) -> pd.DataFrame:
    """``N*`` and the size ratio ``M / N*`` for arbitrary configurations (e.g. ``M`` from 1e9
    to 1e12), each on its own log grid of ``points`` draft sizes from ``n_low`` to ``M``
    (:func:`~sdsl.model.optimum.optimal_draft_table` with a 2-D grid), with its columns plus
    ``ratio = N*/M`` and ``m_over_n = M/N*``."""
    m, d, p = _configs(m, d_draft, d_target)
    lo = float(as_positive(n_low, "n_low (smallest draft size)"))
    if np.any(m <= lo):
        raise ValueError(f"every target size m must exceed n_low = {lo:.6g}, got {m.min():.6g}")
    grid = np.exp(np.linspace(np.log(lo), np.log(m), int(points), axis=1))
    grid[:, -1] = m
    sol = optimal_draft_table(m, d, p, grid, constants, coefficients)
    return sol.assign(ratio=sol["n_star"] / sol["m"], m_over_n=sol["m"] / sol["n_star"])


def solve_checked(
    configs: pd.DataFrame,
    n: np.ndarray,
    rng: np.random.Generator,
    constants: LossConstants | str = BESIROGLU_2024,
    refine: bool = True,
    sample: int = 12,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, float]]:
    """Solve the grid ``configs`` (:func:`table7_grid`) on the draft sizes ``n`` at once
    (:func:`~sdsl.model.optimum.optimal_draft_table`), and check it on ``sample`` configurations drawn with ``rng``
    against the scalar optimiser :func:`sdsl.optimal_draft_size` (bounded by the ends of ``n``).

    Returns ``(solution, check, seconds)``: the solution, the checked rows (``m, d_draft,
    d_target, n_star, n_star_scalar, rel_diff``) and the wall-clock seconds of the grid solve and
    of one scalar solve (``grid``, ``scalar``; machine-dependent, for the prose only).
    """
    t0 = time.perf_counter()
    sol = optimal_draft_table(configs["m"], configs["d_draft"], configs["d_target"], n, constants, refine=refine)
    t_grid = time.perf_counter() - t0
    pick = rng.choice(len(configs), size=min(int(sample), len(configs)), replace=False)
    t0 = time.perf_counter()
    scalar = np.array(
        [
            optimal_draft_size(r.m, r.d_draft, r.d_target, constants, n_bounds=(n[0], n[-1])).n_star
            for r in configs.iloc[pick].itertuples()
        ]
    )
    t_scalar = (time.perf_counter() - t0) / max(pick.size, 1)
    check = sol.iloc[pick][["m", "d_draft", "d_target", "n_star"]].assign(
        n_star_scalar=scalar, rel_diff=sol["n_star"].to_numpy()[pick] / scalar - 1.0
    )
    return sol, check.reset_index(drop=True), {"grid": t_grid, "scalar": t_scalar}
