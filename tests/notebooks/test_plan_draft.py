"""Notebook runs of the chapter (moved from tests/test_plan.py; the unit tests are in tests/unit/plan/test_plan.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from glued import glued as read_glued

from sdsl import data
from sdsl import plan as P

LLAMA_70B = 70553706496


# --------------------------------------------------------------------------------- presets

pytestmark = [pytest.mark.slow]


@pytest.mark.slow
def test_notebook_default_run(tmp_path):
    from sdsl.build.pipeline import execute_notebook

    nb = execute_notebook("plan_draft", None, output_dir=tmp_path / "executed", artifacts=tmp_path / "art")
    art = tmp_path / "art" / "plan_draft"
    for name in ("plan.csv", "candidates.csv", "table5_check.csv", "figure_throughput.svg", "figure_throughput.png"):
        assert (art / name).is_file(), name
    tab = pd.read_csv(art / "plan.csv")
    o = P.plan(P.check_inputs("llama-3-70b"))
    assert tab["n_star"][0] == pytest.approx(o.n_star, rel=1e-9)
    assert tab["n_star_ci_low"][0] < tab["n_star"][0] < tab["n_star_ci_high"][0]
    glue = read_glued(nb)
    assert float(glue["plan_draft_n_star"]) == pytest.approx(o.n_star, rel=1e-9)
    check = pd.read_csv(art / "table5_check.csv")
    assert check["n_star_rel_dev"].abs().max() < 1e-3


@pytest.mark.slow
def test_notebook_second_parameter_set_matches_cli(tmp_path):
    """Not a preset, several D, Hoffmann constants, integer gamma, a measurements file; the CLI gives
    the same N* for the same inputs."""
    import subprocess
    import sys

    from sdsl.build.pipeline import execute_notebook

    meas = tmp_path / "meas.csv"
    data.load("acceptance").to_csv(meas, index=False)
    params = dict(
        preset=None,
        target_params=3.0e10,
        target_tokens=5e12,
        draft_tokens=[1e12, 4e12],
        constants="hoffmann2022",
        alpha_source=str(meas),
        integer_gamma=True,
        n_range=[2e7, 5e9],
        candidates={"0.5B": 5e8},
        n_boot=200,
        seed=3,
    )
    execute_notebook("plan_draft", params, output_dir=tmp_path / "executed", artifacts=tmp_path / "art")
    tab = pd.read_csv(tmp_path / "art" / "plan_draft" / "plan.csv")
    assert list(tab["d_draft"]) == [1e12, 4e12]
    exe = Path(sys.executable).parent / "sdsl"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "sdsl.cli"]
    out = subprocess.run(
        cmd
        + [
            "plan",
            "--target-params",
            "3.0e10",
            "--target-tokens",
            "5e12",
            "--draft-tokens",
            "1e12",
            "--constants",
            "hoffmann2022",
            "--alpha-source",
            str(meas),
            "--integer-gamma",
            "--n-range",
            "2e7",
            "5e9",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    res = json.loads(out.stdout)
    assert res["n_star"] == pytest.approx(tab["n_star"][0], rel=1e-9)
    assert res["gamma_star"] == int(res["gamma_star"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "params, message",
    [
        (dict(preset="lama-3-70b"), "unknown preset 'lama-3-70b'; did you mean 'llama-3-70b'"),
        (dict(n_range=[1e8, 1e12]), "exceeds the target size"),
    ],
)
def test_notebook_bad_parameters_fail_before_any_figure(tmp_path, params, message):
    """Refused by the chapter's check before a kernel starts: one line, a ValueError."""
    from sdsl.build.parameters import ParameterError
    from sdsl.build.pipeline import execute_notebook

    with pytest.raises(ParameterError) as err:
        execute_notebook("plan_draft", params, output_dir=tmp_path / "executed", artifacts=tmp_path / "art")
    assert isinstance(err.value, ValueError) and message in str(err.value) and "\n" not in str(err.value)
    assert not list((tmp_path / "art").rglob("*.svg"))
    assert not (tmp_path / "art" / "plan_draft").exists()
