"""Write data/published_accuracy.csv and its .yml: how far the plan's alpha and wall-clock speedup
were from what published deployments of speculative decoding measured, the figures ``sdsl plan``
prints beside its own.

    .venv/bin/python tools/published_accuracy.py           # rewrite both files
    .venv/bin/python tools/published_accuracy.py --check   # exit 1 if a fresh computation differs

The figures are sdsl.plan.published.accuracy_rows (numpy only), computed from
data/published_deployments.csv with the presets, accelerators and acceptance laws they read. ``sdsl
plan`` reads the committed numbers instead of predicting some hundred deployments on every run;
tests/unit/plan/test_published.py recomputes them and compares.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys

import yaml

from sdsl import data
from sdsl.paths import DATA
from sdsl.plan.published import (
    ACCURACY_COLUMNS,
    ACCURACY_DATASET,
    ALPHA_TOLERANCE,
    SPEEDUP_TOLERANCE,
    TOKENS_PER_PARAMETER,
    accuracy_rows,
)

CSV = DATA / f"{ACCURACY_DATASET}.csv"
YML = DATA / f"{ACCURACY_DATASET}.yml"
#: The data sets the figures are computed from (their sha256 at computing time: computed_from).
INPUTS = ("published_deployments", "presets", "accelerators", "acceptance_laws", "paper_table3")

COLUMNS = [
    {
        "name": "quantity",
        "type": "str",
        "unit": "",
        "description": "what is predicted: the acceptance rate alpha, or the wall-clock speedup",
        "allowed": ["alpha", "speedup"],
    },
    {
        "name": "alpha_from",
        "type": "str",
        "unit": "",
        "description": "the acceptance law: paper (Eq. 5, Table 3), refit (Eq. 5 refitted on Tables 1 and 2), "
        "published (the law fitted to the published deployments, sdsl.plan.published.published_law), constant "
        "(the median measured alpha), measured (the row's own alpha: the cost model's error alone)",
        "allowed": ["paper", "refit", "published", "constant", "measured"],
    },
    {
        "name": "cost_model",
        "type": "str",
        "unit": "",
        "description": "speedup only: flop (Theorem 3.8 with c = N/M), step_time (the step-time model of the "
        "row's accelerator preset), source_c (Theorem 3.8 with the source's own c); empty for alpha",
        "required": False,
        "allowed": ["flop", "step_time", "source_c"],
    },
    {
        "name": "hardware_class",
        "type": "str",
        "unit": "",
        "description": "the deployments' hardware class (data/published_deployments.yml), or all",
        "allowed": ["all", "tpu", "datacenter-gpu", "consumer-gpu", "apple", "cpu"],
    },
    {
        "name": "scheme",
        "type": "str",
        "unit": "",
        "description": "alpha: not fitted here (a law that never saw these data), leave one target out, leave "
        "one source out (held out), in sample; speedup: headline (at the published draft length where fixed, "
        "else the plan's best)",
        "allowed": ["not fitted here", "leave one target out", "leave one source out", "in sample", "headline"],
    },
    {
        "name": "n",
        "type": "int",
        "unit": "",
        "description": "settings (alpha) or deployments (speedup) scored",
        "min": 1,
    },
    {
        "name": "within",
        "type": "int",
        "unit": "",
        "description": "how many of them were within the tolerance",
        "min": 0,
    },
    {
        "name": "tolerance",
        "type": "float",
        "unit": "",
        "description": f"alpha: absolute ({ALPHA_TOLERANCE:g}); speedup: relative, predicted / measured within "
        f"1 +- {SPEEDUP_TOLERANCE:g}",
        "min_exclusive": 0,
    },
    {
        "name": "mae",
        "type": "float",
        "unit": "",
        "description": "alpha only: mean absolute error of alpha",
        "required": False,
        "min": 0,
    },
    {
        "name": "median_ratio",
        "type": "float",
        "unit": "",
        "description": "speedup only: median of predicted over measured speedup",
        "required": False,
        "min_exclusive": 0,
    },
    {
        "name": "presets",
        "type": "str",
        "unit": "",
        "description": "step_time only: the accelerator presets of the scored deployments",
        "required": False,
    },
]


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(ACCURACY_COLUMNS), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(
            {k: "" if r[k] is None else repr(r[k]) if isinstance(r[k], float) else r[k] for k in ACCURACY_COLUMNS}
        )
    return buf.getvalue()


def yml_text(csv_sha: str) -> str:
    meta = {
        "title": "How far the plan's alpha and wall-clock speedup were from published deployments (printed by sdsl plan)",
        "source": (
            "Computed by tools/published_accuracy.py (sdsl.plan.published.accuracy_rows) from "
            "data/published_deployments.csv (published measurements of draft-model speculative decoding, sources "
            "in its .yml), with data/presets.csv, data/accelerators.csv, data/acceptance_laws.csv and "
            "data/paper_table3.csv"
        ),
        "licence": "Computed by the project from transcribed data: MIT, as the project.",
        "description": (
            "Each published deployment turned into the plan's inputs (sdsl.plan.published.deployment_of_row; "
            f"pre-training tokens not published: {TOKENS_PER_PARAMETER:g} per parameter assumed) and predicted as "
            "sdsl plan predicts it; the errors summarised by the acceptance law, the cost model and the hardware "
            "class. Alpha over the settings with a measured alpha (sdsl.plan.published.alpha_settings); speedup "
            "over the deployments with a measured speedup for which sdsl plan gives an answer. sdsl plan prints "
            "the row of its own acceptance source and cost model (sdsl.plan.published.typical_error); the "
            "published-deployments chapter shows every figure. tests/unit/plan/test_published.py recomputes "
            "and compares. Rewrite with the tool after any input changes (their sha256 at computing time: "
            "computed_from)."
        ),
        "key": ["quantity", "alpha_from", "cost_model", "hardware_class", "scheme"],
        "computed_from": {name: data.sha256(DATA / f"{name}.csv") for name in INPUTS},
        "columns": COLUMNS,
        "sha256": csv_sha,
    }
    head = (
        f"# Provenance and schema of {ACCURACY_DATASET}.csv; read it with sdsl.data.load('{ACCURACY_DATASET}').\n"
        "# Written by tools/published_accuracy.py: edit the tool, not this file.\n"
    )
    return head + yaml.safe_dump(meta, sort_keys=False, width=100, allow_unicode=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare a fresh computation with the committed file")
    args = ap.parse_args(argv)
    text = csv_text(accuracy_rows())
    if args.check:
        same = CSV.is_file() and CSV.read_text(encoding="utf-8") == text
        print(f"{CSV.name} is up to date" if same else f"{CSV.name} differs from a fresh computation")
        return 0 if same else 1
    tmp_csv, tmp_yml = CSV.with_suffix(".csv.tmp"), YML.with_suffix(".yml.tmp")
    tmp_csv.write_text(text, encoding="utf-8")
    tmp_yml.write_text(yml_text(data.sha256(tmp_csv)), encoding="utf-8")
    tmp_csv.replace(CSV)  # an interrupted run leaves the previous files whole
    tmp_yml.replace(YML)
    print(f"wrote {CSV} and {YML}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
