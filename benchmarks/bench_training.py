"""Training throughput of the laptop-scale family as a fraction of torch's fp32 matmul
throughput, both measured in the same run on the same threads.

    .venv/bin/python benchmarks/bench_training.py [--threads 1 2] [--steps 30] [--shapes w64l2 w128l3 w160l4]

For each thread count: the fp32 matmul peak (``torch.mm`` of two 1024 x 1024 matrices, best of 20
after warm-up, ``2 n^3`` FLOPs each), then ``--steps`` optimiser steps of the experiment's training
loop (:func:`sdsl.experiment.training.train_run`, the full scale's recipe and vocabulary, random
tokens) for each shape; achieved FLOP/s counts ``6 (N + n_layer seq_len width)`` per token
(Kaplan et al. 2020). The experiment runs two single-threaded workers (one per core), so the
fraction at 1 thread is the one that matters for it. No assertion: a benchmark reports.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import torch

from sdsl.experiment.config import SCALES, RunSpec
from sdsl.experiment.training import build_model, train_run, windows


def matmul_flops(n: int = 1024, reps: int = 20) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(3):
        a @ b
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t)
    return 2.0 * n**3 / best


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--shapes", nargs="+", default=["w64l2", "w128l3", "w160l4"])
    args = ap.parse_args(argv)
    scale = SCALES["full"]
    shapes = {s.name: s for s in scale.shapes}
    unknown = [s for s in args.shapes if s not in shapes]
    if unknown:
        ap.error(f"--shapes: unknown {unknown}; choose from {sorted(shapes)}")
    rec = scale.recipe
    rng = np.random.default_rng(0)
    ids = rng.integers(1, scale.vocab_size, 400_000).astype(np.uint16)
    val = torch.from_numpy(windows(ids[:20_000], rec.seq_len))[:8]
    print(f"batch {rec.batch_size} x {rec.seq_len} tokens, vocabulary {scale.vocab_size}, {args.steps} steps per shape")
    for th in args.threads:
        torch.set_num_threads(th)
        peak = matmul_flops()
        print(f"\n{th} thread(s): fp32 matmul 1024^3 {peak / 1e9:.1f} GFLOP/s")
        print(f"{'shape':8s} {'N':>10s} {'tokens/s':>10s} {'GFLOP/s':>9s} {'fraction':>9s}")
        fracs = []
        for name in args.shapes:
            s = shapes[name]
            model = build_model(s, scale.vocab_size, 2 * rec.seq_len, seed=0)
            res = train_run(
                model,
                RunSpec(s, args.steps * rec.batch_size * rec.seq_len),
                ids,
                val,
                rec,
                torch.Generator().manual_seed(0),
            )
            m = res.metrics
            fracs.append(m["flops_per_s"] / peak)
            print(
                f"{name:8s} {m['params']:10d} {m['tokens_per_s']:10.0f} {m['flops_per_s'] / 1e9:9.1f} {fracs[-1]:9.2f}"
            )
        print(f"training throughput / matmul throughput, largest shape: {fracs[-1]:.2f}; mean: {np.mean(fracs):.2f}")


if __name__ == "__main__":
    main()
