"""The ``sdsl`` command line: plan a draft for a target from the shell.

::

    sdsl plan --preset llama-3-70b
    sdsl plan --target-params 70.6e9 --target-tokens 15e12 --draft-tokens 15e12 --json
    sdsl presets [--plan]
    sdsl alpha scrape.txt [--json]            # alpha from a vLLM / llama.cpp / SGLang / TRT-LLM export
    sdsl plan --preset llama-3.1-70b --hardware h200 --dtype fp8 --batch 1,8,64
    sdsl speedup --alpha 0.8 --cost-ratio 0.05 --gamma 5

Bad input prints one line on stderr and exits with status 2, argparse's own usage errors included;
the message is the ``ValueError`` the notebook ``plan_draft`` raises for the same input
(:func:`sdsl.plan.check_inputs`, :mod:`sdsl.validation`), with the parameters named by the flags
typed here (``--n-range``, not ``n_range``). Nothing given is dropped: an option given twice, an
option that the other options make unused (``--seed`` without ``--bootstrap``, the hardware options
without ``--hardware``) and an unknown option are refused. Negative numbers are values
(``--target-params -70e9`` is refused for its sign, not read as an option). ``sdsl --version``
prints the version; ``python -m sdsl`` is the same command.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

__all__ = ["main", "build_parser"]

EXIT_USAGE = 2

#: Parameter names of the library whose flag is not the parameter's name with dashes.
_FLAGS = {"n_boot": "--bootstrap", "candidates": "--draft-params", "integer_gamma": "--integer-gamma"}
#: A number, negative ones included (argparse alone reads "-70e9" and "-inf" as options).
_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)


class _Once(argparse.Action):
    """Store an option's value, refusing a second one (argparse keeps the last silently)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_given", {})
        if self.dest in given:
            raise argparse.ArgumentError(self, f"given twice ({given[self.dest]} and {_text(values)}): give it once")
        given[self.dest] = _text(values)
        setattr(namespace, self.dest, values)


