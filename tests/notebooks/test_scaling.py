"""Notebook runs of the chapter (moved from tests/test_grid.py; the unit tests are in tests/unit/chapters/test_scaling.py)."""

from __future__ import annotations

import pandas as pd
import pytest

WIDE = 1e14  # the upper end of D and D' that reproduces Tables 8 and 9 (see the chapter)

pytestmark = [pytest.mark.slow]


def test_notebook_executes(tmp_path):
    from sdsl.build.pipeline import execute_notebook

    path = execute_notebook("scaling", output_dir=tmp_path / "executed", artifacts=tmp_path / "artifacts")
    assert path.is_file()
    out = tmp_path / "artifacts" / "scaling"
    for name in (
        "table7.csv",
        "table8.csv",
        "table9.csv",
        "fit_metrics.csv",
        "variants.csv",
        "grid_solution.csv",
        "figure5.svg",
        "figure5.png",
    ):
        assert (out / name).is_file(), name
    t9 = pd.read_csv(out / "table9.csv").set_index("parameter")
    assert t9["paper_in_our_ci"].all() and t9["ours_in_paper_ci"].all()
    assert len(pd.read_csv(out / "grid_solution.csv")) == 288
