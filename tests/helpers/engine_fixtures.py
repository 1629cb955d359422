"""Shared helpers of the engine-reader tests: fixture paths and a seeded simulator of drafts."""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1] / "fixtures"
ENG = ROOT / "engines"


def simulate(rng: np.random.Generator, alpha: float, k: int, drafts: int, short: float = 0.0):
    """Draft lengths (``k``, or 1..k-1 with probability ``short``) and accepted counts under the
    truncated geometric law (method notes, section 9); the same law as make_fixtures.py."""
    g = np.full(drafts, k)
    if short:
        cut = rng.random(drafts) < short
        g[cut] = rng.integers(1, k, cut.sum())
    acc = np.minimum(rng.geometric(1.0 - alpha, drafts) - 1, g)
    return g, acc


def per_pos(acc: np.ndarray, k: int) -> list[int]:
    return [int(np.sum(acc > i)) for i in range(k)]
