"""Write data/acceptance_laws.csv and its .yml: the fitted coefficients of the acceptance laws that
predict new targets, for the N* interval of ``sdsl plan`` (sdsl.plan.interval).

    .venv/bin/python tools/fit_acceptance_laws.py           # rewrite both files
    .venv/bin/python tools/fit_acceptance_laws.py --check   # exit 1 if a fresh fit differs

The fit is sdsl.plan.interval.fit_law_rows (sdsl.model.alpha_laws.fit_laws, statsmodels OLS on the 50
pairs of data/acceptance.csv with sizes from data/models.csv). ``sdsl plan`` reads the committed numbers
instead of fitting: pandas and statsmodels take over a second to import and are not dependencies of
the installed wheel. tests/unit/plan/test_interval.py refits and compares on every test run.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys

import yaml

from sdsl import data
from sdsl.paths import DATA
from sdsl.plan.interval import LAWS_FILE_COLUMNS, fit_law_rows

CSV = DATA / "acceptance_laws.csv"
YML = DATA / "acceptance_laws.yml"

COLUMNS = [
    {"name": "law", "type": "str", "unit": "", "description": "name of the law in sdsl.model.alpha_laws.LAWS"},
    {"name": "label", "type": "str", "unit": "", "description": "the law's form, as the beyond chapter writes it"},
    {
        "name": "formula",
        "type": "str",
        "unit": "",
        "description": "the regression, alpha on the covariates (x, y "
        "perplexities of draft and target; ln_n, ln_d logs of the draft's parameters and pre-training tokens)",
    },
    {
        "name": "parameter",
        "type": "str",
        "unit": "",
        "description": "coefficient (Intercept or the covariate it multiplies)",
        "allowed": ["Intercept", "x", "y", "ln_n", "ln_d"],
    },
    {"name": "estimate", "type": "float", "unit": "", "description": "OLS estimate (alpha per unit of the covariate)"},
    {"name": "std_error", "type": "float", "unit": "", "description": "its standard error (non-robust OLS)", "min": 0},
    {"name": "nobs", "type": "int", "unit": "pairs", "description": "(target, draft) pairs fitted", "min": 1},
    {"name": "r2", "type": "float", "unit": "", "description": "in-sample R^2 of the law", "max": 1},
]


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(LAWS_FILE_COLUMNS), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: repr(v) if isinstance(v, float) else v for k, v in r.items()})
    return buf.getvalue()


def yml_text(csv_sha: str) -> str:
    inputs = {name: data.sha256(DATA / f"{name}.csv") for name in ("acceptance", "models")}
    meta = {
        "title": "Fitted acceptance laws that predict a new target (for the N* interval of sdsl plan)",
        "source": (
            "Fitted by tools/fit_acceptance_laws.py (sdsl.plan.interval.fit_law_rows: "
            "sdsl.model.alpha_laws.fit_laws, statsmodels OLS) on the 50 (target, draft) pairs of "
            "Tables 1 and 2 of Bozorgkhoo and Molybog 2026, arXiv 2603.11053 (data/acceptance.csv), "
            "draft sizes and tokens from data/models.csv; the log-linear forms follow Scylla, "
            "arXiv 2505.07858"
        ),
        "licence": "Computed by the project from transcribed data: MIT, as the project.",
        "description": (
            "Coefficients of the laws of sdsl.model.alpha_laws.LAWS that are refitted and carry "
            "the target through its perplexity y (cross_target), so that they can predict a "
            "target they were not fitted on: the Eq. 5 plane refitted, a + b ln N + c y and "
            "a + b ln N + c ln D + e y. sdsl plan solves N* under each of them (the law source of "
            "its interval, sdsl.plan.interval) from these numbers instead of refitting, which would "
            "import pandas and statsmodels. tests/unit/plan/test_interval.py refits and compares. "
            "Rewrite with the tool after data/acceptance.csv or data/models.csv changes (their "
            "sha256 at fitting time: fitted_on)."
        ),
        "key": ["law", "parameter"],
        "fitted_on": inputs,
        "columns": COLUMNS,
        "sha256": csv_sha,
    }
    head = (
        "# Provenance and schema of acceptance_laws.csv; read it with sdsl.data.load('acceptance_laws').\n"
        "# Written by tools/fit_acceptance_laws.py: edit the tool, not this file.\n"
    )
    return head + yaml.safe_dump(meta, sort_keys=False, width=100, allow_unicode=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare a fresh fit with the committed file; write nothing")
    args = ap.parse_args(argv)
    text = csv_text(fit_law_rows())
    if args.check:
        same = CSV.is_file() and CSV.read_text(encoding="utf-8") == text
        print("acceptance_laws.csv is up to date" if same else "acceptance_laws.csv differs from a fresh fit")
        return 0 if same else 1
    CSV.write_text(text, encoding="utf-8")
    YML.write_text(yml_text(data.sha256(CSV)), encoding="utf-8")
    print(f"wrote {CSV} and {YML}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
