"""Resumable execution of a list of tasks, in phases, on a few worker processes, with one progress
bar and an estimate of the time left.

Each task has an id, a kind, an estimated cost (seconds), a phase and whether it may run beside
other tasks. Phases run in increasing order; the parallel tasks of a phase run on ``workers``
processes (``spawn``: a fresh interpreter, no state inherited from the parent), the others one at
a time in the calling process. ``work(task_id, advance)`` does the work of one task;
``advance(fraction)`` reports its progress in [0, 1].

A finished task gets a marker ``<done_dir>/<task id>.json`` (written atomically, after the
task's own outputs) holding its wall time, the CPU time of its process and the session it ran
in (CPU time well below wall time means the cores were shared with other work); a later session skips every
task with a marker, so a killed run restarts from its last finished tasks. The bar counts
estimated seconds (``tqdm``), so its rate, and hence its estimate of the time left, adapts to the
machine as the run goes.

On a CPU shared with other processes, one torch thread per process is much faster than two
threads in one process (a thread that is descheduled stalls every parallel kernel of the other);
hence two single-threaded workers rather than one two-threaded process.
"""

from __future__ import annotations

import json
import os
import queue
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from pathlib import Path

__all__ = ["Task", "atomic_write_bytes", "atomic_write_text", "done_marker", "execute_tasks", "is_done"]


@dataclass(frozen=True)
class Task:
    """One unit of work: ``phase`` orders the tasks, ``parallel`` lets it run beside others."""

    task_id: str
    kind: str
    cost: float
    phase: int = 0
    parallel: bool = False


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (never half-written)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def atomic_write_text(path: Path, text: str) -> None:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8."""
    atomic_write_bytes(path, text.encode("utf-8"))


def done_marker(done_dir: Path, task_id: str) -> Path:
    return Path(done_dir) / (task_id.replace("/", "__") + ".json")


def is_done(done_dir: Path, task_id: str) -> bool:
    return done_marker(done_dir, task_id).is_file()


def _in_worker(work: Callable, task_id: str, progress_queue) -> tuple[float, float]:
    """Run one task in a worker process, reporting progress through ``progress_queue``; returns
    its wall time and the process's CPU time spent on it."""
    t0, c0 = time.perf_counter(), time.process_time()
    work(task_id, lambda f: progress_queue.put((task_id, float(f))))
    return time.perf_counter() - t0, time.process_time() - c0


def execute_tasks(
    tasks: list[Task],
    work: Callable[[str, Callable[[float], None]], None],
    done_dir: str | os.PathLike,
    *,
    session: int,
    workers: int = 1,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
) -> list[str]:
    """Run every task without a marker in ``done_dir``; returns the ids run, in completion order.

    ``work`` must be picklable (a module-level function or a ``functools.partial`` of one) when
    ``workers > 1``. A task that raises leaves no marker (it runs again on resume); the exception
    propagates after the tasks already running have finished.
    """
    from tqdm.auto import tqdm

    ids = [t.task_id for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError("task ids must be unique")
    if int(workers) < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    done_dir = Path(done_dir)
    done_dir.mkdir(parents=True, exist_ok=True)
    total = float(sum(t.cost for t in tasks))
    finished = float(sum(t.cost for t in tasks if is_done(done_dir, t.task_id)))
    bar = tqdm(
        total=round(total, 1),
        initial=round(finished, 1),
        disable=not progress,
        mininterval=2.0,
        bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} est-s [{elapsed}<{remaining}]",
    )
    reported: dict[str, float] = {}
    by_id = {t.task_id: t for t in tasks}
    ran: list[str] = []

    def advance(task_id: str, fraction: float) -> None:
        f = min(max(float(fraction), 0.0), 1.0)
        step = (f - reported.get(task_id, 0.0)) * by_id[task_id].cost
        if step > 0:
            bar.update(step)
            reported[task_id] = f

    def finish(task_id: str, seconds: float, cpu_seconds: float) -> None:
        advance(task_id, 1.0)
        t = by_id[task_id]
        atomic_write_text(
            done_marker(done_dir, task_id),
            json.dumps(
                {
                    "task": task_id,
                    "kind": t.kind,
                    "seconds": seconds,
                    "cpu_seconds": cpu_seconds,
                    "session": int(session),
                }
            ),
        )
        ran.append(task_id)
        if log is not None:
            log(f"done {task_id} in {seconds:.1f} s")

    pool = manager = None
    try:
        for phase in sorted({t.phase for t in tasks}):
            todo = [t for t in tasks if t.phase == phase and not is_done(done_dir, t.task_id)]
            parallel = [t for t in todo if t.parallel] if workers > 1 else []
            for t in [t for t in todo if t not in parallel]:
                bar.set_description(t.task_id, refresh=False)
                t0, c0 = time.perf_counter(), time.process_time()
                work(t.task_id, partial(advance, t.task_id))
                finish(t.task_id, time.perf_counter() - t0, time.process_time() - c0)
            if not parallel:
                continue
            if pool is None:
                import multiprocessing as mp

                ctx = mp.get_context("spawn")
                manager = ctx.Manager()
                progress_queue = manager.Queue()
                pool = ProcessPoolExecutor(max_workers=int(workers), mp_context=ctx)
            bar.set_description(f"phase {phase} on {workers} workers", refresh=False)
            futures = {pool.submit(_in_worker, work, t.task_id, progress_queue): t.task_id for t in parallel}
            error = None
            while futures:
                done, _ = wait(list(futures), timeout=1.0, return_when=FIRST_COMPLETED)
                while True:
                    try:
                        tid, f = progress_queue.get_nowait()
                    except queue.Empty:
                        break
                    advance(tid, f)
                for fut in done:
                    tid = futures.pop(fut)
                    if fut.exception() is not None:
                        error = error or fut.exception()
                        for other in futures:
                            other.cancel()
                    else:
                        finish(tid, *fut.result())
                if error is not None and all(f.done() for f in futures):
                    break
            if error is not None:
                raise error
    finally:
        bar.close()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if manager is not None:
            manager.shutdown()
    return ran
