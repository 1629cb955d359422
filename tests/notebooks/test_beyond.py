"""Notebook runs of the chapter (moved from tests/test_beyond_tmp.py; the unit tests are in tests/unit/chapters/test_beyond.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from sdsl.chapters import beyond as lc

pytestmark = [pytest.mark.slow]


@pytest.mark.slow
def test_notebook_executes(tmp_path):
    import nbformat

    from sdsl.build.pipeline import execute_notebook

    params = {"n_resamples": 300, "sweep_points": 7, "seed": 5}
    nb = execute_notebook("beyond", params, output_dir=tmp_path / "executed", artifacts=tmp_path / "art")
    art = tmp_path / "art" / "beyond"
    for name in (
        "law_ranking.csv",
        "law_parameters.csv",
        "table4_check.csv",
        "cv_predictions.csv",
        "n_star_variants.csv",
        "n_star_spread.csv",
        "ratio_sweep.csv",
        "ratio_rule.csv",
        "elasticities.csv",
        "fig_predicted_observed.svg",
        "fig_n_star.svg",
        "fig_ratio.svg",
        "fig_tornado.svg",
        "fig_tornado.png",
    ):
        assert (art / name).is_file(), name
    rank = pd.read_csv(art / "law_ranking.csv")
    assert set(rank["scheme"]) == {"leave one draft out", "leave one target out"}
    glued = {}
    for cell in nbformat.read(nb, as_version=4).cells:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                glued[name] = next(v for k, v in o["data"].items() if k.endswith("text/plain"))
    lodo = rank[rank["scheme"] == "leave one draft out"].sort_values("rank")
    # glued under its human name (the legend's), not the code identifier
    assert glued["beyond_best_lodo_law"].strip("'") == lc.LAW_NAMES[lodo["law"].iloc[0]]
    assert float(glued["beyond_best_lodo_rmse"]) == pytest.approx(lodo["rmse"].iloc[0], rel=1e-12)
