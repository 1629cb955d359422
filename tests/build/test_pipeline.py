"""The executor: parameters from one file, papermill, atomic artifacts, failures with tracebacks."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from sdsl import _owned
from sdsl.build import manifest, parameters, pipeline, staging
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


def toy_notebook(code: str, parameters: str = "") -> str:
    """A MyST notebook of two cells: the parameters (``artifacts_dir`` and ``parameters``) and ``code``."""
    cells = f"```{{code-cell}} ipython3\n:tags: [parameters]\nartifacts_dir = None\n{parameters}```\n\n"
    return HEADER + "\n" + cells + f"```{{code-cell}} ipython3\n{code}```\n"


TOY = toy_notebook(
    """\
import pandas as pd
from sdsl.book.outputs import save_table
save_table(pd.DataFrame({"value": [value]}), "toy", "first", artifacts_dir)
if fail:
    raise RuntimeError("the toy notebook was told to fail")
save_table(pd.DataFrame({"value": [2 * value]}), "toy", "second", artifacts_dir)
""",
    "value = 1.5\nfail = False\n",
)


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    nb_dir = tmp_path / "notebooks"
    nb_dir.mkdir()
    (nb_dir / "toy.md").write_text(TOY)
    runs_file = nb_dir / "runs.yml"
    runs_file.write_text("runs:\n  toy: {value: 4.0}\n")
    monkeypatch.setattr(pipeline, "NOTEBOOKS", nb_dir)
    monkeypatch.setattr(pipeline, "RUNS_FILE", runs_file)
    monkeypatch.setattr(parameters, "NOTEBOOKS", nb_dir)
    monkeypatch.setattr(parameters, "RUNS_FILE", runs_file)
    return tmp_path


def test_runs_file_lists_existing_notebooks_in_book_order():
    chapters = parameters.load_runs(RUNS_FILE)
    assert list(chapters)[0] == "acceptance"
    for chapter in chapters:
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


def test_a_run_with_nothing_changed_checks_and_probes_nothing(toy, monkeypatch):
    out, art = toy / "executed", toy / "artifacts"
    pipeline.run(output_dir=out, artifacts=art, jobs=1)
    recorded = manifest.read_manifest(art)["machine"]

    def refuse(*args, **kwargs):
        raise AssertionError("an up-to-date chapter was checked or its machine probed again")

    # its stamp says its parameters passed their check with these very inputs
    monkeypatch.setattr(pipeline, "check_notebook_parameters", refuse)
    monkeypatch.setattr(pipeline, "_start_machine_probe", refuse)
    monkeypatch.setattr(pipeline, "machine_info", refuse)
    [again] = pipeline.run(output_dir=out, artifacts=art, jobs=1)
    assert again.skipped
    assert manifest.read_manifest(art)["machine"] == recorded  # the machine that made the artifacts
    # a changed parameter is checked before anything runs
    (toy / "notebooks" / "runs.yml").write_text("runs:\n  toy: {value: 5.0}\n")
    with pytest.raises(AssertionError, match="checked or its machine probed"):
        pipeline.run(output_dir=out, artifacts=art, jobs=1)
    assert (art / "toy" / "second.csv").read_text().splitlines() == ["value", "8"]


def test_a_chapter_run_with_its_defaults_is_checked_by_its_notebook_alone(toy, monkeypatch):
    # the notebook's own check cell (tests/unit/test_bad_inputs_notebooks.py) checks its defaults;
    # importing every chapter to check them again before any notebook starts cost seconds
    def refuse(*args, **kwargs):
        raise AssertionError("a chapter run with its defaults was checked before it ran")

    monkeypatch.setattr(pipeline, "check_notebook_parameters", refuse)
    (toy / "notebooks" / "runs.yml").write_text("runs:\n  toy: {}\n")
    [result] = pipeline.run(output_dir=toy / "executed", artifacts=toy / "artifacts", jobs=1, force=True)
    assert not result.skipped
    assert (toy / "artifacts" / "toy" / "first.csv").read_text().splitlines() == ["value", "1.5"]


THREADS = toy_notebook(
    """\
