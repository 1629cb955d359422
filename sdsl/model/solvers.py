"""Two solvers of the planning path in plain numpy, because scipy is not in the base install.

The base install (numpy, PyYAML and prometheus_client: what ``sdsl plan`` and ``sdsl alpha`` need)
stays under 100 MB; scipy alone is 143 MB and comes with the ``[analysis]`` extra. The planning
path needs only two things from scipy, written here and compared with scipy's own in
``tests/unit/model/test_solvers.py``:

* :func:`find_root` -- vectorised bracketed root finding (Chandrupatla's hybrid of inverse
  quadratic interpolation and bisection, the method of ``scipy.optimize.elementwise.find_root``),
  the step of :func:`sdsl.model.optimum.solve` that locates ``N*`` as the root of the derivative
  of the throughput, for many configurations at once;
* :func:`w_minus1_log_start` -- a starting point above the root of ``expm1(u) - u = eps``, the
  logarithm of ``-W_{-1}(-exp(-1 - eps))`` (the lower branch of Lambert W used by the closed form of
  ``gamma*``; method notes, section 3), from which Newton's method converges monotonically. It
  replaces scipy's ``lambertw`` as the start of the Newton iteration of
  :func:`sdsl.model.throughput.optimal_gamma`.
"""

from __future__ import annotations

from collections.abc import Callable

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

    Each bracket must hold a sign change. Chandrupatla's method (Chandrupatla 1997, "A new hybrid
    quadratic/bisection algorithm for finding the zero of a nonlinear function without using
    derivatives", Adv. Eng. Software 28, 145-149): inverse quadratic interpolation through the two
    ends of the bracket and the previous point where that interpolation is safe, bisection
    otherwise, every step at least ``xatol / 2`` inside the bracket, until each bracket is narrower
    than ``xatol`` or a value is exactly zero. It is the method of
    ``scipy.optimize.elementwise.find_root``, which the base install does not have (module
    docstring); ``tests/unit/model/test_solvers.py`` compares the two. (It replaced
    Illinois regula falsi with bisection safeguards, which took about 37 evaluations on the
    derivative of ``T`` where this takes 8 to 15: after an interpolate lands next to the root, the
    safeguard bisected from the far end of the bracket down to ``xatol``.)

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
        The root of each row (the midpoint of its last bracket, or a point where ``func`` is 0).

    Raises
    ------
    ValueError
        When a bracket has no sign change.
    """
    x1 = np.asarray(low, dtype=float).copy()
    x2 = np.asarray(high, dtype=float).copy()
    rows = np.asarray(rows)
    f1 = np.asarray(func(x1, rows), dtype=float).copy()
    f2 = np.asarray(func(x2, rows), dtype=float).copy()
    if np.any(np.sign(f1) == np.sign(f2)) and not np.all((f1 == 0) | (f2 == 0)):
        bad = int(np.flatnonzero(np.sign(f1) == np.sign(f2))[0])
        raise ValueError(f"find_root: no sign change in bracket {bad} ([{x1[bad]!r}, {x2[bad]!r}])")
    # x1: the newest point, x2: the other end of the bracket, x3: the point dropped last
    x3, f3 = x2.copy(), f2.copy()
    t = np.full(x1.shape, 0.5)  # where the next point lies, as a fraction of the way from x1 to x2
    root = np.where(f1 == 0, x1, np.where(f2 == 0, x2, 0.5 * (x1 + x2)))
    done = (f1 == 0) | (f2 == 0) | (np.abs(x2 - x1) <= xatol)
    for _ in range(int(maxiter)):
        live = np.flatnonzero(~done)
        if live.size == 0:
            break
        a, b, fa, fb = x1[live], x2[live], f1[live], f2[live]
        xt = a + t[live] * (b - a)
        ft = np.asarray(func(xt, rows[live]), dtype=float)
        same = np.sign(ft) == np.sign(fa)  # the root lies between xt and b: drop a; else drop b
        c, fc = np.where(same, a, b), np.where(same, fa, fb)
        b, fb = np.where(same, b, a), np.where(same, fb, fa)
        a, fa = xt, ft
        x1[live], f1[live], x2[live], f2[live], x3[live], f3[live] = a, fa, b, fb, c, fc
        width = np.abs(b - a)
        exact = fa == 0
        root[live] = np.where(exact, a, 0.5 * (a + b))
        done[live] = exact | (width <= xatol)
        with np.errstate(divide="ignore", invalid="ignore"):
            tlim = np.minimum(0.5 * xatol / width, 0.5)
            xi = (a - b) / (c - b)
            phi = (fa - fb) / (fc - fb)
            quad = (phi * phi < xi) & ((1.0 - phi) ** 2 < 1.0 - xi)  # the interpolation is monotone
            tq = fa / (fb - fa) * fc / (fb - fc) + (c - a) / (b - a) * fa / (fc - fa) * fb / (fc - fb)
        tq = np.where(quad & np.isfinite(tq), tq, 0.5)
        t[live] = np.clip(tq, tlim, 1.0 - tlim)
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
