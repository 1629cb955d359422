"""Data damage: a copy of data/ in a temporary folder, damaged, loaded through the public
loaders with an explicit path (sdsl.data.load, sdsl.data.records, a measurements file of
sdsl.plan, the acceptance chapter's measurements). Each gets a ValueError with one line naming the
file, the line and the column; nothing is written. data/ itself is never touched."""

from __future__ import annotations

import pytest
from bad_input_checks import assert_nothing_written, assert_one_line, snapshot
from bad_inputs import DATA_DAMAGE, DATA_VALID, copy_data, rewrite

from sdsl import data
from sdsl.paths import DATA


@pytest.fixture
def datacopy(tmp_path):
    return copy_data(tmp_path / "data")


@pytest.mark.parametrize("damage", [c[1] for c in DATA_DAMAGE], ids=[c[0] for c in DATA_DAMAGE])
def test_damaged_data(damage, datacopy):
    before_repo = {p.name: p.read_bytes() for p in DATA.iterdir() if p.is_file()}
    call, expected = damage(datacopy)
    before = snapshot(datacopy)
    with pytest.raises(ValueError) as err:
        call()
    assert_one_line(str(err.value), expected)
    assert_nothing_written(before, snapshot(datacopy))
    assert {p.name: p.read_bytes() for p in DATA.iterdir() if p.is_file()} == before_repo


@pytest.mark.parametrize("change", [c[1] for c in DATA_VALID], ids=[c[0] for c in DATA_VALID])
def test_harmless_changes_load(change, datacopy):
    """Decided valid: trailing blank lines, a UTF-8 byte-order mark, CRLF line ends (the sha256 of
    the changed file recorded: the loader must see the same table)."""
    p = rewrite(datacopy, "acceptance", change((datacopy / "acceptance.csv").read_bytes()))
    assert data.load(p).equals(data.load("acceptance"))
    assert data.records(p) == data.records("acceptance")


def test_the_repositorys_data_still_loads():
    for name in data.list_datasets():
        assert len(data.load(name)) > 0
