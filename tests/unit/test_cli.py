"""The ``sdsl`` console script, through its real entry point (subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import sdsl
from sdsl import plan as P

EXE = Path(sys.executable).parent / "sdsl"
CMD = [str(EXE)] if EXE.exists() else [sys.executable, "-m", "sdsl.cli"]
KEYS = {"n_star", "gamma_star", "alpha", "tokens_per_flop", "tokens_per_flop_ratio"}
#: what the deployment options add: integer draft length, wall-clock speedup, engine settings, interval sources
DEPLOY_KEYS = {
    "gamma_star_continuous",
    "gamma_star_integer",
    "rounding_loss",
    "n_star_integer_gamma",
    "rounding_loss_reoptimised",
    "wall_clock",
    "suggested_draft",
    "num_speculative_tokens",
    "engines",
    "interval",
    "warnings",
}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(CMD + list(args), capture_output=True, text=True, timeout=60)


def test_python_dash_m_works_too():
    out = subprocess.run(
        [sys.executable, "-m", "sdsl.cli", "plan", "--preset", "opt-13b", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert KEYS <= set(json.loads(out.stdout))


def test_json_keys_and_values_match_the_library():
    out = run("plan", "--target-params", "70.6e9", "--target-tokens", "15e12", "--draft-tokens", "15e12", "--json")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("\n") == 1  # one JSON object on one line
    res = json.loads(out.stdout)
    assert set(res) == KEYS | DEPLOY_KEYS
    assert "speedup" not in res  # the FLOP ratio is no longer shown as a speedup
    core = sdsl.optimal_draft_size(70.6e9, 15e12, 15e12, n_bounds=(1e7, 70.6e9 / 2))
    for k in KEYS:
        assert res[k] == pytest.approx(getattr(core, k) if k != "tokens_per_flop_ratio" else core.speedup, rel=1e-12), k
    assert res["tokens_per_flop_ratio"] == pytest.approx(res["tokens_per_flop"] * 2 * 70.6e9, rel=1e-12)


def test_preset_table_is_readable():
    out = run("plan", "--preset", "llama-3-70b")
    assert out.returncode == 0, out.stderr
    o = P.plan(P.check_inputs("llama-3-70b"))
    text = out.stdout
    for label in (
        "N* (optimal draft size)",
        "gamma* (draft length)",
        "alpha at N*",
        "T(N*)",
        "tokens per FLOP ratio",
        "wall-clock speedup",
    ):
        assert label in text
    assert "speedup over plain decoding" not in text
    assert f"{o.n_star:.4g} parameters" in text
    assert f"tokens per FLOP ratio        {o.speedup:.3f}x" in text
    assert out.stderr == ""


def test_preset_and_explicit_values_agree():
    """The plan is the same; only what needs the preset's name differs (repository ids in the engine
    settings, the suggested draft of its tokenizer group)."""
    a = json.loads(run("plan", "--preset", "qwen1.5-14b", "--json").stdout)
    b = json.loads(
        run(
            "plan", "--target-params", "14167290880", "--target-tokens", "3e12", "--draft-tokens", "2.4e12", "--json"
        ).stdout
    )
    named = {"engines", "suggested_draft", "num_speculative_tokens"}
    assert {k: v for k, v in a.items() if k not in named} == {k: v for k, v in b.items() if k not in named}


def test_options_change_the_answer_as_documented():
    base = json.loads(run("plan", "--preset", "opt-13b", "--json").stdout)
    hoff = json.loads(run("plan", "--preset", "opt-13b", "--constants", "hoffmann2022", "--json").stdout)
    five = json.loads(run("plan", "--preset", "opt-13b", "--constants", "1.69,406.4,410.7,0.34,0.28", "--json").stdout)
    integ = json.loads(run("plan", "--preset", "opt-13b", "--integer-gamma", "--json").stdout)
    assert hoff == five
    assert hoff["n_star"] < base["n_star"]  # method notes s.4: Hoffmann gives N* 4 to 10 % lower
    assert integ["gamma_star"] == int(integ["gamma_star"])
    # method notes s.3: integer gamma moves OPT-13B's N* from 117.3M to about 118.0M
    assert base["n_star"] == pytest.approx(117.3e6, rel=1e-3)
    assert integ["n_star"] == pytest.approx(118.0e6, rel=2e-3)


def test_bootstrap_and_candidates():
    args = (
        "plan",
        "--preset",
        "llama-3-70b",
        "--draft-params",
        "1.24e9",
        "--draft-params",
        "8.03e9",
        "--bootstrap",
        "200",
        "--seed",
        "4",
        "--json",
    )
    a = json.loads(run(*args).stdout)
    b = json.loads(run(*args).stdout)
    assert a == b  # seeded
    lo, hi = a["n_star_ci95"]
    assert lo < a["n_star"] < hi
    shares = [c["share_of_optimum"] for c in a["candidates"]]
    assert 0 < shares[1] < shares[0] < 1
    inp = P.check_inputs("llama-3-70b", n_boot=200, seed=4)
    ci = P.n_star_interval(P.bootstrap_n_star(inp))
    assert [ci["low"], ci["high"]] == [lo, hi]  # CLI and library: same interval for the same seed


def test_help_explains_every_option_with_units():
    top = run("--help")
    assert top.returncode == 0 and "plan" in top.stdout and "presets" in top.stdout
    h = run("plan", "--help")
    assert h.returncode == 0
    text = " ".join(h.stdout.split())
    for opt in (
        "--preset",
        "--target-params",
        "--target-tokens",
        "--draft-tokens",
        "--constants",
        "--alpha-source",
        "--integer-gamma",
        "--n-range",
        "--draft-params",
        "--bootstrap",
        "--seed",
        "--json",
    ):
        assert opt in text, opt
    for unit in ("in parameters", "in tokens", "tokens per FLOP"):
        assert unit in text, unit


def test_presets_command_lists_presets():
    out = run("presets")
    assert out.returncode == 0
    assert "llama-3-70b" in out.stdout and "qwen1.5-110b" in out.stdout


ERRORS = [
    (["--preset", "lama-3-70b"], "unknown --preset 'lama-3-70b'; did you mean 'llama-3-70b'"),
    (
        ["--target-params", "-5", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        "--target-params must be a number > 0 (parameters M of the target), got '-5'",
    ),
    (
        ["--target-params", "abc", "--target-tokens", "1e12", "--draft-tokens", "1e12"],
        "--target-params must be a number > 0 (parameters M of the target), got 'abc'",
    ),
    (["--target-params", "7e10", "--target-tokens", "1e12"], "--draft-tokens (pre-training tokens D"),
    (["--target-params", "7e10"], "no target: give a preset (--preset) or both --target-params"),
    (["--preset", "llama-3-70b", "--n-range", "1e9", "1e8"], "--n-range must be two increasing numbers"),
    (["--preset", "llama-3-70b", "--n-range", "1e8", "1e12"], "exceeds the target size"),
    (["--preset", "llama-3-70b", "--constants", "1,-2,3,0.3,0.3"], "loss-law constant A must be > 0"),
    (["--preset", "llama-3-70b", "--constants", "1,2,x,0.3,0.3"], "loss-law constants must be numbers"),
    (
        ["--preset", "opt-13b", "--n-range", "1e5", "1e9"],
        "the acceptance rate leaves (0, 1) at draft size n = 100000 inside --n-range",
    ),
    (["--preset", "llama-3-70b", "--alpha-source", "/no/such/file.csv"], "does not exist"),
    (["--preset", "llama-3-70b", "--bootstrap", "ten"], "--bootstrap must be 0 (none) or an integer in [100, 10000]"),
]


@pytest.mark.parametrize("args, message", ERRORS)
def test_errors_one_line_exit_2_same_message_as_library(args, message):
    out = run("plan", *args)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert message in lines[0]
    assert lines[0].startswith("sdsl plan: error: ")


def test_error_message_is_the_notebooks_value_error():
    """One message serves both: the library's, with the parameter named by the flag typed."""
    out = run("plan", "--preset", "lama-3-70b")
    with pytest.raises(ValueError) as err:
        P.check_inputs(preset="lama-3-70b")
    assert out.stderr.strip() == f"sdsl plan: error: {err.value}".replace("unknown preset", "unknown --preset")


def test_malformed_measurements_file(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("draft_ppl,target_ppl,alpha\n20,10,0.6\nabc,10,0.6\n21,11,0.6\n22,12,0.7\n")
    out = run("plan", "--preset", "llama-3-70b", "--alpha-source", str(f))
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1
    assert "line 3, column 'draft_ppl': non-numeric value 'abc'" in out.stderr


def test_argparse_errors_exit_2():
    assert run("plan", "--n-range", "1e8").returncode == 2
    assert run("frobnicate").returncode == 2
    assert sdsl_main(["plan", "--bogus"]) == 2
    assert sdsl_main(["--help"]) == 0


def sdsl_main(argv):
    from sdsl.cli import main

    return main(argv)