import os
import pandas as pd
from sdsl.book.outputs import save_table
names = ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"]
save_table(pd.DataFrame({"name": names, "value": [os.environ.get(n) for n in names]}), "threads", "env", artifacts_dir)
""",
)


@pytest.mark.parametrize(
    "caller, seen",
    [({}, {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}),
     ({"OPENBLAS_NUM_THREADS": "2"}, {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "1"})],
)  # fmt: skip
def test_a_kernel_s_numerical_libraries_get_one_thread_unless_the_caller_sized_them(toy, monkeypatch, caller, seen):
    (toy / "notebooks" / "threads.md").write_text(THREADS)
    for name in pipeline.KERNEL_THREADS:
        monkeypatch.delenv(name, raising=False)
    for name, value in caller.items():
        monkeypatch.setenv(name, value)
    pipeline.execute_notebook("threads", {}, toy / "executed", toy / "artifacts")
    rows = (toy / "artifacts" / "threads" / "env.csv").read_text().splitlines()[1:]
    assert dict(row.split(",") for row in rows) == seen
    # the caller's own environment is as it was
    assert {n: v for n in pipeline.KERNEL_THREADS if (v := os.environ.get(n)) is not None} == caller


def test_the_kernel_sockets_lie_in_the_run_s_staging_folder(tmp_path):
    from sdsl.build import staging

    with staging.kernel_manager(tmp_path) as manager:
        km = manager(kernel_name="python3")
        assert km.transport == "ipc"
        assert Path(km.connection_file).parent == tmp_path and Path(km.ip).parent == tmp_path
    deep = tmp_path / ("d" * 120)
    deep.mkdir()
    with staging.kernel_manager(deep) as manager:  # too deep for a socket path: a short folder of its own
        km = manager(kernel_name="python3")
        short = Path(km.ip).parent
        assert short.is_dir() and short.name.startswith("sdsl-kernel-") and len(km.ip) < 100
    assert not short.exists()


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
        parameters.load_runs(bad)


def test_inputs_digest_changes_with_parameters():
    a = pipeline.inputs_digest("acceptance", {})
    b = pipeline.inputs_digest("acceptance", {"x": 1})
    assert a != b and len(a) == 64


# ---------------------------------------------------------------------------------------------
# faults leave nothing half-done

import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402
import time  # noqa: E402

import psutil  # noqa: E402

SLOW = toy_notebook(
    """\
import time
import pandas as pd
from sdsl.book.outputs import save_table
save_table(pd.DataFrame({"value": [1]}), "toy", "first", artifacts_dir)
time.sleep(600)
""",
)


def test_manifest_pairs_artifacts_with_the_notebook_that_made_them(toy):
    out, art = toy / "executed", toy / "artifacts"
    pipeline.run(output_dir=out, artifacts=art, jobs=1)
    made_by = manifest.read_manifest(art)["chapters"]["toy"]["notebook_sha256"]
    nb = toy / "notebooks" / "toy.md"
    assert made_by == manifest.sha256(nb)
    # a new version of the notebook that fails: the old artifacts stay, with the old notebook's hash
    nb.write_text(TOY.replace("value = 1.5", "value = 1.5\nraise RuntimeError('new version fails')"))
    with pytest.raises(pipeline.NotebookError, match="new version fails"):
        pipeline.run(output_dir=out, artifacts=art, jobs=1)
    assert manifest.read_manifest(art)["chapters"]["toy"]["notebook_sha256"] == made_by != manifest.sha256(nb)


def test_read_only_artifacts_folder_is_one_line_and_publishes_nothing(toy):
    if os.geteuid() == 0:
        # root ignores permission bits: make the folder unwritable by replacing it with a file
        art = toy / "artifacts"
        art.write_text("not a folder")
    else:
        art = toy / "artifacts"
        art.mkdir()
        art.chmod(0o500)
    try:
        with pytest.raises(_owned.OutputError) as err:
            pipeline.run(output_dir=toy / "executed", artifacts=art, jobs=1)
    finally:
        if art.is_dir():
            art.chmod(0o700)
    msg = str(err.value)
    assert "\n" not in msg and str(art) in msg and "not writable" in msg
    assert not (toy / "executed" / "toy.ipynb").exists()


def _staged(art):
    """The slow notebook's first table, written into its staging folder (the kernel is in the slow cell)."""
    return [p for p in art.glob(".staging-toy-*/artifacts/toy/first.csv")]


