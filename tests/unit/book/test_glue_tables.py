"""The book's glue and table helpers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdsl.book.glue import plain
from sdsl.book.tables import DASH, number, show


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
    assert number(124028346.17) == "1.240e+08"
    assert number(1.2e-11) == "1.200e-11"
    assert number(float("nan")) == DASH and number(None) == DASH
    assert number(12345) == "12,345"
    assert number(True) == "yes"


def test_show_renames_hides_the_index_and_is_byte_stable():
    df = pd.DataFrame({"n_star": [1.24e8, np.nan], "reason": ["x" * 300, "y"], "extra": [1, 2]})
    a = show(df, columns={"n_star": "N* (parameters)", "reason": "reason"}, wrap=["reason"]).to_html()
    b = show(df, columns={"n_star": "N* (parameters)", "reason": "reason"}, wrap=["reason"]).to_html()
    assert a == b
    assert "N* (parameters)" in a and "extra" not in a and DASH in a and "white-space: normal" in a
    assert ">0<" not in a  # no index column
    with pytest.raises(ValueError, match="no column"):
        show(df, columns={"missing": "x"})