def _text(values: Any) -> str:
    return " ".join(map(str, values)) if isinstance(values, list) else str(values)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit status 2), negative numbers as values and options that
    may be given once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NUMBER
        self.register("action", None, _Once)
        self.register("action", "store", _Once)

    def error(self, message: str) -> NoReturn:
        from sdsl.validation import one_line, suggestion

        hint = ""
        m = re.match(r"unrecognized arguments: (\S+)", message)
        if m:
            options = [o for a in self._actions for o in a.option_strings]
            for a in self._actions:
                if isinstance(a, argparse._SubParsersAction):
                    options += [o for p in a.choices.values() for b in p._actions for o in b.option_strings]
            hint = suggestion(m.group(1).split("=")[0], sorted(set(options)))
        self.exit(
            EXIT_USAGE,
            f"{self.prog}: error: {one_line(message)}{'; ' + hint.strip() if hint else ''} "
            f"(see '{self.prog} --help')\n",
        )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``sdsl`` (sub-commands ``plan``, ``speedup``, ``presets`` and ``alpha``)."""
    import sdsl
    from sdsl import cli_deploy

    parser = _Parser(
        prog="sdsl",
        description=(
            "Speculative Decoding Scaling Laws (arXiv 2603.11053): plan the throughput-optimal draft "
            "size N* for a target model. Sizes are in parameters, data in pre-training tokens; "
            "numbers accept scientific notation (70.6e9)."
        ),
        epilog="Run 'sdsl plan --help' for the planning options.",
    )
    parser.add_argument("--version", action="version", version=f"sdsl {sdsl.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    p = sub.add_parser(
        "plan",
        help="optimal draft size N*, integer draft length, acceptance rate, wall-clock speedup, engine settings",
        description=(
            "Throughput-optimal draft size N* for a target of M parameters trained on D' tokens, with a "
            "draft of the family trained on D tokens: N* maximises tokens per FLOP "
            "T = E(alpha, gamma*) / (2 N gamma* + 2 M) (the paper's Eq. 9), with alpha from the loss law "
            "and the acceptance plane (Eq. 5). Prints N* (parameters), gamma* (draft tokens per "
            "iteration, continuous and the best integer, with the throughput rounding gives up), alpha (acceptance "
            "rate at N*), T(N*) (tokens per FLOP), the tokens per FLOP ratio T(N*) * 2M (dimensionless; not a "
            "wall-clock speedup), the wall-clock speedup of Theorem 3.8 (Leviathan et al. 2023) with its cost "
            "coefficient, vLLM, SGLang, TensorRT-LLM and llama.cpp settings, and which uncertainties the N* interval "
            "includes."
        ),
    )
    tgt = p.add_argument_group("target (a preset, or its size and tokens; explicit values override the preset)")
    tgt.add_argument(
        "--preset",
        metavar="NAME",
        help="target preset from data/presets.csv, e.g. llama-3-70b ('sdsl presets' lists them)",
    )
    tgt.add_argument("--target-params", metavar="M", help="target size M, in parameters (e.g. 70.6e9)")
    tgt.add_argument("--target-tokens", metavar="D'", help="target pre-training data D', in tokens (e.g. 15e12)")
    p.add_argument(
        "--draft-tokens",
        metavar="D",
        help="draft family's pre-training data D, in tokens (default with --preset: the family's own)",
    )
    p.add_argument(
        "--constants",
        metavar="NAME|E,A,B,a,b",
        default="besiroglu2024",
        help="loss-law constants of L(N, D) = E + A/N^a + B/D^b: 'besiroglu2024' (default), "
        "'hoffmann2022', or five comma-separated numbers E,A,B,a,b (E in nats)",
    )
    p.add_argument(
        "--alpha-source",
        metavar="paper|refit|CSV",
        default="paper",
        help="acceptance plane alpha = A x + B y + C: 'paper' (Table 3, default), 'refit' (OLS on "
        "the paper's Tables 1 and 2) or a CSV of your measurements with columns draft_ppl, "
        "target_ppl, alpha (perplexities, acceptance rate in (0, 1)), refitted",
    )
    p.add_argument(
        "--integer-gamma",
        action="store_true",
        help="optimise over integer draft lengths gamma (default: continuous relaxation)",
    )
    p.add_argument(
        "--n-range",
        nargs=2,
        metavar=("LOW", "HIGH"),
        help="range of draft sizes searched, in parameters (default: 1e7 to M/2)",
    )
    p.add_argument(
        "--draft-params",
        metavar="N",
        action="append",
        help="a candidate draft size, in parameters, reported as a share of the optimum (repeatable)",
    )
    p.add_argument(
        "--bootstrap",
        metavar="B",
        help="parametric bootstrap draws of the acceptance coefficients for a 95%% interval of N*: "
        "0 (none, the default) or 100 to 10000",
    )
    p.add_argument(
        "--seed",
        metavar="S",
        help="seed of the bootstrap, an integer in [0, 2^63 - 1] (default 0; only with --bootstrap)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object (keys n_star, gamma_star, alpha, tokens_per_flop, "
        "tokens_per_flop_ratio, gamma_star_continuous, gamma_star_integer, rounding_loss, wall_clock, "
        "num_speculative_tokens, engines, suggested_draft, interval, warnings, plus n_star_ci95 and "
        "candidates when asked for) instead of a table",
    )
    cli_deploy.add_plan_arguments(p)
    cli_deploy.add_speedup_parser(sub)
    pr = sub.add_parser(
        "presets",
        help="list the target presets (parameters, tokens, draft family tokens); --plan plans each",
        description="List the target presets of data/presets.csv: M in parameters, D' and D in tokens; "
        "with --plan, N*, the integer gamma*, alpha and the tokens per FLOP ratio of each "
        "dense target (mixture-of-experts targets are refused).",
    )
    cli_deploy.add_presets_arguments(pr)
    from sdsl import cli_alpha  # the options only: the readers are imported when alpha runs

    cli_alpha.add_arguments(
        sub.add_parser(
            "alpha",
            help="alpha with its interval from a serving engine's metrics, log or per-request JSON",
            description="Alpha with its interval per model and engine from what a serving engine wrote (format "
            "detected), per-position rates with the constant-alpha test, drafts shorter than k, and what the "
            "measured alpha implies through the plan. Exit status: 0 with an alpha, 1 when every series is "
            "idle or unusable, 2 on bad input.",
        )
    )
    return parser


def _one_line(msg: object) -> str:
    return " ".join(str(msg).split())


def _flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Parameter name -> the flag that sets it, for the messages of one sub-command."""
    out = {a.dest: a.option_strings[0] for a in parser._actions if a.option_strings and a.dest != "help"}
    return {**out, **{k: v for k, v in _FLAGS.items() if v in out.values()}}


