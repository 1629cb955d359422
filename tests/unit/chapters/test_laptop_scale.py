"""Chapter laptop_scale: its parameter check (issue 13) and the tables it builds from the committed
raw results of the laptop-scale experiment (issue 17)."""

from __future__ import annotations

import numpy as np
import pytest

from sdsl.chapters import laptop_scale as ch
from sdsl.experiment.results import RESULTS, load_results
from sdsl.model.laws import BESIROGLU_2024, HOFFMANN_2022

DEFAULTS = dict(results_dir=None, temperature=1.0, seed=20260317, loss_resamples=100, alpha_resamples=2000,
                law_resamples=2000, artifacts_dir=None)


def test_the_notebook_defaults_pass():
    ch.check_parameters(**DEFAULTS)
    ch.check_parameters(**{**DEFAULTS, "results_dir": str(RESULTS), "temperature": 0.0})


@pytest.mark.parametrize(("name", "value", "message"), [
    ("temperature", 0.5, "temperature must be one of 1.0, 0.0"),
    ("loss_resamples", 5, "loss_resamples must be 0 (none) or an integer in [100, 10000]"),
    ("alpha_resamples", 2.5, "alpha_resamples must be an integer"),
    ("law_resamples", 0, "law_resamples must be an integer in [100, 10000]"),
    ("seed", -1, "seed must be an integer"),
    ("results_dir", "/no/such/folder", "results_dir must be an existing folder"),
])
def test_a_bad_value_is_refused_in_one_line_naming_it(name, value, message):
    with pytest.raises(ValueError) as e:
        ch.check_parameters(**{**DEFAULTS, name: value})
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_a_folder_without_results_and_an_unknown_name_are_refused(tmp_path):
    with pytest.raises(ValueError, match="has no runs.csv"):
        ch.check_parameters(**{**DEFAULTS, "results_dir": str(tmp_path)})
    with pytest.raises(ValueError, match="did you mean 'seed'"):
        ch.check_parameters(sed=1)


@pytest.fixture(scope="module")
def runs():
    return load_results(RESULTS)["runs"]


def test_table_runs_flags_the_runs_below_twenty_tokens_per_parameter(runs):
    t = ch.table_runs(runs)
    assert len(t) == len(runs)
    assert (t["under_trained"] == (t["tokens"] / t["params"] < 20)).all()
    assert t["params"].is_monotonic_increasing


def test_table_loss_law_sits_beside_the_published_constants(runs):
    from sdsl.experiment.analysis import fit_all_runs

    t = ch.table_loss_law(fit_all_runs(runs)).set_index("parameter")
    for p in ("E", "A", "B", "a", "b"):
        assert t.loc[p, "hoffmann2022"] == getattr(HOFFMANN_2022, p)
        assert t.loc[p, "besiroglu2024"] == getattr(BESIROGLU_2024, p)
    # without bootstrap draws there is no interval, and none is invented
    assert t["ci_lower"].isna().all() and np.isfinite(t["estimate"]).all()
