"""Argument checks shared by the public functions: one clear ValueError, never a numpy traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # numpy.typing costs import time; the annotations are strings
    from numpy.typing import ArrayLike

__all__ = ["as_float_array", "as_positive", "as_open_unit", "as_in_range"]


def as_float_array(value: ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float array; a non-numeric or non-finite entry raises naming ``name``."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, got {value!r}") from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return arr


def as_positive(value: ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float array of numbers > 0."""
    arr = as_float_array(value, name)
    if np.any(arr <= 0):
        bad = arr[arr <= 0] if arr.ndim else arr
        raise ValueError(f"{name} must be > 0, got {np.ravel(bad)[0]!r}")
    return arr


def as_open_unit(value: ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float array inside the open interval (0, 1)."""
    arr = as_float_array(value, name)
    if np.any((arr <= 0) | (arr >= 1)):
        bad = np.ravel(arr[(arr <= 0) | (arr >= 1)] if arr.ndim else arr)[0]
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {bad!r}")
    return arr


def as_in_range(value: ArrayLike, name: str, low: float, high: float) -> np.ndarray:
    """``value`` as a float array inside the closed interval [low, high]."""
    arr = as_float_array(value, name)
    if np.any((arr < low) | (arr > high)):
        bad = np.ravel(arr[(arr < low) | (arr > high)] if arr.ndim else arr)[0]
        raise ValueError(f"{name} must lie in [{low}, {high}], got {bad!r}")
    return arr
