"""The other command lines -- the pipeline (``python -m sdsl.build.pipeline``), the regeneration
check (``python -m sdsl.build.check``) and the experiment (``python -m sdsl.experiment``) -- answer
bad input as ``sdsl`` does: exit status 2 and one line on stderr naming the option and what it
takes, never argparse's usage block or a traceback, nothing on stdout and nothing written (the
corpus is tests/helpers/bad_inputs.py, COMMANDS). Every command, ``sdsl`` included, says one line
when SIGTERM stops it, from the moment it starts. Odd but valid input is taken."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from bad_input_checks import assert_nothing_written, assert_one_line, snapshot
from bad_inputs import COMMANDS

from sdsl.paths import BUILD

PROGS = {
    "pipeline": "python -m sdsl.build.pipeline",
    "check": "python -m sdsl.build.check",
    "experiment": "python -m sdsl.experiment",
}


def _main(command: str):
    if command == "pipeline":
        from sdsl.build.pipeline import main
    elif command == "check":
        from sdsl.build.check import main
    else:
        from sdsl.experiment.__main__ import main
    return main


@pytest.mark.parametrize("command, argv, expected", [c[1:] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_bad_command_line_of_the_pipeline_check_and_experiment(command, argv, expected, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    watched = (tmp_path, BUILD / "check", BUILD / "experiment")
    before = snapshot(*watched)
    status = _main(command)([a.format(tmp=tmp_path) for a in argv])
    out, err = capsys.readouterr()
    assert status == 2, (status, out, err)
    assert out == ""
    assert_one_line(err.strip(), expected)
    assert err.startswith(PROGS[command]), err
    assert "usage:" not in err
    assert_nothing_written(before, snapshot(*watched))


def test_yaml_numbers_and_numpy_values_are_taken_where_valid():
    """`--set latency.n_boot=1e3` (YAML 1.1 reads 1e3 as text) and plan_draft.target_params=70e9 are
    the numbers they look like; numpy integers and arrays are accepted where lists and integers are."""
    import numpy as np

    from sdsl.build import check
    from sdsl.plan.deployment import check_wall_clock

    for item, chapter in (("latency.n_boot=1e3", "latency"), ("plan_draft.target_params=70e9", "plan_draft")):
        check._check_arguments([chapter], 1, check.parse_overrides([item]))  # no ValueError
    assert check_wall_clock(hardware="h200", batch=np.array([1, 8])).batches == (1.0, 8.0)
    assert check_wall_clock(hardware="h200", batch=[np.int64(1), np.int64(8)]).batches == (1.0, 8.0)
    assert check_wall_clock(hardware="h200", gpus=np.int64(2)).hardware is not None


SIGTERM_AT_START = textwrap.dedent("""
    import os, signal, sys
    from sdsl import validation as V
    real = V.CommandParser.parse_known_args
    def parse_known_args(self, *args, **kwargs):  # the first thing every command does: read its arguments
        os.kill(os.getpid(), signal.SIGTERM)
        return real(self, *args, **kwargs)
    V.CommandParser.parse_known_args = parse_known_args
    if sys.argv[1] == "sdsl":
        from sdsl.cli import main
    elif sys.argv[1] == "pipeline":
        from sdsl.build.pipeline import main
    elif sys.argv[1] == "check":
        from sdsl.build.check import main
    else:
        from sdsl.experiment.__main__ import main
    sys.exit(main(sys.argv[2:]))
""")


@pytest.mark.parametrize(
    "command, argv, prog",
    [
        ("sdsl", ["plan", "--preset", "opt-13b"], "sdsl"),
        ("pipeline", ["run", "plan_draft"], "python -m sdsl.build.pipeline"),
        ("check", ["plan_draft"], "python -m sdsl.build.check"),
        ("experiment", ["budget", "--scale", "smoke"], "python -m sdsl.experiment"),
    ],
)
def test_sigterm_as_a_command_starts_is_one_line(command, argv, prog, tmp_path):
    """SIGTERM as soon as the command reads its arguments (before, the pipeline and the check
    installed their handler only once notebooks ran, and sdsl and the experiment none): one line
    naming the signal, exit 128 + 15, nothing on stdout, no traceback."""
    proc = subprocess.run(
        [sys.executable, "-c", SIGTERM_AT_START, command, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 128 + 15, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{prog}: interrupted by SIGTERM"), proc.stderr


def test_a_command_whose_extra_is_missing_says_which_in_one_line(capsys, monkeypatch, tmp_path):
    """`python -m sdsl.experiment run` in the light install: which packages, which extra, exit 2."""
    import importlib.util

    from sdsl.experiment import __main__ as E

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in ("pandas", "ray") else real(name, *a)
    )
    assert E.main(["run", "--scale", "smoke", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert_one_line(err.strip(), ("run needs pandas, which is not installed", "pip install 'sdsl[experiment]'"))
    assert E.main(["budget", "--scale", "smoke"]) == 2
    assert_one_line(capsys.readouterr().err.strip(), ("budget needs pandas", "pip install 'sdsl[analysis]'"))
    assert not (tmp_path / "out").exists()
