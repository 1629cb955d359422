"""sdsl.data.records: the pandas-free reader validates exactly as sdsl.data.load does."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import yaml

from sdsl import data
from sdsl.data import DuplicateKeyError, load_yaml
from sdsl.paths import DATA


def _same(a, b) -> bool:
    if a is None or (isinstance(a, float) and math.isnan(a)):
        return b is None or b is pd.NA or (isinstance(b, float) and math.isnan(b))
    return a == b


@pytest.mark.parametrize("name", data.list_datasets())
def test_records_equal_load(name):
    recs = data.records(name)
    df = data.load(name)
    assert len(recs) == len(df) and list(recs[0]) == list(df.columns)
    for r, (_, row) in zip(recs, df.iterrows()):
        for c in df.columns:
            assert _same(r[c], row[c]), (name, c, r[c], row[c])


@pytest.mark.parametrize(
    "line, message",
    [
        (
            "opt-13b,OPT-13B,OPT,target,dense,-5,13e9,,180e9,OPT,180e9,opt,x,,,,,,,,,a,b,c,d",
            "column 'params': value -5 is out of range",
        ),
        (
            "opt-13b,OPT-13B,OPT,target,sparse,5,13e9,,180e9,OPT,180e9,opt,x,,,,,,,,,a,b,c,d",
            "column 'architecture': value 'sparse'",
        ),
        ("opt-13b,OPT-13B,OPT,target,dense,abc,13e9,,180e9,OPT,180e9,opt,x,,,,,,,,,a,b,c,d", "non-numeric value 'abc'"),
    ],
)
def test_records_and_load_give_the_same_message(tmp_path, line, message):
    header = (DATA / "presets.csv").read_text().splitlines()[0]
    csv = tmp_path / "presets.csv"
    csv.write_text(header + "\n" + line + "\n")
    meta = (DATA / "presets.yml").read_text()
    # the copy's provenance records the changed file's sha256 (it is checked on load)
    (tmp_path / "presets.yml").write_text(meta.replace(data.provenance("presets")["sha256"], data.sha256(csv)))
    with pytest.raises(data.DataError) as a:
        data.load(csv)
    with pytest.raises(data.DataError) as b:
        data.records(csv)
    assert str(a.value) == str(b.value) and message in str(b.value) and "line 2" in str(b.value)


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
    with pytest.raises(DuplicateKeyError) as err:
        load_yaml(text)
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_merge_keys_may_be_overridden():
    assert load_yaml("base: &b {k: 1, j: 2}\nd:\n  <<: *b\n  k: 3\n")["d"] == {"k": 3, "j": 2}
