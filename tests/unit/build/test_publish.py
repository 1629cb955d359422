"""Publishing leaves the old or the new state whole, whatever stops it and wherever: a failure at
any step (a cross-device link among them) puts the old state back, a SIGKILL at any step leaves
every destination in place (old or new, where the system exchanges two paths atomically) and is
undone (or finished, once committed) by whoever reads next, a kill of that recovery is recovered
again, and SIGTERM waits until the swap is whole. Each test runs with the atomic exchange and
without it (two renames per folder, a hard link and a replace per file)."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sdsl import _owned
from sdsl.build import check, publish, staging

OLD = {"art/toy/a.csv": "old a\n", "art/toy/b.csv": "old b\n", "out/toy.ipynb": "old notebook\n"}
NEW = {"art/toy/a.csv": "new a\n", "art/toy/c.csv": "new c\n", "out/toy.ipynb": "new notebook\n"}
DESTS = ("art/toy", "out/toy.ipynb")


def _state(root: Path) -> dict[str, str]:
    """Every file under ``root``, hidden ones (staging, asides, journals) included, except markers."""
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in (_owned.OWNED_MARKER, publish.STAGING_MARKER)
    }


def _visible(root: Path) -> dict[str, str]:
    """What a reader of the published tree sees: the files of the destinations."""
    return {k: v for k, v in _state(root).items() if k.startswith(("art/toy/", "out/toy.ipynb"))}


def _prepare(root: Path) -> tuple[list[tuple[Path, Path]], Path]:
    """The old state under ``root`` and a staged new one, as execute_notebook stages it (a staging
    folder in the artifacts root, the new notebook beside the old one); returns the items and the
    staging folder, which the caller removes (publish.discard)."""
    for rel, text in OLD.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    tmp = publish.make_staging(root / "art", "toy")
    new_art = tmp / "artifacts" / "toy"
    new_art.mkdir(parents=True)
    for rel, text in NEW.items():
        if rel.startswith("art/toy/"):
            (new_art / rel.removeprefix("art/toy/")).write_text(text)
    new_nb = publish.stage_beside(tmp, root / "out" / "toy.ipynb")
    new_nb.write_text(NEW["out/toy.ipynb"])
    return [(new_art, root / "art" / "toy"), (new_nb, root / "out" / "toy.ipynb")], tmp


def _steps(exchange: bool, tmp_path: Path) -> list[str]:
    """The steps of one publication of the two destinations, in order."""
    root = tmp_path / "count"
    items, tmp = _prepare(root)
    seen: list[str] = []
    real, before = publish._do, publish.EXCHANGE
    publish.EXCHANGE = exchange
    publish._do = lambda step, fn, *a: (seen.append(step), real(step, fn, *a))[1]
    try:
        publish.publish(items, tmp)
    finally:
        publish._do = real
        publish.EXCHANGE = before
        publish.discard(tmp)
    return seen


@pytest.fixture(params=[True, False], ids=["exchange", "renames"])
def exchange(request, monkeypatch):
    monkeypatch.setattr(publish, "EXCHANGE", request.param)
    return request.param


def test_the_steps_are_those_the_module_notes_list(tmp_path):
    assert _steps(True, tmp_path) == ["journal", "exchange", "exchange", "commit", "remove", "remove", "done"]
    assert _steps(False, tmp_path / "r") == [
        "journal", "exchange", "aside", "in", "exchange", "link", "in", "commit", "remove", "remove", "done"
    ]  # fmt: skip


@pytest.mark.parametrize("k", range(1, 9))
def test_a_failed_step_before_the_commit_puts_the_old_state_back_whole(k, exchange, tmp_path, monkeypatch):
    steps = _steps(exchange, tmp_path)
    before_commit = steps.index("commit") + 1
    if k > before_commit:
        pytest.skip(f"{len(steps)} steps, the commit at {before_commit}")
    items, tmp = _prepare(tmp_path / "run")
    calls = []

    def do(step, fn, *args):
        calls.append(step)
        if len(calls) == k:
            raise OSError(errno.EXDEV, "Invalid cross-device link", str(items[0][1]))
        return fn(*args)

    monkeypatch.setattr(publish, "_do", do)
    with pytest.raises(_owned.OutputError) as err:
        publish.publish(items, tmp)
    msg = str(err.value)
    assert "\n" not in msg and "Invalid cross-device link" in msg and "put back whole" in msg
    assert _visible(tmp_path / "run") == OLD
    assert not [p for p in _state(tmp_path / "run") if ".replaced-" in p or publish.JOURNAL in p]
    publish.discard(tmp)
    assert _state(tmp_path / "run") == OLD  # the staged versions went with the staging folder


def test_without_a_fault_the_new_state_is_whole_and_nothing_is_left(exchange, tmp_path):
    items, tmp = _prepare(tmp_path)
    publish.publish(items, tmp)
    publish.discard(tmp)
    assert _state(tmp_path) == NEW


KILLED = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from test_publish import _prepare
    from sdsl.build import publish
    root, k, exchange = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
    publish.EXCHANGE = exchange
    items, tmp = _prepare(root)
    calls = []
    real = publish._do
    def do(step, fn, *args):
        calls.append(step)
        if len(calls) == k:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(step, fn, *args)
    publish._do = do
    publish.publish(items, tmp)
""")


