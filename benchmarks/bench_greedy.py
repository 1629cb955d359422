"""Greedy alpha of one trained pair of the laptop-scale family: the harness, prompt by prompt,
against the exact batched replay of :mod:`sdsl.experiment.greedy`, on the same prompts in the
same run.

    .venv/bin/python benchmarks/bench_greedy.py [--out build/experiment/full] [--target w160l4-d2000k]
        [--draft w32l1-d2000k] [--prompts 64] [--threads 1]

Needs a finished run of the experiment in ``--out`` (its checkpoints and prompts:
``python -m sdsl.experiment run --scale full``). Prints the seconds per prompt of each method,
their ratio, how many prompts came out identical (tokens and every iteration's counts) and the
alpha of each. The replay's time counts the target's greedy continuations, which the runner
computes once per target and shares between its drafts; the line "per draft" leaves them out.
No assertion: a benchmark reports.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="work folder of a finished full run")
    ap.add_argument("--target", default="w160l4-d2000k")
    ap.add_argument("--draft", default="w32l1-d2000k")
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)

    import torch

    from sdsl.experiment import greedy as G
    from sdsl.experiment.config import get_scale
    from sdsl.experiment.runner import Experiment, default_out
    from sdsl.measure.estimators import alpha_from_accepted

    out = Path(args.out) if args.out else default_out("full")
    for run in (args.target, args.draft):
        if not (out / "models" / run).is_dir():
            print(
                f"--out {out}: no checkpoint {run} (run: python -m sdsl.experiment run --scale full)", file=sys.stderr
            )
            return 2
    if args.prompts < 1:
        ap.error(f"--prompts must be >= 1, got {args.prompts}")
    torch.set_num_threads(args.threads)
    scale = get_scale("full")
    m = scale.measurement
    exp = Experiment(scale, out)
    ids = list(exp.prompt_ids()[: args.prompts])
    tm, dm = exp.model(args.target), exp.model(args.draft)
    print(
        f"{args.draft} -> {args.target}: {len(ids)} prompts x {m.new_tokens} tokens, gamma {m.gamma}, {args.threads} thread(s)"
    )

    t0 = time.perf_counter()
    ys = G.greedy_continuations(tm, ids, m.new_tokens, batch=m.greedy_batch)
    t_cont = time.perf_counter() - t0
    t0 = time.perf_counter()
    replayed = G.replay_greedy(dm, ids, ys, m.gamma, batch=m.greedy_batch)
    t_replay = time.perf_counter() - t0
    t0 = time.perf_counter()
    checks = [G.replay_check(tm, dm, x, y, r, m.gamma) for x, y, r in zip(ids, ys, replayed)]
    t_harness = time.perf_counter() - t0

    def alpha(rows):
        acc = [a for r in rows for a, d in zip(r["accepted"], r["drafted"]) if d > 0]
        dra = [d for r in rows for d in r["drafted"] if d > 0]
        return alpha_from_accepted(acc, dra).alpha

    n = len(ids)
    print(f"  harness (speculative_generate):   {t_harness / n * 1e3:8.2f} ms per prompt   1.00")
    both = t_cont + t_replay
    print(f"  replay (continuations + draft):   {both / n * 1e3:8.2f} ms per prompt   {both / t_harness:.3f}")
    print(
        f"  replay per draft (no continuations): {t_replay / n * 1e3:5.2f} ms per prompt   {t_replay / t_harness:.3f}"
    )
    print(f"  identical prompts: {sum(c[1] for c in checks)} of {n}")
    print(f"  alpha: harness {alpha([c[0] for c in checks]):.6f}, replay {alpha(replayed):.6f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
