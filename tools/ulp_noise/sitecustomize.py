"""Emulate another CPU's vector math kernels: perturb numpy's transcendental functions by one ulp.

Put this folder first on PYTHONPATH (the kernel matrix, ``tools/kernel_matrix.py``, does so for
its ``ulp`` combination). Python imports ``sitecustomize`` at start-up, so every process -- the
check, papermill and each notebook's kernel -- then sees ``numpy.exp``, ``log``, ``power``,
``expm1``, ``log1p`` and ``sqrt`` return, for float64 results, the correctly computed value moved
by one unit in the last place up or down (decided by a hash of the value, so that, as on a real
CPU, the same argument always gives the same result). That is
the size of the differences between libm and the AVX-512 kernels numpy uses where a CPU has them
(the paper-numbers of this project moved by up to 8e-8 relative between such machines before the
numerics were made robust), and it reaches every computation of the package that goes through
these functions, whatever CPU this runs on.
"""

import os

if os.environ.get("SDSL_ULP_NOISE", "1") != "0":
    try:
        import numpy as _np
    except ImportError:  # a Python without numpy: nothing to perturb
        _np = None
    if _np is not None:
        _MIX = _np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing of the result's bits

        def _direction(arr):
            """Up or down, decided by a hash of the value itself: a CPU's kernel is deterministic,
            so the same argument must give the same (perturbed) result every time."""
            bits = _np.ascontiguousarray(arr, dtype=_np.float64).view(_np.uint64)
            with _np.errstate(over="ignore"):
                up = ((bits * _MIX) >> _np.uint64(63)).astype(bool)
            return _np.where(up, _np.inf, -_np.inf).reshape(_np.shape(arr))

        class _Perturbed:
            """A ufunc whose calls return results moved by one ulp; its methods (outer, reduce,
            at, ...) and attributes are the original's."""

            def __init__(self, ufunc):
                self._ufunc = ufunc
                self.__name__ = ufunc.__name__
                self.__doc__ = ufunc.__doc__

            def __call__(self, *args, **kwargs):
                out = self._ufunc(*args, **kwargs)
                if isinstance(out, (_np.ndarray, _np.float64)) and out.dtype == _np.float64:
                    arr = _np.asarray(out)
                    moved = _np.where(_np.isfinite(arr), _np.nextafter(arr, _direction(arr)), arr)
                    if isinstance(out, _np.ndarray):
                        if "out" in kwargs:  # the caller's buffer holds the result
                            out[...] = moved
                            return out
                        return moved
                    return _np.float64(moved)
                return out

            def __getattr__(self, name):
                return getattr(self._ufunc, name)

        for _name in ("exp", "log", "power", "expm1", "log1p", "sqrt"):
            setattr(_np, _name, _Perturbed(getattr(_np, _name)))