def test_sigterm_during_a_run_kills_the_kernel_says_one_line_and_keeps_the_old_artifacts(toy):
    out, art = toy / "executed", toy / "artifacts"
    pipeline.run(output_dir=out, artifacts=art, jobs=1)
    before = sorted(p.name for p in (art / "toy").iterdir())
    notebook_before = (out / "toy.ipynb").read_bytes()
    (toy / "notebooks" / "toy.md").write_text(SLOW)
    (toy / "notebooks" / "runs.yml").write_text("runs:\n  toy: {}\n")
    script = textwrap.dedent(f"""
        import functools, sys
        from pathlib import Path
        from sdsl.build import parameters, pipeline
        nb = Path({str(toy / "notebooks")!r})
        pipeline.NOTEBOOKS = parameters.NOTEBOOKS = nb
        pipeline.RUNS_FILE = parameters.RUNS_FILE = nb / "runs.yml"
        pipeline.run = functools.partial(pipeline.run, output_dir=Path({str(out)!r}), artifacts=Path({str(art)!r}))
        sys.exit(pipeline.main(["run", "--force", "--jobs", "1"]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not _staged(art) and proc.poll() is None:
        time.sleep(0.2)
    assert _staged(art), "the slow notebook never reached its slow cell"

    def cmdline(p: psutil.Process) -> str:
        try:
            return " ".join(p.cmdline())
        except psutil.Error:  # a short-lived child already gone or a zombie: not the kernel
            return ""

    kernels = [p for p in psutil.Process(proc.pid).children(recursive=True) if "ipykernel" in cmdline(p)]
    assert kernels, "no kernel process found under the run"
    proc.send_signal(signal.SIGTERM)
    # the cell sleeps 600 s: a run that waited for it would still be running at this timeout
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, err
    # nothing else: the kernel talks over Unix sockets, so it has no unencrypted TCP to warn about
    assert err.strip().splitlines() == [
        "python -m sdsl.build.pipeline: interrupted by SIGTERM: nothing of the unfinished notebooks was "
        "published; every chapter keeps its previous artifacts"
    ], err
    assert not [k for k in kernels if k.is_running() and k.status() != psutil.STATUS_ZOMBIE]  # the kernel is gone
    assert not [p.name for p in art.iterdir() if p.name.startswith(".staging-")]  # no staging folder left
    assert sorted(p.name for p in (art / "toy").iterdir()) == before
    assert (out / "toy.ipynb").read_bytes() == notebook_before


def test_stale_staging_folders_of_killed_runs_are_removed(tmp_path):
    from sdsl.build import publish

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    stale = tmp_path / f".staging-toy-{dead}-abc123"
    (stale / "artifacts").mkdir(parents=True)
    (stale / publish.STAGING_MARKER).write_text("")
    live = tmp_path / f".staging-toy-{os.getpid()}-def456"
    live.mkdir()
    (live / publish.STAGING_MARKER).write_text("")
    assert staging.clean_stale(tmp_path) == [stale]
    assert not stale.exists() and live.exists()


TOY_BOOK = {
    "_config.yml": "title: Toy\nauthor: test\nexecute:\n  execute_notebooks: 'off'\n",
    "_toc.yml": "format: jb-book\nroot: intro\n",
    "intro.md": "# Toy\n\nA page.\n",
}


@pytest.fixture()
def toy_book(tmp_path):
    book = tmp_path / "book"
    book.mkdir()
    for name, text in TOY_BOOK.items():
        (book / name).write_text(text)
    return book


def test_what_the_build_writes_into_book_does_not_make_the_next_build_run(toy_book):
    # the local extensions' bytecode and the landing page's thumbnails appear during a build: the
    # build after it, with no source changed, must be skipped; a changed source is not
    before = pipeline._book_digest(None, toy_book)
    (toy_book / "_ext" / "__pycache__").mkdir(parents=True)
    (toy_book / "_ext" / "__pycache__" / "ext.cpython-311.pyc").write_bytes(b"\0")
    (toy_book / "_thumbnails").mkdir(parents=True)
    (toy_book / "_thumbnails" / "fig.png").write_bytes(b"\0")
    assert pipeline._book_digest(None, toy_book) == before
    (toy_book / "intro.md").write_text("# Toy\n\nAnother page.\n")
    assert pipeline._book_digest(None, toy_book) != before


def test_book_is_swapped_in_only_when_the_build_succeeds(toy_book):
    index = pipeline.build_book(book=toy_book)
    assert index.is_file()
    first = index.read_text()
    # a broken reference is a Sphinx warning, an error here: the previous book stays whole
    (toy_book / "intro.md").write_text("# Toy\n\nSee {ref}`nowhere`.\n")
    with pytest.raises(RuntimeError, match="the previous book is kept") as err:
        pipeline.build_book(book=toy_book)
    assert "nowhere" in str(err.value)  # Sphinx's own output, shown because the build failed
    assert index.read_text() == first
    assert not [p.name for p in (toy_book / "_build").iterdir() if p.name.startswith(".staging-")]


def test_sigterm_during_the_book_build_keeps_the_previous_book(toy_book):
    index = pipeline.build_book(book=toy_book)
    before = sorted(p.relative_to(index.parent) for p in index.parent.rglob("*"))
    (toy_book / "intro.md").write_text("# Toy\n\nA changed page.\n")
    script = f"from sdsl.build import pipeline; pipeline.build_book(book={str(toy_book)!r})"
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 60
    build = toy_book / "_build"
    while time.time() < deadline and not any(p.name.startswith(".staging-") for p in build.iterdir()):
        time.sleep(0.05)
    time.sleep(1.0)
    assert proc.poll() is None, "the build finished before it could be interrupted"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    assert proc.returncode != 0
    assert sorted(p.relative_to(index.parent) for p in index.parent.rglob("*")) == before
    assert "A page." in (index.parent / "intro.html").read_text()
    assert not [p.name for p in build.iterdir() if p.name.startswith(".staging-")]


@pytest.mark.parametrize("k", [2, 3, 4])  # the artifacts swapped, the notebook swapped, the commit
def test_a_failure_while_publishing_keeps_the_previous_chapter_whole(k, toy, monkeypatch):
    import errno

    from sdsl.build import publish

    out, art = toy / "executed", toy / "artifacts"
    pipeline.run(output_dir=out, artifacts=art, jobs=1)
    before = {p.name: p.read_bytes() for p in (art / "toy").iterdir()}
    notebook = (out / "toy.ipynb").read_bytes()
    calls = []

    def do(step, fn, *args):
        calls.append(step)
        if len(calls) == k:
            raise OSError(errno.EXDEV, "Invalid cross-device link", str(args[0]))
        return fn(*args)

    monkeypatch.setattr(publish, "_do", do)
    with pytest.raises(_owned.OutputError, match="Invalid cross-device link.*put back whole") as err:
        pipeline.execute_notebook("toy", {"value": 7.0}, out, art)
    assert "\n" not in str(err.value)
    assert {p.name: p.read_bytes() for p in (art / "toy").iterdir()} == before
    assert (out / "toy.ipynb").read_bytes() == notebook
    hidden = [p.name for d in (art, out) for p in d.iterdir() if p.name.startswith(".") and p.is_dir()]
    assert not hidden and not [p.name for p in out.iterdir() if p.name.startswith(".staging-")]


def test_sigterm_between_the_publishing_steps_publishes_the_whole_chapter_first(toy, monkeypatch):
    from sdsl.build import publish, staging

    out, art = toy / "executed", toy / "artifacts"
    pipeline.run(output_dir=out, artifacts=art, jobs=1)
    calls = []

    def do(step, fn, *args):
        calls.append(step)
        if len(calls) == 3:  # the new artifacts are in, the new notebook not yet
            os.kill(os.getpid(), signal.SIGTERM)
        return fn(*args)

    monkeypatch.setattr(publish, "_do", do)
    with pytest.raises(staging.Interrupted):
        pipeline.execute_notebook("toy", {"value": 7.0}, out, art)
    assert (art / "toy" / "second.csv").read_text().splitlines() == ["value", "14"]
    assert "7.0" in (out / "toy.ipynb").read_text()
    assert not [p.name for d in (art, out) for p in d.iterdir() if p.name.startswith((".staging-", ".replaced-"))]


KILLED_RUN = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from sdsl.build import parameters, pipeline, publish
    nb, out, art, k = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])
    pipeline.NOTEBOOKS = parameters.NOTEBOOKS = nb
    pipeline.RUNS_FILE = parameters.RUNS_FILE = nb / "runs.yml"
    calls = []
    real = publish._do
    def do(step, fn, *args):
        calls.append(step)
        print(step, flush=True)
        if len(calls) == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(step, fn, *args)
    publish._do = do
    pipeline.execute_notebook("toy", {"value": 7.0}, out, art)
""")