def _kill_at(root: Path, k: int, exchange: bool) -> subprocess.CompletedProcess:
    script = KILLED.format(tests=str(Path(__file__).parent))
    return subprocess.run(
        [sys.executable, "-c", script, str(root), str(k), "1" if exchange else "0"], capture_output=True, text=True
    )


def _one_version_each(root: Path) -> None:
    """Each destination is there, and wholly the old or wholly the new version."""
    seen = _visible(root)
    art = {k: v for k, v in seen.items() if k.startswith("art/toy/")}
    assert art in (
        {k: v for k, v in OLD.items() if k.startswith("art/")},
        {k: v for k, v in NEW.items() if k.startswith("art/")},
    ), seen
    assert seen.get("out/toy.ipynb") in (OLD["out/toy.ipynb"], NEW["out/toy.ipynb"]), seen


@pytest.mark.parametrize("k", range(1, 12))
def test_a_kill_at_any_step_is_mended_by_the_next_reader_to_the_old_or_the_new_state(k, exchange, tmp_path):
    steps = _steps(exchange, tmp_path)
    if k > len(steps):
        pytest.skip(f"{len(steps)} steps")
    proc = _kill_at(tmp_path / "run", k, exchange)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    root = tmp_path / "run"
    if exchange:  # the destinations were never missing, not even between the swaps
        _one_version_each(root)
    assert any(".staging-" in p for p in _state(root))  # the kill left its staging behind
    # what every reader does first (a run, the book build, the check): the artifacts root holds the journal
    staging.clean_stale(root / "art")
    committed = steps[k - 1] in ("remove", "done")  # killed after the journal was committed
    assert _state(root) == (NEW if committed else OLD), (k, steps[k - 1], _state(root))
    assert staging.clean_stale(root / "out") == []  # nothing was left for another reader


RECOVERY_KILLED = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from sdsl.build import publish, staging
    root, j = Path(sys.argv[1]), int(sys.argv[2])
    calls = []
    real = publish._do
    def do(step, fn, *args):
        calls.append(step)
        if len(calls) == j:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(step, fn, *args)
    publish._do = do
    staging.clean_stale(root / "art")
