"""What a scale costs before it is run (:mod:`sdsl.experiment.budget`): recovered from the committed
full run, and its command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sdsl.experiment import __main__ as cli


def test_the_budget_recovers_the_committed_runs():
    from sdsl.experiment.budget import budget_table, budget_totals
    from sdsl.experiment.config import Scale
    from sdsl.experiment.results import RESULTS, load_results, provenance

    runs = load_results(RESULTS)["runs"]
    runs = runs[runs["role"] != "test"].set_index("run")  # the budget is the calibration runs
    train_tokens = provenance(RESULTS)["corpus"]["splits"]["train"]["tokens"]
    committed = Scale.from_dict(provenance(RESULTS)["scale"])  # the design of the committed run
    assert json.loads(json.dumps(committed.as_dict())) == provenance(RESULTS)["scale"]
    table = budget_table(committed, train_tokens).set_index("run")
    assert list(table.index) == sorted(runs.index, key=list(table.index).index)
    assert (table["tokens"] == runs.loc[table.index, "tokens"]).all()
    assert (table["params"] == runs.loc[table.index, "params"]).all()
    # the same FLOP count as the runner's, up to the 10 significant digits the CSV keeps
    np.testing.assert_allclose(table["train_flops"], runs.loc[table.index, "train_flops"], rtol=1e-9)
    # the runner counts epochs over whole windows of seq_len tokens, the budget over the split:
    # at most seq_len tokens apart in 5.75 M, a relative 2.3e-5
    np.testing.assert_allclose(table["epochs"], runs.loc[table.index, "epochs"], rtol=3e-5)
    tot = budget_totals(committed, table.reset_index(), flops_per_s=1e9)
    # the third design: 3 draft shapes (7 runs: two shapes at three budgets), 2 fit targets, 1 held out
    assert tot["runs"] == 10 and tot["pairs"] == 14 and tot["shapes"] == 6
    assert tot["train_s"] == pytest.approx(tot["train_flops"] / 1e9, rel=1e-15)
    assert tot["under_chinchilla"] == int((runs["tokens_per_param"] < 20).sum())
    with pytest.raises(ValueError, match="flops_per_s must be > 0"):
        budget_totals(committed, table, flops_per_s=0)


def test_budget_command_prints_the_runs_and_refuses_a_bad_throughput(tmp_path, capsys):
    assert cli.main(["budget", "--scale", "gpu", "--out", str(tmp_path), "--flops-per-s", "1e14"]) == 0
    out = capsys.readouterr().out
    assert "w320l4-d101000k" in out and "11 runs, 16 pairs" in out and "0 runs under 20 tokens per parameter" in out
    assert "s at 1e+14 FLOP/s" in out and "epochs unknown until the corpus is made" in out
    for bad in ("0", "-3", "nan", "inf"):
        assert cli.main(["budget", "--scale", "gpu", "--flops-per-s", bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(
            "python -m sdsl.experiment budget: error: --flops-per-s must be a number > 0"
        )