#: The steps of publishing a chapter (sdsl.build.publish): the journal, the artifacts and the
#: executed notebook exchanged, the commit, the old versions removed, the journal removed.
CHAPTER_STEPS = ["journal", "exchange", "exchange", "commit", "remove", "remove", "done"]


def _chapter(out: Path, art: Path) -> tuple[str, str]:
    """What a reader sees of the toy chapter: its second table and the value in its notebook."""
    second = (art / "toy" / "second.csv").read_text().splitlines()[1]
    value = re.findall(r"value = (\d+\.\d+)", (out / "toy.ipynb").read_text())[-1]  # the injected parameter
    return second, value


@pytest.mark.slow
@pytest.mark.parametrize("k", range(1, len(CHAPTER_STEPS) + 1))
def test_sigkill_at_every_step_of_publishing_leaves_the_old_or_the_new_chapter_to_every_reader(k, toy):
    """A chapter published by execute_notebook, killed with SIGKILL before step ``k``: the executed
    notebook and the artifacts folder are both there at once (the old or the new version of each:
    they are exchanged atomically), and a reader (the next run, the book build, the check: each
    cleans the artifacts root first) finds the old chapter whole before the commit, the new one
    after, and nothing left behind."""
    out, art = toy / "executed", toy / "artifacts"
    pipeline.run(output_dir=out, artifacts=art, jobs=1)
    assert _chapter(out, art) == ("8", "4.0")
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_RUN, str(toy / "notebooks"), str(out), str(art), str(k)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert proc.stdout.split() == CHAPTER_STEPS[:k]
    assert (art / "toy").is_dir() and (out / "toy.ipynb").is_file()  # never missing, whatever the instant
    staging.clean_stale(art)  # what every reader does first
    committed = k > CHAPTER_STEPS.index("commit") + 1
    assert _chapter(out, art) == (("14", "7.0") if committed else ("8", "4.0")), k
    left = [p.name for d in (art, out) for p in d.iterdir() if p.name.startswith((".staging-", ".replaced-"))]
    assert left == []


