"""The throughput-optimal draft of the paper's Eq. 5 plane: one configuration
(:func:`optimal_draft_size`, a one-row call of the kernel :func:`sdsl.model.optimum.solve`), many at
once (:func:`optimal_draft_sizes`), and the throughput curve ``T(N)`` (:func:`throughput_curve`);
brute-force references for tests and benchmarks (:func:`gamma_grid_search`,
:func:`brute_force_optimum`: every grid point evaluated, no calculus, no optimiser)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from sdsl import _validate as V
from sdsl._validate import as_float_array, as_in_range, as_open_unit, as_positive
from sdsl.model.laws import (
    BESIROGLU_2024,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    acceptance_rate,
    perplexity,
    resolve_constants,
)
from sdsl.model.optimum import INTERIOR, Optima, log_grid, plane_alpha, solve
from sdsl.model.throughput import optimal_gamma, tokens_per_flop

if TYPE_CHECKING:  # numpy.typing and pandas cost import time; the annotations are strings
    from collections.abc import Iterable

    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = [
    "DraftOptimum",
    "optimal_draft_size",
    "optimal_draft_sizes",
    "throughput_curve",
    "gamma_grid_search",
    "GAMMA_CASES",
    "gamma_check",
    "brute_force_optimum",
]


@dataclass(frozen=True)
class DraftOptimum:
    """The throughput-optimal draft of one configuration (method notes, section 6)."""

    n_star: float
    """Optimal draft parameters ``N*``."""
    gamma_star: float
    """Optimal draft length at ``N*``."""
    alpha: float
    """Acceptance rate predicted at ``N*``."""
    tokens_per_flop: float
    """Throughput ``T(N*)`` in tokens per FLOP (Eq. 9)."""
    m: float
    """Target parameters."""
    status: str = INTERIOR
    """``"interior"``, or where on the search range ``T`` is largest when that is an edge (then
    ``n_star`` is that edge, not an optimum)."""

    @property
    def interior(self) -> bool:
        """True when ``N*`` lies strictly inside the search range."""
        return self.status == INTERIOR

    @property
    def speedup(self) -> float:
        """Tokens-per-FLOP ratio over plain decoding at the same FLOPs: ``T(N*) * 2M``."""
        return self.tokens_per_flop * 2.0 * self.m

    def as_dict(self) -> dict[str, float]:
        out = asdict(self)
        out.pop("status")
        out["speedup"] = self.speedup
        return out


def optimal_draft_sizes(
    m: ArrayLike,
    d_draft: ArrayLike,
    d_target: ArrayLike,
    grid: ArrayLike | None = None,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    integer: bool = False,
    *,
    refine: bool = True,
    exhaustive: bool = False,
    n_bounds: tuple[float, float] | None = None,
    points: int = 97,
) -> Optima:
    """``N*`` of the paper's Eq. 5 plane for many configurations ``(M, D, D')`` at once.

    Parameters
    ----------
    m, d_draft, d_target : target parameters ``M``, draft tokens ``D``, target tokens ``D'``; scalars
        or 1-D arrays that broadcast together.
    grid : draft sizes to scan (shape ``(p,)`` or ``(k, p)``); default a ``points``-point log grid
        over ``n_bounds`` (default ``(min(1e7, M), M)``) per configuration.
    constants, coefficients : loss-law constants and Eq. 5 coefficients.
    integer : best integer draft length instead of its continuous relaxation.
    refine, exhaustive : see :func:`solve`.

    Returns
    -------
    Optima
    """
    c = resolve_constants(constants)
    m_ = as_positive(m, "m (target parameters)")
    d_ = as_positive(d_draft, "d_draft (draft pre-training tokens)")
    p_ = as_positive(d_target, "d_target (target pre-training tokens)")
    try:
        m_, d_, p_ = (
            np.ascontiguousarray(v, dtype=float)
            for v in np.broadcast_arrays(np.atleast_1d(m_), np.atleast_1d(d_), np.atleast_1d(p_))
        )
    except ValueError as exc:
        raise ValueError(f"m, d_draft and d_target must broadcast together: {exc}") from None
    if m_.ndim != 1:
        raise ValueError(f"m, d_draft and d_target must be scalars or 1-D arrays, got shape {m_.shape}")
    if grid is None:
        lo, hi = n_bounds if n_bounds is not None else (np.minimum(1e7, m_), m_)
        grid = log_grid(lo, hi, points)
    else:
        grid = as_float_array(grid, "grid (draft sizes)")
        if grid.ndim not in (1, 2) or (grid.ndim == 2 and grid.shape[0] != m_.size):
            raise ValueError(
                f"grid (draft sizes) must be 1-D, or 2-D with one row per configuration ({m_.size}), "
                f"got shape {grid.shape}"
            )
        if np.any(grid <= 0):
            raise ValueError(f"grid (draft sizes) must be > 0, got {grid.min()!r}")
        if np.any(np.diff(grid, axis=-1) <= 0):
            raise ValueError("grid (draft sizes) must be strictly increasing")
        last = grid[..., -1] * np.ones_like(m_)
        if np.any(last > m_):
            i = int(np.flatnonzero(last > m_)[0])
            raise ValueError(
                f"grid (draft sizes) must not exceed the target size: configuration {i} has "
                f"m = {m_[i]:.6g} but the grid reaches {last[i]:.6g}"
            )
    return solve(plane_alpha(m_, d_, p_, c, coefficients), m_, grid, integer, refine=refine, exhaustive=exhaustive)


def throughput_curve(
    n: ArrayLike,
    m: float,
    d_draft: float,
    d_target: float,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    integer: bool = False,
) -> dict[str, np.ndarray]:
    """Tokens per FLOP against draft size ``n`` with ``gamma`` at its optimum for each ``n``
    (Eq. 9 with Eq. 5 and the loss law).

    Parameters
    ----------
    n : draft sizes (> 0, at most ``m``).
    m : target parameters ``M``.
    d_draft, d_target : pre-training tokens ``D`` of the draft and ``D'`` of the target.
    constants, coefficients : loss-law constants and Eq. 5 coefficients.
    integer : at the best integer draft length instead of the continuous one.

    Returns
    -------
    dict
        Arrays ``n``, ``alpha``, ``gamma`` and ``tokens_per_flop``.

    Raises ``ValueError`` if the acceptance plane leaves (0, 1) at any requested size.
    """
    c = resolve_constants(constants)
    n = as_positive(n, "n (draft parameters)")
    m = float(as_positive(m, "m (target parameters)"))
    d = float(as_positive(d_draft, "d_draft (draft pre-training tokens)"))
    p = float(as_positive(d_target, "d_target (target pre-training tokens)"))
    if np.any(n > m):
        raise ValueError(f"draft sizes n must not exceed the target size m = {m:.6g}, got {np.max(n):.6g}")
    flat = np.atleast_1d(n).ravel()
    alpha = plane_alpha(m, d, p, c, coefficients)(flat[None, :], np.array([0]))[0].reshape(np.shape(n))
    bad = (alpha <= 0) | (alpha >= 1)
    if np.any(bad):
        i = int(np.flatnonzero(np.ravel(bad))[0])
        raise ValueError(
            f"the acceptance rate leaves (0, 1) at draft size n = {np.ravel(n)[i]:.6g}: "
            f"alpha = {np.ravel(alpha)[i]:.6g} (Eq. 5 with A={coefficients.A}, B={coefficients.B}, "
            f"C={coefficients.C}); narrow the range of n"
        )
    gamma = optimal_gamma(alpha, n, m, integer=integer)
    return {"n": n, "alpha": alpha, "gamma": gamma, "tokens_per_flop": tokens_per_flop(alpha, n, m, gamma)}


def optimal_draft_size(
    m: float,
    d_draft: float,
    d_target: float,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    integer: bool = False,
    n_bounds: tuple[float, float] | None = None,
) -> DraftOptimum:
    """Throughput-optimal draft size ``N*`` of one configuration (method notes, section 6): a
    one-row call of :func:`solve` with the Eq. 5 plane on a 97-point log grid over ``n_bounds``.

    Parameters
    ----------
    m : target parameters ``M``.
    d_draft, d_target : pre-training tokens of the draft (``D``) and of the target (``D'``).
    constants : loss-law constants (name, five numbers or :class:`LossConstants`).
    coefficients : Eq. 5 coefficients; the paper's Table 3 by default.
    integer : integer draft length instead of its continuous relaxation.
    n_bounds : search range of ``N``; default ``(1e7, M)``. The acceptance plane must stay in
        (0, 1) over the whole range.

    ``M`` must lie in :data:`sdsl._validate.TARGET_PARAMS`, ``D`` and ``D'`` in
    :data:`sdsl._validate.TOKENS` and ``n_bounds`` in :data:`sdsl._validate.MODEL_PARAMS`: outside
    them the loss law is extrapolated beyond any trained model (or its perplexities overflow).

    Returns
    -------
    DraftOptimum
        With ``status`` other than ``"interior"`` when ``T`` is largest at an end of the range
        (``n_star`` is then that end).

    Raises ``ValueError`` for invalid input and when the plane leaves (0, 1) on the range.
    """
    c = resolve_constants(constants)
    m = V.number(m, "m", low=V.TARGET_PARAMS[0], high=V.TARGET_PARAMS[1], what="target parameters", strings=False)
    d_draft = V.number(
        d_draft, "d_draft", low=V.TOKENS[0], high=V.TOKENS[1], what="draft pre-training tokens", strings=False
    )
    d_target = V.number(
        d_target, "d_target", low=V.TOKENS[0], high=V.TOKENS[1], what="target pre-training tokens", strings=False
    )
    integer = V.boolean(integer, "integer", "best integer draft length")
    lo, hi = (
        (min(1e7, m), m)
        if n_bounds is None
        else V.interval(
            n_bounds, "n_bounds", low=V.MODEL_PARAMS[0], high=V.MODEL_PARAMS[1], what="draft parameters", strings=False
        )
    )
    if hi > m:
        raise ValueError(f"n_bounds[1] = {hi:.6g} exceeds the target size m = {m:.6g}: a draft must be smaller")
    grid = log_grid(lo, hi, 97)
    throughput_curve(grid[0], m, d_draft, d_target, c, coefficients, integer)  # raises if alpha leaves (0, 1)
    o = solve(plane_alpha(m, d_draft, d_target, c, coefficients), [m], grid, integer)
    n = float(o.n_at_max[0])
    return DraftOptimum(
        n_star=n,
        gamma_star=float(o.gamma_star[0]),
        alpha=float(o.alpha[0]),
        tokens_per_flop=float(o.tokens_per_flop[0]),
        m=m,
        status=str(o.status[0]),
    )


def gamma_grid_search(alpha: float, n: float, m: float, gamma_grid: np.ndarray) -> float:
    """The draft length on ``gamma_grid`` that maximises Eq. 9 (brute force, no calculus)."""
    a = float(as_open_unit(alpha, "alpha (acceptance rate)"))
    g = as_in_range(gamma_grid, "gamma_grid", 0.0, np.inf)
    t = tokens_per_flop(a, float(as_positive(n, "n")), float(as_positive(m, "m")), g)
    return float(g[int(np.argmax(t))])


#: Cases of :func:`gamma_check`: (alpha, N, M) covering the method notes' example, Table 5's
#: optima and the edges of the domain (alpha near 0 and 1, M/N from 1 to 1e8).
GAMMA_CASES: tuple[tuple[float, float, float], ...] = (
    (0.65, 2e8, 7e10),
    (0.6383, 1.24e8, 14167290880.0),
    (0.6549, 1.80e8, 32512218112.0),
    (0.05, 1e7, 1e10),
    (0.3, 1e9, 1e9),
    (0.5, 1e3, 1e11),
    (0.9, 1e8, 1e10),
    (0.99, 1e6, 1e12),
    (0.999, 1e9, 1e10),
)


def gamma_check(
    cases: Iterable[tuple[float, float, float]] = GAMMA_CASES,
    step: float = 1e-3,
) -> pd.DataFrame:
    """The Lambert-W closed form of ``gamma*`` (:func:`sdsl.optimal_gamma`) against a brute-force
    grid over ``gamma`` of spacing ``step`` (method notes, section 3): the chapter
    ``optimal_draft``'s table ``gamma_check``.

    The grid runs from 0 to ``2 gamma_closed + 10``: wide enough that a wrong closed form would
    show. Columns: ``alpha, n, m, m_over_n, gamma_closed, gamma_brute, abs_diff, t_closed,
    t_brute, t_rel_diff`` (``T(closed) / T(brute) - 1``, >= 0 up to rounding when the closed form
    is right).
    """
    import pandas as pd

    step = float(as_positive(step, "step"))
    rows = []
    for alpha, n, m in cases:
        g_closed = float(optimal_gamma(alpha, n, m))
        grid = np.arange(0.0, 2.0 * g_closed + 10.0 + step, step)
        g_brute = gamma_grid_search(alpha, n, m, grid)
        t_c = float(tokens_per_flop(alpha, n, m, g_closed))
        t_b = float(tokens_per_flop(alpha, n, m, g_brute))
        rows.append(
            {
                "alpha": alpha,
                "n": n,
                "m": m,
                "m_over_n": m / n,
                "gamma_closed": g_closed,
                "gamma_brute": g_brute,
                "abs_diff": abs(g_closed - g_brute),
                "t_closed": t_c,
                "t_brute": t_b,
                "t_rel_diff": t_c / t_b - 1.0,
            }
        )
    return pd.DataFrame(rows)


def brute_force_optimum(
    m: float,
    d_draft: float,
    d_target: float,
    n_grid: np.ndarray,
    gamma_grid: np.ndarray,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    chunk: int = 256,
) -> dict[str, float]:
    """``argmax`` of Eq. 9 over a grid of draft sizes and a grid of draft lengths, by evaluating
    every pair (no closed form, no optimiser): the reference the closed form is benchmarked
    against. Works through ``n_grid`` in chunks of ``chunk`` sizes to bound memory.

    Returns ``n_star, gamma_star, alpha, tokens_per_flop``.
    """
    c = resolve_constants(constants)
    m = float(as_positive(m, "m (target parameters)"))
    n_grid = as_positive(n_grid, "n_grid")
    g = as_in_range(gamma_grid, "gamma_grid", 0.0, np.inf)
    if np.any(n_grid > m):
        raise ValueError(f"n_grid must not exceed the target size m = {m:.6g}, got {n_grid.max():.6g}")
    y = perplexity(m, float(as_positive(d_target, "d_target")), c)
    alpha = acceptance_rate(perplexity(n_grid, float(as_positive(d_draft, "d_draft")), c), y, coefficients)
    if np.any((alpha <= 0) | (alpha >= 1)):
        raise ValueError("the acceptance plane leaves (0, 1) on n_grid; narrow the grid")
    log_a = np.log(alpha)
    best_t, best_i, best_j = -np.inf, 0, 0
    for s in range(0, n_grid.size, chunk):
        la = log_a[s : s + chunk, None]
        nn = n_grid[s : s + chunk, None]
        t = -np.expm1((g[None, :] + 1.0) * la) / (-np.expm1(la)) / (2.0 * nn * g[None, :] + 2.0 * m)
        k = int(np.argmax(t))
        i, j = divmod(k, g.size)
        if t[i, j] > best_t:
            best_t, best_i, best_j = float(t[i, j]), s + i, j
    return {
        "n_star": float(n_grid[best_i]),
        "gamma_star": float(g[best_j]),
        "alpha": float(alpha[best_i]),
        "tokens_per_flop": best_t,
    }
