"""The throughput-optimal draft size ``N*``: the one search every part of the package calls.

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
   importing it costs more than the whole budget of ``sdsl plan``).

Why a root and not a minimiser: near a smooth maximum ``F`` changes only quadratically, so a
minimiser of ``-F`` can locate the optimum only to about ``sqrt(eps) ~ 1e-8`` relative in ``N``,
and the last bits of ``exp``, ``log`` and ``power`` (which differ between CPUs' vector kernels)
decide where in that band it stops. ``g`` crosses zero linearly, so its root is located to about
``eps F / (h F'')``: with ``h = 1e-4`` that is ~1e-11 relative in ``N`` whatever the kernels (the
tests perturb ``F`` by 1e-15 relative noise and find ``N*`` within 1e-10), at a truncation bias of
``O(h^2)`` ~ 1e-10 relative, the same on every machine.

:mod:`sdsl.model.optimal_draft` holds the paper's plane's front ends (one configuration, many);
:func:`brute_force` is the dense-grid reference the tests compare against.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from sdsl.model.laws import (
    BESIROGLU_2024,
    PAPER_EQ5,
    AcceptanceCoefficients,
    LossConstants,
    loss_law,
    resolve_constants,
)
from sdsl.model.solvers import find_root
from sdsl.model.throughput import _optimal_gamma, _tokens_per_flop, optimal_gamma

__all__ = [
    "AlphaFn",
    "DERIVATIVE_STEP",
    "Optima",
    "plane_alpha",
    "log_grid",
    "scaled_throughput",
    "solve",
    "brute_force",
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


def brute_force(
    alpha_fn: AlphaFn, m: ArrayLike, low: ArrayLike, high: ArrayLike, integer: ArrayLike = False, points: int = 200_001
) -> np.ndarray:
    """The reference the tests compare :func:`solve` with: the argmax of ``T`` on a dense log grid of
    ``points`` draft sizes from ``low`` to ``high`` (no refinement), one value per configuration."""
    m = np.atleast_1d(np.asarray(m, dtype=float))
    return solve(alpha_fn, m, log_grid(low, high, points), integer, refine=False, exhaustive=True).n_grid
