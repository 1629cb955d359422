"""The parsed index of data/*.yml (sdsl._yaml): current, equal to what PyYAML reads, and only a cache."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

import sdsl._yaml as Y
from sdsl.paths import DATA


def test_the_committed_index_is_current():
    committed = json.loads(Y.INDEX.read_text(encoding="utf-8"))
    fresh = Y.build_index()
    stale = sorted(
        {e["file"] for e in fresh["entries"].values()}
        - {e["file"] for k, e in committed["entries"].items() if k in fresh["entries"]}
    )
    assert not stale, f"sdsl/_yaml_index.json is stale for {stale}: run python -m sdsl._yaml"
    assert committed == json.loads(json.dumps(fresh)), "sdsl/_yaml_index.json differs: run python -m sdsl._yaml"


def test_every_shipped_yml_is_in_the_index():
    files = {e["file"] for e in Y.build_index()["entries"].values()}
    assert files == {p.name for p in DATA.glob("*.yml")}  # none left out for a date or a non-string key


@pytest.mark.parametrize("path", sorted(DATA.glob("*.yml")), ids=lambda p: p.name)
def test_the_index_gives_what_pyyaml_gives(path):
    text = path.read_text(encoding="utf-8")
    assert Y._digest(text) in Y._entries()
    assert Y.load(text) == yaml.safe_load(text)


def test_a_hit_returns_a_fresh_copy():
    text = (DATA / "presets.yml").read_text(encoding="utf-8")
    first = Y.load(text)
    first.clear()
    assert Y.load(text)


def test_an_edited_file_is_read_by_pyyaml_not_from_the_index():
    text = (DATA / "models.yml").read_text(encoding="utf-8") + "\nextra_key: 42\n"
    assert Y._digest(text) not in Y._entries()
    assert Y.load(text)["extra_key"] == 42


def test_invalid_yaml_raises_one_line():
    with pytest.raises(Y.YamlError) as err:
        Y.load("a: [1, 2\nb: 3\n")
    assert "\n" not in str(err.value)


def test_a_value_json_cannot_hold_is_left_out(tmp_path):
    (tmp_path / "dated.yml").write_text("retrieved: 2026-11-20\n", encoding="utf-8")
    (tmp_path / "keyed.yml").write_text("1: one\n", encoding="utf-8")  # JSON would make the key "1"
    (tmp_path / "plain.yml").write_text("retrieved: '2026-11-20'\n", encoding="utf-8")
    index = Y.build_index(tmp_path)
    assert [e["file"] for e in index["entries"].values()] == ["plain.yml"]


def test_write_index_is_atomic_and_readable(tmp_path):
    (tmp_path / "a.yml").write_text("x: 1\n", encoding="utf-8")
    out = Y.write_index(tmp_path / "index.json", tmp_path)
    assert json.loads(out.read_text(encoding="utf-8"))["entries"]
    assert oct(out.stat().st_mode & 0o777) == "0o644"
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def test_sdsl_plan_does_not_import_yaml():
    code = (
        "import sys, io, contextlib, sdsl.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    sdsl.cli.main(['plan', '--preset', 'llama-3-70b'])\n"
        "print('yaml' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


REPEATED = [
    ("a: 1\nb: 2\na: 3\n", "line 3: key 'a' is given twice in one mapping (first on line 1)"),
    ("- name: x\n  type: float\n  type: int\n", "line 3: key 'type'"),
    ("outer:\n  inner: {k: 1, k: 2}\n", "line 2: key 'k'"),
    ("sha256: 'ab'\nsha256: 'cd'\n", "line 2: key 'sha256'"),
]


@pytest.mark.parametrize("text, message", REPEATED, ids=["top", "in-a-list", "flow", "sha256"])
def test_a_repeated_key_is_refused_with_its_line(text, message):
    """PyYAML alone takes a repeated key last-wins without a word; the loader refuses it."""
    assert isinstance(yaml.safe_load(text), (dict, list))  # what plain PyYAML would have used
    with pytest.raises(Y.DuplicateKeyError) as err:
        Y.load(text)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_merge_keys_may_be_overridden():
    assert Y.load("base: &b {k: 1, j: 2}\nd:\n  <<: *b\n  k: 3\n")["d"] == {"k": 3, "j": 2}


def test_the_index_refuses_a_file_with_a_repeated_key(tmp_path, capsys):
    (tmp_path / "ok.yml").write_text("x: 1\n", encoding="utf-8")
    (tmp_path / "twice.yml").write_text("x: 1\ny: 2\nx: 3\n", encoding="utf-8")
    with pytest.raises(Y.DuplicateKeyError, match=r"twice\.yml, line 3: key 'x' is given twice"):
        Y.build_index(tmp_path)
    assert not (tmp_path / "index.json").exists()
    with pytest.raises(Y.DuplicateKeyError):
        Y.write_index(tmp_path / "index.json", tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.yml", "twice.yml"]  # nothing written


def test_an_index_of_the_format_before_the_check_is_not_used(tmp_path, monkeypatch):
    """An index written before repeated keys were refused may hold a file read last-wins: not used."""
    text = "x: 1\nx: 2\n"
    old = tmp_path / "old_index.json"
    old.write_text(json.dumps({"format": 1, "entries": {Y._digest(text): {"file": "t.yml", "value": {"x": 2}}}}))
    monkeypatch.setattr(Y, "INDEX", old)
    monkeypatch.setattr(Y, "_index", None)
    with pytest.raises(Y.DuplicateKeyError, match="line 2: key 'x'"):
        Y.load(text)
