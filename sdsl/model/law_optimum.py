"""``N*`` for any fitted acceptance law (method notes, section 6), through the one kernel.

``alpha_law(N)`` takes ``x = exp(L(N, D))``, ``y = exp(L(M, D'))``, ``ln N`` and ``ln D`` (the
perplexities from the loss law, as the paper does for Eq. 5). Every configuration of every law is
solved by :func:`sdsl.model.optimum.solve`; a maximum at the end of the range or where alpha leaves
(0, 1) is reported as such (``status``), never as an optimum.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

import numpy as np
from numpy.typing import ArrayLike

from sdsl._validate import as_positive
from sdsl.model.laws import (
    BESIROGLU_2024,
    LossConstants,
    loss_law,
    resolve_constants,
)
from sdsl.model.optimum import log_grid, solve

__all__ = ["LawOptimum", "law_optimal_draft_size", "law_optimal_draft_sizes"]


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


def _column(v: np.ndarray, n: np.ndarray) -> np.ndarray:
    """A per-row value shaped to broadcast against ``n`` (rows first)."""
    return v.reshape(v.shape + (1,) * (n.ndim - 1))


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