def test_a_reader_mends_a_killed_publication_before_it_reads(toy, monkeypatch):
    """The book build reads the artifacts of a killed run only after undoing its half-done
    publication (not only the next run does)."""
    out, art = toy / "executed", toy / "artifacts"
    pipeline.run(output_dir=out, artifacts=art, jobs=1)
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_RUN, str(toy / "notebooks"), str(out), str(art), "3"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == -signal.SIGKILL
    assert _chapter(out, art) == ("14", "4.0")  # on disk: the new artifacts beside the old notebook
    monkeypatch.setattr(pipeline, "artifacts_root", lambda: art)
    copied = []
    monkeypatch.setattr(pipeline, "_copy_artifacts", lambda book: copied.append(_chapter(out, art)))
    monkeypatch.setattr(pipeline, "_book_digest", lambda *a: (_ for _ in ()).throw(RuntimeError("stop")))
    with pytest.raises(RuntimeError, match="stop"):
        pipeline.build_book()
    assert copied == [("8", "4.0")]  # the old chapter, whole, when the book read it


def test_a_file_of_the_users_in_a_chapter_s_artifacts_folder_is_refused_before_anything_runs(toy):
    out, art = toy / "executed", toy / "artifacts"
    pipeline.run(output_dir=out, artifacts=art, jobs=1)
    (art / "toy" / "notes.txt").write_text("mine\n")
    (art / "toy" / ".hidden").write_text("mine too\n")
    before = {p.name: p.read_bytes() for p in (art / "toy").iterdir()}
    for call in (
        lambda: pipeline.run(output_dir=out, artifacts=art, jobs=1, force=True),
        lambda: pipeline.execute_notebook("toy", {"value": 7.0}, out, art),
    ):
        with pytest.raises(_owned.OutputError) as err:
            call()
        msg = str(err.value)
        assert "\n" not in msg and "'notes.txt'" in msg and "'.hidden'" in msg and "no run wrote" in msg
        assert {p.name: p.read_bytes() for p in (art / "toy").iterdir()} == before
    (art / "toy" / "notes.txt").unlink()
    (art / "toy" / ".hidden").unlink()
    [again] = pipeline.run(output_dir=out, artifacts=art, jobs=1, force=True)
    assert not again.skipped


