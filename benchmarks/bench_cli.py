"""How long the ``sdsl`` command takes from the shell (``sdsl plan`` with a median of at most 1 s).

    .venv/bin/python benchmarks/bench_cli.py [--repeat 9] [--sdsl PATH]

Each command runs as a fresh process, as a user types it, ``--repeat`` times in round robin (every
command once per round, so that a change of the background load reaches all of them alike) after
one warm-up run, which also writes the bytecode cache as ``pip install`` does for an installed
wheel (the variable PYTHONDONTWRITEBYTECODE is removed for these runs). Import time dominates, so
the script also times the interpreter alone, ``import numpy`` and what the planning path used to
import (``scipy.optimize``, ``scipy.special`` and ``pandas``), and prints each command's fastest
and median time, also as ratios of ``import numpy``'s -- ratios that move less than seconds on a
shared machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = [
    ("sdsl plan --preset llama-3-70b", ["plan", "--preset", "llama-3-70b"]),
    (
        "sdsl plan --target-params 70.6e9 ... --json",
        ["plan", "--target-params", "70.6e9", "--target-tokens", "15e12", "--draft-tokens", "15e12", "--json"],
    ),
    ("sdsl speedup --alpha 0.8 --cost-ratio 0.05", ["speedup", "--alpha", "0.8", "--cost-ratio", "0.05"]),
    ("sdsl presets", ["presets"]),
    (
        "sdsl plan --preset llama-3-70b --hardware h100-sxm --batch 1,64",
        ["plan", "--preset", "llama-3-70b", "--hardware", "h100-sxm", "--batch", "1,64"],
    ),
    ("sdsl presets --plan", ["presets", "--plan"]),
]
BUDGET_S = 1.0  # the median of `sdsl plan --preset llama-3-70b` on a 2-core machine


def run_once(cmd: list[str], env: dict[str, str]) -> float:
    """Wall time of one run of ``cmd`` (a fresh process)."""
    t0 = time.perf_counter()
    subprocess.run(cmd, capture_output=True, env=env, check=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument(
        "--sdsl",
        default=str(Path(sys.executable).parent / "sdsl"),
        help="the sdsl executable (default: beside this Python)",
    )
    args = ap.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    py = sys.executable
    runs = {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import numpy'": [py, "-c", "import numpy"],
        "python -c 'import yaml'": [py, "-c", "import yaml"],
        "old planning imports (scipy.optimize, scipy.special, pandas)": [
            py,
            "-c",
            "import numpy, scipy.optimize, scipy.special, pandas",
        ],
        "python -c 'import sdsl'": [py, "-c", "import sdsl"],
    }
    runs.update({label: [args.sdsl, *cmd] for label, cmd in COMMANDS})
    for cmd in runs.values():  # warm-up (and bytecode cache)
        subprocess.run(cmd, capture_output=True, env=env, check=True)
    # round robin: each repeat runs every command once, so that a change of the background load on a
    # shared machine reaches all of them alike and the ratios to `import numpy` stay comparable
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(args.repeat):
        for k, cmd in runs.items():
            times[k].append(run_once(cmd, env))
    numpy_min = min(times["python -c 'import numpy'"])
    numpy_med = statistics.median(times["python -c 'import numpy'"])
    width = max(len(k) for k in runs)
    print(f"{args.repeat} rounds, every command once per round")
    print(f"{'command':<{width}}  {'min s':>6}  {'median s':>8}  {'min / numpy':>11}  {'median / numpy':>14}")
    for k, ts in times.items():
        lo, med = min(ts), statistics.median(ts)
        print(f"{k:<{width}}  {lo:6.3f}  {med:8.3f}  {lo / numpy_min:11.2f}  {med / numpy_med:14.2f}")
    try:
        load = os.getloadavg()[0]
        print(f"load average {load:.2f} on {os.cpu_count()} cores (timings grow with it)")
    except OSError:
        pass
    plan = statistics.median(times[COMMANDS[0][0]])
    print(
        f"budget of sdsl plan: a median of at most {BUDGET_S} s; median here {plan:.3f} s "
        + ("(met)" if plan <= BUDGET_S else "(over)")
        + f"; import numpy alone {numpy_med:.3f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
