"""Nothing a user owns is lost: every folder a command or function writes is new, empty or the
tools' own (marked), and any other is refused in one line naming it, before anything is touched.
One test per path: the check's --diff-dir, --keep and --baseline, the pipeline's output and
artifacts folders, execute_notebook, the experiment's --out and the wheel check's work folder.
Names (chapters) are looked up, never joined into paths."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sdsl import _owned
from sdsl.build import check, parameters, pipeline
from sdsl.paths import BASELINE, BUILD, DATA, ROOT

TOY = """---
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

```{code-cell} ipython3
:tags: [parameters]
artifacts_dir = None
value = 1.5
```

```{code-cell} ipython3
import pandas as pd
from sdsl.book.outputs import save_table
save_table(pd.DataFrame({"value": [value]}), "toy", "first", artifacts_dir)
```
"""


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture()
def users(tmp_path):
    """A user's folder holding a file of their own."""
    folder = tmp_path / "precious"
    folder.mkdir()
    (folder / "thesis.txt").write_text("three years of work\n")
    return folder


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    nb = tmp_path / "notebooks"
    nb.mkdir()
    (nb / "toy.md").write_text(TOY)
    (nb / "runs.yml").write_text("runs:\n  toy: {value: 4.0}\n")
    for module in (pipeline, parameters):
        monkeypatch.setattr(module, "NOTEBOOKS", nb)
        monkeypatch.setattr(module, "RUNS_FILE", nb / "runs.yml")
    return tmp_path


