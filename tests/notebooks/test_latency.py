"""Notebook runs of the chapter (moved from tests/test_latency.py; the unit tests are in tests/unit/chapters/test_latency.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdsl.build.pipeline import execute_notebook
from sdsl.chapters import latency

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def t6():
    return latency.table6()


@pytest.mark.slow
def test_notebook_executes_and_writes_the_tables(tmp_path, t6):
    execute_notebook("latency", output_dir=tmp_path / "executed", artifacts=tmp_path / "artifacts")
    art = tmp_path / "artifacts" / "latency"
    for name in ("table6", "rank_correlations", "stratified_trend_test"):
        assert (art / f"{name}.csv").is_file(), name
    for ext in ("svg", "png"):
        assert (art / f"figure4.{ext}").stat().st_size > 1000
    saved = pd.read_csv(art / "table6.csv")
    assert np.allclose(saved["distance"], t6["distance"], rtol=1e-10)
    assert saved["distance_within_print"].all()
