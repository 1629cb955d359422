"""Staging folders and the guards around them, shared by the notebook runs
(:mod:`sdsl.build.pipeline`) and the book build: a folder that cannot be written gives one line
naming it, a killed run's staging folders are removed by the next run, SIGTERM unwinds like
SIGINT so that ``finally`` clauses clean up, and a digest of input files names them relative to
the repository."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sdsl.paths import ROOT

__all__ = ["STAGING_PREFIX", "OutputError", "clean_stale", "digest_files", "terminate_as_exit", "writable"]

#: Prefix of a run's staging folders inside the artifacts root (hidden: never an artifact).
STAGING_PREFIX = ".staging-"


class OutputError(ValueError):
    """A folder the run must write to cannot be written: one line naming it."""


def writable(folder: Path, what: str) -> Path:
    """``folder`` created if needed; :class:`OutputError` naming it when it cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=folder, prefix=".write-probe-", delete=True)
        probe.close()
    except OSError as exc:
        raise OutputError(
            f"{what} {folder} is not writable ({exc.strerror or exc}): nothing was run or published"
        ) from None
    return folder


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_stale(root: Path) -> list[Path]:
    """Remove staging and replaced folders under ``root`` left by runs that were killed (their
    process no longer exists); returns what was removed."""
    removed = []
    if not root.is_dir():
        return removed
    for p in root.iterdir():
        m = re.match(r"^\.(?:staging|replaced)-.*-(\d+)-[^-]*$", p.name)
        if p.is_dir() and m and not _alive(int(m.group(1))):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


@contextmanager
def terminate_as_exit() -> Iterator[None]:
    """Within the block, SIGTERM raises ``SystemExit`` (as SIGINT raises ``KeyboardInterrupt``) so
    that ``finally`` clauses remove staging folders; the previous handler is restored after."""
    try:
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def digest_files(paths: list[Path], h: hashlib._Hash) -> None:
    for p in sorted(paths):
        h.update(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p.name).encode())
        h.update(p.read_bytes())
