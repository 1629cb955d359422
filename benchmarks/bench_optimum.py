"""Time the closed-form optimiser against a brute-force grid on the Table 5 configurations.

Run from the repository root:

    .venv/bin/python benchmarks/bench_optimum.py [--repeat 20] [--gamma-step 0.001] [--gamma-max 30]
                                                 [--spacing log|linear|both]

Prints, in one run, for each of the six configurations of the paper's Table 5: the wall time of
:func:`sdsl.optimal_draft_size` (Lambert-W closed form for gamma*, bounded scalar search over
log N; best of ``--repeat``), the wall time of :func:`sdsl.model.optimum.brute_force` (every
pair of the paper's Table 7 N grid, 10,000 points in [1e8, 1e10], and a gamma grid of spacing
``--gamma-step`` in [0, ``--gamma-max``]), the ratio of the two, and the relative difference of
N*; then the totals, the overall ratio and the largest difference of N*. The brute-force N* can
differ from the closed form's by up to half a grid step (4.6e-4 of N with logarithmic spacing,
990,099 parameters with linear). Times are wall clock on a possibly shared machine: the load
average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from _timing import best_of  # benchmarks/_timing.py, beside this script

import sdsl
from sdsl.model.configurations import configurations
from sdsl.model.grid import n_grid
from sdsl.model.optimum import brute_force, plane_alpha


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="repeats of the closed-form solve (best is kept)")
    parser.add_argument("--gamma-step", type=float, default=1e-3, help="spacing of the brute-force gamma grid")
    parser.add_argument("--gamma-max", type=float, default=30.0, help="upper end of the brute-force gamma grid")
    parser.add_argument(
        "--spacing",
        default="log",
        choices=("log", "linear", "both"),
        help="spacing of the Table 7 N grid (the paper does not say)",
    )
    args = parser.parse_args(argv)
    if args.gamma_step <= 0 or args.gamma_max <= 0:
        parser.error("--gamma-step and --gamma-max must be > 0")

    configs = configurations()
    gamma = np.arange(0.0, args.gamma_max + args.gamma_step / 2, args.gamma_step)
    spacings = ("log", "linear") if args.spacing == "both" else (args.spacing,)
    sdsl.optimal_draft_size(configs["m"].iloc[0], configs["d_draft"].iloc[0], configs["d_target"].iloc[0])  # warm-up

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"Table 5 configurations: {len(configs)}; gamma grid: {gamma.size} points, step {args.gamma_step:g} "
        f"in [0, {args.gamma_max:g}]; load average {load:.2f}"
    )
    print(
        f"{'target':<12} {'family':<8} {'N grid':<7} {'closed (ms)':>11} {'brute (s)':>10} {'ratio':>9} "
        f"{'N* closed':>14} {'N* brute':>14} {'rel diff':>10} {'gamma c/b':>13}"
    )
    totals = {s: [0.0, 0.0, 0.0] for s in spacings}  # closed, brute, max |rel diff|
    for r in configs.itertuples(index=False):
        t_c, o = best_of(lambda: sdsl.optimal_draft_size(r.m, r.d_draft, r.d_target), args.repeat)
        for s in spacings:
            n = n_grid(s)
            t0 = time.perf_counter()
            alpha = plane_alpha(r.m, r.d_draft, r.d_target)
            b = {k: float(v[0]) for k, v in brute_force(alpha, [r.m], n, gamma_grid=gamma).items()}
            t_b = time.perf_counter() - t0
            dev = b["n_star"] / o.n_star - 1.0
            tot = totals[s]
            tot[0] += t_c
            tot[1] += t_b
            tot[2] = max(tot[2], abs(dev))
            print(
                f"{r.target:<12} {r.draft_family:<8} {s:<7} {t_c * 1e3:>11.2f} {t_b:>10.2f} {t_b / t_c:>9.0f} "
                f"{o.n_star:>14,.0f} {b['n_star']:>14,.0f} {dev:>+10.2e} {o.gamma_star:>6.3f}/{b['gamma_star']:<6.3f}"
            )
    for s, (t_c, t_b, dev) in totals.items():
        print(
            f"total ({s} N grid): closed form {t_c * 1e3:.1f} ms, brute force {t_b:.1f} s, "
            f"ratio {t_b / t_c:,.0f}x; largest |N* brute / N* closed - 1| = {dev:.2e}"
        )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average at the end {load:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
