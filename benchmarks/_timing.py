"""Timing shared by the benchmark scripts (run as `python benchmarks/<script>.py`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best_of(fn: Callable[[], T], repeat: int) -> tuple[float, T]:
    """The shortest wall time of ``repeat`` calls of ``fn`` and the result of the last call."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out
