"""The book's one rule for the readings of printed inputs (:data:`sdsl.audit.rules.READINGS`): the
chapter that argues a reading defaults to it, and accepts the input as printed."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

import pytest

from sdsl.audit.rules import READINGS
from sdsl.book.tables import reader_text
from sdsl.build.parameters import load_runs, notebook_parameters
from sdsl.chapters.scorecard import readings_markdown


def _plain(value):
    return dict(value) if isinstance(value, Mapping) else value


@pytest.mark.parametrize("reading", READINGS, ids=lambda r: r.name)
def test_the_chapter_that_argues_a_reading_defaults_to_it(reading):
    defaults = notebook_parameters(reading.chapter)
    assert reading.parameter in defaults, f"{reading.chapter} has no parameter {reading.parameter}"
    assert defaults[reading.parameter] == _plain(reading.default)
    assert _plain(reading.default) != _plain(reading.printed)
    # the book's run does not override the default
    assert reading.parameter not in load_runs()[reading.chapter]


@pytest.mark.parametrize("reading", READINGS, ids=lambda r: r.name)
def test_the_chapter_accepts_both_values_of_its_reading(reading):
    chapter = importlib.import_module(f"sdsl.chapters.{reading.chapter}")
    defaults = notebook_parameters(reading.chapter)
    for value in (reading.default, reading.printed):
        chapter.check_parameters(**{**defaults, reading.parameter: _plain(value)})


def test_the_scorecard_names_each_reading_and_sends_the_reader_to_its_chapter_and_rerun():
    """Each reading in the reader's words (no parameter name, no Python value), with the chapter
    that argues it and that chapter's section on rerunning it, where the parameter is listed."""
    text = readings_markdown()
    for r in READINGS:
        line = next(x for x in text.splitlines() if x.startswith(f"- {reader_text(r.name)}:"))
        assert f"{{doc}}`{r.chapter}`" in line and f"{{ref}}`{r.chapter}-run`" in line
        assert r.parameter not in line and repr(_plain(r.default)) not in line and "e12" not in line
