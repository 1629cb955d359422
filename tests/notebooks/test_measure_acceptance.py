"""Notebook runs of the chapter (moved from tests/test_harness.py; the unit tests are in tests/unit/measure/test_harness.py)."""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")


from sdsl.measure import harness as H  # noqa: E402
from sdsl.measure import local as L  # noqa: E402
from sdsl.paths import DATA  # noqa: E402

torch.set_num_threads(1)  # tiny models: one thread is fastest and immune to oversubscription

PROMPTS = L.read_prompts(DATA / "prompts.txt")

pytestmark = [pytest.mark.slow]


@pytest.mark.slow
def test_notebook_runs_with_small_parameters(tmp_path):
    """The chapter executes through papermill (the project's executor) and writes its tables; the
    summary row validates against the acceptance schema."""
    import pandas as pd

    from sdsl import data
    from sdsl.build.pipeline import execute_notebook

    params = {"gammas": [2, 3], "n_prompts": 4, "max_new_tokens": 12, "n_resamples": 200}
    execute_notebook("measure_acceptance", params, output_dir=tmp_path / "executed", artifacts=tmp_path / "artifacts")
    out = tmp_path / "artifacts" / "measure_acceptance"
    for name in ("iterations", "requests", "summary", "acceptance_row", "paper_pair_families"):
        assert (out / f"{name}.csv").exists(), name
    for name in ("fig_position_rates", "fig_accepted"):
        assert (out / f"{name}.svg").exists() and (out / f"{name}.png").exists()
    row = data.load(out / "acceptance_row.csv", schema="acceptance")
    assert len(row) == 1 and 0 < row["alpha"].iloc[0] < 1
    summary = pd.read_csv(out / "summary.csv")
    assert summary["gamma"].tolist() == [2, 3]
    it = pd.read_csv(out / "iterations.csv")
    assert list(it.columns) == H.ITERATION_COLUMNS and it["prompt_id"].nunique() == 4
    fam = pd.read_csv(out / "paper_pair_families.csv")
    # the paper's cross-family pairs: OPT x Qwen in both directions
    assert fam.loc[fam["kind"] == "cross family", "pairs"].sum() == 26
