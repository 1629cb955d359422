"""Staging folders and the guards around them, shared by the notebook runs
(:mod:`sdsl.build.pipeline`), the regeneration check, the book build and the experiment: a folder
that cannot be written gives one line naming it, a killed run's staging folders are removed (and
its half-done publication undone, :mod:`sdsl.build.publish`) by the next run, SIGTERM unwinds like
SIGINT so that ``finally`` clauses clean up, and a digest of input files names them relative to
the repository.

Ownership: the tools write into, clear or replace only folders they made. :func:`claim` is called
on every folder a command or function is given before anything is touched: a folder that does not
exist is created and marked (:data:`OWNED_MARKER`), an empty one is marked, a marked one is the
tools' own, and any other is refused with one line naming it. The project's own output trees
(``build/``, ``book/executed/``, ``book/_build/``: made by these tools and ignored by git) count as
the tools' own."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import signal
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sdsl.paths import BOOK, BUILD, EXECUTED, ROOT

__all__ = [
    "OWNED_MARKER",
    "STAGING_PREFIX",
    "Interrupted",
    "OutputError",
    "claim",
    "clean_stale",
    "clear_owned",
    "digest_files",
    "is_owned",
    "killable_kernel_manager",
    "refuse_foreign",
    "terminate_as_exit",
    "writable",
]

#: Prefix of a run's staging folders inside the artifacts root (hidden: never an artifact).
STAGING_PREFIX = ".staging-"
#: The file that marks a folder as made by these tools (hidden: never an artifact).
OWNED_MARKER = ".sdsl-owned"
_MARKER_TEXT = "Made by the sdsl companion's tools, which may clear or replace what this folder holds.\n"


class OutputError(ValueError):
    """A folder the run must write to cannot be written, or is not the tools' own: one line naming it."""


class Interrupted(SystemExit):
    """SIGTERM or SIGINT stopped a run (:func:`terminate_as_exit`); ``signum`` names the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum

    def line(self, prog: str) -> str:
        """The one line a command prints for it."""
        return (
            f"{prog}: interrupted by {signal.Signals(self.signum).name}: nothing of the unfinished "
            "notebooks was published; every chapter keeps its previous artifacts"
        )


def _tool_trees() -> tuple[Path, ...]:
    return (BUILD, EXECUTED, BOOK / "_build")


def is_owned(folder: Path | str) -> bool:
    """Whether ``folder`` is the tools' own: it carries :data:`OWNED_MARKER`, or it lies in one of
    the project's output trees (``build/``, ``book/executed/``, ``book/_build/``)."""
    folder = Path(folder)
    if (folder / OWNED_MARKER).is_file():
        return True
    resolved = folder.resolve()
    return any(resolved.is_relative_to(tree.resolve()) for tree in _tool_trees())


def _names(folder: Path) -> str:
    names = sorted(p.name for p in folder.iterdir())
    shown = ", ".join(repr(n) for n in names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def refuse_foreign(folder: Path | str, what: str, owned: bool = False) -> Path:
    """:func:`claim`'s refusal without its writing: check every folder with this before claiming
    any, so that a refused one leaves the others untouched too. Returns ``folder``."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{what} {folder} is not writable (a file, not a folder): nothing was run or written")
    if folder.is_dir() and not (owned or is_owned(folder)):
        try:
            foreign = _names(folder)
        except OSError as exc:
            raise OutputError(
                f"{what} {folder} cannot be read ({exc.strerror or exc}): nothing was run or written"
            ) from None
        if foreign:
            raise OutputError(
                f"{what} {folder} holds files these tools did not make ({foreign}): give a new or empty "
                "folder; nothing was run or written"
            )
    return folder


def claim(folder: Path | str, what: str, owned: bool = False) -> Path:
    """``folder``, made the tools' own before anything is written into it: created and marked
    (:data:`OWNED_MARKER`) when missing, marked when empty, taken as it is when it is already the
    tools' (:func:`is_owned`, or ``owned``: the caller recognised it). Raises :class:`OutputError`,
    one line naming ``what`` and the folder, when it is a file, cannot be written, or holds
    anything the tools did not make."""
    folder = refuse_foreign(folder, what, owned)
    writable(folder, what)
    marker = folder / OWNED_MARKER
    if not marker.is_file():
        try:
            marker.write_text(_MARKER_TEXT, encoding="utf-8")
        except OSError as exc:
            raise OutputError(
                f"{what} {folder} is not writable ({exc.strerror or exc}): nothing was run or written"
            ) from None
    return folder


def clear_owned(folder: Path) -> None:
    """Remove what the tools' folder ``folder`` (:func:`claim`) holds, keeping it and its marker."""
    if not is_owned(folder):
        raise OutputError(f"{folder} is not a folder these tools made: it is not cleared")
    for p in folder.iterdir():
        if p.name == OWNED_MARKER:
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


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


_STALE = re.compile(r"^\.(?:staging|replaced)-.*-(\d+)-[^-.]*(?:\.[A-Za-z]+)?$")


def clean_stale(root: Path) -> list[Path]:
    """Undo the half-done publications of killed runs under ``root`` (their journal,
    :func:`sdsl.build.publish.recover`), then remove the staging and replaced folders and files
    they left (their process no longer exists); returns what was removed. A run cleans its
    artifacts root before its output folder: a publication's journal lies in the former."""
    from sdsl.build.publish import recover

    removed: list[Path] = []
    if not root.is_dir():
        return removed
    stale = [p for p in root.iterdir() if (m := _STALE.match(p.name)) and not _alive(int(m.group(1)))]
    for p in stale:
        if p.is_dir() and p.name.startswith(STAGING_PREFIX):
            recover(p)
    for p in stale:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        elif p.exists() or p.is_symlink():
            p.unlink()
        else:
            continue
        removed.append(p)
    return removed


#: Called by the SIGTERM handler of :func:`terminate_as_exit` before it raises: the pipeline
#: registers a function that kills the running kernels, so that a run stops at once instead of
#: waiting for the running cell.
ON_TERMINATE: list = []


def _terminate(signum: int, frame: object) -> None:
    for stop in list(ON_TERMINATE):
        stop()
    raise Interrupted(signum)


@functools.cache
def killable_kernel_manager() -> type:
    """jupyter_client's ``AsyncKernelManager``, whose kernels SIGTERM kills (:data:`ON_TERMINATE`):
    the run stops at once rather than after the running cell, and its kernel does not outlive it."""
    import weakref

    from jupyter_client import AsyncKernelManager

    class Tracked(AsyncKernelManager):
        live: weakref.WeakSet = weakref.WeakSet()

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            Tracked.live.add(self)

    def kill() -> None:
        for km in list(Tracked.live):
            proc = getattr(km.provisioner, "process", None) if km.provisioner is not None else None
            if proc is not None and proc.poll() is None:
                proc.kill()

    ON_TERMINATE[:] = [kill]
    return Tracked


@contextmanager
def terminate_as_exit() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Interrupted` (a ``SystemExit``, as SIGINT raises
    ``KeyboardInterrupt``) after killing the running kernels (:data:`ON_TERMINATE`), so that
    ``finally`` clauses remove staging folders; the previous handler is restored after."""
    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
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
