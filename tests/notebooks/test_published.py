"""Notebook run of the published-deployments chapter (seconds: every input is committed data); its
tables' logic is tested in tests/unit/chapters/test_published.py and tests/unit/plan/test_published.py."""

from __future__ import annotations

import re

import nbformat
import pandas as pd
import pytest
from glued import glued as read_glued

from sdsl import data
from sdsl.build.pipeline import execute_notebook
from sdsl.chapters import published as chapter
from sdsl.paths import NOTEBOOKS, ROOT

pytestmark = [pytest.mark.slow]

TABLES = (
    "inputs",
    "data_size",
    "alpha_predictions",
    "alpha_errors",
    "speedup_predictions",
    "speedup_errors",
    "speedup_by",
    "cost_models",
    "draft_ranking",
    "ranking_summary",
    "extension_skill",
    "extension_fit",
)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("published")
    execute_notebook("published", {}, output_dir=tmp / "executed", artifacts=tmp / "artifacts")
    return tmp


def test_every_table_and_figure_is_written(executed):
    art = executed / "artifacts" / "published"
    for name in TABLES:
        assert (art / f"{name}.csv").is_file(), name
    for name in ("fig_alpha", "fig_speedup"):
        assert (art / f"{name}.svg").stat().st_size > 1000, name
    inputs = pd.read_csv(art / "inputs.csv")
    assert len(inputs) == len(data.records("published_deployments"))


def test_the_speedup_errors_are_those_sdsl_plan_prints(executed):
    """The chapter's summary of the speedup errors and data/published_accuracy.csv (what sdsl plan
    prints) are one computation: same counts, same median ratios (rel 1e-11: the artifact's CSV keeps
    12 significant digits)."""
    tab = pd.read_csv(executed / "artifacts" / "published" / "speedup_errors.csv", keep_default_na=False)
    committed = [r for r in data.records("published_accuracy") if r["quantity"] == "speedup"]
    assert committed
    for r in committed:
        hit = tab[
            (tab["alpha_from"] == r["alpha_from"])
            & (tab["cost_model"] == r["cost_model"])
            & (tab["hardware_class"] == r["hardware_class"])
        ]
        assert len(hit) == 1, r
        assert (int(hit["n"].iloc[0]), int(hit["within"].iloc[0])) == (r["n"], r["within"])
        assert float(hit["median_ratio"].iloc[0]) == pytest.approx(r["median_ratio"], rel=1e-11)


def test_no_input_no_stderr_and_no_absolute_path_in_the_outputs(executed):
    nb = nbformat.read(executed / "executed" / "published.ipynb", as_version=4)
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
            assert str(ROOT) not in str(out.get("data", out.get("text", ""))), cell.source[:60]


def test_every_captioned_figure_is_displayed_once_as_an_image(executed):
    nb = nbformat.read(executed / "executed" / "published.ipynb", as_version=4)
    figures = [c for c in nb.cells if c.cell_type == "code" and "figure" in c.metadata.get("mystnb", {})]
    assert len(figures) == 2
    for cell in figures:
        images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
        assert len(images) == 1, (cell.metadata["mystnb"]["figure"]["name"], len(images))


def test_every_name_the_prose_cites_is_glued_and_the_verdict_comes_first(executed):
    text = (NOTEBOOKS / "published.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"\{glue:text\}`(published_[A-Za-z0-9_]+?)(?::[^`]*)?`", text))
    values = read_glued(executed / "executed" / "published.ipynb")
    assert cited and cited <= set(values), sorted(cited - set(values))
    overview = text.split("## Overview", 1)[1].strip()
    assert overview.startswith("**Verdict.** {glue:text}`published_verdict`")
    art = executed / "artifacts" / "published"
    tabs = [
        pd.read_csv(art / f"{n}.csv") for n in ("alpha_errors", "speedup_errors", "extension_skill", "ranking_summary")
    ]
    assert values["published_verdict"].strip("'\"") == chapter.verdict(*tabs)
