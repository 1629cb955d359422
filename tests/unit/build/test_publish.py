"""Publishing leaves the old or the new state whole, whatever stops it and wherever: a failure at
any rename (a cross-device link among them) puts the old state back, a SIGKILL at any step is
undone (or finished, once committed) by the next run, and SIGTERM waits until the swap is whole."""

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

#: Renames of a publication of two destinations: journal, two asides, two new versions, commit.
STEPS = 6
OLD = {"art/toy/a.csv": "old a\n", "art/toy/b.csv": "old b\n", "out/toy.ipynb": "old notebook\n"}
NEW = {"art/toy/a.csv": "new a\n", "art/toy/c.csv": "new c\n", "out/toy.ipynb": "new notebook\n"}


def _state(root: Path) -> dict[str, str]:
    """Every file under ``root``, hidden ones (staging, asides, journals) included, except markers."""
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != _owned.OWNED_MARKER
    }


def _prepare(root: Path) -> tuple[list[tuple[Path, Path]], Path]:
    """The old state under ``root`` and a staged new one (as execute_notebook stages it)."""
    for rel, text in OLD.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    tmp = root / "art" / publish.staging_name("toy")
    new_art = tmp / "artifacts" / "toy"
    new_art.mkdir(parents=True)
    for rel, text in NEW.items():
        if rel.startswith("art/toy/"):
            (new_art / rel.removeprefix("art/toy/")).write_text(text)
    new_nb = root / "out" / f"{publish.staging_name('toy')}.ipynb"
    new_nb.write_text(NEW["out/toy.ipynb"])
    return [(new_art, root / "art" / "toy"), (new_nb, root / "out" / "toy.ipynb")], tmp


def _fail_at(k: int, error: OSError):
    calls = []

    def rename(src, dst):
        calls.append((src, dst))
        if len(calls) == k:
            raise error
        os.replace(src, dst)

    return rename, calls


@pytest.mark.parametrize("k", range(1, STEPS + 1))
def test_a_failed_rename_at_any_step_puts_the_old_state_back_whole(k, tmp_path, monkeypatch):
    items, tmp = _prepare(tmp_path)
    rename, calls = _fail_at(k, OSError(errno.EXDEV, "Invalid cross-device link", str(items[0][1])))
    monkeypatch.setattr(publish, "_rename", rename)
    with pytest.raises(_owned.OutputError) as err:
        publish.publish(items, tmp)
    msg = str(err.value)
    assert "\n" not in msg and "Invalid cross-device link" in msg and "put back whole" in msg
    assert len(calls) >= k
    after = _state(tmp_path)
    assert {k_: v for k_, v in after.items() if ".staging-" not in k_} == OLD  # staged: the caller's to remove
    assert not [p for p in after if ".replaced-" in p or publish.JOURNAL in p]


def test_without_a_fault_the_new_state_is_whole_and_nothing_is_left(tmp_path):
    items, tmp = _prepare(tmp_path)
    publish.publish(items, tmp)
    after = _state(tmp_path)
    assert {k: v for k, v in after.items() if ".staging-" not in k} == NEW
    assert not [p for p in after if ".replaced-" in p or publish.JOURNAL in p]


KILLED = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from test_publish import _prepare
    from sdsl.build import publish
    root, k = Path(sys.argv[1]), int(sys.argv[2])
    items, tmp = _prepare(root)
    calls = []
    def rename(src, dst):
        calls.append(src)
        if len(calls) == k:
            os.kill(os.getpid(), signal.SIGKILL)
        os.replace(src, dst)
    def finish(items):
        os.kill(os.getpid(), signal.SIGKILL)  # committed, the old versions not yet removed
    publish._rename = rename
    if k > {steps}:
        publish._finish = finish
    publish.publish(items, tmp)
""")


@pytest.mark.parametrize("k", range(1, STEPS + 2))
def test_a_kill_at_any_step_is_recovered_to_the_old_or_the_new_state(k, tmp_path):
    script = KILLED.format(tests=str(Path(__file__).parent), steps=STEPS)
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path), str(k)], capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    half = _state(tmp_path)
    assert any(".staging-" in p for p in half)  # the kill left its staging behind
    for root in ("art", "out"):  # what the next run does first (the artifacts root first)
        staging.clean_stale(tmp_path / root)
    after = _state(tmp_path)
    # before the journal is committed the old state comes back; after it, the new one stays
    assert after == (NEW if k > STEPS else OLD), (k, after)


@pytest.mark.parametrize("k", range(1, STEPS + 1))
def test_sigterm_while_publishing_waits_until_the_new_state_is_whole(k, tmp_path, monkeypatch):
    items, tmp = _prepare(tmp_path)
    calls = []

    def rename(src, dst):
        calls.append(src)
        if len(calls) == k:
            os.kill(os.getpid(), signal.SIGTERM)
        os.replace(src, dst)

    monkeypatch.setattr(publish, "_rename", rename)
    with pytest.raises(staging.Interrupted), staging.terminate_as_exit():
        publish.publish(items, tmp)
    assert {p: v for p, v in _state(tmp_path).items() if ".staging-" not in p} == NEW


def test_a_failed_accept_leaves_the_baseline_as_it_was(tmp_path, monkeypatch):
    def tree(root: Path, value: str) -> Path:
        for chapter in ("one", "two"):
            (root / chapter).mkdir(parents=True)
            (root / chapter / "t.csv").write_text(f"value\n{value}\n")
            (root / chapter / ".provenance.json").write_text("{}\n")
        return root

    monkeypatch.setattr(check, "machine_info", lambda: {"cpu": "test"})
    base = tmp_path / "base"
    check.accept(tree(tmp_path / "first", "1"), base)
    assert (base / _owned.OWNED_MARKER).is_file()
    before = _state(base)
    assert json.loads((base / "manifest.json").read_text())["files"].keys() == {"one/t.csv", "two/t.csv"}
    rename, _ = _fail_at(5, OSError(errno.EIO, "Input/output error"))  # journal, 3 asides, then the new "one"
    monkeypatch.setattr(publish, "_rename", rename)
    with pytest.raises(_owned.OutputError, match="put back whole"):
        check.accept(tree(tmp_path / "second", "2"), base)
    assert _state(base) == before
    monkeypatch.setattr(publish, "_rename", os.replace)
    check.accept(tmp_path / "second", base, ["one"])
    assert (base / "one" / "t.csv").read_text() == "value\n2\n" and (base / "two" / "t.csv").read_text() == "value\n1\n"
