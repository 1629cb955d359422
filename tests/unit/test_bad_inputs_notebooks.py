"""The notebooks' parameters: each chapter's check_parameters (the cell right after the
parameters cell) refuses a bad value, merged over the notebook's defaults, with a ValueError of one
line naming the parameter and what is allowed; unknown names fail before anything runs, listing the
allowed names with the nearest suggested. execute_notebook runs the same checks in-process, before it
creates a folder or starts a kernel (a kernel run is in tests/notebooks/test_bad_parameters.py)."""

from __future__ import annotations

import importlib

import pytest
from bad_input_checks import assert_nothing_written, assert_one_line, snapshot
from bad_inputs import NOTEBOOK, NOTEBOOK_VALID

from sdsl.build.parameters import ParameterError, load_runs, notebook_parameters
from sdsl.build.pipeline import execute_notebook

_DEFAULTS: dict[str, dict] = {}


def defaults(chapter: str) -> dict:
    if chapter not in _DEFAULTS:
        _DEFAULTS[chapter] = notebook_parameters(chapter)
    return dict(_DEFAULTS[chapter])


@pytest.mark.parametrize("chapter", list(load_runs()))
def test_every_notebook_calls_its_check_right_after_the_parameters_cell(chapter):
    import jupytext

    from sdsl.paths import NOTEBOOKS

    cells = [c for c in jupytext.read(NOTEBOOKS / f"{chapter}.md").cells if c.cell_type == "code"]
    assert "parameters" in cells[0].metadata.get("tags", [])
    check = cells[1]
    assert check.metadata.get("tags") == ["remove-input"]
    assert f"from sdsl.chapters.{chapter} import check_parameters" in check.source
    # every variable of the namespace (the parameters and whatever papermill injected) goes to the check
    assert "check_parameters(**namespace_parameters(globals()))" in check.source


def test_namespace_parameters_keeps_the_variables_only():
    import types

    from sdsl.validation import namespace_parameters

    ns = {
        "In": [],
        "Out": {},
        "get_ipython": print,
        "exit": None,
        "quit": None,
        "_": 1,
        "_i1": "x",
        "__name__": "m",
        "np": types,
        "check_parameters": test_namespace_parameters_keeps_the_variables_only,
        "n_boot": 10,
        "presett": "x",
    }
    assert namespace_parameters(ns) == {"n_boot": 10, "presett": "x"}


@pytest.mark.parametrize("chapter", list(load_runs()))
def test_the_notebooks_defaults_pass_their_check(chapter):
    importlib.import_module(f"sdsl.chapters.{chapter}").check_parameters(**defaults(chapter))


@pytest.mark.parametrize("chapter, params, expected", [c[1:] for c in NOTEBOOK], ids=[c[0] for c in NOTEBOOK])
def test_bad_notebook_parameter(chapter, params, expected, tmp_path):
    check = importlib.import_module(f"sdsl.chapters.{chapter}").check_parameters
    before = snapshot(tmp_path)
    with pytest.raises(ValueError) as err:
        check(**{**defaults(chapter), **params})
    assert_one_line(str(err.value), expected)
    assert_nothing_written(before, snapshot(tmp_path))


# execute_notebook: a sample of the corpus through the executor (names and values), nothing created
EXECUTOR = [
    c
    for c in NOTEBOOK
    if c[0]
    in {
        "plan-presett",
        "acceptance-measurement",
        "optimal-n-points-zero",
        "optimal-families-string",
        "beyond-band-reversed",
        "latency-n-boot-zero",
        "measure-n-prompts-zero",
        "scaling-m-points-one",
    }
]


@pytest.mark.parametrize("chapter, params, expected", [c[1:] for c in EXECUTOR], ids=[c[0] for c in EXECUTOR])
def test_execute_notebook_refuses_before_anything_runs(chapter, params, expected, tmp_path):
    before = snapshot(tmp_path)
    with pytest.raises(ParameterError) as err:
        execute_notebook(chapter, params, output_dir=tmp_path / "out", artifacts=tmp_path / "artifacts")
    assert isinstance(err.value, ValueError)
    assert_one_line(str(err.value), expected)
    assert not (tmp_path / "out").exists() and not (tmp_path / "artifacts").exists()
    assert_nothing_written(before, snapshot(tmp_path))


@pytest.mark.parametrize("chapter, params", [c[1:] for c in NOTEBOOK_VALID], ids=[c[0] for c in NOTEBOOK_VALID])
def test_odd_but_valid_notebook_parameter(chapter, params):
    """Decided valid (bad_inputs.NOTEBOOK_VALID says why): the check lets them through."""
    importlib.import_module(f"sdsl.chapters.{chapter}").check_parameters(**{**defaults(chapter), **params})


