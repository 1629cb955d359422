"""Print the smallest change of one value, per value class, that the regeneration check detects.

For each class of the tolerance policy (``sdsl/build/policy.py``) a real cell of the committed
baseline is perturbed by ever smaller amounts (relative, or absolute where the class is absolute)
and compared with :func:`sdsl.build.compare.compare_tables`; the table lists the smallest
perturbation still reported as a change. Run it after changing the policy:

    .venv/bin/python tools/detection_limits.py
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from sdsl import tolerance as policy
from sdsl.build.compare import compare_tables
from sdsl.paths import BASELINE

# (class, artifact, column, row, "relative" or "absolute")
CELLS = [
    ("exact (an integer)", "scaling/table7.csv", "points", 0, "absolute"),
    ("computed (N* of Table 5)", "optimal_draft/table5.csv", "n_star", 0, "relative"),
    ("computed (Table 8's g)", "scaling/table8.csv", "estimate", 2, "relative"),
    ("computed, figure data (T of Figure 2)", "optimal_draft/figure2.data.csv", "tokens_per_flop", 100, "relative"),
    ("difference (ours - paper, Table 4)", "acceptance/table4_vs_paper.csv", "difference", 0, "absolute"),
    ("difference (relative deviation, Table 5)", "optimal_draft/table5.csv", "n_star_rel_dev", 0, "absolute"),
    ("float32 (draft perplexity)", "measure_acceptance/acceptance_row.csv", "draft_ppl", 0, "relative"),
    ("stochastic (alpha, gamma 2)", "measure_acceptance/summary.csv", "alpha", 0, "absolute"),
    ("stochastic (accepted tokens)", "measure_acceptance/summary.csv", "accepted", 0, "absolute"),
]


def smallest_detected(artifact: str, column: str, row: int, mode: str) -> float:
    src = BASELINE / artifact
    with tempfile.TemporaryDirectory() as tmp:
        new = Path(tmp) / "new.csv"
        frame = pd.read_csv(src)
        value = float(frame[column].iat[row])
        detected = np.inf
        for k in range(-4, 17):
            for m in (5.0, 2.0, 1.0):
                delta = m * 10.0**-k
                if mode == "absolute" and frame[column].dtype.kind in "iu" and delta < 1:
                    continue
                f = frame.copy()
                f[column] = f[column].astype(float) if f[column].dtype.kind not in "iu" or delta < 1 else f[column]
                f.loc[row, column] = value + (delta if mode == "absolute" else value * delta)
                f.to_csv(new, index=False, float_format="%.17g")
                if compare_tables(src, new, artifact)[1]:
                    detected = delta
        shutil.rmtree(tmp, ignore_errors=True)
    return detected


def main() -> int:
    print(f"Policy: {policy.describe()}\n")
    print(f"{'class (cell)':45s} {'artifact':42s} smallest detected change")
    for label, artifact, column, row, mode in CELLS:
        d = smallest_detected(artifact, column, row, mode)
        unit = "relative" if mode == "relative" else "absolute"
        print(f"{label:45s} {artifact + ':' + column:42s} {d:.0e} ({unit})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
