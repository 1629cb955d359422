"""The plan chapter's lookup table (sdsl.chapters.plan_draft.lookup, shown in the book): the rows of
``sdsl presets --plan``, formatted for reading, and its parameter check."""

from __future__ import annotations

import math

import pytest

from sdsl.book.views import view_lookup
from sdsl.chapters import plan_draft as ch
from sdsl.plan.lookup import lookup_rows


@pytest.fixture(scope="module")
def table():
    return ch.lookup()


def test_lookup_is_the_cli_table_with_m_over_n_star(table):
    rows = lookup_rows()
    assert list(table["preset"]) == [r["preset"] for r in rows]
    for r, (_, t) in zip(rows, table.iterrows()):
        if r["status"] == "planned":
            assert t["n_star"] == r["n_star"] and t["m_over_n_star"] == pytest.approx(
                r["params"] / r["n_star"], rel=1e-12
            )
        else:
            assert math.isnan(t["n_star"])


def test_lookup_summary_counts_every_row_once(table):
    s = ch.lookup_summary(table)
    assert s["lookup_n"] == len(table) == s["lookup_n_planned"] + s["lookup_n_moe"] + s["lookup_n_unknown"]
    assert s["lookup_n_moe"] >= 1 and s["lookup_n_unknown"] >= 1
    assert 1 <= s["lookup_gamma_min"] <= s["lookup_gamma_max"]
    assert 1 < s["lookup_ratio_min"] < s["lookup_ratio_max"]


def test_view_shows_units_dashes_and_no_index(table):
    html = view_lookup(table).to_html()
    for header in ("M", "N*", "D′ (tokens)", "wall-clock speedup"):
        assert header in html
    assert "nan" not in html.lower().replace("nano", "") and "–" in html
    assert "refused (MoE)" in html and "tokens unknown" in html


def test_lookup_hardware_is_checked():
    with pytest.raises(ValueError, match=r"^lookup_hardware: unknown hardware 'tpu'"):
        ch.check_parameters(lookup_hardware="tpu")


def test_the_published_acceptance_law_is_a_parameter_with_its_temperature():
    """alpha_source 'published' needs the sampling temperature, as sdsl plan does: the notebook takes
    it as a parameter, checks it with sdsl plan's messages and writes it into the command."""
    import pytest

    from sdsl.chapters.plan_draft import check_parameters, cli_command

    check_parameters(preset="llama-3-70b", alpha_source="published", temperature=0.7)
    with pytest.raises(ValueError, match="needs temperature"):
        check_parameters(preset="llama-3-70b", alpha_source="published")
    with pytest.raises(ValueError, match="temperature"):
        check_parameters(preset="llama-3-70b", alpha_source="published", temperature="0.7")
    assert cli_command(preset="llama-3-70b", alpha_source="published", temperature=0.7).endswith(
        "--alpha-source published --temperature 0.7"
    )
