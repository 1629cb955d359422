"""The executor: parameters from one file, papermill, atomic artifacts, failures with tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdsl.build import pipeline
from sdsl.paths import NOTEBOOKS, RUNS_FILE

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Toy
"""

TOY = HEADER + """
```{code-cell} ipython3
:tags: [parameters]
artifacts_dir = None
value = 1.5
fail = False
```

```{code-cell} ipython3
import pandas as pd
from sdsl.book.outputs import save_table
save_table(pd.DataFrame({"value": [value]}), "toy", "first", artifacts_dir)
if fail:
    raise RuntimeError("the toy notebook was told to fail")
save_table(pd.DataFrame({"value": [2 * value]}), "toy", "second", artifacts_dir)
```
"""


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    (nb_dir / "toy.md").write_text(TOY)
    runs = nb_dir / "runs.yml"
    runs.write_text("runs:\n  toy: {value: 4.0}\n")
    monkeypatch.setattr(pipeline, "NOTEBOOKS", nb_dir)
    monkeypatch.setattr(pipeline, "RUNS_FILE", runs)
    return tmp_path


def test_runs_file_lists_existing_notebooks_in_book_order():
    runs = pipeline.load_runs(RUNS_FILE)
    assert list(runs)[0] == "acceptance"
    for chapter in runs:
        assert (NOTEBOOKS / f"{chapter}.md").is_file()


def test_parameters_from_runs_file_reach_the_notebook_and_outputs_land(toy):
    out, art = toy / "executed", toy / "artifacts"
    [result] = pipeline.run(output_dir=out, artifacts=art, jobs=1)
    assert not result.skipped and result.executed == out / "toy.ipynb"
    assert (art / "toy" / "first.csv").read_text().splitlines() == ["value", "4"]
    assert (art / "toy" / "second.csv").read_text().splitlines() == ["value", "8"]
    # unchanged inputs: skipped; changed parameters: executed again
    [again] = pipeline.run(output_dir=out, artifacts=art, jobs=1)
    assert again.skipped
    (toy / "notebooks" / "runs.yml").write_text("runs:\n  toy: {value: 5.0}\n")
    [changed] = pipeline.run(output_dir=out, artifacts=art, jobs=1)
    assert not changed.skipped
    assert (art / "toy" / "second.csv").read_text().splitlines() == ["value", "10"]


def test_failed_notebook_raises_with_traceback_and_leaves_no_partial_artifacts(toy):
    out, art = toy / "executed", toy / "artifacts"
    pipeline.run(output_dir=out, artifacts=art, jobs=1)
    before = sorted(p.name for p in (art / "toy").iterdir())
    with pytest.raises(pipeline.NotebookError, match="the toy notebook was told to fail"):
        pipeline.execute_notebook("toy", {"fail": True}, out, art)
    # the previous complete set is untouched, and no staging folder is left behind
    assert sorted(p.name for p in (art / "toy").iterdir()) == before
    assert sorted(p.name for p in art.iterdir() if p.is_dir()) == ["toy"]


def test_unknown_chapter_and_bad_runs_file_are_named(toy):
    with pytest.raises(ValueError, match="unknown chapter"):
        pipeline.run(["nope"], output_dir=toy / "e", artifacts=toy / "a")
    bad = toy / "notebooks" / "runs.yml"
    bad.write_text("runs:\n  missing: {}\n")
    with pytest.raises(ValueError, match="has no notebook"):
        pipeline.load_runs(bad)


def test_inputs_digest_changes_with_parameters():
    a = pipeline.inputs_digest("acceptance", {})
    b = pipeline.inputs_digest("acceptance", {"x": 1})
    assert a != b and len(a) == 64
