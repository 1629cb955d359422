"""Time the full regeneration of the book and a rebuild when nothing changed.

1. Full regeneration from a warm environment (packages installed, nothing else reused): every
   notebook of ``notebooks/runs.yml`` executed with papermill (``sdsl.build.pipeline.run(force=True)``,
   2 at a time, the scorecard last), then the HTML book built from scratch (``book/_build``
   removed first), warnings as errors.
2. Rebuild when nothing changed: ``sdsl.build.pipeline.run()`` (every notebook's inputs are unchanged,
   so none is executed) and the book build again (Sphinx finds nothing out of date).

Targets on the reference machine: under 60 s and under 10 s. Prints both (no assertion: speed is
measured here, not tested).

Usage::

    python benchmarks/bench_build.py [--jobs 2] [--skip-full]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import time
from contextlib import redirect_stdout

from sdsl.build.pipeline import build_book, run
from sdsl.paths import BOOK

TARGET_FULL = 60.0
TARGET_NOCHANGE = 10.0


def _quiet_build() -> float:
    """Build the book with its output sent to a log file; returns the seconds it took."""
    log = BOOK / "_build" / "bench_build.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        saved = os.dup(1), os.dup(2)
        os.dup2(fh.fileno(), 1)
        os.dup2(fh.fileno(), 2)
        try:
            with redirect_stdout(fh):
                build_book()
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
    return time.perf_counter() - t0


def _cpu() -> float:
    """CPU seconds (user + system) of this process and its finished children: on a busy machine
    the wall time includes waiting for a core, this does not."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _verdict(seconds: float, target: float, cpu: float) -> str:
    state = "met" if seconds < target else "MISSED"
    return f"{seconds:6.1f} s wall, {cpu:.1f} s CPU  (target < {target:g} s: {state}; load average {os.getloadavg()[0]:.1f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once (default 2)")
    parser.add_argument("--skip-full", action="store_true", help="only time the no-change rebuild")
    args = parser.parse_args(argv)

    if not args.skip_full:
        c0 = _cpu()
        t0 = time.perf_counter()
        results = run(force=True, jobs=args.jobs)
        t_run = time.perf_counter() - t0
        shutil.rmtree(BOOK / "_build", ignore_errors=True)
        t_book = _quiet_build()
        full = time.perf_counter() - t0
        print("Full regeneration (every notebook executed, book built from scratch):")
        for r in results:
            print(f"  {r.chapter:>20}: {r.seconds:6.1f} s")
        print(f"  {'notebooks (wall)':>20}: {t_run:6.1f} s with {args.jobs} at a time")
        print(f"  {'book build':>20}: {t_book:6.1f} s")
        print(f"  {'total':>20}: {_verdict(full, TARGET_FULL, _cpu() - c0)}")
    else:
        run(jobs=args.jobs)
        _quiet_build()

    c0 = _cpu()
    t0 = time.perf_counter()
    results = run(jobs=args.jobs)
    t_run = time.perf_counter() - t0
    t_book = _quiet_build()
    nochange = time.perf_counter() - t0
    executed = [r.chapter for r in results if not r.skipped]
    print("Rebuild when nothing changed:")
    print(
        f"  {'notebooks':>20}: {t_run:6.1f} s ({len(results) - len(executed)} skipped, "
        f"{len(executed)} executed{': ' + ', '.join(executed) if executed else ''})"
    )
    print(f"  {'book build':>20}: {t_book:6.1f} s")
    print(f"  {'total':>20}: {_verdict(nochange, TARGET_NOCHANGE, _cpu() - c0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
