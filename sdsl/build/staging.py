"""Staging folders and the guards around them, shared by the notebook runs
(:mod:`sdsl.build.pipeline`), the regeneration check, the book build and the experiment: a folder
that cannot be written gives one line naming it, a killed run's staging folders are removed (and
its half-done publication undone, :mod:`sdsl.build.publish`) by whoever reads the tree next, SIGTERM unwinds like
SIGINT so that ``finally`` clauses clean up, and a digest of input files names them relative to
the repository.

The folders' ownership (:func:`claim` and the rest, from :mod:`sdsl._owned`) is re-exported here."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sdsl.build.publish import discard, is_staging, recover
from sdsl.paths import ROOT

__all__ = [
    "Interrupted",
    "clean_stale",
    "digest_files",
    "kernel_manager",
    "terminate_as_exit",
]


class Interrupted(SystemExit):
    """SIGTERM or SIGINT stopped a run (:func:`terminate_as_exit`); ``signum`` names the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum
        self.status = 128 + signum  #: the exit status (``code``, typed)

    def line(self, prog: str) -> str:
        """The one line a command prints for it."""
        return (
            f"{prog}: interrupted by {signal.Signals(self.signum).name}: nothing of the unfinished "
            "notebooks was published; every chapter keeps its previous artifacts"
        )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_STALE = re.compile(r"^\.staging-.*-(\d+)-[^-.]*$")


def clean_stale(root: Path) -> list[Path]:
    """Undo the half-done publications of killed runs under ``root`` (their journal,
    :func:`sdsl.build.publish.recover`), then remove their staging folders and what those staged
    outside themselves; returns the folders removed. Every reader of a published tree calls it first
    (a run, the book build, the regeneration check), so that what a kill left is mended when it is
    read, not only by the next run: the journal of a chapter's publication lies in its artifacts
    root. Only a staging folder a publication made (:func:`sdsl.build.publish.is_staging`) whose
    process no longer exists is touched, and an empty one (a run killed as it made it): a folder of
    the user's that merely looks like one is left alone."""
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    for p in sorted(root.iterdir()):
        m = _STALE.match(p.name)
        if not m or _alive(int(m.group(1))) or p.is_symlink() or not p.is_dir():
            continue
        if is_staging(p):
            recover(p)
            discard(p)
        elif not any(p.iterdir()):
            p.rmdir()
        else:
            continue
        removed.append(p)
    return removed


#: Called by the SIGTERM handler of :func:`terminate_as_exit` before it raises: the pipeline
#: registers a function that kills the running kernels, so that a run stops at once instead of
#: waiting for the running cell.
ON_TERMINATE: list = []


def _terminate(signum: int, frame: object) -> None:
    # From here the run stops and says so in one line (Interrupted.line): what the clients of the
    # kernels killed now would log (a dead kernel, a task whose exception no one retrieves) is not
    # for the reader. terminate_as_exit turns logging back on for a caller that goes on.
    logging.disable(logging.CRITICAL)
    for stop in list(ON_TERMINATE):
        stop()
    raise Interrupted(signum)


#: The longest ``ipc://`` socket path the kernel can bind (``sun_path`` holds 108 bytes on Linux,
#: with the port number and the terminating NUL after the folder).
_SOCKET_PATH_MAX = 100


@functools.cache
def _tracked_kernel_manager() -> type:
    """jupyter_client's ``AsyncKernelManager``, whose kernels SIGTERM kills (:data:`ON_TERMINATE`)."""
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
def kernel_manager(folder: Path) -> Iterator[type]:
    """Within the block, a kernel manager class for papermill whose kernel talks to it over Unix
    sockets (the ``ipc`` transport) in ``folder``, a staging folder of the run, with its connection
    file there too: no TCP port is opened, so the kernel has no unencrypted traffic to warn about and
    two kernels started at once cannot pick the same port; the next run's :func:`clean_stale`
    removes what a killed run left there. A ``folder`` too deep for a socket path gets a short one
    in the system's temporary folder (``sdsl-kernel-*``) for the block. SIGTERM kills its kernel
    (:data:`ON_TERMINATE`): the run stops at once rather than after the running cell."""
    import tempfile

    base = _tracked_kernel_manager()
    with contextlib.ExitStack() as stack:
        folder = Path(folder)
        if len(str(folder / "kernel-ipc-00000")) > _SOCKET_PATH_MAX:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sdsl-kernel-")))

        class InFolder(base):  # type: ignore[misc, valid-type]
            def __init__(self, *args, **kwargs):
                kwargs.setdefault("transport", "ipc")
                kwargs.setdefault("connection_file", str(folder / "kernel.json"))
                kwargs.setdefault("ip", str(folder / "kernel-ipc"))
                super().__init__(*args, **kwargs)

        yield InFolder


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
    except Interrupted:
        logging.disable(logging.NOTSET)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


def digest_files(paths: list[Path], h: hashlib._Hash) -> None:
    for p in sorted(paths):
        h.update(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p.name).encode())
        h.update(p.read_bytes())
