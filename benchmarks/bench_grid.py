"""Time the vectorised N* solver on the whole Table 7 grid against a per-configuration loop.

Run from the repository root:

    .venv/bin/python benchmarks/bench_grid.py [--repeat 5] [--spacing log] [--d-high 1e14]

Prints, in one run: the wall time of :func:`sdsl.model.optimum.optimal_draft_table` for all 288
configurations (default coarse-to-fine grid argmax + refinement; best of ``--repeat``), the same
with the exhaustive evaluation of all 10,000 grid points, the time of a Python loop of
:func:`sdsl.optimal_draft_size` over the same configurations (one run), the speed-up ratios, and
the largest relative difference of N* between the vectorised solver and the loop. Times are wall
clock on a possibly shared machine: the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _timing import best_of  # benchmarks/_timing.py, beside this script

import sdsl
from sdsl.model.grid import SPACINGS, n_grid, table7_grid
from sdsl.model.optimum import optimal_draft_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="repeats of the vectorised solve (best is kept)")
    parser.add_argument("--spacing", default="log", choices=SPACINGS, help="spacing of M, D, D'")
    parser.add_argument(
        "--d-high",
        type=float,
        default=1e14,
        help="upper end of D and D' (1e13 as printed in Table 7; 1e14 reproduces Tables 8-9)",
    )
    args = parser.parse_args(argv)

    cfg = table7_grid(args.spacing, args.d_high, args.d_high)
    n = n_grid("log")
    m, d, dp = (cfg[c].to_numpy() for c in ("m", "d_draft", "d_target"))
    lo, hi = float(n[0]), float(n[-1])

    optimal_draft_table(m[:2], d[:2], dp[:2], n)  # warm-up (imports, caches)
    t_vec, sol = best_of(lambda: optimal_draft_table(m, d, dp, n), args.repeat)
    t_exh, exh = best_of(lambda: optimal_draft_table(m, d, dp, n, exhaustive=True), 1)
    t0 = time.perf_counter()
    loop = np.array([sdsl.optimal_draft_size(mi, di, pi, n_bounds=(lo, hi)).n_star for mi, di, pi in zip(m, d, dp)])
    t_loop = time.perf_counter() - t0

    dev = np.abs(sol["n_star"].to_numpy() / loop - 1.0).max()
    same_argmax = bool((sol["grid_index"] == exh["grid_index"]).all())
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"configurations: {len(cfg)} (spacing {args.spacing}, D and D' up to {args.d_high:.3g}); "
        f"N grid: {n.size} log-spaced points in [{lo:.3g}, {hi:.3g}]"
    )
    print(f"vectorised, coarse-to-fine + refinement (best of {args.repeat}): {t_vec:.3f} s")
    print(f"vectorised, exhaustive grid + refinement (1 run):           {t_exh:.3f} s")
    print(f"loop of sdsl.optimal_draft_size (1 run):                    {t_loop:.3f} s")
    print(f"ratio loop / vectorised: {t_loop / t_vec:.1f}x; loop / exhaustive: {t_loop / t_exh:.1f}x")
    print(f"max |N*_vectorised / N*_loop - 1| = {dev:.2e}; grid argmax equal to exhaustive: {same_argmax}")
    print(f"load average (1 min): {load:.2f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