@pytest.mark.parametrize("chapter", list(load_runs()))
def test_the_check_cell_runs_on_the_parameters_cell(chapter):
    """The notebook's own first two cells, executed in a fresh namespace as a kernel would (IPython's
    names added): the defaults pass, and an injected unknown name is refused with the nearest one."""
    import jupytext

    from sdsl.paths import NOTEBOOKS

    cells = [c for c in jupytext.read(NOTEBOOKS / f"{chapter}.md").cells if c.cell_type == "code"]
    kernel = {"__name__": "__main__", "In": [], "Out": {}, "get_ipython": lambda: None, "exit": None, "quit": None}
    ns = dict(kernel)
    exec(cells[0].source, ns)
    exec(cells[1].source, ns)
    ns = dict(kernel)
    exec(cells[0].source, ns)
    first = next(iter(defaults(chapter)))
    ns[first + "s"] = ns[first]  # papermill -p <name>s ...: a name the notebook does not have
    with pytest.raises(ValueError) as err:
        exec(cells[1].source, ns)
    assert_one_line(str(err.value), (f"'{first}s'", "allowed:"))


def _measure(**params):
    from sdsl.chapters.measure_acceptance import check_parameters

    check_parameters(**{**defaults("measure_acceptance"), **params})


@pytest.mark.parametrize(
    "draft_files, expected",
    [
        ((), ("draft", "no config.json and no weights", "model.safetensors")),
        (("config.json",), ("draft", "no weights", "pytorch_model.bin")),
        (("model.safetensors", "tokenizer.json"), ("draft", "no config.json")),
    ],
    ids=["empty", "config-only", "weights-only"],
)
def test_a_model_folder_without_config_or_weights_is_refused_before_loading(draft_files, expected, tmp_path):
    """An empty model folder used to pass the check and fail seconds later inside transformers."""
    from sdsl.paths import DATA

    draft = tmp_path / "draft"
    draft.mkdir()
    for name in draft_files:
        (draft / name).write_text("{}")
    before = snapshot(tmp_path)
    with pytest.raises(ValueError) as err:
        _measure(draft=str(draft), target=str(DATA / "local_pair" / "target"))
    assert_one_line(str(err.value), (*expected, str(draft)))
    if "config.json" in draft_files:
        assert "config.json" not in str(err.value)  # what is there is not named missing
    assert_nothing_written(before, snapshot(tmp_path))


def test_an_empty_target_folder_is_named_as_the_target(tmp_path):
    from sdsl.paths import DATA

    (tmp_path / "target").mkdir()
    with pytest.raises(ValueError) as err:
        _measure(draft=str(DATA / "local_pair" / "draft"), target=str(tmp_path / "target"))
    assert_one_line(str(err.value), ("target must be a model folder", "no config.json"))


def test_the_committed_pair_and_a_sharded_folder_pass_the_model_check(tmp_path):
    from sdsl.paths import DATA

    sharded = tmp_path / "sharded"
    sharded.mkdir()
    (sharded / "config.json").write_text("{}")
    (sharded / "model.safetensors.index.json").write_text("{}")  # the weights in shards, listed by the index
    _measure(draft=str(DATA / "local_pair" / "draft"), target=str(DATA / "local_pair" / "target"))
    _measure(draft=str(sharded), target=str(DATA / "local_pair" / "target"))


def _scorecard(root):
    from sdsl.chapters.scorecard import check_parameters

    check_parameters(**{**defaults("scorecard"), "artifacts_root": str(root)})


def test_an_empty_artifacts_root_names_every_chapter_to_run(tmp_path):
    """An empty artifacts_root used to pass the check and fail in the notebook with a traceback."""
    before = snapshot(tmp_path)
    with pytest.raises(ValueError) as err:
        _scorecard(tmp_path)
    msg = str(err.value)
    assert_one_line(msg, ("artifacts_root", str(tmp_path), "acceptance (table3.csv", "latency (table6.csv)"))
    assert_one_line(msg, ("optimal_draft", "scaling", "execute_notebook", "python -m sdsl.build.pipeline run"))
    assert_nothing_written(before, snapshot(tmp_path))


def test_an_artifacts_root_missing_one_chapter_names_that_chapter_only(tmp_path):
    import shutil

    from sdsl.audit.rows import REQUIRED_ARTIFACTS
    from sdsl.paths import ROOT

    for chapter, files in REQUIRED_ARTIFACTS.items():
        if chapter != "latency":
            (tmp_path / chapter).mkdir()
            for f in files:
                shutil.copy(ROOT / "baseline" / chapter / f, tmp_path / chapter / f)
    with pytest.raises(ValueError) as err:
        _scorecard(tmp_path)
    assert_one_line(str(err.value), ("chapter(s) latency (table6.csv):", "'latency'"))
    assert "acceptance" not in str(err.value) and "scaling" not in str(err.value)
    (tmp_path / "latency").mkdir()
    shutil.copy(ROOT / "baseline" / "latency" / "table6.csv", tmp_path / "latency")
    _scorecard(tmp_path)  # every chapter's artifacts there: the check passes


def test_a_chapter_given_twice_in_runs_yml_is_refused_naming_its_lines(tmp_path):
    """Last-wins would silently drop the first run's parameters."""
    f = tmp_path / "runs.yml"
    f.write_text("runs:\n  scaling: {}\n  latency: {}\n  scaling:\n    grid: paper\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_runs(f)
    assert str(info.value) == (
        f"{f}, line 4: key 'scaling' is given twice in one mapping (first on line 2); give each key once"
    )
