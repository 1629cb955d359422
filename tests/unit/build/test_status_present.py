"""The status page's lines (sdsl.build.status) and how executed notebooks are presented
(sdsl.build.pipeline): no parameter cell and no absolute path of the build machine on a page."""

from __future__ import annotations

import json

from sdsl.build import pipeline, status


def test_check_lines_name_the_chapters_the_commit_and_the_verdict(tmp_path):
    rec = tmp_path / "last.json"
    rec.write_text(
        json.dumps(
            {
                "chapters": ["beyond"],
                "ok": False,
                "accepted": False,
                "exit_code": 1,
                "summary": "3 artifacts compared, 1 changed: beyond/laws",
                "commit": "abc123def456 plus uncommitted changes",
            }
        )
    )
    (line,) = status.check_lines(rec)
    assert "`python -m sdsl.build.check beyond`" in line
    assert "commit `abc123def456` plus uncommitted changes" in line
    assert line.endswith("failed: 3 artifacts compared, 1 changed: beyond/laws.")
    assert "this build did not run it" in status.check_lines(tmp_path / "absent.json")[0]


def test_environment_lines_show_cpu_blas_kernel_and_versions():
    manifest = {
        "machine": {
            "cpu": "AMD EPYC",
            "cores": 2,
            "cpu_flags": ["avx2"],
            "blas": [{"internal_api": "openblas", "version": "0.3", "architecture": "Haswell", "num_threads": 2}],
            "torch_cpu_capability": "AVX2",
        },
        "packages": {"numpy": "2.4.6", "pandas": "3.1.1"},
    }
    text = "\n".join(status.environment_lines(manifest))
    assert "openblas 0.3, kernel Haswell, 2 threads" in text and "AMD EPYC, 2 cores" in text
    assert "| numpy | 2.4.6 |" in text and "| torch CPU capability | AVX2 |" in text


def test_present_cells_removes_parameter_cells_and_absolute_paths(tmp_path):
    root = tmp_path / "checkout"
    nb = {
        "cells": [
            {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "x = 1", "outputs": []},
            {
                "cell_type": "code",
                "metadata": {"tags": ["injected-parameters"]},
                "source": f'artifacts_dir = "{root}/build/artifacts/c"',
                "outputs": [],
            },
            {
                "cell_type": "code",
                "metadata": {},
                "source": "print(p)",
                "outputs": [{"output_type": "stream", "name": "stdout", "text": f"{root}/data/a.csv and {root}\n"}],
            },
        ],
        "metadata": {},
    }
    out = pipeline.present_cells(nb, root)
    assert all("remove-cell" in c["metadata"]["tags"] for c in out["cells"][:2])
    assert "tags" not in out["cells"][2]["metadata"]
    assert out["cells"][1]["source"] == 'artifacts_dir = "build/artifacts/c"'
    assert out["cells"][2]["outputs"][0]["text"] == "data/a.csv and .\n"
    assert str(root) not in json.dumps(out)
    assert nb["cells"][0]["metadata"]["tags"] == ["parameters"]  # the input is not changed