def _plan(args: argparse.Namespace) -> int:
    from sdsl import plan as P
    from sdsl.validation import draws, seed

    if args.seed is not None and (args.bootstrap is None or draws(args.bootstrap, "bootstrap") == 0):
        seed(args.seed, "seed")
        raise ValueError(
            f"--seed {args.seed} is used only by the bootstrap: give --bootstrap B (100 to 10000 draws) "
            f"too, or drop --seed"
        )
    inputs = P.check_inputs(
        preset=args.preset,
        target_params=args.target_params,
        target_tokens=args.target_tokens,
        draft_tokens=args.draft_tokens,
        constants=args.constants,
        alpha_source=args.alpha_source,
        integer_gamma=args.integer_gamma,
        n_range=args.n_range,
        candidates=args.draft_params,
        n_boot=0 if args.bootstrap is None else args.bootstrap,
        seed=("0" if args.seed is None else args.seed) if args.bootstrap is not None else None,
    )
    from sdsl import cli_deploy
    from sdsl.deployment import deployment_report

    wall = cli_deploy.wall_clock_inputs(args)
    opt = P.plan(inputs)
    result: dict[str, Any] = {
        "n_star": opt.n_star,
        "gamma_star": opt.gamma_star,
        "alpha": opt.alpha,
        "tokens_per_flop": opt.tokens_per_flop,
    }
    ci = None
    if inputs.n_boot > 0:
        ci = P.n_star_interval(P.bootstrap_n_star(inputs))
        result["n_star_ci95"] = [ci["low"], ci["high"]]
    cands = P.candidate_shares(inputs, inputs.draft_tokens[0], opt) if inputs.candidates else None
    if cands is not None and len(cands):
        result["candidates"] = [
            {
                "params": float(r.params),
                "tokens_per_flop": float(r.tokens_per_flop),
                "tokens_per_flop_ratio": float(r.speedup),
                "share_of_optimum": float(r.share_of_optimum),
            }
            for r in cands.itertuples()
        ]
    report = deployment_report(inputs, opt, wall, args.draft_model, args.target_model)
    result.update(report)
    if args.json:
        print(json.dumps(result))
        return 0
    t = inputs.target
    rows = [
        ("target", f"{t.name}: M = {t.params:.4g} parameters, D' = {t.tokens:.3g} tokens"),
        ("draft family tokens D", f"{inputs.draft_tokens[0]:.3g} tokens"),
        ("loss-law constants", inputs.constants.name),
        ("acceptance plane", inputs.alpha.label),
        ("draft length", "integer" if inputs.integer else "continuous"),
        ("N* (optimal draft size)", f"{opt.n_star:.4g} parameters"),
    ]
    if ci is not None:
        rows.append(
            ("N* 95 % interval", f"[{ci['low']:.4g}, {ci['high']:.4g}] ({ci['draws']} draws, seed {inputs.seed})")
        )
    rows += [
        ("gamma* (draft length)", f"{opt.gamma_star:.4g} tokens per iteration"),
        ("alpha at N*", f"{opt.alpha:.4f}"),
        ("T(N*)", f"{opt.tokens_per_flop:.4g} tokens per FLOP"),
    ]
    rows += cli_deploy.plan_rows(report)
    for r in cands.itertuples() if cands is not None and len(cands) else ():
        rows.append(
            (
                f"candidate N = {r.params:.3g}",
                f"{100 * r.share_of_optimum:.1f} % of the optimum (tokens per FLOP ratio {r.speedup:.3f}x)",
            )
        )
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    return 0


def _presets(args: argparse.Namespace) -> int:
    from sdsl import cli_deploy

    return cli_deploy.run_presets_plan(args) if args.plan else cli_deploy.run_presets_list(args)


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "plan":
        return _plan(args)
    if args.command == "alpha":
        from sdsl.measure.report import run

        return run(args)
    if args.command == "speedup":
        from sdsl.cli_deploy import run_speedup

        return run_speedup(args)
    return _presets(args)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sdsl`` console script; returns the exit status."""
    parser = build_parser()
    try:
        given = list(sys.argv[1:] if argv is None else argv)
        first = next((a for a in given if not a.startswith("-")), None)
        before = given[: given.index(first)] if first is not None else given
        unknown = [a for a in before if a.split("=")[0] not in ("-h", "--help", "--version")]
        if unknown:  # `sdsl --verbose plan`: name the option, not a missing COMMAND
            parser.error(
                f"unrecognized arguments: {' '.join(unknown)} (options follow the command: sdsl COMMAND [options])"
            )
        args, extra = parser.parse_known_args(argv)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[args.command]
        if extra:  # named by the sub-command, with the closest of its options
            sub.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # argparse: --help, --version (0) and usage errors (2)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    from sdsl.validation import argument_names

    try:
        with argument_names(_flags(sub)):
            status = _dispatch(args)
        sys.stdout.flush()  # inside the try: a closed pipe is seen here, not at interpreter exit
        return status
    except ValueError as exc:
        print(f"sdsl {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader went away (`sdsl presets | head`): not an error of ours; silence the final flush
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
