"""The runner's command line and its refusal to mix runs; the scales meet the issue's design."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sdsl.experiment import __main__ as cli
from sdsl.experiment.config import SCALES, get_scale
from sdsl.experiment.runner import run


@pytest.mark.parametrize("name", ["full", "gpu"])
def test_full_and_gpu_scales_meet_the_design_of_the_issue(name):
    s = get_scale(name)
    ne = [sh.non_embedding_params() for sh in s.shapes]
    assert len(s.shapes) >= 8
    assert np.log10(max(ne) / min(ne)) >= 1.5  # 1.5 decades of non-embedding parameters
    budgets = {}
    for r in s.runs():
        budgets.setdefault(r.shape.name, set()).add(r.tokens)
    assert sum(len(b) >= 3 for b in budgets.values()) >= 3
    assert len(s.targets()) >= 2
    for d, t in s.pairs():
        assert s.params(d.shape) < s.params(t.shape)
    assert s.vocab_size <= 65535


def test_the_gpu_scale_is_larger_and_repeats_the_corpus_at_most_four_times():
    gpu, full = get_scale("gpu"), get_scale("full")
    assert max(gpu.params(sh) for sh in gpu.shapes) >= 10_000_000  # "models to tens of millions"
    assert max(gpu.params(sh) for sh in gpu.shapes) > 10 * max(full.params(sh) for sh in full.shapes)
    assert gpu.corpus == full.corpus and gpu.min_corpus_tokens >= 5_000_000
    # Muennighoff et al. 2023: repeating the data costs little up to about 4 epochs; the corpus
    # task enforces it (test_a_corpus_repeated_more_than_max_epochs_is_refused)
    assert gpu.max_epochs == 4.0


def test_a_corpus_repeated_more_than_max_epochs_is_refused(tmp_path):
    from dataclasses import replace

    from sdsl.experiment.runner import Experiment

    smoke = get_scale("smoke")
    Experiment(replace(smoke, max_epochs=1.0), tmp_path / "ok").corpus_task(lambda _f: None)
    train = json.loads((tmp_path / "ok" / "corpus" / "sources.json").read_text())["splits"]["train"]["tokens"]
    epochs = smoke.common_tokens / train
    with pytest.raises(ValueError, match=rf"is {epochs:.2f} epochs of the training split \({train:,} tokens\), "):
        Experiment(replace(smoke, max_epochs=0.5 * epochs), tmp_path / "bad").corpus_task(lambda _f: None)
    assert not (tmp_path / "bad" / "corpus" / "tokenizer.json").exists()  # refused before it is written


def test_parameter_count_matches_the_built_model():
    pytest.importorskip("transformers")
    from sdsl.experiment.training import build_model, param_counts

    for shape in SCALES["full"].shapes[:3]:
        counts = param_counts(build_model(shape, 2048, 256, seed=0))
        assert counts.n == shape.params(2048)
        assert counts.non_embedding == shape.non_embedding_params()


def test_bad_arguments_exit_2_with_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "--scale", "huge"])
    assert e.value.code == 2
    assert "invalid choice: 'huge'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        cli.main(["run", "--workers", "0"])
    assert e.value.code == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:  # the gpu scale on the CPU would take days
        cli.main(["run", "--scale", "gpu"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("python -m sdsl.experiment: error: --scale gpu trains 1.1e+16 FLOPs, days on a CPU")


def test_an_existing_run_is_not_overwritten_and_other_settings_do_not_resume(tmp_path, capsys):
    s = get_scale("smoke")
    (tmp_path / "state.json").write_text(json.dumps({"scale": "smoke", "digest": "0" * 16, "sessions": []}))
    assert cli.main(["run", "--scale", "smoke", "--out", str(tmp_path), "--no-progress"]) == 2
    assert "pass --resume" in capsys.readouterr().err
    with pytest.raises(ValueError, match="holds a run of other settings"):
        run(s, tmp_path, resume=True, progress=False)
