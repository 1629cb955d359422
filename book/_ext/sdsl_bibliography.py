"""The bibliography style of the companion's book (loaded via ``sphinx: local_extensions``).

The book cites in author-year form (``bibtex_reference_style: author_year``); pybtex's own label
styles number the entries or abbreviate them (``[1]``, ``[BM26]``), so the list of references
would be labelled differently from the citations that link to it. ``sdsl_author_year`` is pybtex's
``plain`` style (entries sorted by author, year and title, a group name by its letters) with labels written as the citations
are: ``Bozorgkhoo and Molybog, 2026``, ``Hoffmann et al., 2022``.
"""

from pybtex.plugin import register_plugin
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting.author_year_title import SortingStyle as AuthorYearTitleSorting


def _surname(person) -> str:
    """The surname as printed: prefixes kept (``de Las Casas``), braces of a group name dropped."""
    return " ".join(person.prelast_names + person.last_names).replace("{", "").replace("}", "")


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels ``Surname, year``, ``Surname and Surname, year`` or ``Surname et al., year``."""

    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            yield self.format_label(entry)

    def format_label(self, entry) -> str:
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [_surname(p) for p in people]
        if not names:
            who = entry.fields.get("title", entry.key)
        elif len(names) > 2 or "others" in names:
            who = f"{names[0]} et al."
        else:
            who = " and ".join(names)
        return f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearSorting(AuthorYearTitleSorting):
    """``plain``'s order, with a group name (``{Qwen Team}``) sorted by its letters, not its brace."""

    def person_key(self, person) -> str:
        return super().person_key(person).replace("{", "").replace("}", "")


class AuthorYearStyle(PlainStyle):
    default_label_style = "sdsl_author_year"
    default_sorting_style = "sdsl_author_year"


def setup(app):
    register_plugin("pybtex.style.labels", "sdsl_author_year", AuthorYearLabelStyle, force=True)
    register_plugin("pybtex.style.sorting", "sdsl_author_year", AuthorYearSorting, force=True)
    register_plugin("pybtex.style.formatting", "sdsl_author_year", AuthorYearStyle, force=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
