"""sdsl.book.outputs: a table or figure declared once beside its function and published by value."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import pytest

from sdsl import data
from sdsl.book import registry as R
from sdsl.book.outputs import declare, declared
from sdsl.book.views import Publisher
from sdsl.chapters import acceptance

CHAPTER = __name__.rsplit(".", 1)[-1]  # declarations made here belong to this module's "chapter"


@declare("plain", "a table of this test", shown=False)
def plain(n: int) -> pd.DataFrame:
    return pd.DataFrame({"x": range(n)})


@declare("first", "one of two tables a function makes")
@declare("second", "the other")
def two(n: int) -> pd.DataFrame:
    return pd.DataFrame({"x": range(n)})


@declare("fig_line", "a figure of this test", figure=True)
def fig_line() -> matplotlib.figure.Figure:
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("x")
    return fig


def test_a_declared_table_is_written_under_its_declared_name(tmp_path):
    publish = Publisher(CHAPTER, tmp_path)
    publish.save(plain(3))
    assert pd.read_csv(tmp_path / "plain.csv")["x"].tolist() == [0, 1, 2]
    assert publish.last == "plain"


def test_a_table_declared_for_download_only_is_not_shown(tmp_path):
    with pytest.raises(ValueError, match="declared shown=False: write it with publish.save"):
        Publisher(CHAPTER, tmp_path)(plain(2))


def test_a_function_of_two_artifacts_needs_the_name_and_takes_either(tmp_path):
    publish = Publisher(CHAPTER, tmp_path)
    with pytest.raises(ValueError, match="give name=, one of fig_line, first, plain, second"):
        publish.save(two(2))
    publish.save(two(2), "second")
    assert (tmp_path / "second.csv").is_file() and not (tmp_path / "first.csv").exists()


def test_a_name_the_chapter_does_not_declare_is_refused(tmp_path):
    with pytest.raises(ValueError, match="'plian' is not an artifact the chapter 'test_publish' declares"):
        Publisher(CHAPTER, tmp_path).save(plain(2), "plian")


def test_a_result_of_no_declared_function_needs_a_name(tmp_path):
    with pytest.raises(ValueError, match="comes from no declared function"):
        Publisher(CHAPTER, tmp_path).save(pd.DataFrame({"x": [1]}))


def test_another_chapters_table_is_not_this_chapters(tmp_path):
    t1 = acceptance.table1(data.load("acceptance"))
    with pytest.raises(ValueError, match="declarations Table 1 of chapter 'test_publish'"):
        Publisher(CHAPTER, tmp_path).save(t1)


def test_a_figure_is_written_with_its_data_and_returned_as_its_files(tmp_path):
    publish = Publisher(CHAPTER, tmp_path)
    shown = publish(fig_line(), data=pd.DataFrame({"x": [0, 1]}))
    assert repr(shown) == "Figure fig_line"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig_line.data.csv", "fig_line.png", "fig_line.svg"]
    assert "fig_line.svg" in publish.downloads().data


def test_a_paper_table_is_written_shown_and_linked(tmp_path):
    publish = Publisher("acceptance", tmp_path)
    shown = publish(acceptance.table1(data.load("acceptance")))
    assert (tmp_path / "table1.csv").is_file()
    assert "table1.csv" in shown.links.data and hasattr(shown.table, "to_html")


def test_an_artifact_is_declared_once():
    with pytest.raises(ValueError, match="names an artifact that test_publish/plain already declares"):
        declare("plain", "again")(lambda: None)


def test_the_registry_is_the_chapters_declarations_and_names_each_maker():
    chapters = {i.chapter for i in R.REGISTRY}
    assert set(R.REGISTRY) == {i for i in declared() if i.chapter in chapters and i.regenerated}
    assert CHAPTER not in chapters
    table5 = R.by_key("Table 5")
    assert table5.function == "sdsl.chapters.optimal_draft.table5" and table5.artifacts == (
        "table5",
        "table5_as_printed",
    )
    # a function of another module, declared by the chapter that shows its result, is named itself
    assert R.by_key("acceptance/eq5_coefficients").function == "sdsl.model.alpha_fits.fit_plane"