""")


@pytest.mark.parametrize("k, j", [(2, 1), (3, 1), (3, 2), (5, 1)])
def test_a_kill_during_the_recovery_is_recovered_again(k, j, exchange, tmp_path):
    steps = _steps(exchange, tmp_path)
    root = tmp_path / "run"
    assert _kill_at(root, k, exchange).returncode == -signal.SIGKILL
    proc = subprocess.run([sys.executable, "-c", RECOVERY_KILLED, str(root), str(j)], capture_output=True, text=True)
    assert proc.returncode in (0, -signal.SIGKILL), proc.stderr
    staging.clean_stale(root / "art")
    committed = steps[k - 1] in ("remove", "done")
    assert _state(root) == (NEW if committed else OLD), (k, j, _state(root))


@pytest.mark.parametrize("k", range(1, 8))
def test_sigterm_while_publishing_waits_until_the_new_state_is_whole(k, tmp_path, monkeypatch):
    items, tmp = _prepare(tmp_path)
    calls = []
    real = publish._do

    def do(step, fn, *args):
        calls.append(step)
        if len(calls) == k:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(step, fn, *args)

    monkeypatch.setattr(publish, "_do", do)
    with pytest.raises(staging.Interrupted), staging.terminate_as_exit():
        publish.publish(items, tmp)
    publish.discard(tmp)
    assert _state(tmp_path) == NEW


def test_a_folder_or_file_that_only_looks_like_staging_is_left_alone(tmp_path):
    """A user's folder named as a staging folder of a process that is gone, and a user's file named
    as a staged notebook: the reader's clean-up leaves both; a killed run's empty staging folder (killed
    before its marker) and its marked one go."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = dead.stdout.strip()
    users = tmp_path / f".staging-mine-{pid}-abc123"
    (users / "artifacts").mkdir(parents=True)
    (users / "artifacts" / "results.csv").write_text("a\n1\n")
    lookalike = tmp_path / f".staging-toy-{pid}-abcdef.ipynb"
    lookalike.write_text("my notebook\n")
    empty = tmp_path / f".staging-toy-{pid}-emptyy"
    empty.mkdir()
    marked = tmp_path / f".staging-toy-{pid}-marked"
    marked.mkdir()
    (marked / publish.STAGING_MARKER).write_text("")
    live = tmp_path / f".staging-toy-{os.getpid()}-def456"
    live.mkdir()
    (live / publish.STAGING_MARKER).write_text("")
    assert staging.clean_stale(tmp_path) == sorted([empty, marked])
    assert (users / "artifacts" / "results.csv").read_text() == "a\n1\n" and lookalike.read_text() == "my notebook\n"
    assert live.exists()


def test_staging_names_are_made_exclusively_and_never_a_users(tmp_path, monkeypatch):
    """A staged file's name is taken only if no file has it: a user's file of that name is kept and
    another name is drawn; the staging folder lists only what it made."""
    dest = tmp_path / "toy.ipynb"
    draws = iter([bytes(6), bytes(6), b"\x01" * 6])
    monkeypatch.setattr(publish.os, "urandom", lambda n: next(draws))
    with publish.staging_folder(tmp_path, "toy") as tmp:
        taken = tmp_path / f".staging-toy-{os.getpid()}-{bytes(6).hex()}.ipynb"
        taken.write_text("the user's\n")
        path = publish.stage_beside(tmp, dest)
        assert path != taken and path.is_file()
        assert (tmp / "outside.txt").read_text().splitlines() == [str(path)]
    assert taken.read_text() == "the user's\n" and not path.exists()


def test_a_failed_accept_leaves_the_baseline_as_it_was(tmp_path, monkeypatch):
    def tree(root: Path, value: str) -> Path:
        for chapter in ("one", "two"):
            (root / chapter).mkdir(parents=True)
            (root / chapter / "t.csv").write_text(f"value\n{value}\n")
            (root / chapter / ".provenance.json").write_text(json.dumps({"files": ["t.csv"]}))
        return root

    monkeypatch.setattr(check, "machine_info", lambda: {"cpu": "test"})
    base = tmp_path / "base"
    check.accept(tree(tmp_path / "first", "1"), base)
    assert (base / _owned.OWNED_MARKER).is_file()
    before = _state(base)
    assert json.loads((base / "manifest.json").read_text())["files"].keys() == {"one/t.csv", "two/t.csv"}
    calls = []
    real = publish._do

    def do(step, fn, *args):
        calls.append(step)
        if len(calls) == 3:  # the journal, "one" swapped in, then "two"
            raise OSError(errno.EIO, "Input/output error")
        return real(step, fn, *args)

    monkeypatch.setattr(publish, "_do", do)
    with pytest.raises(_owned.OutputError, match="put back whole"):
        check.accept(tree(tmp_path / "second", "2"), base)
    assert _state(base) == before
    monkeypatch.setattr(publish, "_do", real)
    check.accept(tmp_path / "second", base, ["one"])
    assert (base / "one" / "t.csv").read_text() == "value\n2\n" and (base / "two" / "t.csv").read_text() == "value\n1\n"
