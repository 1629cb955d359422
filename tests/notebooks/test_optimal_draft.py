"""Notebook runs of the chapter (moved from tests/test_optimum.py; the unit tests are in tests/unit/chapters/test_optimal_draft.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from sdsl.audit.rules import D_TARGET_4E12
from sdsl.build.pipeline import execute_notebook
from sdsl.chapters import optimal_draft as optimum
from sdsl.model.configurations import configurations

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def t5():
    return optimum.table5()


@pytest.mark.slow
def test_notebook_executes_and_writes_the_tables(tmp_path, t5):
    nb = execute_notebook("optimal_draft", output_dir=tmp_path / "executed", artifacts=tmp_path / "artifacts")
    art = tmp_path / "artifacts" / "optimal_draft"
    for name in (
        "table5",
        "table5_as_printed",
        "gamma_check",
        "hypotheses_14b",
        "implied_d_target",
        "variants",
        "flop_gain",
        "figure2_curves",
        "figure2_drafts",
    ):
        assert (art / f"{name}.csv").is_file(), name
    for ext in ("svg", "png"):
        assert (art / f"figure2.{ext}").stat().st_size > 1000
    # the chapter's Table 5 reads Qwen1.5-14B's D' as the reading does, the table beside it as printed
    read = optimum.table5(configurations(d_target=dict(D_TARGET_4E12.default)))
    saved = pd.read_csv(art / "table5.csv")
    assert np.allclose(saved["n_star"], read["n_star"], rtol=1e-10)
    assert (saved["d_target"] == read["d_target"]).all() and (saved["d_target"] != t5["d_target"]).any()
    printed = pd.read_csv(art / "table5_as_printed.csv")
    assert np.allclose(printed["n_star"], t5["n_star"], rtol=1e-10)
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    errors = [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
