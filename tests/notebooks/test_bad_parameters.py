"""Bad parameters through a kernel: a notebook run by papermill itself (not by execute_notebook, which
checks before it starts one) with a bad parameter stops in the cell right after the parameters cell,
with a ValueError of one line naming the parameter, before any heavy cell runs and before anything
is written. One chapter, once: the validators themselves are tested in tests/unit."""

from __future__ import annotations

import json

import jupytext
import nbformat
import papermill
import pytest

from sdsl.paths import NOTEBOOKS

pytestmark = [pytest.mark.slow]


def test_bad_parameter_stops_in_the_check_cell(tmp_path):
    nb = jupytext.read(NOTEBOOKS / "latency.md")
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    src, out, art = tmp_path / "latency.ipynb", tmp_path / "out.ipynb", tmp_path / "artifacts"
    nbformat.write(nb, src)
    with pytest.raises(papermill.PapermillExecutionError) as err:
        papermill.execute_notebook(
            str(src),
            str(out),
            parameters={"n_boot": 0, "artifacts_dir": str(art)},
            kernel_name="python3",
            progress_bar=False,
            cwd=str(NOTEBOOKS),
        )
    assert err.value.ename == "ValueError"
    assert err.value.evalue == "n_boot must be an integer in [100, 10000] (bootstrap resamples over drafts), got 0"
    cells = [c for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"]
    tags = [c["metadata"].get("tags", []) for c in cells]
    assert "parameters" in tags[0] and tags[1] == ["injected-parameters"] and tags[2] == ["remove-input"]
    assert [o.get("ename") for o in cells[2]["outputs"] if o["output_type"] == "error"] == ["ValueError"]
    assert all(c["execution_count"] is None for c in cells[3:]), "a cell after the check ran"
    assert not art.exists() or not any(art.iterdir())


def test_execute_notebook_reports_the_check_cell_as_a_value_error(tmp_path, monkeypatch):
    """Should the in-process check let a value through (a default that is not a Python literal), the
    notebook's own check cell refuses it, and execute_notebook raises a one-line ValueError, not a
    NotebookError with a traceback; nothing is published."""
    from sdsl.build import parameters, pipeline

    monkeypatch.setattr(pipeline, "check_notebook_parameters", lambda chapter, params, **kw: None)
    with pytest.raises(parameters.ParameterError) as err:
        pipeline.execute_notebook(
            "latency", {"confidence": 95}, output_dir=tmp_path / "out", artifacts=tmp_path / "artifacts"
        )
    assert str(err.value) == ("notebook 'latency': confidence must be a number in (0, 1) (confidence level), got 95")
    assert not (tmp_path / "out" / "latency.ipynb").exists()
    assert not (tmp_path / "artifacts" / "latency").exists()


def test_papermill_refuses_a_name_the_notebook_does_not_have(tmp_path):
    """``papermill ... -p presett x`` (papermill itself only warns): the check cell refuses the name,
    with the nearest one suggested, before anything runs."""
    nb = jupytext.read(NOTEBOOKS / "acceptance.md")
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    src, out, art = tmp_path / "acceptance.ipynb", tmp_path / "out.ipynb", tmp_path / "artifacts"
    nbformat.write(nb, src)
    with pytest.raises(papermill.PapermillExecutionError) as err:
        papermill.execute_notebook(
            str(src),
            str(out),
            parameters={"measurement": "/tmp/x.csv", "artifacts_dir": str(art)},
            kernel_name="python3",
            progress_bar=False,
            cwd=str(NOTEBOOKS),
        )
    assert err.value.ename == "ValueError"
    assert "'measurement'" in err.value.evalue and "'measurements'" in err.value.evalue
    assert "\n" not in err.value.evalue
    cells = [c for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"]
    assert all(c["execution_count"] is None for c in cells[3:]), "a cell after the check ran"
    assert not art.exists() or not any(art.iterdir())
