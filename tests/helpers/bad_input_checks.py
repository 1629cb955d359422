"""What every bad input must meet: one line, no traceback, naming the bad thing and
what is allowed; and nothing written (a snapshot of the folders a run could write to)."""

from __future__ import annotations

import os
from pathlib import Path

from sdsl.paths import EXECUTED, artifacts_root

#: A message longer than this is not "one clear line" (the longest, an unknown preset with every
#: preset listed, is about 900 characters).
MAX_MESSAGE = 1200


def assert_one_line(message: str, expected: tuple[str, ...]) -> None:
    assert message, "empty message"
    assert "\n" not in message.strip(), f"more than one line: {message!r}"
    assert "Traceback" not in message and "array([" not in message, message
    assert len(message) <= MAX_MESSAGE, f"{len(message)} characters: {message[:200]}..."
    for part in expected:
        assert part in message, f"{part!r} not in {message!r}"


def snapshot(*folders: Path) -> dict[str, int]:
    """Every file (and folder) under ``folders`` with its modification time: what a run could write."""
    out: dict[str, int] = {}
    for folder in (*folders, EXECUTED, artifacts_root()):
        if folder.exists():
            out[str(folder)] = folder.stat().st_mtime_ns
            for p in folder.rglob("*"):
                try:
                    out[str(p)] = p.stat().st_mtime_ns
                except OSError:
                    pass
    return out


def assert_nothing_written(before: dict[str, int], after: dict[str, int]) -> None:
    new = sorted(set(after) - set(before))
    changed = sorted(k for k in before if k in after and after[k] != before[k] and not os.path.isdir(k))
    assert not new and not changed, f"written: {new[:5]} changed: {changed[:5]}"
