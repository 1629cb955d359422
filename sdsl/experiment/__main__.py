"""Command line of the experiment::

    python -m sdsl.experiment run [--scale full|smoke] [--out DIR] [--resume] [--device cpu]
                                  [--workers 2] [--threads 1] [--no-progress]

``run`` trains the family, measures every pair and writes the raw results into ``DIR/results``
(default ``DIR``: ``build/experiment/<scale>``). Bad arguments exit with status 2 and one line
naming the argument.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m sdsl.experiment", description="The laptop-scale model-family experiment (issue 17)."
    )
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="train the family, measure every pair, write the raw results")
    r.add_argument(
        "--scale",
        default="full",
        choices=["full", "smoke"],
        help="full: the committed CPU run (about 40 minutes on 2 cores); smoke: 3 tiny models (CI)",
    )
    r.add_argument("--out", default=None, help="work folder (default build/experiment/<scale>)")
    r.add_argument("--resume", action="store_true", help="continue a killed run in --out from its last finished task")
    r.add_argument("--device", default="cpu", help="torch device for training (default cpu); decoding runs on the CPU")
    r.add_argument(
        "--workers", type=int, default=2, help="worker processes for training and alpha (default 2, one per core)"
    )
    r.add_argument("--threads", type=int, default=1, help="torch threads per worker (default 1)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = _parser()
    args = parser.parse_args(argv)
    for name in ("threads", "workers"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if args.device != "cpu":
        try:
            import torch

            torch.empty(1, device=args.device)
        except Exception as exc:  # noqa: BLE001 - any failure means the device is unusable
            parser.error(f"--device {args.device!r} is not usable here ({type(exc).__name__}: {exc})")
    from sdsl.experiment.config import get_scale
    from sdsl.experiment.runner import run

    command = "python -m sdsl.experiment " + " ".join(sys.argv[1:] if argv is None else argv)
    try:
        folder = run(
            get_scale(args.scale),
            args.out,
            resume=args.resume,
            device=args.device,
            threads=args.threads,
            workers=args.workers,
            progress=not args.no_progress,
            command=command,
        )
    except ValueError as exc:
        print(f"python -m sdsl.experiment: error: {exc}", file=sys.stderr)
        return 2
    print(f"results: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