def test_numpy_parameters_reach_the_kernel_as_plain_python(toy):
    import numpy as np

    out, art = toy / "executed", toy / "artifacts"
    # papermill writes the parameters as JSON, which has neither numpy.int64 nor numpy.bool_
    pipeline.execute_notebook("toy", {"value": np.int64(3), "fail": np.bool_(False)}, out, art)
    assert (art / "toy" / "second.csv").read_text().splitlines() == ["value", "6"]
    rec = manifest.read_provenance(art / "toy")
    assert rec["parameters"] == {"value": 3, "fail": False}
    assert parameters.plain_parameters({"n_boot": np.int64(200), "b": np.array([1, 8]), "t": (np.int32(1),)}) == {
        "n_boot": 200,
        "b": [1, 8],
        "t": (1,),
    }
    assert type(parameters.plain_parameters({"n": np.int64(200)})["n"]) is int


def test_a_full_disk_names_the_disk_not_the_notebook(toy, monkeypatch):
    import errno

    import nbformat

    out, art = toy / "executed", toy / "artifacts"

    real = nbformat.write

    def full(nb, path, *args, **kwargs):  # the disk of the artifacts folder is full, not /tmp
        if str(path).startswith(str(art)):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(nb, path, *args, **kwargs)

    monkeypatch.setattr(nbformat, "write", full)
    with pytest.raises(_owned.OutputError) as err:
        pipeline.execute_notebook("toy", {}, out, art)
    msg = str(err.value)
    assert "\n" not in msg and "No space left on device" in msg and "could not be read" not in msg
    assert str(art) in msg and "free space" in msg
    assert not [p for p in art.iterdir() if p.name.startswith(".staging-")]


def test_a_chapter_named_twice_is_refused(toy):
    with pytest.raises(ValueError, match="chapter 'toy' is named twice"):
        pipeline.run(["toy", "toy"], output_dir=toy / "e", artifacts=toy / "a")
    assert not (toy / "e").exists()


def test_papermill_reads_every_parameter_of_every_chapter():
    """papermill's parser skips a line it cannot parse (a comment holding '=', for instance), and the
    parameter is then missing from the rerun command and the check: every assignment of a
    parameters cell must come back from papermill, in order."""
    import re

    import jupytext

    from sdsl.build.parameters import chapters, notebook_parameters
    from sdsl.paths import NOTEBOOKS

    for chapter in chapters():
        nb = jupytext.read(NOTEBOOKS / f"{chapter}.md")
        (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        names = [m.group(1) for m in re.finditer(r"^(\w+)\s*=", cell.source, re.M)]
        assert list(notebook_parameters(chapter)) == names, chapter
