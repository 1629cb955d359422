"""The command line: every bad input exits with status 2 and one line on stderr naming
the flag as typed and what is allowed; nothing on stdout, nothing written (the corpus is
tests/helpers/bad_inputs.py)."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings

import pytest
from bad_input_checks import assert_nothing_written, assert_one_line, snapshot
from bad_inputs import CLI, CLI_VALID

from sdsl.cli import build_parser, main

#: Python names of the options (argparse's dests, the API's argument names): a message names the
#: flag as typed (--n-range, --bootstrap), never these.
_INTERNAL = {
    a.dest
    for sub in next(a for a in build_parser()._actions if hasattr(a, "choices") and a.choices).choices.values()
    for a in sub._actions
    if "_" in a.dest
} | {"n_bounds", "n_boot", "d_draft", "d_target", "integer_gamma", "n_range", "alpha_source", "cost_ratio"}


@pytest.mark.parametrize("argv, expected", [c[1:] for c in CLI], ids=[c[0] for c in CLI])
def test_bad_command_line(argv, expected, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2, (status, out, err)
    assert out == ""
    assert_one_line(err.strip(), expected)
    assert err.startswith("sdsl"), err
    internal = [w for w in re.findall(r"(?<![-\w/.:])[a-z]+(?:_[a-z0-9]+)+(?![\w/.])", err) if w in _INTERNAL]
    assert not internal, f"internal names {internal} instead of the flags: {err}"
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]
    assert_nothing_written(before, snapshot(tmp_path))


def _sdsl(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sdsl", *args], capture_output=True, text=True, timeout=120, **kw)


def test_python_dash_m_sdsl_and_version():
    import sdsl

    out = _sdsl("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"sdsl {sdsl.__version__}"
    bad = _sdsl("plan", "--target-params", "-70e9", "--target-tokens", "1e12", "--draft-tokens", "1e12")
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.strip().splitlines()) == 1
    assert "--target-params" in bad.stderr


def test_closed_pipe_is_no_traceback():
    """`sdsl presets | head -1`: the reader goes away; no BrokenPipeError traceback."""
    proc = subprocess.Popen([sys.executable, "-m", "sdsl", "presets"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert proc.returncode == 0


def test_seed_is_kept_exactly():
    """--seed 9007199254740993 (2**53 + 1) is not rounded through a float."""
    from sdsl import validation as V

    assert V.seed("9007199254740993") == 9007199254740993
    status = main(["plan", "--preset", "opt-13b", "--bootstrap", "100", "--seed", "9007199254740993"])
    assert status == 0


def test_valid_inputs_that_look_odd_are_accepted(capsys):
    """Decided valid: abbreviations argparse documents, 1_000 style numbers, repeated flags without values."""
    assert main(["plan", "--preset", "opt-13b", "--json", "--json"]) == 0
    assert (
        main(
            [
                "plan",
                "--target-params",
                "70_600_000_000",
                "--target-tokens",
                "15e12",
                "--draft-tokens",
                "15e12",
                "--json",
            ]
        )
        == 0
    )
    assert main(["plan", "--preset", "opt-13b", "--integer", "--json"]) == 0  # --integer-gamma, abbreviated
    capsys.readouterr()


@pytest.mark.parametrize("argv", [c[1] for c in CLI_VALID], ids=[c[0] for c in CLI_VALID])
def test_odd_but_valid_command_line(argv, capsys):
    """Decided valid (bad_inputs.CLI_VALID says why): exit 0, a report on stdout, nothing on stderr."""
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert out and err == ""


def test_regeneration_check_names_a_misspelt_chapter_in_one_line(capsys, tmp_path, monkeypatch):
    """`python -m sdsl.build.check acceptence`: exit 2 with one line, before any notebook runs."""
    from sdsl.build.check import main as check_main

    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    assert check_main(["acceptence"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert_one_line(err.strip(), ("'acceptence'", "did you mean 'acceptance'", "runs.yml"))
    assert_nothing_written(before, snapshot(tmp_path))
