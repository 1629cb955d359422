"""Two scalar solvers of the planning path in plain numpy, so that ``sdsl plan`` never imports scipy.

Importing :mod:`scipy.optimize` or :mod:`scipy.special` costs 0.4 to 0.6 s on the project's
machines, more than the whole time budget of ``sdsl plan`` (0.3 s, issue 15); the planning path
needs only two things from them:

* :func:`minimize_bounded` -- the bounded minimisation of a scalar function of one variable by
  Brent's method (golden section with parabolic interpolation; Brent 1973, *Algorithms for
  Minimization without Derivatives*, ch. 5; the ``fminbound`` of Forsythe, Malcolm and Moler 1977),
  the algorithm behind ``scipy.optimize.minimize_scalar(method="bounded")``. It takes the same
  steps in the same floating-point order, so that it returns the same point (the unit tests compare
  it with scipy bit for bit on many functions);
* :func:`w_minus1_log_start` -- a starting point above the root of ``expm1(u) - u = eps``, the
  logarithm of ``-W_{-1}(-exp(-1 - eps))`` (the lower branch of Lambert W used by the closed form of
  ``gamma*``; method notes, section 3), from which Newton's method converges monotonically. It
  replaces scipy's ``lambertw`` as the start of :func:`sdsl.theory._log_t`'s Newton iteration.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["minimize_bounded", "w_minus1_log_start"]

_SQRT_EPS = math.sqrt(2.2e-16)
_GOLDEN = 0.5 * (3.0 - math.sqrt(5.0))


def minimize_bounded(
    func: Callable[[float], float], low: float, high: float, xatol: float = 1e-5, maxiter: int = 500
) -> tuple[float, float, int]:
    """Minimise ``func`` on ``[low, high]`` by Brent's bounded method (golden section + parabola).

    Parameters
    ----------
    func : callable
        Scalar function of one float.
    low, high : float
        The bracket, ``low < high``.
    xatol : float
        Absolute tolerance on the minimiser (the loop stops when the bracket around the best point
        is within ``2 (sqrt(eps) |x| + xatol / 3)``).
    maxiter : int
        Largest number of function evaluations.

    Returns
    -------
    x : float
        The minimiser found.
    fx : float
        ``func(x)``.
    nfev : int
        Function evaluations used.

    Raises
    ------
    ValueError
        If the bracket is not finite with ``low < high``, or ``xatol`` is not > 0.
    """
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"bounds must be finite with low < high, got ({low!r}, {high!r})")
    if not xatol > 0:
        raise ValueError(f"xatol must be > 0, got {xatol!r}")
    a, b = float(low), float(high)
    fulc = a + _GOLDEN * (b - a)
    nfc = xf = fulc
    rat = e = 0.0
    fx = float(func(xf))
    nfev = 1
    ffulc = fnfc = fx
    xm = 0.5 * (a + b)
    tol1 = _SQRT_EPS * abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while abs(xf - xm) > (tol2 - 0.5 * (b - a)):
        golden = True
        if abs(e) > tol1:  # try a parabola through the three best points
            golden = False
            r = (xf - nfc) * (fx - ffulc)
            q = (xf - fulc) * (fx - fnfc)
            p = (xf - fulc) * q - (xf - nfc) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            r = e
            e = rat
            if abs(p) < abs(0.5 * q * r) and p > q * (a - xf) and p < q * (b - xf):
                rat = (p + 0.0) / q
                x = xf + rat
                if (x - a) < tol2 or (b - x) < tol2:
                    rat = tol1 * (float(np.sign(xm - xf)) + ((xm - xf) == 0))
            else:
                golden = True
        if golden:
            e = (a - xf) if xf >= xm else (b - xf)
            rat = _GOLDEN * e
        si = float(np.sign(rat)) + (rat == 0)
        x = xf + si * max(abs(rat), tol1)
        fu = float(func(x))
        nfev += 1
        if fu <= fx:
            if x >= xf:
                a = xf
            else:
                b = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a = x
            else:
                b = x
            if fu <= fnfc or nfc == xf:
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif fu <= ffulc or fulc == xf or fulc == nfc:
                fulc, ffulc = x, fu
        xm = 0.5 * (a + b)
        tol1 = _SQRT_EPS * abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if nfev >= maxiter:
            break
    return xf, fx, nfev


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
