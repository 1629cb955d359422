"""Two solvers of the planning path in plain numpy, so that ``sdsl plan`` never imports scipy.

Importing :mod:`scipy.optimize` or :mod:`scipy.special` costs 0.4 to 0.6 s on the project's
machines, more than the whole time budget of ``sdsl plan`` (0.3 s, issue 15); the planning path
needs only two things from them:

* :func:`find_root` -- vectorised bracketed root finding (Illinois regula falsi with bisection
  safeguards), the step of :func:`sdsl.model.optimum.solve` that locates ``N*`` as the root of
  the derivative of the throughput, for many configurations at once;
* :func:`w_minus1_log_start` -- a starting point above the root of ``expm1(u) - u = eps``, the
  logarithm of ``-W_{-1}(-exp(-1 - eps))`` (the lower branch of Lambert W used by the closed form of
  ``gamma*``; method notes, section 3), from which Newton's method converges monotonically. It
  replaces scipy's ``lambertw`` as the start of the Newton iteration of
  :func:`sdsl.model.throughput.optimal_gamma`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["find_root", "w_minus1_log_start"]



def find_root(
    func: Callable[[np.ndarray, np.ndarray], np.ndarray],
    low: np.ndarray,
    high: np.ndarray,
    rows: np.ndarray,
    xatol: float = 1e-13,
    maxiter: int = 200,
) -> np.ndarray:
    """Roots of ``func(x, rows)`` between ``low`` and ``high``, one per row, all rows at once.

    Each bracket must hold a sign change. The Illinois variant of regula falsi (Dowell and Jarratt
    1971: superlinear, and the end that does not move has its value halved) with a bisection step
    whenever the interpolate falls outside the middle of the bracket, until each bracket is narrower
    than ``xatol`` or a value is exactly zero. The same job as
    ``scipy.optimize.elementwise.find_root`` (Chandrupatla's method), whose import alone (0.6 to
    1 s here) exceeds the budget of ``sdsl plan``; ``tests/unit/model/test_solvers.py`` compares
    the two.

    Parameters
    ----------
    func : the function, evaluated as ``func(x, rows)`` on the current points of the rows ``rows``.
    low, high : the brackets (``func`` of opposite signs at the two ends).
    rows : the row index of each bracket (passed to ``func``).
    xatol : absolute width at which a bracket is done.
    maxiter : at most this many iterations.

    Returns
    -------
    numpy.ndarray
        The root of each row (the midpoint of its last bracket).

    Raises
    ------
    ValueError
        When a bracket has no sign change.
    """
    a = np.asarray(low, dtype=float).copy()
    b = np.asarray(high, dtype=float).copy()
    rows = np.asarray(rows)
    fa, fb = func(a, rows), func(b, rows)
    if np.any(np.sign(fa) == np.sign(fb)) and not np.all((fa == 0) | (fb == 0)):
        bad = int(np.flatnonzero(np.sign(fa) == np.sign(fb))[0])
        raise ValueError(f"find_root: no sign change in bracket {bad} ([{a[bad]!r}, {b[bad]!r}])")
    done = (fa == 0) | (fb == 0) | (np.abs(b - a) <= xatol)
    root = np.where(fa == 0, a, np.where(fb == 0, b, 0.5 * (a + b)))
    side = np.zeros(a.shape, dtype=int)  # which end stayed last time: -1 a, +1 b
    for _ in range(int(maxiter)):
        live = np.flatnonzero(~done)
        if live.size == 0:
            break
        al, bl, fal, fbl = a[live], b[live], fa[live], fb[live]
        with np.errstate(divide="ignore", invalid="ignore"):
            x = bl - fbl * (bl - al) / (fbl - fal)
        lo_, hi_ = np.minimum(al, bl), np.maximum(al, bl)
        width = hi_ - lo_
        mid = 0.5 * (al + bl)
        bad = ~np.isfinite(x) | (x <= lo_ + 0.05 * width) | (x >= hi_ - 0.05 * width)
        x = np.where(bad, mid, x)
        fx = func(x, rows[live])
        left = np.sign(fx) == np.sign(fal)  # the root lies between x and b
        # Illinois: halve the value kept at the end that survives twice in a row
        keep_b = left & (side[live] == 1)
        keep_a = ~left & (side[live] == -1)
        fbl = np.where(keep_b, 0.5 * fbl, fbl)
        fal = np.where(keep_a, 0.5 * fal, fal)
        a[live] = np.where(left, x, al)
        fa[live] = np.where(left, fx, fal)
        b[live] = np.where(left, bl, x)
        fb[live] = np.where(left, fbl, fx)
        side[live] = np.where(left, 1, -1)
        exact = fx == 0
        root[live] = np.where(exact, x, 0.5 * (a[live] + b[live]))
        done[live] = exact | (np.abs(b[live] - a[live]) <= xatol)
    return root


def w_minus1_log_start(eps: np.ndarray) -> np.ndarray:
    """A start at or above the root ``u >= 0`` of ``expm1(u) - u = eps`` (``eps >= 0``).

    The root is ``u = ln t`` with ``t = -W_{-1}(-exp(-1 - eps))``. Two upper bounds: ``sqrt(2 eps)``
    (since ``expm1(u) - u >= u**2 / 2``) and ``ln(1 + eps + sqrt(2 eps))`` (the root solves
    ``u = ln(1 + eps + u)`` and ``u <= sqrt(2 eps)``); the smaller is returned. ``expm1(u) - u`` is
    convex and increasing for ``u > 0``, so Newton's method converges monotonically from it.

    Parameters
    ----------
    eps : array_like
        Non-negative numbers.

    Returns
    -------
    numpy.ndarray
        The starting points, same shape as ``eps``.
    """
    e = np.maximum(np.asarray(eps, dtype=float), 0.0)
    s = np.sqrt(2.0 * e)
    return np.minimum(s, np.log1p(e + s))
