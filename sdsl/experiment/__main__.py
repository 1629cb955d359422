"""Command line of the experiment::

    python -m sdsl.experiment run [--scale full|gpu|smoke] [--out DIR] [--resume] [--device cpu]
                                  [--workers 2] [--threads 1] [--address ADDR] [--no-progress]
                                  [--corpus-only] [--stop-after PHASE]
    python -m sdsl.experiment budget [--scale full|gpu|smoke] [--out DIR] [--flops-per-s X]
    python -m sdsl.experiment baselines [--results DIR]

``run`` trains the calibration runs, commits the prediction, trains and measures the test drafts
around it (every task in a worker process: ``--workers`` processes on this machine by default, no
Ray needed; Ray tasks on the cluster at ``--address``) and writes
the raw results into ``DIR/results``
(default ``DIR``: ``build/experiment/<scale>``); ``--corpus-only`` makes only the corpus and
tokenizer, for a folder to carry to another machine and ``--resume`` there. ``budget`` prints
what each training run of the scale costs (:mod:`sdsl.experiment.budget`): epochs once the corpus
is in ``DIR``, and the training time at ``--flops-per-s``. ``baselines`` writes into a results
folder (default ``data/laptop_scale``) the prediction against the rules a practitioner could use
without the paper's laws (:mod:`sdsl.experiment.baselines`). Bad arguments exit with status 2 and one
line naming the argument, as does a command whose packages are not installed (naming the extra:
``pip install 'sdsl[experiment]'``) and ``--resume`` in a folder that holds no run. ``--address``
to a cluster started with ``ray start --head``: Ray 2.52 (the lock's) needs nothing more; Ray 2.59
and later turn token authentication on by default, and then this process needs the cluster's
``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN`` (or the cluster ``RAY_AUTH_MODE=disabled``).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from sdsl import validation as V
from sdsl.experiment.config import PHASES, SCALES
from sdsl.paths import ROOT

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = V.CommandParser(prog="python -m sdsl.experiment", description="The laptop-scale model-family experiment.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    scale_help = (
        "full: the committed CPU run (under an hour on 2 cores); gpu: models to 27 M parameters "
        "(needs a GPU); smoke: 3 tiny models (CI)"
    )
    r = sub.add_parser("run", help="train the family, measure every pair, write the raw results")
    r.add_argument("--scale", default="full", choices=sorted(SCALES), help=scale_help)
    r.add_argument("--out", default=None, help="work folder (default build/experiment/<scale>)")
    r.add_argument("--resume", action="store_true", help="continue a killed run in --out from its last finished task")
    r.add_argument(
        "--device",
        default="cpu",
        help="torch device of every model, in training and decoding (default cpu; sampling decisions stay on the CPU)",
    )
    r.add_argument(
        "--workers",
        type=_count("--workers"),
        default=2,
        help="worker processes on this machine (default 2, one task per core; on a GPU, the tasks sharing it)",
    )
    r.add_argument(
        "--address",
        default=None,
        help="a running Ray cluster (ray.init(address=...)); default: worker processes on this machine, no Ray. "
        "Ray 2.59 and later authenticate by token by default: give this process the cluster's RAY_AUTH_MODE=token "
        "and RAY_AUTH_TOKEN, or start the cluster with RAY_AUTH_MODE=disabled",
    )
    r.add_argument(
        "--threads", type=_count("--threads"), default=1, help="torch threads (and Ray CPUs) per task (default 1)"
    )
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    r.add_argument(
        "--corpus-only", action="store_true", help="make only the corpus and tokenizer in --out (resume later)"
    )
    r.add_argument(
        "--other-corpus",
        action="store_true",
        help="train on the Debian sources installed here even where their text differs from the committed run's "
        "(data/laptop_scale/provenance.yml); without it such a run is refused, naming the version to install",
    )
    r.add_argument(
        "--stop-after",
        default=None,
        choices=list(PHASES),
        metavar="PHASE",
        help="stop once this phase is done, e.g. prediction: the calibration and the committed prediction, before any "
        "test draft (resume later); one of: " + ", ".join(PHASES),
    )
    b = sub.add_parser("budget", help="print each training run's parameters, tokens, epochs and FLOPs")
    b.add_argument("--scale", default="full", choices=sorted(SCALES), help=scale_help)
    b.add_argument(
        "--out", default=None, help="work folder whose corpus gives the epochs (default build/experiment/<scale>)"
    )
    b.add_argument(
        "--flops-per-s",
        type=V.argument_type(V.number, "--flops-per-s", low=0, low_open=True, what="sustained training FLOP/s"),
        default=None,
        help="sustained training FLOP/s for a time estimate",
    )
    b.add_argument(
        "--probe",
        action="store_true",
        help="time a few training steps of every shape here and estimate the whole run's minutes on --workers cores",
    )
    b.add_argument("--workers", type=_count("--workers"), default=2, help="cores of the estimate (default 2)")
    bl = sub.add_parser("baselines", help="write baselines.csv: the prediction against rules without the paper's laws")
    bl.add_argument("--results", default=None, help="a results folder (default data/laptop_scale)")
    return p


def _count(flag: str):
    return V.argument_type(V.integer, flag, low=1)


#: What each command needs beyond the base install, and the extra that brings it (Ray only at a
#: cluster's --address: the runner imports it there and says so if it is missing).
_NEEDS = {
    "run": (("pandas", "torch", "transformers", "tokenizers"), "experiment"),
    "budget": (("pandas",), "analysis"),
    "baselines": (("pandas",), "analysis"),
}


def _missing(command: str) -> str | None:
    """The one line for a command whose packages are not installed: which, and the extra to install."""
    import importlib.util

    modules, extra = _NEEDS[command]
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if not missing:
        return None
    return (
        f"{command} needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not installed: "
        f"pip install 'sdsl[{extra}]'"
    )


def _baselines(args) -> int:
    from sdsl.experiment.baselines import write_baselines
    from sdsl.experiment.results import RESULTS

    try:
        for path in write_baselines(args.results if args.results is not None else RESULTS):
            print(path)
    except ValueError as exc:
        print(f"{PROG} baselines: error: {V.one_line(exc)}", file=sys.stderr)
        return 2
    return 0


def _budget(args, parser) -> int:
    import math

    from sdsl.experiment.budget import budget_table, budget_totals, train_tokens_of
    from sdsl.experiment.config import get_scale
    from sdsl.experiment.runner import default_out

    scale = get_scale(args.scale)
    out = args.out if args.out is not None else default_out(scale.name)
    table = budget_table(scale, train_tokens_of(out))
    tot = budget_totals(scale, table, args.flops_per_s)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(
        f"scale {tot['scale']}: {tot['shapes']} shapes, {tot['runs']} runs, {tot['pairs']} pairs; N from "
        f"{tot['params_min']:,} to {tot['params_max']:,} ({tot['decades_params']:.2f} decades; non-embedding "
        f"{tot['decades_non_embedding']:.2f}); {tot['under_chinchilla']} runs under 20 tokens per parameter; "
        f"training {tot['train_flops']:.3g} FLOPs"
        + (f", {tot['train_s']:.0f} s at {args.flops_per_s:.3g} FLOP/s" if "train_s" in tot else "")
        + (
            f"; at most {tot['max_epochs']:.2f} epochs"
            if math.isfinite(tot["max_epochs"])
            else f"; epochs unknown until the corpus is made (run --corpus-only --out {out})"
        )
    )
    if args.probe:
        _probe(scale, args.workers)
    return 0


def _probe(scale, workers: int) -> None:
    """The estimate of ``budget --probe``: each shape's training step timed here, the test grid
    placed where the committed run's calibration puts the predictions, its per-pair times."""
    from sdsl.experiment.budget import estimate_minutes, expected_n_stars, pair_seconds, probe_step_seconds
    from sdsl.experiment.results import RESULTS

    stars = expected_n_stars(scale, RESULTS)
    tests = scale.test_runs(list(stars.values()))
    shapes = {r.shape for r in scale.runs() + tests}
    step_s = probe_step_seconds(scale, sorted(shapes, key=scale.params))
    pair_s, wall_s = pair_seconds(RESULTS, scale.measurement.max_prompts)
    est = estimate_minutes(scale, step_s, tests, pair_s, wall_s, workers=workers, added_drafts=10)
    print("expected N* (the committed run's calibration): " + ", ".join(f"{k} {v:,.0f}" for k, v in stars.items()))
    print(
        f"{len(tests)} test drafts expected (+10 the rules may add); alpha {pair_s:.1f} s per pair, wall clock {wall_s:.1f} s"
    )
    print("seconds per training step: " + ", ".join(f"{k} {v:.4f}" for k, v in step_s.items()))
    print(f"minutes on {workers} cores: " + ", ".join(f"{k} {v:.1f}" for k, v in est.items()))


