"""Notebook run of the laptop-scale chapter from the committed raw results (seconds: the training
never runs here; the runner's own end-to-end test is tests/unit/experiment/test_smoke.py)."""

from __future__ import annotations

import re

import nbformat
import pandas as pd
import pytest
from glued import glued as read_glued

from sdsl.build.pipeline import execute_notebook
from sdsl.experiment.results import RESULTS, load_results
from sdsl.paths import NOTEBOOKS

pytestmark = [pytest.mark.slow]

FAST = {"loss_resamples": 0, "alpha_resamples": 100, "wallclock_resamples": 100}  # 0: no loss-law intervals


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("laptop_scale")
    execute_notebook("laptop_scale", FAST, output_dir=tmp / "executed", artifacts=tmp / "artifacts")
    return tmp


def test_every_table_and_figure_is_written(executed):
    art = executed / "artifacts" / "laptop_scale"
    for name in (
        "runs",
        "loss_law",
        "alpha",
        "prediction_committed",
        "prediction",
        "prediction_non_embedding",
        "alpha_out_of_sample",
        "costs",
        "wallclock",
        "wallclock_optimum",
        "baselines",
        "baselines_non_embedding",
        "runs_of_the_design",
    ):
        assert (art / f"{name}.csv").is_file(), name
    for name in (
        "fig_loss_curves",
        "fig_loss_law",
        "fig_prediction_draws",
        "fig_throughput",
        "fig_alpha_out_of_sample",
        "fig_wallclock",
    ):
        assert (art / f"{name}.svg").stat().st_size > 1000, name
    runs = pd.read_csv(art / "runs.csv")
    assert len(runs) == len(load_results(RESULTS)["runs"])
    pred = pd.read_csv(art / "prediction.csv")
    assert set(pred["target"]) == set(runs.loc[runs["role"].isin(["target", "held_out_target"]), "run"])


def test_no_input_no_stderr_and_no_absolute_path_in_the_outputs(executed):
    nb = nbformat.read(executed / "executed" / "laptop_scale.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = set(cell.metadata.get("tags", []))
        assert tags & {"remove-input", "remove-cell", "hide-input", "parameters", "injected-parameters"}, cell.source[
            :60
        ]
        for out in cell.get("outputs", []):
            assert out.get("name") != "stderr", (cell.source[:60], out.get("text", "")[:200])
            assert out.get("output_type") != "error"
            assert str(RESULTS.parent.parent) not in str(out.get("data", out.get("text", ""))), cell.source[:60]


def test_every_captioned_figure_is_displayed_once_as_an_image(executed):
    """A figure cell (``mystnb.figure`` metadata) without an image leaves its {numref} undefined and
    the page without the figure; pyplot's inline backend must not add a second copy."""
    nb = nbformat.read(executed / "executed" / "laptop_scale.ipynb", as_version=4)
    figures = [c for c in nb.cells if c.cell_type == "code" and "figure" in c.metadata.get("mystnb", {})]
    assert len(figures) == 6
    for cell in figures:
        images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        assert len(images) == 1, (cell.metadata["mystnb"]["figure"]["name"], len(images))


def test_every_name_the_prose_cites_is_glued_by_the_one_summary_cell(executed):
    nb = nbformat.read(executed / "executed" / "laptop_scale.ipynb", as_version=4)
    cited = set(
        re.findall(
            r"\{glue:text\}`(laptop_scale_[A-Za-z0-9_]+?)(?::[^`]*)?`",
            (NOTEBOOKS / "laptop_scale.md").read_text(encoding="utf-8"),
        )
    )
    values = read_glued(executed / "executed" / "laptop_scale.ipynb")
    assert cited and cited <= set(values), sorted(cited - set(values))
    glueing = [c for c in nb.cells if c.cell_type == "code" and "glue" in c.source and "import" not in c.source]
    assert len(glueing) == 1 and "remove-cell" in glueing[0].metadata.get("tags", [])
