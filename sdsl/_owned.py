"""Folders the tools own: they write into, clear or replace only folders they made.

:func:`claim` is called on every folder a command or function is given, before anything is
touched: a folder that does not exist is created and marked (:data:`OWNED_MARKER`), an empty one is
marked, a marked one is the tools' own, and any other is refused with one line naming it
(:class:`OutputError`). The project's own output trees (``build/``, ``book/executed/``,
``book/_build/``: made by these tools and ignored by git) count as the tools' own. Shared by the
notebook runs and the regeneration check (:mod:`sdsl.build.staging` re-exports it) and the
experiment's work folder.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from sdsl.paths import BOOK, BUILD, EXECUTED

__all__ = ["OWNED_MARKER", "OutputError", "claim", "clear_owned", "is_owned", "refuse_foreign", "writable"]

#: The file that marks a folder as made by these tools (hidden: never an artifact).
OWNED_MARKER = ".sdsl-owned"
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
