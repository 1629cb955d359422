"""Download links under tables and figures."""

from __future__ import annotations

import pandas as pd
import pytest

from sdsl.book.outputs import download_links, save_table


def test_links_name_the_files_that_exist(tmp_path):
    save_table(pd.DataFrame({"a": [1]}), "acceptance", "table3", tmp_path)
    (tmp_path / "figure1.svg").write_text("<svg/>")
    (tmp_path / "figure1.png").write_bytes(b"png")
    (tmp_path / "figure1.data.csv").write_text("x\n1\n")
    assert download_links("acceptance", "table3", tmp_path) == (
        'Download: <a href="../_static/artifacts/acceptance/table3.csv">CSV</a>'
    )
    line = download_links("acceptance", "figure1", tmp_path)
    assert line == (
        'Download: <a href="../_static/artifacts/acceptance/figure1.svg">SVG</a> | '
        '<a href="../_static/artifacts/acceptance/figure1.png">PNG</a> | '
        '<a href="../_static/artifacts/acceptance/figure1.data.csv">figure data</a>'
    )
    with pytest.raises(ValueError, match="acceptance/table9 has no file"):
        download_links("acceptance", "table9", tmp_path)
