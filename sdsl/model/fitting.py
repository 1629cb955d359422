"""Least squares in a well-conditioned form, reported in the caller's units.

Every regression of the package goes through :func:`ols` (ordinary least squares with classical or
HC3 standard errors, statsmodels underneath) and every nonlinear fit through
:func:`polish_nonlinear` (Gauss-Newton steps to the stationary point after a minimiser).

Why: a design such as Table 8's ``[1, 1/M, ln D, ln D']`` has columns of sizes 1, 1e-10 and 30
(condition number 1.9e12): solving it as it stands makes the last ~12 of the 16 digits of the
solution depend on the BLAS kernel's summation order, and the standard errors move in their 4th
digit between CPUs. :func:`ols` solves the same problem after an exact affine reparameterisation --
every non-constant column centred (when the design has an intercept) and scaled to unit standard
deviation -- and maps the estimates and their covariance back exactly:
``beta = T beta_s``, ``Cov(beta) = T Cov(beta_s) T'``. Residuals, fitted values, leverages (so HC3),
``R^2`` and every test are invariant under that map, so the results are those of the original
problem, computed with a condition number of order ten.

A nonlinear least-squares minimiser stops when the sum of squares stops falling, which near the
optimum is quadratic in the parameters: its answer is known to ``sqrt(eps)`` and the kernels decide
where in that band. :func:`polish_nonlinear` then takes Gauss-Newton steps (each a QR-based linear
least-squares solve of the Jacobian against the residuals) until the step vanishes: the root of
the gradient, which is located to about ``eps`` times the condition number of the Jacobian.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = ["LinearFit", "PowerFit", "ols", "condition_number", "polish_nonlinear", "fit_power_law"]


@dataclass(frozen=True)
class LinearFit:
    """An OLS fit in the caller's units (:func:`ols`).

    ``params`` and ``bse`` are Series and ``cov`` a DataFrame indexed by the design's column names;
    ``use_t`` says whether intervals use Student's t (classical covariance) or the normal (robust
    covariance), as statsmodels does. ``condition`` is the 2-norm condition number of the design as
    given, ``condition_solved`` that of the design actually solved.
    """

    params: pd.Series
    cov: pd.DataFrame
    cov_type: str
    use_t: bool
    nobs: int
    df_resid: float
    ssr: float
    rsquared: float
    rsquared_adj: float
    resid: np.ndarray
    fittedvalues: np.ndarray
    condition: float
    condition_solved: float

    @property
    def bse(self) -> pd.Series:
        """Standard errors of the estimates."""
        return pd.Series(np.sqrt(np.diag(self.cov.to_numpy())), index=self.params.index)

    def cov_params(self) -> pd.DataFrame:
        """The covariance of the estimates (statsmodels' name)."""
        return self.cov

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Two-sided ``1 - alpha`` intervals, columns 0 and 1 (statsmodels' layout): ``t`` quantiles
        with ``df_resid`` degrees of freedom for a classical covariance, normal ones for a robust
        one."""
        from scipy import stats

        q = stats.t.ppf(1 - alpha / 2, self.df_resid) if self.use_t else stats.norm.ppf(1 - alpha / 2)
        half = q * self.bse
        return pd.DataFrame({0: self.params - half, 1: self.params + half})


def condition_number(x: ArrayLike) -> float:
    """2-norm condition number of a design matrix (ratio of its extreme singular values)."""
    return float(np.linalg.cond(np.asarray(x, dtype=float)))


def ols(y: ArrayLike, x: pd.DataFrame, cov_type: str = "nonrobust") -> LinearFit:
    """Ordinary least squares ``y = X beta + e`` solved on a centred and scaled design and reported
    for the design as given (see the module notes).

    Parameters
    ----------
    y : the response, one value per row of ``x``.
    x : the design, one named column per coefficient; a constant column is the intercept (kept as
        it is; the other columns are then centred).
    cov_type : ``"nonrobust"`` (``s^2 (X'X)^-1``) or ``"HC3"`` (MacKinnon and White's jackknife-like
        heteroskedasticity-robust covariance), as statsmodels names them.

    Returns
    -------
    LinearFit
    """
    from statsmodels.regression.linear_model import OLS

    if cov_type not in ("nonrobust", "HC3"):
        raise ValueError(f"cov_type must be 'nonrobust' or 'HC3', got {cov_type!r}")
    names = list(x.columns)
    xa = x.to_numpy(dtype=float)
    ya = np.asarray(y, dtype=float)
    if xa.ndim != 2 or ya.shape != (xa.shape[0],):
        raise ValueError(f"y must have one value per row of x ({xa.shape[0]}), got shape {ya.shape}")
    spread = xa.std(axis=0)
    constant = spread == 0
    has_intercept = bool(np.any(constant & (xa[0] != 0)))
    shift = np.where(~constant & has_intercept, xa.mean(axis=0), 0.0)
    scale = np.where(constant, 1.0, np.where(spread > 0, spread, 1.0))
    xs = (xa - shift) / scale
    res = OLS(ya, xs).fit(cov_type=cov_type) if cov_type != "nonrobust" else OLS(ya, xs).fit()
    # beta_s_j = beta_j * scale_j for non-constant columns; the intercept absorbs the shifts:
    # X beta = Xs beta_s  =>  beta_j = beta_s_j / scale_j,  beta_0 = beta_s_0 - sum_j beta_j shift_j
    t = np.diag(1.0 / scale)
    if has_intercept:
        i0 = int(np.flatnonzero(constant & (xa[0] != 0))[0])
        t[i0, :] -= shift / scale
        t[i0, i0] = 1.0 / xa[0, i0]
    beta = t @ np.asarray(res.params, dtype=float)
    cov = t @ np.asarray(res.cov_params(), dtype=float) @ t.T
    return LinearFit(
        params=pd.Series(beta, index=names),
        cov=pd.DataFrame(cov, index=names, columns=names),
        cov_type=cov_type,
        use_t=bool(res.use_t),
        nobs=int(res.nobs),
        df_resid=float(res.df_resid),
        ssr=float(res.ssr),
        rsquared=float(res.rsquared),
        rsquared_adj=float(res.rsquared_adj),
        resid=np.asarray(res.resid, dtype=float),
        fittedvalues=np.asarray(res.fittedvalues, dtype=float),
        condition=condition_number(xa),
        condition_solved=condition_number(xs),
    )


def polish_nonlinear(
    residual: Callable[[np.ndarray], np.ndarray],
    jacobian: Callable[[np.ndarray], np.ndarray],
    p0: ArrayLike,
    max_steps: int = 50,
) -> np.ndarray:
    """Gauss-Newton steps from ``p0`` (a minimiser's answer) until the step stops shrinking.

    Parameters
    ----------
    residual : ``r(p)``, the residuals ``y - f(x; p)``.
    jacobian : ``J(p) = df/dp``, one row per residual.
    p0 : the starting point, close to the optimum.
    max_steps : at most this many steps.

    Returns
    -------
    numpy.ndarray
        The parameters after the last step that was smaller than the one before it: the
        stationary point of the sum of squares, to about ``eps`` times the Jacobian's condition
        number.
    """
    p = np.asarray(p0, dtype=float).copy()
    last = np.inf
    for _ in range(int(max_steps)):
        step = np.linalg.lstsq(jacobian(p), residual(p), rcond=None)[0]
        size = float(np.max(np.abs(step) / np.maximum(np.abs(p), 1e-300)))
        if not np.isfinite(size) or size >= last:  # rounding now dominates the step
            break
        p = p + step
        last = size
        if size < 1e-15:
            break
    return p


def _power(x: np.ndarray, p1: float, p2: float) -> np.ndarray:
    return p1 * np.power(x, p2)


def _power_jac(x: np.ndarray, p1: float, p2: float) -> np.ndarray:
    """Jacobian of ``p1 x**p2`` with respect to ``(p1, p2)``."""
    xp = np.power(x, p2)
    return np.column_stack([xp, p1 * xp * np.log(x)])


@dataclass(frozen=True)
class PowerFit:
    """``y = p1 x**p2`` fitted by nonlinear least squares in the original space
    (:func:`fit_power_law`): estimates, their covariance ``s^2 (J'J)^-1`` with
    ``s^2 = SSR / (n - 2)``, the sum of squared residuals and the number of points."""

    p: np.ndarray
    cov: np.ndarray
    ssr: float
    n: int


def fit_power_law(x: ArrayLike, y: ArrayLike) -> PowerFit:
    """Fit ``y = p1 x**p2`` by nonlinear least squares in the original space (method notes, s. 7).

    Started from the log-log OLS solution, minimised by Levenberg-Marquardt
    (``scipy.optimize.curve_fit`` with the analytic Jacobian), then polished to the stationary
    point by Gauss-Newton (:func:`polish_nonlinear`). The covariance is ``s^2 (J'J)^-1`` from the
    analytic Jacobian at the optimum: MINPACK's own estimate comes from its last QR factorisation
    and moves in the 7th digit with the starting point, enough to flip the last printed digit of
    the paper's Table 4 (MoE of ``p1`` for Qwen1.5-14B, 0.1589554 against 0.1589558).

    Parameters
    ----------
    x, y : positive data, at least 3 points, at least 2 distinct ``x``.

    Returns
    -------
    PowerFit

    Raises ``ValueError`` when the data cannot carry the fit or it does not converge.
    """
    from scipy.optimize import curve_fit

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size < 3 or np.unique(x).size < 2:
        raise ValueError(f"a power-law fit needs at least 3 points with 2 distinct x, got {x.size}")
    if np.any(x <= 0) or np.any(y <= 0):
        raise ValueError("a power law needs x > 0 and y > 0")
    start = ols(np.log(y), pd.DataFrame({"const": np.ones(x.size), "slope": np.log(x)})).params
    try:
        p, _ = curve_fit(
            _power,
            x,
            y,
            p0=[float(np.exp(start["const"])), float(start["slope"])],
            jac=_power_jac,
            method="lm",
            ftol=1e-15,
            xtol=1e-15,
            gtol=1e-15,
            maxfev=10_000,
        )
    except (RuntimeError, ValueError) as exc:
        raise ValueError(f"the power-law fit did not converge ({exc})") from None
    p = polish_nonlinear(lambda q: y - _power(x, *q), lambda q: _power_jac(x, *q), p)
    jac = _power_jac(x, *p)
    ssr = float(np.sum((y - _power(x, *p)) ** 2))
    try:
        cov = ssr / (x.size - 2) * np.linalg.inv(jac.T @ jac)
    except np.linalg.LinAlgError:
        raise ValueError("the power-law Jacobian is singular (too few distinct points?)") from None
    if not np.all(np.isfinite(cov)):
        raise ValueError("the power-law covariance is not finite (too few distinct points?)")
    return PowerFit(p=np.asarray(p, dtype=float), cov=cov, ssr=ssr, n=int(x.size))
