"""The public API: every bad argument raises a ValueError with one line naming the
argument and what is allowed (no numpy traceback, no RuntimeWarning, no array dump), and nothing is
written."""

from __future__ import annotations

import warnings

import pytest
from bad_input_checks import assert_nothing_written, assert_one_line, snapshot
from bad_inputs import API

CASES = API()


@pytest.mark.parametrize("call, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_api_call(call, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError) as err:
            call()
    assert_one_line(str(err.value), expected)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in caught]
    assert_nothing_written(before, snapshot(tmp_path))


def test_exact_integers_and_names_as_typed():
    from sdsl import plan as P
    from sdsl import validation as V

    assert P.check_inputs("opt-13b", n_boot=100, seed="9007199254740993").seed == 9007199254740993
    with V.argument_names({"n_range": "--n-range"}):
        with pytest.raises(ValueError, match=r"^--n-range must be two increasing"):
            P.check_inputs("opt-13b", n_range=(1e9, 1e8))
    with pytest.raises(ValueError, match=r"^n_range must be two increasing"):  # the API's own name outside
        P.check_inputs("opt-13b", n_range=(1e9, 1e8))