def _refused(err: str, folder: Path, *words: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert str(folder) in lines[0] and "holds files these tools did not make" in lines[0], err
    for word in words:
        assert word in lines[0], err


# ---------------------------------------------------------------------------------------------
# the regeneration check


def test_a_refused_set_touches_no_diff_dir_and_is_one_usage_line(users, capsys):
    before = _files(users)
    assert check.main(["plan_draft", "--set", "plan_draft.n_boot=5", "--diff-dir", str(users)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert "n_boot" in err and "got 5" in err and "notebook failed" not in err
    assert _files(users) == before


def test_check_refuses_a_diff_dir_holding_a_users_file(users, capsys):
    before = _files(users)
    assert check.main(["plan_draft", "--diff-dir", str(users)]) == 2
    _refused(capsys.readouterr().err, users, "--diff-dir", "'thesis.txt'")
    assert _files(users) == before


def test_check_refuses_a_keep_folder_holding_a_users_artifacts(tmp_path, capsys):
    keep = tmp_path / "keep"
    (keep / "artifacts").mkdir(parents=True)
    (keep / "artifacts" / "results.csv").write_text("a,b\n1,2\n")
    before = _files(keep)
    for argv in (["plan_draft", "--set", "plan_draft.n_boot=5"], ["plan_draft"]):
        assert check.main([*argv, "--keep", str(keep)]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert _files(keep) == before
    _refused(err, keep, "--keep")


def test_check_accept_refuses_a_baseline_folder_it_did_not_make(users, tmp_path, capsys):
    (users / "chapter_notes").mkdir()
    (users / "chapter_notes" / "draft.csv").write_text("x\n1\n")
    before = _files(users)
    assert check.main(["plan_draft", "--accept", "--baseline", str(users)]) == 2
    _refused(capsys.readouterr().err, users, "--baseline")
    assert _files(users) == before
    # a baseline the tools made (its manifest) with a folder no run made in it: that folder is named
    base = tmp_path / "base"
    shutil.copytree(BASELINE, base)
    (base / "notes").mkdir()
    (base / "notes" / "mine.txt").write_text("keep me\n")
    before = _files(base)
    assert check.main(["--accept", "--baseline", str(base)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(base / "notes") in err and ".provenance.json" in err, err
    assert _files(base) == before


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["plan_draft", "--diff-dir", "{baseline}"],
            "diff folder (--diff-dir) {baseline} is baseline folder (--baseline)",
        ),
        (["plan_draft", "--diff-dir", "{tmp}/x", "--baseline", "{tmp}/x"], "is baseline folder (--baseline)"),
        (["plan_draft", "--diff-dir", "{build}"], "is the tools' build folder"),
        (["plan_draft", "--keep", "{build}"], "work folder (--keep) {build} holds"),
        (["plan_draft", "--keep", "{tmp}/k", "--diff-dir", "{tmp}/k/d"], "lies inside work folder (--keep)"),
        (["plan_draft", "--diff-dir", "{data}/mine"], "lies inside the data folder"),
        (["--accept", "--baseline", "{build}"], "baseline folder (--baseline) {build} holds"),
        (["--accept", "--baseline", "{build}/experiment"], "is the laptop-scale experiment's work"),
    ],
)
def test_check_refuses_a_folder_that_is_holds_or_lies_in_another_before_anything(argv, words, tmp_path, capsys):
    """The baseline given as the diff folder, the build folder as a work or baseline folder: each
    would be cleared or replaced whole, with the committed baseline or the experiment's results in
    it. One line, exit 2, and the baseline's files all still there."""
    names = {"baseline": str(BASELINE), "build": str(BUILD), "data": str(DATA), "tmp": str(tmp_path)}
    before = _files(BASELINE)
    assert check.main([a.format(**names) for a in argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and words.format(**names) in err, err
    assert _files(BASELINE) == before
    assert not (tmp_path / "x").exists() and not (tmp_path / "k").exists()


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--set", "plan_draft.n_boot"], ["has no '='", "CHAPTER.PARAMETER=VALUE"]),
        (["--set", "n_boot=5"], ["does not name CHAPTER.PARAMETER"]),
        (["--set", "nope.x=1"], ["'nope'", "does not run"]),
        (["plan_draft", "--set", "plan_draft.nope=1"], ["'nope'", "plan_draft"]),
        (["--jobs", "0"], ["--jobs", ">= 1", "'0'"]),
        (["--jobs", "two"], ["--jobs", "'two'"]),
        (["--frob"], ["--frob"]),
    ],
)
def test_check_usage_errors_are_one_line_before_anything_is_touched(argv, words, tmp_path, capsys):
    diff = tmp_path / "diff"
    assert check.main([*argv, "--diff-dir", str(diff)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith("python -m sdsl.build.check: error: ")
    for word in words:
        assert word in err, err
    assert not diff.exists()


def test_check_clears_only_a_diff_dir_it_marked(tmp_path):
    diff = tmp_path / "diff"
    _owned.claim(diff, "diff folder")
    _owned.note_written(diff / "acceptance", ["old-diff.png"])  # what compare_figures records before writing
    (diff / "acceptance" / "old-diff.png").write_bytes(b"stale")
    _owned.clear_owned(diff)
    assert sorted(p.name for p in diff.iterdir()) == [_owned.OWNED_MARKER]
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "a.txt").write_text("a")
    with pytest.raises(_owned.OutputError, match="is not a folder these tools made"):
        _owned.clear_owned(tmp_path / "theirs")
    assert (tmp_path / "theirs" / "a.txt").read_text() == "a"


def test_a_file_the_check_did_not_write_in_its_diff_folder_is_refused_and_kept(tmp_path, capsys):
    """The diff folder is the check's (build/check/diff by default), but a file put there that no
    check wrote is the user's: the check names it and stops before anything runs."""
    diff = tmp_path / "diff"
    _owned.claim(diff, "diff folder")
    _owned.note_written(diff / "acceptance", ["figure1-baseline.png"])
    (diff / "acceptance" / "figure1-baseline.png").write_bytes(b"the check's")
    (diff / "acceptance" / "my-notes.txt").write_text("mine\n")
    (diff / "annotated.png").write_bytes(b"mine too")
    before = _files(diff)
    assert check.main(["plan_draft", "--diff-dir", str(diff)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "holds files these tools did not write" in err and "'acceptance/my-notes.txt'" in err, err
    assert "'annotated.png'" in err and "figure1-baseline.png" not in err
    assert _files(diff) == before


def test_a_file_of_the_users_in_a_reused_keep_folders_artifacts_is_refused_and_kept(tmp_path, capsys):
    """A --keep folder a check made, reused: its artifacts/ is cleared before the regeneration, so a
    file in it that no run wrote (beside a chapter or in one) stops the check before anything runs."""
    keep = tmp_path / "keep"
    art = keep / "artifacts"
    _owned.claim(keep, "work folder")
    _owned.claim(art, "artifacts folder")
    (art / "plan_draft").mkdir()
    (art / "plan_draft" / "table.csv").write_text("a\n1\n")
    (art / "plan_draft" / ".provenance.json").write_text('{"files": ["table.csv"]}\n')
    for extra in (art / "plan_draft" / "mine.csv", art / "summary.txt"):
        extra.write_text("the user's\n")
        before = _files(keep)
        assert check.main(["plan_draft", "--keep", str(keep), "--diff-dir", str(tmp_path / "diff")]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "work folder (--keep)" in err, err
        assert repr(extra.relative_to(art).as_posix()) in err, err
        assert _files(keep) == before
        extra.unlink()


def test_a_baseline_that_is_a_file_or_missing_is_refused_before_anything_runs(tmp_path, capsys):
    not_a_folder = tmp_path / "baseline.json"
    not_a_folder.write_text("{}\n")
    diff = tmp_path / "diff"
    for baseline, words in ((not_a_folder, "is a file"), (tmp_path / "nowhere", "does not exist")):
        assert check.main(["plan_draft", "--baseline", str(baseline), "--diff-dir", str(diff)]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "--baseline" in err and words in err, err
    assert not diff.exists() and not (tmp_path / "nowhere").exists()


def test_accept_refuses_a_baseline_chapter_holding_a_file_no_run_wrote(tmp_path, monkeypatch):
    monkeypatch.setattr(check, "machine_info", lambda: {"cpu": "test"})
    new = tmp_path / "new"
    (new / "one").mkdir(parents=True)
    (new / "one" / "t.csv").write_text("value\n1\n")
    (new / "one" / ".provenance.json").write_text('{"files": ["t.csv"]}\n')
    base = tmp_path / "base"
    check.accept(new, base)
    (base / "one" / "notes.md").write_text("mine\n")
    before = _files(base)
    with pytest.raises(_owned.OutputError, match=r"holds files no run wrote \('notes.md'\)"):
        check.accept(new, base)
    assert _files(base) == before


def test_parse_overrides_reads_values_as_yaml_1_2():
    """YAML 1.1 (PyYAML) reads 1e3 as a string and no as False: --set reads what a person typed."""
    got = check.parse_overrides(
        ["a.n=1e3", "a.m=70e9", "a.x=1.5e-3", "a.y=-2E+2", "a.p=no", "a.q=yes", "a.t=true", "a.f=False", "a.s=opt-13b"]
    )
    assert got == {
        "a": {"n": 1000, "m": 70_000_000_000, "x": 1.5e-3, "y": -200, "p": "no", "q": "yes", "t": True, "f": False,
              "s": "opt-13b"}
    }  # fmt: skip
    assert type(got["a"]["n"]) is int and type(got["a"]["x"]) is float


@pytest.fixture()
def damaged(tmp_path, monkeypatch):
    """A copy of the baseline, and the check's record redirected into ``tmp_path``."""
    base = tmp_path / "base"
    shutil.copytree(BASELINE, base)
    monkeypatch.setattr(check, "BUILD", tmp_path / "build")
    record = tmp_path / "build" / "check" / "last.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"ok": true, "summary": "stale"}\n')
    return base, record


@pytest.mark.parametrize(
    "damage, expected",
    [
        (
            lambda b: (b / "acceptance/figure1.png").write_bytes(
                (BASELINE / "acceptance/figure1.png").read_bytes()[:600]
            ),
            ["acceptance/figure1.png", "damaged"],
        ),
        (
            lambda b: (b / "acceptance/table1.csv").write_bytes(b"a,b\n\xff\xfe,1\n"),
            ["acceptance/table1.csv", "not UTF-8"],
        ),
        (  # the SVG of a figure whose PNG still reads: its bytes are not those the manifest records
            lambda b: (b / "acceptance/figure1.svg").write_bytes(
                (BASELINE / "acceptance/figure1.svg").read_bytes()[:900]
            ),
            ["acceptance/figure1.svg", "sha256 differs"],
        ),
        (
            lambda b: (b / "acceptance/table1.csv").write_bytes(
                (BASELINE / "acceptance/table1.csv").read_bytes().replace(b",", b"\x00", 1)
            ),
            ["acceptance/table1.csv", "sha256 differs"],
        ),
        (
            lambda b: (b / "acceptance/.provenance.json").write_text('{"chapter": "accep'),
            ["acceptance/.provenance.json", "not a JSON object"],
        ),
        (lambda b: (b / "manifest.json").write_text('{"files": '), ["manifest.json", "line 1, column 11"]),
        (lambda b: (b / "manifest.json").write_text("[]"), ["manifest.json", "not a manifest"]),
    ],
    ids=[
        "truncated-png",
        "non-utf8-csv",
        "truncated-svg",
        "nul-in-csv",
        "truncated-provenance",
        "manifest-not-json",
        "manifest-not-a-manifest",
    ],
)
def test_a_damaged_baseline_is_one_line_exit_2_and_recorded(damaged, damage, expected, tmp_path, capsys):
    base, record = damaged
    damage(base)
    diff = tmp_path / "diff"
    assert check.main(["acceptance", "--baseline", str(base), "--diff-dir", str(diff)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for word in expected:
        assert word in err, err
    import json

    rec = json.loads(record.read_text())
    assert rec["exit_code"] == 2 and rec["ok"] is False and expected[0] in rec["summary"]
    assert not diff.exists()  # refused before anything was written


def test_a_damaged_regenerated_file_is_named_not_compared(tmp_path):
    from sdsl.build.compare import DamagedArtifact, compare_trees

    new = tmp_path / "new"
    shutil.copytree(BASELINE / "acceptance", new / "acceptance")
    png = new / "acceptance" / "figure1.png"
    png.write_bytes(png.read_bytes()[:600])
    with pytest.raises(DamagedArtifact, match=r"regenerated artifact .*acceptance/figure1.png is damaged"):
        compare_trees(BASELINE, new, tmp_path / "diff", chapters=["acceptance"])


# ---------------------------------------------------------------------------------------------
# the pipeline and execute_notebook


@pytest.mark.parametrize("which", ["output_dir", "artifacts"])
def test_pipeline_run_refuses_a_users_folder(toy, users, which):
    before = _files(users)
    folders = {"output_dir": toy / "executed", "artifacts": toy / "artifacts", which: users}
    with pytest.raises(_owned.OutputError) as err:
        pipeline.run(jobs=1, **folders)
    _refused(str(err.value), users, "'thesis.txt'")
    assert _files(users) == before
    assert not any(p.exists() for k, p in folders.items() if k != which)  # nothing else was made


@pytest.mark.parametrize("which", ["output_dir", "artifacts"])
def test_execute_notebook_refuses_a_users_folder(toy, users, which):
    before = _files(users)
    folders = {"output_dir": toy / "executed", "artifacts": toy / "artifacts", which: users}
    with pytest.raises(_owned.OutputError) as err:
        pipeline.execute_notebook("toy", {}, **folders)
    _refused(str(err.value), users)
    assert _files(users) == before


def test_a_folder_made_by_the_tools_is_marked_and_taken_again(toy):
    out, art = toy / "executed", toy / "artifacts"
    pipeline.run(output_dir=out, artifacts=art, jobs=1)
    assert (out / _owned.OWNED_MARKER).is_file() and (art / _owned.OWNED_MARKER).is_file()
    [again] = pipeline.run(output_dir=out, artifacts=art, jobs=1, force=True)
    assert not again.skipped and (art / "toy" / "first.csv").read_text().splitlines() == ["value", "4"]


def test_a_chapter_is_a_name_never_a_path(toy, tmp_path):
    outside = tmp_path / "README.md"  # beside the notebooks folder: '../README' from inside it
    outside.write_text("# Not a chapter\n")
    for name in ("../README", "toy/../toy", "/etc/passwd", ".toy"):
        with pytest.raises(parameters.ParameterError, match="unknown chapter"):
            parameters.check_notebook_parameters(name, {}, notebooks=toy / "notebooks")
        with pytest.raises(parameters.ParameterError, match="unknown chapter"):
            pipeline.execute_notebook(name, {}, tmp_path / "e", tmp_path / "a")
    assert not (tmp_path / "README.ipynb").exists() and not (tmp_path / "e").exists()
    with pytest.raises(parameters.ParameterError, match="a chapter's name"):
        parameters.check_notebook_parameters(5, {})
    (toy / "notebooks" / "runs.yml").write_text("runs:\n  ../README: {}\n")
    with pytest.raises(ValueError, match="is not a plain name"):
        parameters.load_runs(toy / "notebooks" / "runs.yml")


# ---------------------------------------------------------------------------------------------
# the experiment and the wheel check


def test_experiment_refuses_an_out_folder_holding_a_users_file(users, capsys):
    from sdsl.experiment.__main__ import main

    before = _files(users)
    assert main(["run", "--scale", "smoke", "--out", str(users), "--no-progress"]) == 2
    err = capsys.readouterr().err
    _refused(err, users, "--out")
    assert _files(users) == before


def test_wheel_check_removes_only_its_own_work_folder(users, tmp_path):
    fake = tmp_path / "python"  # runs, but cannot make a virtual environment: the check stops early
    fake.write_text('#!/bin/sh\n[ "$1" = "-c" ] && exit 0\necho "no venv here" >&2\nexit 1\n')
    fake.chmod(0o755)
    before = _files(users)
    env = {**os.environ, "TMPDIR": str(users)}
    res = subprocess.run(
        ["bash", str(ROOT / "tools" / "wheel_check.sh"), str(fake)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode != 0
    assert _files(users) == before and sorted(p.name for p in users.iterdir()) == ["thesis.txt"]
    kept = subprocess.run(
        ["bash", str(ROOT / "tools" / "wheel_check.sh"), str(fake)],
        env={**env, "KEEP": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    [work] = [p for p in users.iterdir() if p.name.startswith("sdsl-wheel-check.")]
    assert (work / _owned.OWNED_MARKER).is_file() and f"kept {work}" in kept.stdout
    bad = subprocess.run(
        ["bash", str(ROOT / "tools" / "wheel_check.sh"), str(tmp_path / "nope")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "cannot be run" in bad.stderr
    missing = subprocess.run(
        ["bash", str(ROOT / "tools" / "wheel_check.sh"), str(fake)],
        env={**env, "TMPDIR": str(tmp_path / "gone")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        missing.returncode == 2 and "cannot make a work folder" in missing.stderr and not (tmp_path / "gone").exists()
    )


def test_a_full_disk_under_the_check_is_one_line_naming_the_disk_and_the_copy_cut_short_is_the_checks(
    tmp_path, capsys, monkeypatch
):
    """`check plan_draft --keep DIR` on a full disk: one line naming the disk (it was 17 lines of
    shutil.Error, exit 1); the check run again in that folder takes what the cut-short copy left
    as its own (recorded before copying), not as the user's."""
    import errno

    keep, diff = tmp_path / "keep", tmp_path / "diff"
    real = shutil.copytree
    copies = []

    def full(src, dst, *args, **kwargs):
        copies.append(dst)
        if len(copies) == 2:  # the second chapter copied from the baseline: the disk is full halfway
            real(src, dst, *args, **kwargs)
            first = sorted(Path(dst).rglob("*.csv"))[0]
            first.unlink()
            reason = f"[Errno {errno.ENOSPC}] No space left on device: '{src}' -> '{first}'"
            raise shutil.Error([(str(src), str(first), reason)])
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(check.shutil, "copytree", full)
    assert check.main(["plan_draft", "--keep", str(keep), "--diff-dir", str(diff)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "No space left on device" in err and str(keep) in err and "free space" in err, err
    assert check._foreign_in_tree(keep / "artifacts") == []  # the copy cut short is the check's own