def main(argv: list[str] | None = None) -> int:
    """``python -m sdsl.experiment``: a usage error, or a command whose extra is not installed, is one
    line and exit status 2; SIGTERM or SIGINT one line and 128 + the signal's number (the finished
    tasks are kept: ``--resume`` continues)."""
    try:
        with V.sigterm_as_interrupt():
            return _main(argv)
    except (V.Interrupt, KeyboardInterrupt) as exc:
        return V.interrupted(PROG, exc, "every finished task is kept; continue with --resume")


PROG = "python -m sdsl.experiment"


def _main(argv: list[str] | None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # a usage error (one line) or --help
        return exc.code if isinstance(exc.code, int) else V.EXIT_USAGE
    try:
        return _command(args, parser, argv)
    except SystemExit as exc:  # parser.error below: one line, already printed
        if exc.code in (128 + signal.SIGTERM, 128 + signal.SIGINT):  # the runner's own SIGTERM handler
            raise V.Interrupt(exc.code - 128) from None
        return exc.code if isinstance(exc.code, int) else V.EXIT_USAGE


def _command(args, parser, argv: list[str] | None) -> int:
    missing = _missing(args.command)
    if missing:
        parser.error(missing)
    if args.command == "budget":
        return _budget(args, parser)
    if args.command == "baselines":
        return _baselines(args)
    scale = SCALES[args.scale]
    if scale.needs_accelerator and args.device == "cpu" and not args.corpus_only:
        from sdsl.experiment.budget import budget_table, budget_totals

        flops = budget_totals(scale, budget_table(scale))["train_flops"]
        parser.error(
            f"--scale {scale.name} trains {flops:.2g} FLOPs, days on a CPU: give it --device cuda (or prepare "
            "its corpus here with --corpus-only)"
        )
    if args.device != "cpu":
        try:
            import torch

            torch.empty(1, device=args.device)
        except Exception as exc:  # noqa: BLE001 - any failure means the device is unusable
            parser.error(f"--device {args.device!r} is not usable here ({type(exc).__name__}: {V.one_line(exc)})")
    from sdsl.experiment.runner import run

    # recorded in the results' provenance: a path inside the checkout as the checkout's own, so that
    # no machine's folder layout is committed with the results
    root = f"{ROOT.resolve()}/"
    words = [w.removeprefix(root) for w in (sys.argv[1:] if argv is None else argv)]
    command = "python -m sdsl.experiment " + " ".join(words)
    try:
        folder = run(
            scale,
            args.out,
            resume=args.resume,
            device=args.device,
            threads=args.threads,
            workers=args.workers,
            address=args.address,
            progress=not args.no_progress,
            command=command,
            corpus_only=args.corpus_only,
            stop_after=args.stop_after,
            other_corpus=args.other_corpus,
        )
    except ValueError as exc:
        print(f"python -m sdsl.experiment: error: {exc}", file=sys.stderr)
        return 2
    print(f"results: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
