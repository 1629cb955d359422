"""Publishing by renames: a kill at any instant leaves the old or the new state whole.

A publication replaces one or more destinations at once (a chapter's artifacts folder and its
executed notebook; the HTML book; the chapters and manifest of the baseline). Each new version is
staged in a *staging folder* (:func:`staging_folder`) beside its destination, or beside it in the
same folder (:func:`stage_beside`: an executed notebook), hence on the same filesystem: no rename
crosses devices. Then, with SIGTERM and SIGINT held until the end:

1. a journal (``publish.json`` in the staging folder) lists every destination, its new version
   with the inode that identifies it, and the name its old version is moved aside to;
2. every new version takes its destination's place: where the system can (Linux ``renameat2`` with
   ``RENAME_EXCHANGE``, macOS ``renamex_np`` with ``RENAME_SWAP``) by exchanging the two in one
   atomic step, so that the destination is never missing, not even for an instant; elsewhere a file
   by a hard link of the old version and one atomic replace, a folder by two renames (the old
   aside, then the new in);
3. the journal is marked committed, the old versions are removed, and the journal with them.

A failure during steps 1-2 puts every old version back (the old state, whole) and raises
:class:`~sdsl.build.staging.OutputError` naming the destination. A process killed outright
(SIGKILL) leaves its journal, and whoever reads next -- the next run, the book build, the
regeneration check (:func:`sdsl.build.staging.clean_stale`, which they all call before reading) --
calls :func:`recover`: it puts the old versions back unless the journal was committed, and then only
removes them. Which version lies where is told by the inode the journal recorded, so recovery is
right whatever instant the kill came at, and may itself be killed and run again.

Nothing is removed that a publication did not make: a staging folder carries a marker
(:data:`STAGING_MARKER`) from the instant it exists, and what it stages outside itself is recorded
in it before it is written (:func:`stage_beside`); a folder that merely looks like a staging folder
is left alone.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from sdsl._owned import OutputError

__all__ = [
    "JOURNAL",
    "STAGING_MARKER",
    "STAGING_PREFIX",
    "discard",
    "held_signals",
    "is_staging",
    "make_staging",
    "publish",
    "recover",
    "stage_beside",
    "staging_folder",
]

#: The journal of a publication, inside its staging folder.
JOURNAL = "publish.json"

#: Prefix of a run's staging folders inside the artifacts root (hidden: never an artifact).
STAGING_PREFIX = ".staging-"

#: Written into a staging folder as soon as it is made: only a folder carrying it (or a journal) is
#: ever removed as a staging folder.
STAGING_MARKER = ".sdsl-staging"

#: In a staging folder: the paths it staged outside itself (one per line), recorded before each is written.
_OUTSIDE = "outside.txt"


def _do(step: str, fn: Callable[..., Any], *args: Any) -> Any:
    """One step of a publication on the filesystem (``step`` says which; the tests stop the process
    or inject a fault here)."""
    return fn(*args)


def _rename(src: Path, dst: Path) -> None:
    os.replace(src, dst)


# --- atomic exchange of two paths


_RENAME_EXCHANGE = 2  # linux/fs.h
_RENAME_SWAP = 2  # macOS sys/stdio.h
_AT_FDCWD = -100


@functools.cache
def _exchange_call() -> Callable[[bytes, bytes], int] | None:
    """The system call that swaps two paths atomically, or ``None`` where there is none."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if sys.platform.startswith("linux"):
            f = libc.renameat2
            f.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            f.restype = ctypes.c_int
            return lambda a, b: f(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE)
        if sys.platform == "darwin":
            g = libc.renamex_np
            g.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
            g.restype = ctypes.c_int
            return lambda a, b: g(a, b, _RENAME_SWAP)
    except (OSError, AttributeError):  # no such function in this C library
        return None
    return None


