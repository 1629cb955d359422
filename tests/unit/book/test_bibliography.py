"""The book's references: every entry cited, complete, and labelled as the citations read."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from pybtex.database import parse_file
from pybtex.plugin import find_plugin

ROOT = Path(__file__).resolve().parents[3]
BIB = ROOT / "book" / "references.bib"
PAGES = [*ROOT.glob("book/*.md"), *ROOT.glob("notebooks/*.md")]


def _cited() -> set[str]:
    keys: set[str] = set()
    for page in PAGES:
        for group in re.findall(r"\{cite(?::[a-z]+)?\}`([^`]+)`", page.read_text(encoding="utf-8")):
            keys.update(k.strip() for k in group.split(","))
    return keys


def test_the_bibliography_holds_exactly_the_cited_works():
    entries = parse_file(BIB).entries
    cited = _cited()
    assert cited - set(entries) == set(), "cited but not in references.bib"
    assert set(entries) - cited == set(), "in references.bib but never cited"


def test_every_entry_has_authors_a_year_and_an_identifier():
    for key, entry in parse_file(BIB).entries.items():
        assert entry.persons.get("author"), key
        assert re.fullmatch(r"\d{4}", entry.fields.get("year", "")), key
        assert entry.fields.get("eprint") or entry.fields.get("doi"), key


def test_labels_are_author_year_as_the_citations_read():
    spec = importlib.util.spec_from_file_location("sdsl_bibliography", ROOT / "book" / "_ext" / "sdsl_bibliography.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.setup(None)
    style = find_plugin("pybtex.style.formatting", "sdsl_author_year")()
    labels = [e.label for e in style.format_entries(parse_file(BIB).entries.values())]
    assert "Bozorgkhoo and Molybog, 2026" in labels and "Hoffmann et al., 2022" in labels
    assert "Qwen Team, 2025" in labels  # a group name, without its braces
    assert all(re.fullmatch(r"[^\d\[\]]+, \d{4}", label) for label in labels), labels
    surnames = [label.split(",")[0].lower() for label in labels]
    assert surnames == sorted(surnames)  # sorted by author, a group name by its letters
