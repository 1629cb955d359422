"""Checks of array arguments (:mod:`sdsl._validate`), for the model layer: numeric, finite, positive,
inside (0, 1) or inside a closed range."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sdsl._validate.messages import show, shown

if TYPE_CHECKING:  # numpy.typing costs import time; the annotations are strings
    from numpy.typing import ArrayLike

__all__ = ["as_float_array", "as_positive", "as_open_unit", "as_in_range"]


def as_float_array(value: ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float array; a non-numeric or non-finite entry raises naming ``name``."""
    if isinstance(value, (bool, np.bool_, str)):
        raise ValueError(f"{shown(name)} must be numeric, got {show(value)}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{shown(name)} must be numeric, got {show(value)}") from None
    if not np.all(np.isfinite(arr)):
        bad = np.ravel(arr)[~np.isfinite(np.ravel(arr))]
        count = f" ({bad.size} of {arr.size} values)" if arr.size > 1 else ""
        raise ValueError(f"{shown(name)} must be finite, got {bad[0].item()!r}{count}")
    return arr


def as_positive(value: ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float array of numbers > 0."""
    arr = as_float_array(value, name)
    if np.any(arr <= 0):
        bad = arr[arr <= 0] if arr.ndim else arr
        raise ValueError(f"{shown(name)} must be > 0, got {np.ravel(bad)[0].item()!r}")
    return arr


def as_open_unit(value: ArrayLike, name: str) -> np.ndarray:
    """``value`` as a float array inside the open interval (0, 1)."""
    arr = as_float_array(value, name)
    if np.any((arr <= 0) | (arr >= 1)):
        bad = np.ravel(arr[(arr <= 0) | (arr >= 1)] if arr.ndim else arr)[0]
        raise ValueError(f"{shown(name)} must lie in the open interval (0, 1), got {bad.item()!r}")
    return arr


def as_in_range(value: ArrayLike, name: str, low: float, high: float) -> np.ndarray:
    """``value`` as a float array inside the closed interval [low, high]."""
    arr = as_float_array(value, name)
    if np.any((arr < low) | (arr > high)):
        bad = np.ravel(arr[(arr < low) | (arr > high)] if arr.ndim else arr)[0]
        raise ValueError(f"{shown(name)} must lie in [{low:g}, {high:g}], got {bad.item()!r}")
    return arr
