"""Folders the tools own: they write into, clear or replace only folders they made.

:func:`claim` is called on every folder a command or function is given, before anything is
touched: a folder that does not exist is created and marked (:data:`OWNED_MARKER`), an empty one is
marked, a marked one is the tools' own, and any other is refused with one line naming it
(:class:`OutputError`). Inside a folder of theirs the tools clear only the files they recorded as
written (:func:`note_written`, a ledger beside them): a file someone else put there refuses the
clearing, naming it, before anything runs (:func:`clear_owned`). The project's own output trees (``build/``, ``book/executed/``,
``book/_build/``: made by these tools and ignored by git) count as the tools' own. Shared by the
notebook runs and the regeneration check (:mod:`sdsl.build.staging` re-exports it) and the
experiment's work folder.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from sdsl.paths import BOOK, BUILD, EXECUTED

__all__ = [
    "OWNED_MARKER",
    "WRITTEN",
    "OutputError",
    "claim",
    "clear_owned",
    "foreign_files",
    "is_owned",
    "note_written",
    "refuse_foreign",
    "writable",
    "write_failure",
]

#: The file that marks a folder as made by these tools (hidden: never an artifact).
OWNED_MARKER = ".sdsl-owned"
#: In a folder of the tools': the names of the files they wrote there, one a line (hidden).
WRITTEN = ".sdsl-written"
_MARKER_TEXT = "Made by the sdsl companion's tools, which may clear or replace what this folder holds.\n"


class OutputError(ValueError):
    """A folder the run must write to cannot be written, or is not the tools' own: one line naming it."""


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


def note_written(folder: Path | str, names: list[str]) -> None:
    """Record ``names`` (files of ``folder``) as written by the tools, before they are written: a
    later :func:`clear_owned` removes them and nothing else."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / WRITTEN, "a", encoding="utf-8") as f:
        f.writelines(f"{n}\n" for n in names)


def foreign_files(folder: Path | str) -> list[Path]:
    """The files under ``folder`` that the tools did not record as written there (:func:`note_written`),
    its marker and ledgers aside."""
    folder = Path(folder)
    out: list[Path] = []
    for here, dirs, files in os.walk(folder):
        ledger = Path(here) / WRITTEN
        ours = set(ledger.read_text(encoding="utf-8").splitlines()) if ledger.is_file() else set()
        out += [Path(here) / f for f in sorted(files) if f not in ours | {WRITTEN, OWNED_MARKER}]
        out += [Path(here) / d for d in sorted(dirs) if (Path(here) / d).is_symlink()]
    return out


def _shown(paths: list[Path], folder: Path) -> str:
    names = [p.relative_to(folder).as_posix() for p in paths]
    return ", ".join(repr(n) for n in names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def clear_owned(folder: Path, what: str = "folder") -> None:
    """Remove what the tools' folder ``folder`` (:func:`claim`) holds, keeping it and its marker.
    Refused, one line naming them and nothing removed, when it holds files the tools did not write
    (:func:`foreign_files`): they are the user's."""
    if not is_owned(folder):
        raise OutputError(f"{folder} is not a folder these tools made: it is not cleared")
    foreign = foreign_files(folder)
    if foreign:
        raise OutputError(
            f"{what} {folder} holds files these tools did not write ({_shown(foreign, folder)}): move them out "
            "of it, or give another folder; nothing was run or written"
        )
    for p in folder.iterdir():
        if p.name == OWNED_MARKER:
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


def write_failure(exc: OSError, what: str, folder: Path | str) -> OutputError:
    """The one line for ``exc``, raised while the tools wrote into ``folder``: the disk (full, read
    only, over quota) is named, with the file, not the input being read."""
    reason = exc.strerror
    filename = exc.filename
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list) and exc.args[0]:
        src, dst, why = exc.args[0][0]  # copytree's list of (source, destination, reason)
        m = re.match(r"\[Errno \d+\] ([^:]+)", str(why))
        reason, filename = (m.group(1) if m else str(why)), dst
    where = f" (writing {filename})" if filename else ""
    return OutputError(
        f"{what} {folder}: {reason or exc}{where}: free space there or give another folder; nothing was published"
    )


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