#: Set to False (tests) to publish as a system without an atomic exchange does.
EXCHANGE = True


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` (both exist) in one atomic step; ``False`` where the system or the
    filesystem cannot, and nothing was done."""
    call = _exchange_call() if EXCHANGE else None
    if call is None:
        return False
    if call(os.fsencode(a), os.fsencode(b)) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


# --- staging folders


def is_staging(folder: Path) -> bool:
    """Whether ``folder`` is a staging folder a publication made (its marker or its journal)."""
    folder = Path(folder)
    return folder.is_dir() and ((folder / STAGING_MARKER).is_file() or (folder / JOURNAL).is_file())


def _outside(staging: Path) -> list[Path]:
    try:
        return [Path(line) for line in (staging / _OUTSIDE).read_text(encoding="utf-8").splitlines() if line]
    except FileNotFoundError:
        return []


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def discard(staging: Path) -> None:
    """Remove the staging folder ``staging`` and what it staged outside itself (after its
    publication, or when its process is gone and :func:`recover` has run)."""
    for path in _outside(staging):
        _remove(path)
    shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def staging_folder(parent: Path | str, name: str) -> Iterator[Path]:
    """A new staging folder ``parent/.staging-<name>-<pid>-<random>`` for the block, marked at once
    (:data:`STAGING_MARKER`; the pid lets a later reader tell a killed run's leftovers from a live
    run's), removed with what it staged outside itself when the block ends. Made exclusively: it
    cannot be, or replace, a folder of the user's."""
    path = make_staging(parent, name)
    try:
        yield path
    finally:
        discard(path)


def make_staging(parent: Path | str, name: str) -> Path:
    """:func:`staging_folder` without the block: made and marked; the caller discards it."""
    path = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{name}-{os.getpid()}-", dir=parent))
    (path / STAGING_MARKER).write_text(
        "A staging folder of the sdsl companion's tools: removed when its run ends or by the next reader.\n",
        encoding="utf-8",
    )
    return path


def stage_beside(staging: Path, dest: Path) -> Path:
    """A new hidden file beside ``dest`` (same folder, same filesystem) to stage its new version in,
    recorded in ``staging`` before it is made, so that a reader after a kill removes it with the
    staging folder; made exclusively (it cannot be a file of the user's)."""
    dest, listed = Path(dest), Path(staging) / _OUTSIDE
    while True:
        path = dest.parent / f"{STAGING_PREFIX}{dest.stem}-{os.getpid()}-{os.urandom(6).hex()}{dest.suffix}"
        before = listed.read_text(encoding="utf-8") if listed.is_file() else ""
        listed.write_text(f"{before}{path}\n", encoding="utf-8")
        try:
            path.open("x").close()
            return path
        except FileExistsError:  # a file of that name is there already: not ours, not listed
            listed.write_text(before, encoding="utf-8")


@contextmanager
def held_signals() -> Iterator[None]:
    """Within the block SIGTERM and SIGINT are recorded, not acted on; after it, the first one
    recorded is delivered again to the handler that was in place."""
    pending: list[int] = []
    previous: dict[signal.Signals, Callable[[int, FrameType | None], Any] | int | None] = {}
    try:
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, lambda signum, frame: pending.append(signum))
    except ValueError:  # not the main thread: signals are the main thread's
        previous.clear()
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if pending:
            os.kill(os.getpid(), pending[0])


# --- the publication


def _identity(path: Path) -> list[int] | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return [st.st_dev, st.st_ino]


def _write_journal(path: Path, record: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(json.dumps(record, indent=1) + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _swap_in(item: dict) -> None:
    """Step 2 for one destination."""
    dest, aside = Path(item["dest"]), Path(item["aside"])
    new = Path(item["new"]) if item["new"] is not None else None
    if new is None:
        if item["had_old"]:
            _do("aside", _rename, dest, aside)
    elif not item["had_old"]:
        _do("in", _rename, new, dest)
    elif _do("exchange", _exchange, new, dest):
        pass  # the old version now lies at ``new``
    elif new.is_dir():
        _do("aside", _rename, dest, aside)
        _do("in", _rename, new, dest)
    else:
        _do("link", os.link, dest, aside)
        _do("in", _rename, new, dest)


def _where_old(item: dict) -> Path | None:
    """Where the old version of a destination lies now other than at the destination itself."""
    new_id = item.get("new_id")
    if item["new"] is not None and _identity(Path(item["new"])) not in (None, new_id):
        return Path(item["new"])  # exchanged
    aside = Path(item["aside"])
    return aside if aside.exists() or aside.is_symlink() else None


def _roll_back(items: list[dict]) -> None:
    """Put every old version back where it was; a new version moved in goes back where it was
    staged. Right from any state a kill can leave (the inode recorded in the journal tells the new
    version from the old), and when run again."""
    for item in reversed(items):
        if "new_id" not in item:  # a journal of an earlier version of these tools
            _roll_back_by_name(item)
            continue
        dest = Path(item["dest"])
        new = Path(item["new"]) if item["new"] is not None else None
        old = _where_old(item)
        if new is not None and _identity(dest) == item["new_id"]:  # the new version is in
            if old is not None and old == new:
                if not _do("back", _exchange, new, dest):
                    raise OSError(errno.EIO, "cannot exchange back", str(dest))
                old = None
            elif old is not None:
                _do("back", _rename, dest, new)
                _do("back", _rename, old, dest)
                old = None
            else:
                _do("back", _rename, dest, new)
        if old is not None:
            if os.path.lexists(dest):
                _do("back", _remove, old)  # a hard link of the version in place
            else:
                _do("back", _rename, old, dest)


def _roll_back_by_name(item: dict) -> None:
    dest, aside = Path(item["dest"]), Path(item["aside"])
    new = Path(item["new"]) if item["new"] is not None else None
    if aside.exists() or aside.is_symlink():
        _remove(dest)
        _rename(aside, dest)
    elif not item["had_old"] and new is not None and not new.exists() and dest.exists():
        _remove(dest)


def _finish(items: list[dict]) -> None:
    """Step 3: remove the old versions (wherever they lie) once the journal is committed."""
    for item in items:
        old = _where_old(item) if "new_id" in item else Path(item["aside"])
        if old is not None:
            _do("remove", _remove, old)


def _aside(dest: Path) -> Path:
    return dest.parent / f".replaced-{dest.name}-{os.getpid()}-{os.urandom(4).hex()}"


def publish(items: list[tuple[Path | None, Path]], staging: Path) -> None:
    """Replace each destination ``dest`` by its staged ``new`` (``None``: remove ``dest``), all or
    none (see the module notes). ``new`` lies in ``staging`` (:func:`staging_folder`) or beside
    ``dest`` (:func:`stage_beside`), on ``dest``'s filesystem; the journal is written in ``staging``."""
    journal = Path(staging) / JOURNAL
    record: dict[str, Any] = {
        "state": "swapping",
        "items": [
            {
                "new": None if new is None else str(new),
                "new_id": None if new is None else _identity(Path(new)),
                "dest": str(dest),
                "aside": str(_aside(Path(dest))),
                "had_old": os.path.lexists(dest),
            }
            for new, dest in items
        ],
    }
    with held_signals():
        try:
            _do("journal", _write_journal, journal, record)
            for item in record["items"]:
                _swap_in(item)
            _do("commit", _write_journal, journal, {**record, "state": "committed"})
        except OSError as exc:
            _roll_back(record["items"])
            journal.unlink(missing_ok=True)
            journal.with_name(f".{journal.name}.tmp").unlink(missing_ok=True)
            where = exc.filename or record["items"][0]["dest"]
            raise OutputError(
                f"publishing {where} failed ({exc.strerror or exc}): the previous version was put back whole"
            ) from None
        _finish(record["items"])
        _do("done", journal.unlink, True)


def recover(staging: Path) -> bool:
    """Undo (or, when it was committed, finish) the publication whose journal lies in the staging
    folder ``staging`` of a killed run; ``False`` when it has none. The caller then removes
    ``staging`` (:func:`discard`)."""
    journal = Path(staging) / JOURNAL
    if not journal.is_file():
        return False
    try:
        record = json.loads(journal.read_text(encoding="utf-8"))
        items = record["items"]
        state = record["state"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OutputError(f"the publication journal {journal} cannot be read ({exc}): remove it by hand") from None
    if state == "committed":
        _finish(items)
    else:
        _roll_back(items)
    journal.unlink()
    return True
