"""The regeneration check end to end, on a copy of the repository.

``python -m sdsl.build.check`` runs in a copy (``sdsl/``, ``data/``, the notebooks needed, a
``runs.yml`` naming only them) with ``PYTHONPATH`` pointing at the copy, so that the notebooks'
kernels import the copy's ``sdsl`` and read the copy's ``data/``. Only the affected chapter is
executed: changing one number of ``data/acceptance.csv`` must make the check fail naming the
acceptance chapter's tables and figures, and restoring it must make it pass.
"""

from __future__ import annotations

import pytest

from sdsl.paths import NOTEBOOKS

pytestmark = pytest.mark.slow


@pytest.fixture
def acceptance_copy(tmp_path, make_copy, run_check):
    if not (NOTEBOOKS / "acceptance.md").is_file():
        pytest.fail("notebooks/acceptance.md is missing: the check test regenerates that chapter")
    repo = make_copy(tmp_path / "repo", {"acceptance": None}, "runs:\n  acceptance: {}\n")
    first = run_check(repo, "--accept")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "ACCEPTED" in first.stdout
    assert (repo / "baseline" / "manifest.json").is_file()
    return repo


def test_changed_data_fails_naming_tables_and_figures_then_restored_passes(acceptance_copy, run_check, replace_once):
    repo = acceptance_copy
    csv = repo / "data" / "acceptance.csv"
    # OPT-13B with OPT-125M: alpha 0.5959 (Table 1) -> 0.6959
    original = replace_once(
        csv,
        "OPT-13B,OPT-125M,OPT,1,29.79318619,15.58453751,0.5959,",
        "OPT-13B,OPT-125M,OPT,1,29.79318619,15.58453751,0.6959,",
    )
    try:
        changed = run_check(repo)
    finally:
        csv.write_text(original)
        replace_once(
            csv,
            "OPT-13B,OPT-125M,OPT,1,29.79318619,15.58453751,0.5959,",
            "OPT-13B,OPT-125M,OPT,1,29.79318619,15.58453751,0.5959,",
        )
    report = changed.stdout + changed.stderr
    assert changed.returncode == 1, report
    # the Eq. 5 fit (Table 3), the per-target fits (Table 4) and both figures move
    for name in ("acceptance/table3.csv", "acceptance/table4.csv"):
        assert f"CHANGED  table {name}" in report, report
    for name in ("acceptance/figure1", "acceptance/figure3"):
        assert f"CHANGED  figure {name}" in report, report
    assert "PNG RMS difference" in report and "diff image:" in report
    assert "computed: |change| <=" in report  # the report names the rule that failed
    assert "column 'alpha'" in report or "column 'estimate'" in report or "column 'refit'" in report
    # tables that do not depend on that cell are not named
    assert "table2" not in report.split("FAILED:")[1].split("\n")[0]

    restored = run_check(repo)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "OK: every artifact matches the baseline." in restored.stdout


FIRST = """# First

```{code-cell} ipython3
:tags: [parameters]
artifacts_dir = None
value = 1.0
fail = False
```

```{code-cell} ipython3
import pandas as pd
from sdsl.book.outputs import save_table
save_table(pd.DataFrame({"value": [value]}), "first", "t", artifacts_dir)
if fail:
    raise RuntimeError("the first notebook was told to fail")
save_table(pd.DataFrame({"value": [2 * value]}), "first", "u", artifacts_dir)
```
"""

CARD = """# Card

```{code-cell} ipython3
:tags: [parameters]
artifacts_dir = None
```

```{code-cell} ipython3
import pandas as pd
from sdsl.paths import artifacts_root
from sdsl.book.outputs import save_table
t = pd.read_csv(artifacts_root() / "first" / "u.csv")  # fails if 'first' has not run yet
save_table(t * 10, "card", "scores", artifacts_dir)
```
"""


def test_last_chapter_runs_after_the_others_and_a_failed_notebook_fails_the_check(tmp_path, make_copy, run_check):
    # 'card' is listed first but marked last: it reads the artifacts of 'first'
    runs = "runs:\n  card: {}\n  first: {value: 3.0}\nlast: [card]\n"
    repo = make_copy(tmp_path / "repo", {"first": FIRST, "card": CARD}, runs)
    accepted = run_check(repo, "--accept")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert (repo / "baseline" / "card" / "scores.csv").read_text().splitlines() == ["value", "60"]
    baseline_before = sorted(p.relative_to(repo).as_posix() for p in (repo / "baseline").rglob("*"))

    (repo / "notebooks" / "runs.yml").write_text(runs.replace("value: 3.0", "value: 3.0, fail: true"))
    failed = run_check(repo, "--accept")
    out = failed.stdout + failed.stderr
    assert failed.returncode == 2, out
    assert "CHECK FAILED: a notebook failed" in out
    assert "RuntimeError: the first notebook was told to fail" in out
    assert "notebook 'card' not executed" in out
    # nothing was accepted and nothing half-written reached the baseline
    assert sorted(p.relative_to(repo).as_posix() for p in (repo / "baseline").rglob("*")) == baseline_before
