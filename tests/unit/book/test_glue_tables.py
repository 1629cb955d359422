"""The book's glue and table helpers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdsl.book.glue import plain
from sdsl.book.tables import COLUMN_PX, DASH, count, expect, number, reader_text, show


def test_plain_converts_numpy_scalars_and_refuses_what_prose_cannot_cite():
    assert plain("a", np.float64(0.5)) == 0.5 and type(plain("a", np.float64(0.5))) is float
    assert type(plain("n", np.int64(3))) is int
    assert plain("s", "differs") == "differs"
    for bad in (True, np.bool_(False)):
        with pytest.raises(ValueError, match="boolean"):
            plain("flag", bad)
    with pytest.raises(ValueError, match="nan"):
        plain("x", float("nan"))
    with pytest.raises(ValueError, match="must be a number or a str"):
        plain("arr", np.array([1.0]))


def test_number_formats_for_reading():
    assert number(0.654321) == "0.6543"
    assert number(124028346.17) == "1.240 \u00d7 10\u2078"
    assert number(-9.25e-5, 3) == "\u22129.25 \u00d7 10\u207b\u2075"
    assert number(1.2e-11) == "1.200 \u00d7 10\u207b\u00b9\u00b9"
    assert number(float("nan")) == DASH and number(None) == DASH
    assert number(12345) == "12,345" and number(1_234_567) == "1.235 \u00d7 10\u2076"
    assert number(True) == "yes" and number(-14.25) == "\u221214.25"
    assert [count(v) for v in (124039820.3, 14167290880, 1.5e13, 950e3)] == ["124M", "14.17B", "15T", "950k"]


def test_titles_read_as_a_reader_writes_them():
    assert reader_text("gamma* and alpha for D' read as 4e12 from 1e7") == (
        "\u03b3* and \u03b1 for D\u2032 read as 4 \u00d7 10\u00b9\u00b2 from 10\u2077"
    )


def test_show_renames_hides_the_index_and_is_byte_stable():
    df = pd.DataFrame({"n_star": [1.24e8, np.nan], "reason": ["x" * 300, "y"], "extra": [1, 2]})
    a = show(df, columns={"n_star": "N* (parameters)", "reason": "reason"}, wrap=["reason"]).to_html()
    b = show(df, columns={"n_star": "N* (parameters)", "reason": "reason"}, wrap=["reason"]).to_html()
    assert a == b
    assert "N* (parameters)" in a and "extra" not in a and DASH in a and "white-space: normal" in a
    assert ">0<" not in a  # no index column
    with pytest.raises(ValueError, match="no column"):
        show(df, columns={"missing": "x"})


def test_a_table_is_a_numbered_myst_table_with_numbers_right_aligned():
    df = pd.DataFrame({"target": ["a_b", "c|d"], "n_star": [1.24e8, 123.456789], "held_out_target": [1, 2]})
    md = show(
        df, columns={"target": "target", "n_star": "N* (parameters)"}, caption="Its N*.", label="ch-t"
    )._repr_markdown_()
    assert md.startswith(":::{table} Its N\\*.\n:name: ch-t\n")
    assert "| target | N\\* (parameters) |\n|:--|--:|" in md  # text left, numbers right
    assert "| a b | 1.240 \u00d7 10\u2078 |" in md and "c\\|d" in md and "123.5" in md  # snake case read as words


def test_a_table_shows_the_columns_that_fit_and_names_the_rest():
    df = pd.DataFrame({f"column {i}": ["a long value of a column"] for i in range(12)})
    t = show(df)
    assert 1 <= len(t.headers) < 12 and len(t.headers) + len(t.left_out) == 12
    assert "Left to the CSV" in t._repr_markdown_() and "column 11" in t._repr_markdown_()
    assert sum(len(h) for h in t.headers) * 8 < COLUMN_PX


def test_a_saved_frame_shown_later_takes_its_caption_once():
    df = pd.DataFrame({"x": [1.0]})
    expect(df, "Saved.", "ch-saved")
    first, second = show(df), show(df)
    assert (first.caption, first.label) == ("Saved.", "ch-saved") and second.label is None
    assert show(pd.DataFrame({"x": [1.0]})).caption is None
