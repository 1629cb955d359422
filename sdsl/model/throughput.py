"""Throughput of speculative decoding and its optimum (method notes, sections 1 to 3 and 6).

* Expected tokens per iteration (Leviathan et al. 2023, Eq. 1)
  ``E(alpha, gamma) = (1 - alpha**(gamma + 1)) / (1 - alpha)``
* FLOPs per iteration ``C(N, M, gamma) = 2 N gamma + 2 M``
* Tokens per FLOP, the paper's Eq. 9: ``T = E / C``
* The throughput-optimal draft length, with the lower branch of Lambert W:
  ``gamma* = (1 + W_{-1}(-alpha**(M/N - 1) / e)) / ln(alpha) - M/N``

The throughput-optimal draft size ``N*`` is searched in :mod:`sdsl.model.optimum`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from sdsl.model.solvers import w_minus1_log_start
from sdsl.validation import as_in_range, as_open_unit, as_positive

if TYPE_CHECKING:  # numpy.typing costs import time; the annotations are strings
    from numpy.typing import ArrayLike

__all__ = [
    "expected_tokens",
    "flops_per_iteration",
    "tokens_per_flop",
    "optimal_gamma",
    "optimal_tokens_per_flop",
]


def expected_tokens(alpha: ArrayLike, gamma: ArrayLike) -> np.ndarray:
    """Expected tokens per iteration ``E = (1 - alpha**(gamma+1)) / (1 - alpha)`` (Leviathan et al.
    2023, Eq. 1; method notes, section 1), with its limit ``gamma + 1`` at ``alpha = 1``.

    Parameters
    ----------
    alpha : acceptance rate in [0, 1].
    gamma : draft length >= 0 (real: the continuous relaxation is used for the optimum).

    Returns
    -------
    numpy.ndarray
        Tokens per iteration, broadcast over ``alpha`` and ``gamma``.
    """
    a = as_in_range(alpha, "alpha (acceptance rate)", 0.0, 1.0)
    g = as_in_range(gamma, "gamma (draft length)", 0.0, np.inf)
    return _expected_tokens(a, g)


def _expected_tokens(a: np.ndarray, g: np.ndarray) -> np.ndarray:
    """:func:`expected_tokens` of checked float arrays (the solver's inner loop: no argument checks)."""
    a, g = np.broadcast_arrays(a, g)
    out = np.empty(a.shape, dtype=float)
    one = a == 1.0
    out[one] = g[one] + 1.0
    rest = ~one
    with np.errstate(divide="ignore"):
        # 1 - a**(g+1) = -expm1((g+1) ln a): exact for alpha near 1
        out[rest] = -np.expm1((g[rest] + 1.0) * np.log(a[rest])) / (1.0 - a[rest])
    return out[()] if out.ndim == 0 else out


def flops_per_iteration(n: ArrayLike, m: ArrayLike, gamma: ArrayLike) -> np.ndarray:
    """FLOPs per iteration ``C = 2 N gamma + 2 M`` (method notes, section 2): ``gamma`` draft
    passes at ``2N`` each and one verification pass of the target at ``2M``.

    Parameters
    ----------
    n, m : draft and target parameters (> 0).
    gamma : draft length >= 0.

    Returns
    -------
    numpy.ndarray
        FLOPs per iteration.
    """
    n = as_positive(n, "n (draft parameters)")
    m = as_positive(m, "m (target parameters)")
    g = as_in_range(gamma, "gamma (draft length)", 0.0, np.inf)
    return 2.0 * n * g + 2.0 * m


def tokens_per_flop(alpha: ArrayLike, n: ArrayLike, m: ArrayLike, gamma: ArrayLike) -> np.ndarray:
    """Throughput in tokens per FLOP, the paper's Eq. 9: ``T = E(alpha, gamma) / C(N, M, gamma)``.

    Parameters
    ----------
    alpha : acceptance rate in [0, 1].
    n, m : draft and target parameters (> 0).
    gamma : draft length >= 0.

    Returns
    -------
    numpy.ndarray
        Tokens per FLOP (:func:`expected_tokens` over :func:`flops_per_iteration`).
    """
    return _expected_tokens(
        as_in_range(alpha, "alpha (acceptance rate)", 0.0, 1.0), as_in_range(gamma, "gamma (draft length)", 0.0, np.inf)
    ) / flops_per_iteration(n, m, gamma)


def _tokens_per_flop(a: np.ndarray, n: np.ndarray, m: np.ndarray, g: np.ndarray) -> np.ndarray:
    """:func:`tokens_per_flop` of checked float arrays (the solver's inner loop: no argument checks)."""
    return _expected_tokens(a, g) / (2.0 * n * g + 2.0 * m)


def _expm1_minus_x(u: np.ndarray) -> np.ndarray:
    """``exp(u) - 1 - u`` for ``u >= 0`` without cancellation: Taylor series below ``u = 0.05``."""
    small = u < 0.05
    s = np.where(small, u, 0.0)
    series = (
        s
        * s
        * (
            1 / 2
            + s * (1 / 6 + s * (1 / 24 + s * (1 / 120 + s * (1 / 720 + s * (1 / 5040 + s * (1 / 40320 + s / 362880))))))
        )
    )
    with np.errstate(over="ignore"):
        return np.where(small, series, np.expm1(u) - u)


def _expm1_minus_x_scalar(u: float) -> float:
    """:func:`_expm1_minus_x` for one float (``u`` stays below 710 on every path of :func:`_log_t`)."""
    if u < 0.05:
        return (
            u
            * u
            * (
                1 / 2
                + u
                * (1 / 6 + u * (1 / 24 + u * (1 / 120 + u * (1 / 720 + u * (1 / 5040 + u * (1 / 40320 + u / 362880))))))
            )
        )
    return math.expm1(u) - u


def _log_t_scalar(eps: float) -> float:
    """:func:`_log_t` for one float: the same starts and Newton steps with :mod:`math` (numpy's
    element-wise calls on one-element arrays cost about 0.5 ms per call; this about 20 us)."""
    if not eps > 0:
        return 0.0
    if eps < 1e-3:
        u = math.sqrt(2.0 * eps)
    elif eps < 700.0:
        u = float(w_minus1_log_start(np.array([eps]))[0])
        for _ in range(8):
            u = max(u - (_expm1_minus_x_scalar(u) - eps) / math.expm1(u), 0.0)
    else:
        c = 1.0 + eps
        u = math.log(c + math.log(c))
    for _ in range(4):
        fp = math.expm1(u)
        if fp > 0:
            u = max(u - (_expm1_minus_x_scalar(u) - eps) / fp, 0.0)
    return u


#: Up to this many values :func:`_log_t` iterates element by element with :mod:`math` (about 20 us
#: each); numpy's element-wise calls cost about 0.5 ms per call whatever the size below a few hundred.
_SCALAR_BELOW = 16


def _log_t(eps: np.ndarray) -> np.ndarray:
    """``u = ln t`` with ``t = -W_{-1}(-exp(-1 - eps))``, i.e. the root ``u >= 0`` of
    ``expm1(u) - u = eps``.

    ``f(u) = expm1(u) - u - eps`` is convex and increasing for ``u > 0``, so Newton's method
    converges monotonically from any start at or above the root. Starting points:
    ``sqrt(2 eps)`` (above the root, since ``f(u) >= u**2/2 - eps``) for ``eps < 1e-3`` (next to the
    branch point ``-1/e``: ``alpha -> 1`` with ``M/N -> 1``), for ``1e-3 <= eps < 700`` the upper
    bound of :func:`sdsl.model.solvers.w_minus1_log_start` refined by 8 Newton steps (it replaced
    scipy's ``lambertw`` on branch -1, whose import alone took longer than ``sdsl plan`` may), and
    the asymptotic ``t ~ c + ln c`` (``c = 1 + eps``) beyond, where ``exp(-1 - eps)`` underflows.
    Newton steps on ``f`` with ``expm1(u) - u`` evaluated without cancellation polish all three.
    """
    shape = np.shape(eps)
    if np.size(eps) <= _SCALAR_BELOW:  # the planning path's small calls: the same iteration in floats
        return np.reshape(np.array([_log_t_scalar(e) for e in np.ravel(eps).tolist()], dtype=float), shape)
    eps = np.atleast_1d(np.asarray(eps, dtype=float)).ravel()
    u = np.empty_like(eps)
    tiny = eps < 1e-3
    mid = ~tiny & (eps < 700.0)
    big = eps >= 700.0
    with np.errstate(all="ignore"):
        u[tiny] = np.sqrt(2.0 * np.maximum(eps[tiny], 0.0))
        um, em = w_minus1_log_start(eps[mid]), eps[mid]
        for _ in range(8):  # monotone from above; 8 steps reach the root's last digits
            um = np.maximum(um - (_expm1_minus_x(um) - em) / np.expm1(um), 0.0)
        u[mid] = um
        c = 1.0 + eps[big]
        u[big] = np.log(c + np.log(c))
        positive = eps > 0
        for _ in range(4):
            f = _expm1_minus_x(u) - eps
            fp = np.expm1(u)
            step = np.where(positive & (fp > 0), f / np.where(fp > 0, fp, 1.0), 0.0)
            u = np.maximum(u - step, 0.0)
    u[eps <= 0] = 0.0
    return u.reshape(shape)


def optimal_gamma(alpha: ArrayLike, n: ArrayLike, m: ArrayLike, integer: bool = False) -> np.ndarray:
    """Throughput-optimal draft length (method notes, section 3).

    Setting ``dT/dgamma = 0`` in Eq. 9 gives, with ``r = M/N``,
    ``gamma* = (1 + W_{-1}(-alpha**(r - 1) / e)) / ln(alpha) - r``. Writing
    ``t = -W_{-1}(-alpha**(r-1)/e)`` and using ``t - ln t = 1 - (r - 1) ln alpha`` this is
    ``gamma* = ln(t) / (-ln alpha) - 1``, which has no cancellation between two numbers of size
    ``r``; ``ln t`` is computed in log space so that ``alpha**(r-1)`` never underflows.
    Where the unconstrained optimum is negative, speculation does not pay and ``gamma* = 0``
    (plain decoding, ``T = 1/(2M)``).

    Parameters
    ----------
    alpha : acceptance rate, open interval (0, 1).
    n, m : draft and target parameters, ``1 <= m/n``.
    integer : if True, the best integer draft length (floor or ceiling of the continuous optimum;
        ``T`` is unimodal in ``gamma``).

    Returns
    -------
    numpy.ndarray
        ``gamma*`` (0 where speculation does not pay), broadcast over the arguments.
    """
    if not isinstance(integer, (bool, np.bool_)):
        raise ValueError(f"integer must be True or False (best integer draft length), got {integer!r}")
    a = as_open_unit(alpha, "alpha (acceptance rate)")
    n = as_positive(n, "n (draft parameters)")
    m = as_positive(m, "m (target parameters)")
    r = m / n
    if np.any(r < 1):
        raise ValueError(
            f"m/n (target over draft parameters) must be >= 1, got {np.ravel(r)[np.argmin(np.ravel(r))]!r}"
        )
    return _optimal_gamma(a, r, integer)


def _optimal_gamma(a: np.ndarray, r: np.ndarray, integer: bool) -> np.ndarray:
    """:func:`optimal_gamma` of checked float arrays, ``alpha`` in (0, 1) and ``r = M/N >= 1`` (the
    solver's inner loop: no argument checks)."""
    a, r = np.broadcast_arrays(a, r)
    neg_log_a = -np.log(a)
    eps = (r - 1.0) * neg_log_a
    gamma = np.maximum(_log_t(eps) / neg_log_a - 1.0, 0.0)
    if integer:
        lo = np.floor(gamma)
        hi = lo + 1.0
        # compare T(lo) and T(hi) up to the common factor 1/(2N(1-alpha))
        with np.errstate(divide="ignore"):
            h_lo = -np.expm1((lo + 1.0) * np.log(a)) / (lo + r)
            h_hi = -np.expm1((hi + 1.0) * np.log(a)) / (hi + r)
        gamma = np.where(h_hi > h_lo, hi, lo)
    return gamma[()] if gamma.ndim == 0 else gamma


def optimal_tokens_per_flop(alpha: ArrayLike, n: ArrayLike, m: ArrayLike, integer: bool = False) -> np.ndarray:
    """``T(N, M, alpha, gamma*)``: Eq. 9 at the optimal draft length.

    Parameters
    ----------
    alpha : acceptance rate, open interval (0, 1).
    n, m : draft and target parameters, ``1 <= m/n``.
    integer : at the best integer draft length instead of the continuous one.

    Returns
    -------
    numpy.ndarray
        Tokens per FLOP at :func:`optimal_gamma`.
    """
    g = optimal_gamma(alpha, n, m, integer=integer)
    return tokens_per_flop(alpha, n, m, g)
