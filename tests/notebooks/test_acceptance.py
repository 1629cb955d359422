"""The acceptance chapter executes through papermill (the project's one executor), with its
defaults (the paper) and with a user's own measurements, and writes the right artifacts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from glued import glued as read_glued

from sdsl import data
from sdsl.build.parameters import ParameterError
from sdsl.build.pipeline import execute_notebook
from sdsl.chapters import acceptance as fits
from sdsl.model.alpha_fits import fit_plane

pytestmark = pytest.mark.slow

TABLES = ("table1", "table2", "table3", "table3_implied_df", "table4", "table4_vs_paper", "eq5_coefficients")
FIGURES = ("figure1", "figure3")


@pytest.fixture(scope="module")
def default_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("acceptance_default")
    nb = execute_notebook("acceptance", output_dir=tmp / "executed", artifacts=tmp / "artifacts")
    return nb, tmp / "artifacts" / "acceptance"


def test_default_run_writes_every_artifact(default_run):
    nb, art = default_run
    assert nb.is_file()
    for name in TABLES:
        assert (art / f"{name}.csv").is_file(), name
    for name in FIGURES:
        for ext in ("svg", "png"):
            assert (art / f"{name}.{ext}").stat().st_size > 1000, (name, ext)


def test_default_run_tables_are_the_paper(default_run):
    _, art = default_run
    cmp4 = pd.read_csv(art / "table4_vs_paper.csv")
    assert len(cmp4) == 60 and cmp4["equal_to_printed"].all()
    t4 = pd.read_csv(art / "table4.csv")
    assert len(t4) == 15
    q14 = t4.set_index(["target", "function"]).loc[("Qwen1.5-14B", "power")]
    assert q14["p1"] == pytest.approx(1.382782, abs=5e-7)
    assert q14["p2"] == pytest.approx(-0.247168, abs=5e-7)
    t3 = pd.read_csv(art / "table3.csv").set_index(["parameter", "quantity"])
    assert t3.loc[("A", "estimate"), "paper"] == -0.0067
    assert t3.loc[("A", "estimate"), "refit"] == pytest.approx(-0.00575, abs=5e-6)
    assert t3.loc[("model", "r2"), "refit"] == pytest.approx(0.41, abs=0.01)
    eq5 = pd.read_csv(art / "eq5_coefficients.csv").set_index("parameter")
    assert eq5.loc["B", "estimate"] == 0.012971 and eq5.loc["B", "source"] == "paper Table 3"
    t1 = pd.read_csv(art / "table1.csv", dtype=str).set_index("target")
    assert t1.loc["OPT-30B", "OPT-1.3B"] == "0.7325 ± 0.0015"


def test_default_run_glues_plain_numbers(default_run):
    nb, _ = default_run
    glued = read_glued(nb)
    assert glued["acceptance_paper_n"] == "130"
    assert glued["acceptance_t4_equal"] == "60"
    assert float(glued["acceptance_refit_B"]) == pytest.approx(0.00798, abs=5e-6)
    assert not any("np.float" in str(v) for v in glued.values())


@pytest.fixture(scope="module")
def user_file(tmp_path_factory):
    """A user's own measurements: 3 targets x 6 drafts, no source table, no half-widths, alpha
    shifted so that nothing can come from data/acceptance.csv by accident."""
    acc = data.load("acceptance")
    keep_t = ["OPT-13B", "OPT-66B", "Qwen1.5-32B"]
    keep_d = ["OPT-125M", "OPT-1.3B", "Qwen2.5-0.5B", "Qwen2.5-3B", "Qwen1.5-0.5B", "Qwen1.5-4B"]
    mine = acc[acc["target"].isin(keep_t) & acc["draft"].isin(keep_d)].copy()
    mine["alpha"] = (mine["alpha"] - 0.01).round(4)
    mine["source_table"] = ""
    mine["alpha_hw95"] = ""
    path = tmp_path_factory.mktemp("mine") / "my_runs.csv"
    mine.to_csv(path, index=False)
    return path, data.load(path, schema="acceptance")


def test_user_measurements_flow_through(user_file, tmp_path):
    path, mine = user_file
    nb = execute_notebook(
        "acceptance",
        {"measurements": str(path), "coefficients_source": "refit"},
        output_dir=tmp_path / "executed",
        artifacts=tmp_path / "artifacts",
    )
    art = tmp_path / "artifacts" / "acceptance"
    assert nb.is_file()
    # no rows of the paper's Tables 1 and 2: one table in their layout instead
    assert not (art / "table1.csv").exists() and (art / "measurements.csv").is_file()
    # Table 4 and Table 3 are recomputed from the user's rows
    t4 = pd.read_csv(art / "table4.csv")
    expected = fits.table4(mine)
    assert list(t4["target"].unique()) == ["OPT-13B", "OPT-66B", "Qwen1.5-32B"]
    np.testing.assert_allclose(t4[list(fits.TABLE4_QUANTITIES)], expected[list(fits.TABLE4_QUANTITIES)], rtol=1e-9)
    plane = fit_plane(mine)
    t3 = pd.read_csv(art / "table3.csv").set_index(["parameter", "quantity"])
    assert t3.loc[("model", "n"), "refit"] == 18
    assert t3.loc[("C", "estimate"), "refit"] == pytest.approx(plane.estimate["C"], rel=1e-9)
    eq5 = pd.read_csv(art / "eq5_coefficients.csv").set_index("parameter")
    assert eq5.loc["A", "estimate"] == pytest.approx(plane.estimate["A"], rel=1e-9)
    # Qwen1.5-32B is a printed target: compared, and (other data) no longer equal everywhere
    cmp4 = pd.read_csv(art / "table4_vs_paper.csv")
    assert set(cmp4["target"]) == {"Qwen1.5-32B"} and not cmp4["equal_to_printed"].all()
    for name in FIGURES:
        assert (art / f"{name}.svg").is_file()


def test_invalid_measurements_fail_with_a_clear_message(tmp_path):
    bad = tmp_path / "bad.csv"
    acc = data.load("acceptance").head(6)
    acc.assign(alpha=[0.5, 0.6, 1.2, 0.6, 0.6, 0.6]).to_csv(bad, index=False)
    # refused by the parameter check before the notebook starts: file, line and column named
    with pytest.raises(ParameterError, match=r"bad\.csv, line 4, column 'alpha'"):
        execute_notebook(
            "acceptance", {"measurements": str(bad)}, output_dir=tmp_path / "ex", artifacts=tmp_path / "art"
        )
    assert not (tmp_path / "art" / "acceptance").exists()
