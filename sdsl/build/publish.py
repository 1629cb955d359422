"""Publishing by renames: a kill at any instant leaves the old or the new state whole.

A publication replaces one or more destinations at once (a chapter's artifacts folder and its
executed notebook; the HTML book; the chapters and manifest of the baseline). Each new version is
staged beside its destination (in the same folder, hence on the same filesystem: no rename crosses
devices), and then, with SIGTERM and SIGINT held until the end:

1. a journal (``publish.json`` in the publication's staging folder) lists every destination, its
   new version and the name its old version is moved aside to;
2. every old version is renamed aside, then every new version renamed in;
3. the journal is marked committed, the old versions are removed, and the journal with them.

A failure during steps 1-2 renames everything back (the old state, whole) and raises
:class:`~sdsl.build.staging.OutputError` naming the destination. A process killed outright
(SIGKILL) leaves its journal: the next run's :func:`sdsl.build.staging.clean_stale` calls
:func:`recover`, which puts the old versions back unless the journal was committed, and in that
case only removes them.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from sdsl._owned import OutputError

__all__ = ["JOURNAL", "STAGING_PREFIX", "aside_path", "held_signals", "publish", "recover", "staging_name"]

#: The journal of a publication, inside its staging folder.
JOURNAL = "publish.json"

#: Prefix of a run's staging folders inside the artifacts root (hidden: never an artifact).
STAGING_PREFIX = ".staging-"


def _rename(src: Path, dst: Path) -> None:
    """One step of a publication (tests inject faults here)."""
    os.replace(src, dst)


def staging_name(name: str) -> str:
    """A hidden staging name for ``name`` of this process (its pid lets the next run tell a killed
    run's leftovers from a live run's): ``.staging-<name>-<pid>-<token>``."""
    return f"{STAGING_PREFIX}{name}-{os.getpid()}-{secrets.token_hex(4)}"


def aside_path(dest: Path) -> Path:
    """Where the old version of ``dest`` waits while it is replaced (beside it, hidden)."""
    return dest.parent / f".replaced-{dest.name}-{os.getpid()}-{secrets.token_hex(4)}"


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


def _write_journal(path: Path, record: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    _rename(tmp, path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _roll_back(items: list[dict]) -> None:
    """Put every old version back where it was (a new one moved in is removed)."""
    for item in reversed(items):
        dest, aside = Path(item["dest"]), Path(item["aside"])
        new = Path(item["new"]) if item["new"] is not None else None
        if aside.exists() or aside.is_symlink():
            _remove(dest)  # dest, if it exists, is the new version: the old one is aside
            _rename(aside, dest)
        elif not item["had_old"] and new is not None and not new.exists() and dest.exists():
            _remove(dest)  # there was nothing before, and the new version was moved in


def _finish(items: list[dict]) -> None:
    for item in items:
        _remove(Path(item["aside"]))


def publish(items: list[tuple[Path | None, Path]], journal_dir: Path) -> None:
    """Replace each destination ``dest`` by its staged ``new`` (``None``: remove ``dest``), all or
    none (see the module notes). ``new`` must lie in ``dest``'s folder or below it on the same
    filesystem; ``journal_dir`` is the publication's staging folder."""
    journal = Path(journal_dir) / JOURNAL
    record: dict[str, Any] = {
        "state": "swapping",
        "items": [
            {
                "new": None if new is None else str(new),
                "dest": str(dest),
                "aside": str(aside_path(Path(dest))),
                "had_old": Path(dest).exists(),
            }
            for new, dest in items
        ],
    }
    with held_signals():
        try:
            _write_journal(journal, record)
            for item in record["items"]:
                if item["had_old"]:
                    _rename(Path(item["dest"]), Path(item["aside"]))
            for item in record["items"]:
                if item["new"] is not None:
                    _rename(Path(item["new"]), Path(item["dest"]))
            _write_journal(journal, {**record, "state": "committed"})
        except OSError as exc:
            _roll_back(record["items"])
            journal.unlink(missing_ok=True)
            journal.with_name(f".{journal.name}.tmp").unlink(missing_ok=True)
            where = exc.filename or record["items"][0]["dest"]
            raise OutputError(
                f"publishing {where} failed ({exc.strerror or exc}): the previous version was put back whole"
            ) from None
        _finish(record["items"])
        journal.unlink(missing_ok=True)


def recover(staging: Path) -> bool:
    """Undo (or, when it was committed, finish) the publication whose journal lies in the staging
    folder ``staging`` of a killed run; ``False`` when it has none. The caller removes ``staging``."""
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
    for item in items:  # a staged version outside the staging folder (an executed notebook)
        if item["new"] is not None:
            _remove(Path(item["new"]))
    journal.unlink()
    return True
