"""The artifacts tree: manifest, comparison of tables and figures, byte-stable figures, status page.

Fast: no notebook is executed here (tests/test_check.py runs the check end to end).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from sdsl import tolerance as policy  # noqa: E402
from sdsl.book.outputs import save_figure, save_table  # noqa: E402
from sdsl.build import manifest, status  # noqa: E402
from sdsl.build.compare import compare_samples, compare_tables, compare_trees  # noqa: E402


def _figure(y: float = 1.0, marker_x: float = 0.5):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [0, y, 0.5])
    ax.plot([marker_x], [0.2], "o", markersize=12)
    return fig


def _tree(root: Path, alpha: float = 0.5959, y: float = 1.0, data_y: float | None = None) -> Path:
    """A small artifacts tree: one table and one figure with its data."""
    table = pd.DataFrame({"target": ["OPT-13B", "OPT-30B"], "alpha": [alpha, 0.6779], "n": [4, 4]})
    save_table(table, "acc", "table3", root / "acc")
    fig = _figure(y)
    save_figure(
        fig,
        "acc",
        "figure1",
        root / "acc",
        data=pd.DataFrame({"x": [0, 1, 2], "y": [0, y if data_y is None else data_y, 0.5]}),
    )
    plt.close(fig)
    return root


# ---------------------------------------------------------------------------------------------
# tables


def test_compare_tables_within_and_beyond_tolerance(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame({"k": ["x", "y"], "v": [1.0, 2.0]}).to_csv(a, index=False)
    pd.DataFrame({"k": ["x", "y"], "v": [1.0 + 1e-9, 2.0]}).to_csv(b, index=False)
    assert compare_tables(a, b, "c/t.csv") == ("", [])  # computed: rtol 1e-8
    pd.DataFrame({"k": ["x", "y"], "v": [1.0, 2.0 * (1 + 3e-8)]}).to_csv(b, index=False)
    summary, cells = compare_tables(a, b, "c/t.csv")
    assert summary == "1 cell(s) differ"
    [cell] = cells
    assert cell["column"] == "v" and cell["old"] == 2.0 and cell["rule"] == "computed"
    assert cell["rel"] == pytest.approx(3e-8, rel=1e-3)
    assert "line 3" in cell["row"] and "k=y" in cell["row"]


def test_compare_tables_names_columns_rows_text_and_nan(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame({"k": ["x", "y"], "v": [1.5, np.nan], "w": [1, 2]}).to_csv(a, index=False)
    pd.DataFrame({"k": ["x", "z"], "v": [1.5, np.nan], "u": [1, 2]}).to_csv(b, index=False)
    summary, cells = compare_tables(a, b, "c/t.csv")
    assert "columns removed: ['w']" in summary and "columns added: ['u']" in summary
    assert [(c["column"], c["old"], c["new"]) for c in cells] == [("k", "y", "z")]  # NaN equals NaN
    pd.DataFrame({"k": ["x"], "v": [1.5], "w": [1]}).to_csv(b, index=False)
    assert "rows: 2 -> 1" in compare_tables(a, b, "c/t.csv")[0]


def test_integers_are_exact_and_text_is_exact(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame({"n": [1000000000], "flag": [True]}).to_csv(a, index=False)
    pd.DataFrame({"n": [1000000001], "flag": [False]}).to_csv(b, index=False)
    _, cells = compare_tables(a, b, "c/t.csv")
    assert {(c["column"], c["rule"]) for c in cells} == {("n", "exact"), ("flag", "exact")}


@pytest.mark.parametrize(
    "cls, column, scale_col, old, just_in, just_out",
    [
        # a difference column is compared on the scale of the quantity differenced (the paper's value)
        ("difference", "difference", "paper", 2e-7, 2e-7 + 0.5e-8 * 1.5, 2e-7 + 2e-8 * 1.5),
        # a relative deviation on the scale 1
        ("difference", "rel_deviation", None, -8e-5, -8e-5 + 0.5e-8, -8e-5 + 2e-8),
    ],
)
def test_difference_columns_use_the_scale_of_the_quantity(tmp_path, cls, column, scale_col, old, just_in, just_out):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    art = "acceptance/table4_vs_paper.csv"
    assert policy.rule_for(art, column, True, False).cls == cls
    frame = {"paper": [1.5], column: [old]}
    pd.DataFrame(frame).to_csv(a, index=False)
    pd.DataFrame({**frame, column: [just_in]}).to_csv(b, index=False)
    assert compare_tables(a, b, art) == ("", [])  # relative to itself this moved by ~1e-2
    pd.DataFrame({**frame, column: [just_out]}).to_csv(b, index=False)
    assert compare_tables(a, b, art)[1][0]["column"] == column


def test_stochastic_estimates_are_compared_with_their_joint_standard_error(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    art = "measure_acceptance/summary.csv"
    pd.DataFrame({"gamma": [4], "alpha": [0.63], "se": [0.02], "accepted": [400]}).to_csv(a, index=False)
    # 0.1 apart < 4 * sqrt(2) * 0.02 = 0.113; counts within 4 sqrt(790) + 1
    pd.DataFrame({"gamma": [4], "alpha": [0.73], "se": [0.02], "accepted": [390]}).to_csv(b, index=False)
    assert compare_tables(a, b, art) == ("", [])
    pd.DataFrame({"gamma": [4], "alpha": [0.75], "se": [0.02], "accepted": [250]}).to_csv(b, index=False)
    assert sorted(c["column"] for c in compare_tables(a, b, art)[1]) == ["accepted", "alpha"]


def test_loss_law_endpoints_are_compared_with_their_quantile_errors(tmp_path):
    # the matrix's case: one bootstrap refit of A moved to another optimum under OPENBLAS_CORETYPE=Haswell
    # and the upper endpoint went 2053 -> 7517, inside 4 joint errors of 1.33e6; the same move with
    # errors of 500 fails, and so does the lower endpoint moving by 10 errors
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    art = "laptop_scale/loss_law.csv"
    row = {"parameter": ["A"], "estimate": [5.626], "ci_lower": [3.983], "ci_upper": [2052.8]}
    pd.DataFrame({**row, "ci_lower_se": [1.682], "ci_upper_se": [1.329e6]}).to_csv(a, index=False)
    moved = {**row, "ci_upper": [7516.7], "ci_lower_se": [1.682], "ci_upper_se": [1.327e6]}
    pd.DataFrame(moved).to_csv(b, index=False)
    assert compare_tables(a, b, art) == ("", [])
    pd.DataFrame({**row, "ci_lower_se": [1.682], "ci_upper_se": [500.0]}).to_csv(a, index=False)
    pd.DataFrame({**moved, "ci_upper_se": [500.0]}).to_csv(b, index=False)
    assert [c["column"] for c in compare_tables(a, b, art)[1]] == ["ci_upper"]
    pd.DataFrame({**row, "ci_lower": [3.983 + 10 * 1.682], "ci_lower_se": [1.682], "ci_upper_se": [500.0]}).to_csv(
        b, index=False
    )
    assert [c["column"] for c in compare_tables(a, b, art)[1]] == ["ci_lower"]


def test_samples_are_compared_by_their_means(tmp_path):
    rng = np.random.default_rng(0)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame({"accepted": rng.binomial(4, 0.6, 300)}).to_csv(a, index=False)
    pd.DataFrame({"accepted": rng.binomial(4, 0.6, 310)}).to_csv(b, index=False)
    assert compare_samples(a, b) == ""
    pd.DataFrame({"accepted": rng.binomial(4, 0.45, 300)}).to_csv(b, index=False)
    assert "column 'accepted'" in compare_samples(a, b)
    pd.DataFrame({"accepted": rng.binomial(4, 0.6, 600)}).to_csv(b, index=False)
    assert "rows: 300 -> 600" in compare_samples(a, b)


def test_rules_are_validated():
    with pytest.raises(ValueError, match="class must be one of"):
        policy.Rule("*", "*", "close", "no such class")
    with pytest.raises(ValueError, match="needs a scale"):
        policy.Rule("*", "*", "difference", "no scale")
    with pytest.raises(ValueError, match="kind"):
        policy.Rule("*", "*", "stochastic", "no kind")


def test_identical_trees_pass(tmp_path):
    old = _tree(tmp_path / "old")
    new = _tree(tmp_path / "new")
    report = compare_trees(old, new, diff_dir=tmp_path / "diff")
    assert report.ok, report.text()
    assert report.compared == 4
    assert "OK: every artifact matches the baseline." in report.text()


def test_changed_table_cell_is_named(tmp_path):
    old = _tree(tmp_path / "old")
    new = _tree(tmp_path / "new", alpha=0.6)
    report = compare_trees(old, new, diff_dir=tmp_path / "diff")
    assert not report.ok
    assert report.affected() == ["acc/table3"]
    text = report.text()
    assert "CHANGED  table acc/table3.csv" in text
    assert "line 2 (target=OPT-13B), column 'alpha': 0.5959 -> 0.6" in text


def test_changed_figure_reports_rms_diff_image_and_data(tmp_path):
    old = _tree(tmp_path / "old")
    new = _tree(tmp_path / "new", y=1.8)
    diff = tmp_path / "diff"
    report = compare_trees(old, new, diff_dir=diff)
    [finding] = report.findings
    assert finding.path == "acc/figure1" and finding.artifact == "figure"
    assert finding.rms is not None and finding.rms > policy.FIGURE_RMS
    assert finding.diff_image and Path(finding.diff_image).is_file()
    assert Path(finding.diff_image).parent == diff / "acc"
    text = report.text()
    assert f"PNG RMS difference {finding.rms:.3f} > 0.05; diff image: {finding.diff_image}" in text
    assert "data acc/figure1.data.csv: 1 cell(s) differ" in text
    assert "column 'y': 1 -> 1.8" in text
    # nothing was written into the regenerated tree itself
    assert sorted(p.name for p in (new / "acc").iterdir()) == [
        "figure1.data.csv",
        "figure1.png",
        "figure1.svg",
        "table3.csv",
    ]


def test_figure_data_are_compared_by_the_policy(tmp_path):
    """A change of a figure's data beyond the computed tolerance fails even when the picture does
    not move; one within it (rounding) passes."""
    old = _tree(tmp_path / "old")
    assert compare_trees(old, _tree(tmp_path / "n1", data_y=1.0 + 1e-11), diff_dir=tmp_path / "d").ok
    report = compare_trees(old, _tree(tmp_path / "n2", data_y=1.0 + 1e-6), diff_dir=tmp_path / "diff")
    assert report.affected() == ["acc/figure1"]
    assert report.findings[0].rms == 0.0  # the picture itself did not change


def test_pixels_of_sampled_figures_are_not_compared(tmp_path):
    for root, y in ((tmp_path / "old", 1.0), (tmp_path / "new", 1.8)):
        fig = _figure(y)
        save_figure(
            fig,
            "measure_acceptance",
            "fig_accepted",
            root / "measure_acceptance",
            data=pd.DataFrame({"accepted": [1, 2, 3, 2, 1, 2]}),
        )
        plt.close(fig)
    report = compare_trees(tmp_path / "old", tmp_path / "new", diff_dir=tmp_path / "d")
    assert report.ok, report.text()
    assert any("pixels not compared" in n for n in report.notes)


def test_missing_and_extra_files(tmp_path):
    old = _tree(tmp_path / "old")
    new = _tree(tmp_path / "new")
    (new / "acc" / "table3.csv").unlink()
    save_table(pd.DataFrame({"a": [1]}), "acc", "table4", new / "acc")
    save_table(pd.DataFrame({"a": [1]}), "other", "table9", new / "other")
    save_table(pd.DataFrame({"a": [1]}), "other", "table10", new / "other")
    report = compare_trees(old, new, diff_dir=tmp_path / "diff")
    kinds = {(f.kind, f.path) for f in report.findings}
    assert kinds == {
        ("missing", "acc/table3.csv"),
        ("extra", "acc/table4.csv"),
        ("extra", "other/table9.csv"),
        ("extra", "other/table10.csv"),
    }
    text = report.text()
    assert "MISSING  table acc/table3.csv" in text and "EXTRA    table acc/table4.csv" in text
    # restricted to one chapter, the other is not compared
    assert {f.path for f in compare_trees(old, new, diff_dir=tmp_path / "d", chapters=["other"]).findings} == {
        "other/table9.csv",
        "other/table10.csv",
    }


def test_figure_without_data_is_noted(tmp_path):
    old = _tree(tmp_path / "old")
    (old / "acc" / "figure1.data.csv").unlink()
    report = compare_trees(old, old, diff_dir=tmp_path / "diff")
    assert report.ok
    assert any("acc/figure1" in n and "without their data" in n for n in report.notes)


# ---------------------------------------------------------------------------------------------
# manifest, digest, status


def _executed(path: Path, parameters: dict, duration: float) -> Path:
    nb = {
        "cells": [],
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "papermill": {
                "parameters": parameters,
                "duration": duration,
                "exception": None,
                "start_time": "2026-01-01T10:00:00.000000",
                "end_time": "2026-01-01T10:00:12.500000",
            }
        },
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb))
    return path


def test_manifest_lists_every_file_with_hash_provenance_versions_and_machine(tmp_path):
    root = _tree(tmp_path / "art")
    (root / "acc" / ".staging.tmp").write_text("half-written")  # hidden files are not artifacts
    nb = tmp_path / "acc.md"
    nb.write_text("# acc")
    manifest.write_provenance(root / "acc", nb, {"artifacts_dir": "/somewhere", "measurements": None, "k": 3})
    path = manifest.write_manifest(root)
    m = json.loads(path.read_text())
    assert sorted(m["files"]) == ["acc/figure1.data.csv", "acc/figure1.png", "acc/figure1.svg", "acc/table3.csv"]
    entry = m["files"]["acc/table3.csv"]
    assert entry["sha256"] == manifest.sha256(root / "acc" / "table3.csv")
    assert entry["kind"] == "table" and entry["chapter"] == "acc"
    assert m["files"]["acc/figure1.data.csv"]["kind"] == "figure data"
    assert m["chapters"]["acc"]["notebook_sha256"] == manifest.sha256(nb)
    assert m["chapters"]["acc"]["parameters"] == {"measurements": None, "k": 3}  # paths dropped
    for name in manifest.PACKAGES:
        assert name in m["packages"]
    assert m["packages"]["numpy"] == np.__version__
    machine = m["machine"]
    assert machine["cpu"] and machine["blas"] and machine["blas"][0]["internal_api"] == "openblas"
    assert machine["blas"][0]["architecture"]  # the kernel OpenBLAS chose (Haswell, SkylakeX, Zen...)
    assert machine["torch_cpu_capability"] in ("DEFAULT", "AVX2", "AVX512", "ZVECTOR", None)
    # deterministic: no dates or timings, rewriting gives the same bytes
    before = path.read_bytes()
    manifest.write_manifest(root)
    assert path.read_bytes() == before
    # the manifest is not itself an artifact
    assert "manifest.json" not in manifest.list_files(root)


def test_manifest_records_a_chapter_without_provenance_as_unknown(tmp_path):
    m = manifest.build_manifest(_tree(tmp_path / "art"), machine={})
    assert m["chapters"]["acc"]["notebook_sha256"] is None


def test_tree_digest_follows_other_chapters_only(tmp_path):
    root = _tree(tmp_path / "art")
    save_table(pd.DataFrame({"a": [1]}), "card", "scores", root / "card")
    d0 = manifest.tree_digest(root, exclude=["card"])
    save_table(pd.DataFrame({"a": [2]}), "card", "scores", root / "card")
    assert manifest.tree_digest(root, exclude=["card"]) == d0
    save_table(pd.DataFrame({"target": ["x"], "alpha": [0.1], "n": [1]}), "acc", "table3", root / "acc")
    assert manifest.tree_digest(root, exclude=["card"]) != d0


def test_status_page_lists_times_and_parameters(tmp_path):
    exe = tmp_path / "exe"
    _executed(exe / "acc.ipynb", {"artifacts_dir": "/x"}, 12.5)
    _executed(exe / "scaling.ipynb", {"artifacts_dir": "/x", "spacing": "log"}, 3.25)
    table = status.status_table(exe, ["acc", "scaling", "never"])
    assert [r["seconds"] for r in table][:2] == [12.5, 3.25]
    assert [r["parameters"] for r in table] == ["defaults", "spacing='log'", ""]
    page = status.write_status(exe, ["acc", "scaling", "never"]).read_text()
    assert "| {doc}`acc` | 12.5 | 2026-01-01 10:00:12 | defaults |" in page
    assert "| never |  | not executed |  |" in page  # no link to a page that does not exist
    assert "Total execution time of the last runs: 15.8 s." in page


# ---------------------------------------------------------------------------------------------
# figures: data beside them, byte-stable bytes


def test_save_figure_writes_data_beside_it(tmp_path):
    fig = _figure()
    paths = save_figure(fig, "c", "f", tmp_path, data=pd.DataFrame({"x": [0.1, 1 / 3]}))
    assert [p.name for p in paths] == ["f.svg", "f.png", "f.data.csv"]
    assert (tmp_path / "f.data.csv").read_text() == "x\n0.1\n0.333333333333\n"
    with pytest.raises(ValueError, match="data must be a pandas DataFrame"):
        save_figure(fig, "c", "g", tmp_path, data=[1, 2])
    # without data= nothing else is written (backward compatible)
    assert [p.name for p in save_figure(fig, "c", "h", tmp_path)] == ["h.svg", "h.png"]
    plt.close(fig)


_DRAW = textwrap.dedent(
    """
    import sys
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from sdsl.book import style
    from sdsl.book.outputs import save_figure

    def draw(name):
        rng = np.random.default_rng(0)
        fig, ax = plt.subplots()
        ax.scatter(rng.normal(size=30), rng.normal(size=30), label="points")
        ax.fill_between([0, 1], [0, 1], alpha=0.3)
        ax.set_xlabel("$N$ (parameters)")
        ax.legend()
        save_figure(fig, "c", name, sys.argv[1])

    draw("plain")      # without sdsl.book.style.use(): save_figure fixes the hash salt itself
    style.use()
    draw("styled")
    """
)


def test_figures_are_byte_stable_across_processes(tmp_path):
    """Two fresh interpreters draw the same figures: identical SVG and PNG bytes, with and
    without sdsl.book.style.use(), and no date or version in the SVG."""
    outs = []
    for i in range(2):
        out = tmp_path / str(i)
        subprocess.run([sys.executable, "-c", _DRAW, str(out)], check=True, capture_output=True)
        outs.append(out)
    for name in ("plain.svg", "plain.png", "styled.svg", "styled.png"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    svg = (outs[0] / "styled.svg").read_text()
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg


def test_timing_columns_are_checked_for_presence_not_value(tmp_path):
    for root, t, k in ((tmp_path / "old", 0.011, 5), (tmp_path / "new", 0.017, 5)):
        save_table(
            pd.DataFrame({"accepted": [k], "ttft_s": [t]}), "measure_acceptance", "summary", root / "measure_acceptance"
        )
    report = compare_trees(tmp_path / "old", tmp_path / "new", diff_dir=tmp_path / "d")
    assert report.ok, report.text()
    assert any("measure_acceptance/summary.csv [ttft_s]" in n for n in report.notes)
    # the other columns are still compared, and a timing column that disappears is reported
    save_table(
        pd.DataFrame({"accepted": [600]}), "measure_acceptance", "summary", tmp_path / "new" / "measure_acceptance"
    )
    summary = compare_trees(tmp_path / "old", tmp_path / "new", diff_dir=tmp_path / "d").findings[0].detail
    assert "columns removed: ['ttft_s']" in summary and "'accepted': 5 -> 600" in summary
