"""The public API (``sdsl.__all__``) is documented in numpydoc form: every function says what it
takes and what it returns."""

from __future__ import annotations

import inspect

import pytest

import sdsl


@pytest.mark.parametrize("name", sorted(sdsl.__all__))
def test_public_functions_have_parameters_and_returns_sections(name):
    obj = getattr(sdsl, name)
    if inspect.isclass(obj) or not callable(obj):
        assert inspect.getdoc(obj), f"{name} has no docstring"
        return
    doc = inspect.getdoc(obj) or ""
    for section in ("Parameters\n----------", "Returns\n-------"):
        assert section in doc, f"sdsl.{name} lacks a numpydoc '{section.splitlines()[0]}' section"
