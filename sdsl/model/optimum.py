"""The throughput-optimal draft size ``N*``: the one search every part of the package calls, its
front ends and its brute-force reference.

Method notes, section 6: ``N* = argmax_N T(N, M, alpha(N), gamma*(alpha(N), N, M))`` with ``T`` the
paper's Eq. 9 (tokens per FLOP, :func:`sdsl.model.throughput.tokens_per_flop`) at the optimal draft
length ``gamma*`` (continuous Lambert-W closed form or best integer), and ``alpha(N)`` any
acceptance law: the paper's Eq. 5 plane through the loss law (:func:`plane_alpha`), or a law of the
beyond chapter.

:func:`solve` is the kernel. For ``k`` configurations at once it

1. scans ``F(u) = M T(e^u)`` on a grid of ``u = ln N`` (one row per configuration, or a shared
   row), exhaustively or coarse-to-fine;
2. finds the contiguous run of the grid where ``0 < alpha < 1`` that holds the largest ``F``; a
   largest value at an end of that run is *not* an optimum (status names the edge);
3. refines an interior grid maximum by the root of the central-difference derivative
   ``g(u) = (F(u + h) - F(u - h)) / (2 h)`` between the grid argmax's two neighbours
   (:func:`sdsl.model.solvers.find_root`, vectorised: scipy's ``find_root`` does the same, but
   scipy is not in the base install that ``sdsl plan`` runs from).

Why a root and not a minimiser: near a smooth maximum ``F`` changes only quadratically, so a
minimiser of ``-F`` can locate the optimum only to about ``sqrt(eps) ~ 1e-8`` relative in ``N``,
and the last bits of ``exp``, ``log`` and ``power`` (which differ between CPUs' vector kernels)
decide where in that band it stops. ``g`` crosses zero linearly, so its root is located to about
``eps F / (h F'')``: with ``h = 1e-4`` that is ~1e-11 relative in ``N`` whatever the kernels (the
tests perturb ``F`` by 1e-15 relative noise and find ``N*`` within 1e-10), at a truncation bias of
``O(h^2)`` ~ 1e-10 relative, the same on every machine.

Front ends: the paper's Eq. 5 plane for one configuration (:func:`optimal_draft_size`), for many
(:func:`optimal_draft_sizes`, and as a table :func:`optimal_draft_table`) and its throughput curve
``T(N)`` (:func:`throughput_curve`); any fitted acceptance law (:func:`law_optimal_draft_size`,
:func:`law_optimal_draft_sizes`: ``alpha_law(N)`` takes ``x = exp(L(N, D))``, ``y = exp(L(M, D'))``,
``ln N`` and ``ln D``, the perplexities from the loss law, as the paper does for Eq. 5).

The reference: :func:`brute_force` evaluates every grid point (and, given a grid of draft lengths,
every pair of draft size and draft length: no closed form, no calculus, no optimiser);
:func:`gamma_grid_search` does the same for ``gamma*`` alone. Tests and benchmarks compare
:func:`solve` with them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np

from sdsl import validation as V
from sdsl.model.laws import (
    BESIROGLU_2024,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    acceptance_rate,
    loss_law,
    perplexity,
    resolve_constants,
)
from sdsl.model.solvers import find_root
from sdsl.model.throughput import _optimal_gamma, _tokens_per_flop, optimal_gamma, tokens_per_flop
from sdsl.validation import as_float_array, as_in_range, as_open_unit, as_positive, one_line

if TYPE_CHECKING:  # numpy.typing and pandas cost import time; the annotations are strings
    import pandas as pd
    from numpy.typing import ArrayLike

__all__ = [
    "AlphaFn",
    "AlphaLaw",
    "DERIVATIVE_STEP",
    "DraftOptimum",
    "LawOptimum",
    "Optima",
    "brute_force",
    "gamma_grid_search",
    "law_optimal_draft_size",
    "law_optimal_draft_sizes",
    "log_grid",
    "optimal_draft_size",
    "optimal_draft_sizes",
    "optimal_draft_table",
    "optimum_inside",
    "plane_alpha",
    "plane_inside",
    "scaled_throughput",
    "solve",
    "throughput_curve",
]

#: ``alpha(n, rows)``: the acceptance rate at draft sizes ``n`` (shape ``(len(rows), p)`` or
#: ``(len(rows),)``) for the configurations ``rows`` (integer indices into the problem).
AlphaFn = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: Step ``h`` in ``ln N`` of the central difference whose root is ``N*`` (see the module notes).
DERIVATIVE_STEP = 1e-4

#: Status of a configuration whose maximum lies strictly inside the valid range.
INTERIOR = "interior"


@dataclass(frozen=True)
class Optima:
    """The result of :func:`solve`, one entry per configuration.

    ``n_star`` is NaN unless ``status == "interior"``; ``n_at_max`` is where ``T`` is largest on the
    searched range (``n_star`` for an interior optimum, else the edge); ``gamma_star``, ``alpha``
    and ``tokens_per_flop`` are taken at ``n_at_max``. ``n_grid`` and ``grid_index`` are the grid
    argmax; ``valid_low`` and ``valid_high`` bound the run of the grid where ``0 < alpha < 1``
    that holds it. ``status`` is ``"interior"`` or a sentence that says where ``T`` is largest.
    """

    n_star: np.ndarray
    n_at_max: np.ndarray
    gamma_star: np.ndarray
    alpha: np.ndarray
    tokens_per_flop: np.ndarray
    m: np.ndarray
    n_grid: np.ndarray
    grid_index: np.ndarray
    valid_low: np.ndarray
    valid_high: np.ndarray
    status: np.ndarray

    @property
    def interior(self) -> np.ndarray:
        """True where the optimum lies strictly inside the valid range."""
        return self.status == INTERIOR

    def __len__(self) -> int:
        return int(self.m.size)


# ---------------------------------------------------------------------------------------------
# the objective


def _column(v: np.ndarray, like: np.ndarray) -> np.ndarray:
    """A per-configuration vector shaped to broadcast against ``like`` (configurations first)."""
    return v.reshape(v.shape + (1,) * (like.ndim - 1))


def plane_alpha(
    m: ArrayLike,
    d_draft: ArrayLike,
    d_target: ArrayLike,
    constants: LossConstants | str | list = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients | list | np.ndarray = PAPER_EQ5,
) -> AlphaFn:
    """``alpha(n, rows)`` of the paper's Eq. 5, ``alpha = A x + B y + C`` with
    ``x = exp(L(N, D))`` and ``y = exp(L(M, D'))`` (method notes, sections 4 and 5).

    ``m``, ``d_draft``, ``d_target`` are per-configuration vectors. ``constants`` is one set or a
    list with one set per configuration; ``coefficients`` one :class:`AcceptanceCoefficients`, a
    list of them, or an array of shape ``(k, 3)`` (columns ``A, B, C``: bootstrap draws).
    """
    m, d, p = (np.atleast_1d(np.asarray(v, dtype=float)) for v in (m, d_draft, d_target))
    m, d, p = np.broadcast_arrays(m, d, p)
    k = m.size
    sets = (
        [resolve_constants(c) for c in constants] if isinstance(constants, list) else [resolve_constants(constants)] * k
    )
    if len(sets) != k:
        raise ValueError(f"constants must be one set or one per configuration ({k}), got {len(sets)}")
    cs = {f: np.array([getattr(c, f) for c in sets], dtype=float) for f in ("E", "A", "B", "a", "b")}
    if isinstance(coefficients, AcceptanceCoefficients):
        coef = np.tile([coefficients.A, coefficients.B, coefficients.C], (k, 1))
    elif isinstance(coefficients, list) and coefficients and isinstance(coefficients[0], AcceptanceCoefficients):
        coef = np.array([[c.A, c.B, c.C] for c in coefficients], dtype=float)
    else:
        coef = np.asarray(coefficients, dtype=float)
    if coef.shape != (k, 3):
        raise ValueError(
            f"coefficients must be one set, one per configuration or a ({k}, 3) array, got shape {coef.shape}"
        )
    y = np.exp(loss_law(m, p, cs["E"], cs["A"], cs["B"], cs["a"], cs["b"]))

    def alpha(n: np.ndarray, rows: np.ndarray) -> np.ndarray:
        n = np.asarray(n, dtype=float)
        col = {f: _column(v[rows], n) for f, v in cs.items()}
        x = np.exp(loss_law(n, _column(d[rows], n), col["E"], col["A"], col["B"], col["a"], col["b"]))
        return (
            _column(coef[rows, 0], n) * x + _column(coef[rows, 1], n) * _column(y[rows], n) + _column(coef[rows, 2], n)
        )

    return alpha


def scaled_throughput(
    alpha: np.ndarray, n: np.ndarray, m: np.ndarray, integer: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(M T, gamma*)``: Eq. 9 at the optimal draft length, scaled by ``M`` (order one), where
    ``0 < alpha < 1`` and ``n <= m``; ``(-inf, nan)`` elsewhere. Arrays of one shape; ``integer`` per
    element (best integer draft length instead of the continuous one)."""
    alpha, n, m, integer = np.broadcast_arrays(alpha, n, m, integer)
    t = np.full(alpha.shape, -np.inf)
    gam = np.full(alpha.shape, np.nan)
    ok = np.isfinite(alpha) & (alpha > 0) & (alpha < 1) & (n > 0) & (n <= m)
    for integ in (False, True):
        sel = ok & (integer == integ)
        if sel.any():
            a_s, n_s, m_s = alpha[sel], n[sel], m[sel]
            g = _optimal_gamma(a_s, m_s / n_s, integ)  # checked here: 0 < alpha < 1, n <= m
            t[sel] = _tokens_per_flop(a_s, n_s, m_s, g) * m_s
            gam[sel] = g
    return t, gam


def log_grid(low: ArrayLike, high: ArrayLike, points: int) -> np.ndarray:
    """``points`` log-spaced draft sizes from ``low`` to ``high`` per configuration (rows), ends exact."""
    lo = np.atleast_1d(np.asarray(low, dtype=float))
    hi = np.atleast_1d(np.asarray(high, dtype=float))
    lo, hi = np.broadcast_arrays(lo, hi)
    grid = np.exp(np.linspace(np.log(lo), np.log(hi), int(points), axis=-1))
    grid[:, 0], grid[:, -1] = lo, hi
    return grid


# ---------------------------------------------------------------------------------------------
# the kernel


def _scan(f: Callable[[np.ndarray, np.ndarray], np.ndarray], grid: np.ndarray, exhaustive: bool) -> np.ndarray:
    """``F`` on the grid, ``-inf`` where it was not evaluated: everywhere (``exhaustive``) or on every
    ``s``-th point (``s ~ sqrt(p/2)``) and then every point between the coarse argmax's neighbours
    (the same argmax whenever ``F`` is unimodal, at a few per cent of the evaluations)."""
    k, p = grid.shape
    rows = np.arange(k)
    if exhaustive or p < 200:
        return f(grid, rows)
    out = np.full(grid.shape, -np.inf)
    stride = max(1, int(np.sqrt(p / 2.0)))
    coarse = np.arange(0, p, stride)
    if coarse[-1] != p - 1:  # the last point too (not np.unique: it imports numpy.ma, 30 ms of sdsl plan)
        coarse = np.r_[coarse, p - 1]
    fc = f(grid[:, coarse], rows)
    out[:, coarse] = fc
    j = np.argmax(fc, axis=1)
    lo = coarse[np.maximum(j - 1, 0)]
    hi = coarse[np.minimum(j + 1, coarse.size - 1)]
    width = int(np.max(hi - lo)) + 1
    window = np.minimum(lo[:, None] + np.arange(width)[None, :], hi[:, None])
    out[rows[:, None], window] = f(grid[rows[:, None], window], rows)
    return out


def _edge_status(where: str, lo: float, hi: float, n: float, a: float, side: str) -> str:
    if where == "low":
        return f"no interior optimum: T is largest at the lower end of the search range (N = {lo:.4g})"
    if where == "high":
        return f"no interior optimum: T is largest at the upper end of the search range (N = {hi:.4g})"
    if where == "none":
        return "no interior optimum: alpha lies outside (0, 1) on the whole search range"
    return (
        f"no interior optimum: T is largest at N = {n:.4g}, where alpha = {a:.4f}: alpha leaves (0, 1) just {side} it"
    )


def _derivative(f: Callable[[np.ndarray, np.ndarray], np.ndarray], step: float):
    """The central difference of ``f`` in ``u = ln N`` (one-sided next to an undefined point)."""

    def deriv(u: np.ndarray, r: np.ndarray) -> np.ndarray:
        r = np.asarray(r).astype(int)
        fp, fm = f(np.exp(u + step), r), f(np.exp(u - step), r)
        central = (fp - fm) / (2.0 * step)
        both = np.isfinite(fp) & np.isfinite(fm)
        if both.all():  # the usual case: the centre is needed only for a one-sided difference
            return central
        f0 = f(np.exp(u), r)
        right = (fp - f0) / step
        left = (f0 - fm) / step
        return np.where(both, central, np.where(np.isfinite(fp), right, np.where(np.isfinite(fm), left, 0.0)))

    return deriv


def _refine(
    f: Callable[[np.ndarray, np.ndarray], np.ndarray],
    g: np.ndarray,
    kk: np.ndarray,
    sel: np.ndarray,
    fg: np.ndarray,
    step: float,
) -> np.ndarray:
    """The root of the derivative of ``f`` between the grid argmax's neighbours, for the rows
    ``sel`` (interior grid maxima); the grid argmax where the bracket has no sign change or the root
    is not better."""
    out = g[sel, kk[sel]].copy()
    deriv = _derivative(f, step)
    ks = kk[sel]
    lo_u, hi_u = np.log(g[sel, ks - 1]), np.log(g[sel, ks + 1])
    ok = (deriv(lo_u, sel) > 0) & (deriv(hi_u, sel) < 0)
    if ok.any():
        s2 = sel[ok]
        n_ref = np.exp(find_root(deriv, lo_u[ok], hi_u[ok], s2, xatol=1e-13))
        better = f(n_ref, s2) >= fg[s2, kk[s2]]  # never worse than the grid
        sub = out[ok]
        sub[better] = n_ref[better]
        out[ok] = sub
    return out


def _refine_branches(
    alpha_fn: AlphaFn,
    m: np.ndarray,
    g: np.ndarray,
    fg: np.ndarray,
    kk: np.ndarray,
    i0: np.ndarray,
    i1: np.ndarray,
    sel: np.ndarray,
    step: float,
    exhaustive: bool,
    gammas: ArrayLike | None,
    branch_objective,
) -> np.ndarray:
    """``N*`` of the rows ``sel`` when the draft length is an integer: each candidate length solved
    as its own smooth problem on the parent row's valid run, the best kept (see :func:`solve`)."""
    if gammas is None:
        a0 = alpha_fn(g[sel, kk[sel]], sel)
        g0 = optimal_gamma(a0, g[sel, kk[sel]], m[sel], integer=True)
        cands = np.maximum(np.asarray(g0, dtype=float)[:, None] + np.arange(-3, 4)[None, :], 1.0)
    else:
        cands = np.broadcast_to(np.asarray(gammas, dtype=float)[None, :], (sel.size, np.size(gammas)))
    parent = np.repeat(sel, cands.shape[1])
    gam = cands.ravel()
    p = g.shape[1]

    def fb(n: np.ndarray, r: np.ndarray) -> np.ndarray:
        n = np.asarray(n, dtype=float)
        r = np.asarray(r).astype(int)
        par, gg = parent[r], _column(gam[r], n)
        if branch_objective is not None:
            return np.asarray(branch_objective(n, par, gg), dtype=float)
        a = alpha_fn(n, par)
        mm = _column(m[par], n)
        a, n_, mm, gg = np.broadcast_arrays(a, n, mm, gg)
        out = np.full(a.shape, -np.inf)
        ok = np.isfinite(a) & (a > 0) & (a < 1) & (n_ > 0) & (n_ <= mm)
        out[ok] = _tokens_per_flop(a[ok], n_[ok], mm[ok], gg[ok]) * mm[ok]
        return out

    gp = g[parent]
    fgb = _scan(fb, gp, exhaustive)
    idx = np.arange(p)[None, :]
    outside = (idx < i0[parent][:, None]) | (idx > i1[parent][:, None])
    fgb = np.where(outside, -np.inf, fgb)
    kb = np.argmax(fgb, axis=1)
    pseudo = np.arange(parent.size)
    n_b = gp[pseudo, kb].copy()
    inner_b = (kb > i0[parent]) & (kb < i1[parent]) & np.isfinite(fgb[pseudo, kb])
    if inner_b.any():
        n_b[inner_b] = _refine(fb, gp, kb, pseudo[inner_b], fgb, step)
    value = np.where(np.isfinite(fgb[pseudo, kb]), fb(n_b, pseudo), -np.inf).reshape(cands.shape)
    best = np.argmax(value, axis=1)
    return n_b.reshape(cands.shape)[np.arange(sel.size), best]


def solve(
    alpha_fn: AlphaFn,
    m: ArrayLike,
    grid: ArrayLike,
    integer: ArrayLike = False,
    *,
    refine: bool = True,
    exhaustive: bool = False,
    step: float = DERIVATIVE_STEP,
    objective: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    gammas: ArrayLike | None = None,
    branch_objective: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> Optima:
    """``N*`` for ``k`` configurations at once (see the module notes for the method).

    Parameters
    ----------
    alpha_fn : ``alpha(n, rows)``, the acceptance law (:data:`AlphaFn`), e.g. :func:`plane_alpha`.
    m : target parameters ``M``, one per configuration (shape ``(k,)``).
    grid : draft sizes to scan, strictly increasing, at least 3 points, never above ``M``:
        shape ``(p,)`` (shared) or ``(k, p)`` (one row per configuration; :func:`log_grid`).
    integer : best integer draft length instead of its continuous relaxation (one or per row).
    refine : refine interior grid maxima (root of the central-difference derivative); if False,
        ``n_star`` is the grid argmax.
    exhaustive : evaluate every grid point; the default scans coarse-to-fine (identical argmax
        for a unimodal ``T``).
    step : ``h``, the step of the central difference in ``ln N``.
    objective : what is maximised, ``objective(n, rows)`` (``-inf`` where undefined); default
        ``M T``, Eq. 9 at the optimal draft length (:func:`scaled_throughput`). The hardware model
        passes its wall-clock speedup; ``alpha_fn`` still decides where the search is valid.
    gammas, branch_objective : the integer draft lengths to search and
        ``branch_objective(n, rows, gamma)``, the objective at a fixed draft length, for an objective
        that is a maximum over integer draft lengths (the hardware model's); by default the integer
        rows search the 7 lengths around the grid optimum's with ``M T`` at that length.

    With an integer draft length ``T(N) = max_g T_g(N)`` has kinks where the best ``g`` changes, and
    its derivative can change sign at several of them inside one bracket, so a root of it is not
    well defined. The two maxima commute, ``max_N max_g = max_g max_N``, and each ``T_g`` is smooth:
    each candidate ``g`` is solved as its own smooth problem and the best of them is kept.

    Returns
    -------
    Optima
        One entry per configuration.
    """
    m = np.atleast_1d(np.asarray(m, dtype=float))
    k = m.size
    g = np.asarray(grid, dtype=float)
    if g.ndim == 1:
        g = np.broadcast_to(g[None, :], (k, g.size))
    if g.ndim != 2 or g.shape[0] != k:
        raise ValueError(f"grid must have shape (p,) or ({k}, p), got {np.shape(grid)}")
    if g.shape[1] < 3:
        raise ValueError(f"grid needs at least 3 draft sizes, got {g.shape[1]}")
    integ = np.broadcast_to(np.asarray(integer, dtype=bool), (k,)).copy()
    if not (step > 0 and np.isfinite(step)):
        raise ValueError(f"step (of the derivative in ln N) must be a finite number > 0, got {step!r}")

    def f(n: np.ndarray, rows: np.ndarray) -> np.ndarray:
        n = np.asarray(n, dtype=float)
        if objective is not None:
            return np.asarray(objective(n, rows), dtype=float)
        a = alpha_fn(n, rows)
        return scaled_throughput(a, n, _column(m[rows], n), _column(integ[rows], n))[0]

    p = g.shape[1]
    fg = _scan(f, g, exhaustive)
    kk = np.argmax(fg, axis=1)
    rows = np.arange(k)
    alpha_grid = alpha_fn(g[rows, kk], rows)
    # the contiguous run of valid alpha that holds the maximum, from the alpha of every grid point
    va = alpha_fn(g, rows)
    valid = np.isfinite(va) & (va > 0) & (va < 1)
    idx = np.arange(p)[None, :]
    i0 = np.where(~valid & (idx < kk[:, None]), idx, -1).max(axis=1) + 1
    i1 = np.where(~valid & (idx > kk[:, None]), idx, p).min(axis=1) - 1
    any_valid = valid.any(axis=1) & np.isfinite(fg[rows, kk])
    inner = any_valid & (kk != i0) & (kk != i1)

    n_at = g[rows, kk].copy()
    if refine and inner.any():
        sel = np.flatnonzero(inner)
        branched = integ[sel] if gammas is None else np.ones(sel.size, dtype=bool)
        smooth = sel[~branched]
        if smooth.size:
            n_at[smooth] = _refine(f, g, kk, smooth, fg, step)
        if branched.any():
            n_at[sel[branched]] = _refine_branches(
                alpha_fn, m, g, fg, kk, i0, i1, sel[branched], step, exhaustive, gammas, branch_objective
            )
    alpha_at = alpha_fn(n_at, rows)
    t_at, gamma_at = scaled_throughput(alpha_at, n_at, m, integ)
    t_at = np.where(np.isfinite(t_at), t_at, np.nan)
    status = np.empty(k, dtype=object)
    for i in range(k):
        if not any_valid[i]:
            status[i] = _edge_status("none", g[i, 0], g[i, -1], np.nan, np.nan, "")
        elif inner[i]:
            status[i] = INTERIOR
        elif kk[i] == 0:
            status[i] = _edge_status("low", g[i, 0], g[i, -1], np.nan, np.nan, "")
        elif kk[i] == p - 1:
            status[i] = _edge_status("high", g[i, 0], g[i, -1], np.nan, np.nan, "")
        else:
            side = "above" if kk[i] == i1[i] else "below"
            status[i] = _edge_status("alpha", g[i, 0], g[i, -1], g[i, kk[i]], float(alpha_grid[i]), side)
    nan = np.full(k, np.nan)
    return Optima(
        n_star=np.where(inner, n_at, nan),
        n_at_max=n_at,
        gamma_star=gamma_at,
        alpha=alpha_at,
        tokens_per_flop=t_at / m,
        m=m,
        n_grid=g[rows, kk].copy(),
        grid_index=kk.astype(int),
        valid_low=np.where(any_valid, g[rows, np.minimum(i0, p - 1)], nan),
        valid_high=np.where(any_valid, g[rows, np.maximum(i1, 0)], nan),
        status=status,
    )


# ---------------------------------------------------------------------------------------------
# the paper's Eq. 5 plane


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


def optimal_draft_table(
    m: ArrayLike,
    d_draft: ArrayLike,
    d_target: ArrayLike,
    n: ArrayLike,
    constants: LossConstants | str = BESIROGLU_2024,
    coefficients: AcceptanceCoefficients = PAPER_EQ5,
    integer: bool = False,
    refine: bool = True,
    exhaustive: bool = False,
) -> pd.DataFrame:
    """:func:`optimal_draft_sizes` on a draft-size grid ``n`` as a table, which refuses a grid on
    which the acceptance plane leaves (0, 1) (alpha grows with ``N``, so the grid's ends bound it).

    Parameters
    ----------
    m, d_draft, d_target : target parameters ``M``, draft tokens ``D``, target tokens ``D'``;
        scalars or 1-D arrays that broadcast together (one entry per configuration).
    n : the draft-size grid, strictly increasing, at least 3 points, never above ``M``; 1-D
        (shared) or 2-D (one row per configuration).
    constants, coefficients : loss-law constants and Eq. 5 coefficients.
    integer : integer draft length instead of its continuous relaxation.
    refine : refine the grid argmax; if False, ``n_star`` is the raw grid argmax.
    exhaustive : evaluate ``T`` at every grid point (default: coarse-to-fine, the same argmax
        whenever ``T`` is unimodal in ``N``).

    Returns
    -------
    DataFrame
        One row per configuration: ``m, d_draft, d_target, n_star, n_star_grid`` (the grid
        argmax), ``grid_index``, ``gamma_star, alpha, tokens_per_flop`` (at ``n_star``) and
        ``on_edge`` (the grid argmax is an end of the grid: ``N*`` may lie outside it; ``n_star`` is
        then that end).
    """
    import pandas as pd

    if np.shape(n)[-1] < 3:
        raise ValueError(f"n (draft-size grid) needs at least 3 points, got {np.shape(n)[-1]}")
    o = optimal_draft_sizes(
        m, d_draft, d_target, n, constants, coefficients, integer, refine=refine, exhaustive=exhaustive
    )
    k = len(o)
    mm, dd, pp = (np.broadcast_to(np.atleast_1d(np.asarray(v, dtype=float)), (k,)) for v in (m, d_draft, d_target))
    g = np.broadcast_to(np.asarray(n, dtype=float), (k, np.shape(n)[-1]))
    ends = plane_alpha(mm, dd, pp, constants, coefficients)(g[:, [0, -1]], np.arange(k))
    bad = (ends <= 0) | (ends >= 1)
    if np.any(bad):
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"the acceptance rate leaves (0, 1) on the draft-size grid: configuration {i} "
            f"(m = {mm[i]:.6g}, d_draft = {dd[i]:.6g}, d_target = {pp[i]:.6g}) has alpha = "
            f"{ends[i, j]:.6g} at n = {g[i, -j]:.6g}; narrow the grid"
        )
    return pd.DataFrame(
        {
            "m": o.m,
            "d_draft": np.asarray(dd, dtype=float),
            "d_target": np.asarray(pp, dtype=float),
            "n_star": o.n_at_max,
            "n_star_grid": o.n_grid,
            "grid_index": o.grid_index,
            "gamma_star": o.gamma_star,
            "alpha": o.alpha,
            "tokens_per_flop": o.tokens_per_flop,
            "on_edge": (o.grid_index == 0) | (o.grid_index == g.shape[1] - 1),
        }
    )


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

    ``M`` must lie in :data:`sdsl.validation.TARGET_PARAMS`, ``D`` and ``D'`` in
    :data:`sdsl.validation.TOKENS` and ``n_bounds`` in :data:`sdsl.validation.MODEL_PARAMS`: outside
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


def optimum_inside(
    configs: Iterable[tuple[float, float, float]],
    constants: Any,
    coefficients: Any,
    integer: bool,
    names: str = "constants and coefficients",
) -> None:
    """Each configuration ``(M, D, D')`` has its optimum ``N*`` strictly inside the default search
    range (:func:`optimal_draft_size`) with these loss-law constants and plane coefficients;
    otherwise one line naming ``names`` (an argument check of a chapter's parameters)."""
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


# ---------------------------------------------------------------------------------------------
# any fitted acceptance law


class AlphaLaw(Protocol):
    """What ``N*`` needs of a fitted acceptance law: :class:`sdsl.model.alpha_laws.FittedLaw`'s
    ``alpha(features, target)``, or any object with it (several laws as one, in
    :mod:`sdsl.plan.interval`; alpha_laws imports pandas and scipy, which `sdsl plan` must not)."""

    def alpha(self, features: Mapping[str, np.ndarray], target: str) -> np.ndarray: ...


@dataclass(frozen=True)
class LawOptimum:
    """``N*`` of one law at one configuration. ``status`` is ``"interior"`` for a genuine
    maximum; otherwise ``n_star`` is NaN and ``n_at_max`` is where ``T`` is largest on the
    searched range (an end of the range, or where ``alpha`` leaves (0, 1))."""

    n_star: float
    gamma_star: float
    alpha: float
    tokens_per_flop: float
    m: float
    status: str
    n_at_max: float
    alpha_valid_range: tuple[float, float]

    @property
    def ratio(self) -> float:
        """``M / N*``."""
        return self.m / self.n_star if np.isfinite(self.n_star) else np.nan


def _features_at(n: np.ndarray, m: float, d_draft: float, d_target: float, c: LossConstants) -> dict[str, np.ndarray]:
    n = np.asarray(n, dtype=float)
    x = np.exp(loss_law(n, d_draft, *c.as_tuple()))  # perplexity(n, d_draft, c) without checks
    y = np.full(n.shape, np.exp(loss_law(m, d_target, *c.as_tuple())))
    return {"x": x, "y": y, "ln_x": np.log(x), "ln_n": np.log(n), "ln_d": np.full(np.shape(n), np.log(d_draft))}


def _rows_constants(constants, k: int) -> dict[str, np.ndarray]:
    """Loss-law constants as per-row arrays ``E, A, B, a, b`` (one set, or one per row)."""
    if isinstance(constants, (LossConstants, str)):
        constants = [constants] * k
    cs = [resolve_constants(c) for c in constants]
    if len(cs) != k:
        raise ValueError(f"constants must be one set or one per configuration ({k}), got {len(cs)}")
    return {f: np.array([getattr(c, f) for c in cs], dtype=float) for f in ("E", "A", "B", "a", "b")}


def _law_alpha_fn(
    fitted: AlphaLaw,
    targets: np.ndarray,
    m: np.ndarray,
    d_draft: np.ndarray,
    d_target: np.ndarray,
    cs: Mapping[str, np.ndarray],
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``alpha(n, rows)`` of a fitted law for the configurations ``rows`` (``n`` has one row, or one
    entry, per element of ``rows``): the features of :func:`_features_at`, evaluated per target."""

    def alpha(n: np.ndarray, rows: np.ndarray) -> np.ndarray:
        n = np.asarray(n, dtype=float)
        col = {k: _column(v[rows], n) for k, v in cs.items()}
        dd, mm, pp = _column(d_draft[rows], n), _column(m[rows], n), _column(d_target[rows], n)
        x = np.exp(loss_law(n, dd, col["E"], col["A"], col["B"], col["a"], col["b"]))
        y = np.exp(loss_law(mm, pp, col["E"], col["A"], col["B"], col["a"], col["b"]))
        feats = {
            "x": x,
            "y": np.broadcast_to(y, n.shape),
            "ln_x": np.log(x),
            "ln_n": np.log(n),
            "ln_d": np.broadcast_to(np.log(dd), n.shape),
        }
        out = np.empty(n.shape, dtype=float)
        tr = targets[rows]
        for t in sorted(set(tr.tolist())):  # not np.unique: it imports numpy.ma (30 ms; sdsl plan)
            sel = tr == t
            out[sel] = fitted.alpha({k: v[sel] for k, v in feats.items()}, str(t))
        return out

    return alpha


def _batch_optima(
    alpha_fn: Callable[[np.ndarray, np.ndarray], np.ndarray],
    m: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    integer: np.ndarray,
    grid_points: int,
) -> list[LawOptimum]:
    """:func:`sdsl.model.optimum.solve` on a ``grid_points`` log grid from ``lo`` to ``hi`` per
    configuration, as one :class:`LawOptimum` per configuration."""
    o = solve(alpha_fn, m, log_grid(lo, hi, grid_points), integer)
    return [
        LawOptimum(
            float(o.n_star[i]),
            float(o.gamma_star[i]),
            float(o.alpha[i]),
            float(o.tokens_per_flop[i]),
            float(o.m[i]),
            str(o.status[i]),
            float(o.n_at_max[i]),
            (float(o.valid_low[i]), float(o.valid_high[i])),
        )
        for i in range(len(o))
    ]


def law_optimal_draft_sizes(
    fitted: AlphaLaw,
    targets: Sequence[str] | str,
    m: ArrayLike,
    d_draft: ArrayLike,
    d_target: ArrayLike,
    constants: LossConstants | str | Sequence[LossConstants | str] = BESIROGLU_2024,
    integer: bool | Sequence[bool] = False,
    grid_points: int = 241,
    n_bounds: tuple[ArrayLike, ArrayLike] | None = None,
) -> list[LawOptimum]:
    """:func:`law_optimal_draft_size` for many configurations of one fitted law at once (one entry
    per configuration; ``targets``, ``m``, ``d_draft``, ``d_target``, ``constants``, ``integer`` and
    the ends of ``n_bounds`` broadcast together), all solved by one call of
    :func:`sdsl.model.optimum.solve`. A configuration the law cannot evaluate (a target without a
    fit or a level) gets status ``"not defined: ..."`` and NaNs. Search range per configuration:
    ``n_bounds`` (low, high), default ``(min(1e6, M/10), M)``."""
    m_ = np.atleast_1d(np.asarray(as_positive(m, "m (target parameters)"), dtype=float))
    m_, d_, p_, integ_ = np.broadcast_arrays(
        m_,
        np.atleast_1d(as_positive(d_draft, "d_draft (draft pre-training tokens)")),
        np.atleast_1d(as_positive(d_target, "d_target (target pre-training tokens)")),
        np.atleast_1d(np.asarray(integer, dtype=bool)),
    )
    k_cfg = m_.size
    targets_ = np.broadcast_to(
        np.asarray([targets] if isinstance(targets, str) else list(targets), dtype=object), (k_cfg,)
    )
    m_, d_, p_, integ_ = (np.ascontiguousarray(v) for v in (m_, d_, p_, integ_))
    cs = _rows_constants(constants, k_cfg)
    nan = float("nan")
    out: list[LawOptimum | None] = [None] * k_cfg
    ok = np.ones(k_cfg, dtype=bool)
    for t in sorted(set(targets_.tolist())):  # a target the law cannot evaluate
        try:
            fitted.alpha({c: np.ones(1) for c in ("x", "y", "ln_x", "ln_n", "ln_d")}, str(t))
        except ValueError as exc:
            for i in np.flatnonzero(targets_ == t):
                ok[i] = False
                out[i] = LawOptimum(nan, nan, nan, nan, float(m_[i]), f"not defined: {exc}", nan, (nan, nan))
    if n_bounds is None:
        lo_, hi_ = np.minimum(1e6, m_ / 10), m_.copy()
    else:
        lo_, hi_ = (np.broadcast_to(np.asarray(v, dtype=float), (k_cfg,)).copy() for v in n_bounds)
        if not np.all((0 < lo_) & (lo_ < hi_) & (hi_ <= m_)):
            bad = int(np.flatnonzero(~((0 < lo_) & (lo_ < hi_) & (hi_ <= m_)))[0])
            raise ValueError(
                f"n_bounds must satisfy 0 < low < high <= m = {m_[bad]:.6g}, got ({lo_[bad]:.6g}, {hi_[bad]:.6g})"
            )
    sel = np.flatnonzero(ok)
    if sel.size:
        res = _batch_optima(
            _law_alpha_fn(fitted, targets_[sel], m_[sel], d_[sel], p_[sel], {k: v[sel] for k, v in cs.items()}),
            m_[sel],
            lo_[sel],
            hi_[sel],
            integ_[sel],
            grid_points,
        )
        for i, r in zip(sel, res):
            out[i] = r
    # every configuration is filled: "not defined" above or solved here
    return cast("list[LawOptimum]", out)


def law_optimal_draft_size(
    fitted: AlphaLaw,
    target: str,
    m: float,
    d_draft: float,
    d_target: float,
    constants: LossConstants | str = BESIROGLU_2024,
    integer: bool = False,
    n_bounds: tuple[float, float] | None = None,
    grid_points: int = 241,
) -> LawOptimum:
    """``N* = argmax_N T(N, M, alpha_law(N), gamma*)`` for a fitted law (method notes, s. 6).

    ``alpha_law(N)`` takes ``x = exp(L(N, D))``, ``y = exp(L(M, D'))``, ``ln N`` and ``ln D``.
    A ``grid_points`` scan over ``log N`` in ``n_bounds`` (default ``(1e6, M)``) finds the largest
    ``T`` where ``0 < alpha < 1``; if it lies strictly inside, it is refined to the root of the
    derivative (:func:`sdsl.model.optimum.solve`). Otherwise the status names the edge and
    ``n_star`` is NaN.
    (:func:`law_optimal_draft_sizes` does many configurations at once.) Raises ``ValueError`` if
    the law cannot evaluate ``target``.
    """
    c = resolve_constants(constants)
    m = float(as_positive(m, "m (target parameters)"))
    lo, hi = n_bounds if n_bounds is not None else (min(1e6, m / 10), m)
    if not 0 < lo < hi <= m:
        raise ValueError(f"n_bounds must satisfy 0 < low < high <= m = {m:.6g}, got ({lo:.6g}, {hi:.6g})")
    fitted.alpha(_features_at(np.ones(1), m, d_draft, d_target, c), target)  # raises for an unknown target
    arr = np.array([m])
    cs = _rows_constants(c, 1)
    return _batch_optima(
        _law_alpha_fn(
            fitted, np.array([target], dtype=object), arr, np.array([float(d_draft)]), np.array([float(d_target)]), cs
        ),
        arr,
        np.array([float(lo)]),
        np.array([float(hi)]),
        np.array([bool(integer)]),
        grid_points,
    )[0]


# ---------------------------------------------------------------------------------------------
# the brute-force reference


def brute_force(
    alpha_fn: AlphaFn,
    m: ArrayLike,
    n_grid: ArrayLike,
    integer: ArrayLike = False,
    gamma_grid: ArrayLike | None = None,
    chunk: int = 256,
) -> dict[str, np.ndarray]:
    """The reference :func:`solve` is tested and benchmarked against: the largest ``T`` (Eq. 9)
    found by evaluating every grid point, no refinement, no optimiser.

    Parameters
    ----------
    alpha_fn : the acceptance law, ``alpha(n, rows)`` (:data:`AlphaFn`).
    m : target parameters ``M``, one per configuration.
    n_grid : draft sizes, shape ``(p,)`` (shared) or ``(k, p)`` (e.g. a dense :func:`log_grid`).
    integer : best integer draft length instead of the continuous one (without ``gamma_grid``).
    gamma_grid : draft lengths; if given, every pair of draft size and draft length is evaluated
        (no closed form for ``gamma*`` either), ``chunk`` draft sizes at a time to bound memory.

    Returns
    -------
    dict
        Arrays ``n_star, gamma_star, alpha, tokens_per_flop``, one entry per configuration.
        ``alpha`` must stay in (0, 1) on the grid where ``gamma_grid`` is given.
    """
    m = np.atleast_1d(np.asarray(m, dtype=float))
    k = m.size
    g = np.asarray(n_grid, dtype=float)
    if g.ndim == 1:
        g = np.broadcast_to(g[None, :], (k, g.size))
    if gamma_grid is None:
        o = solve(alpha_fn, m, g, integer, refine=False, exhaustive=True)
        return {"n_star": o.n_grid, "gamma_star": o.gamma_star, "alpha": o.alpha, "tokens_per_flop": o.tokens_per_flop}
    gam = as_in_range(gamma_grid, "gamma_grid", 0.0, np.inf)
    rows = np.arange(k)
    alpha = alpha_fn(g, rows)
    if np.any((alpha <= 0) | (alpha >= 1)):
        raise ValueError("the acceptance rate leaves (0, 1) on n_grid; narrow the grid")
    out = {f: np.empty(k) for f in ("n_star", "gamma_star", "alpha", "tokens_per_flop")}
    for i in range(k):
        log_a = np.log(alpha[i])
        best_t, best_i, best_j = -np.inf, 0, 0
        for s in range(0, g.shape[1], chunk):
            la = log_a[s : s + chunk, None]
            nn = g[i, s : s + chunk, None]
            t = -np.expm1((gam[None, :] + 1.0) * la) / (-np.expm1(la)) / (2.0 * nn * gam[None, :] + 2.0 * m[i])
            jj = int(np.argmax(t))
            a, b = divmod(jj, gam.size)
            if t[a, b] > best_t:
                best_t, best_i, best_j = float(t[a, b]), s + a, b
        out["n_star"][i], out["gamma_star"][i] = g[i, best_i], gam[best_j]
        out["alpha"][i], out["tokens_per_flop"][i] = alpha[i, best_i], best_t
    return out


def gamma_grid_search(alpha: float, n: float, m: float, gamma_grid: np.ndarray) -> float:
    """The draft length on ``gamma_grid`` that maximises Eq. 9 (brute force, no calculus)."""
    a = float(as_open_unit(alpha, "alpha (acceptance rate)"))
    g = as_in_range(gamma_grid, "gamma_grid", 0.0, np.inf)
    t = tokens_per_flop(a, float(as_positive(n, "n")), float(as_positive(m, "m")), g)
    return float(g[int(np.argmax(t))])
