"""Fill the derived cells of data/published_deployments.csv from its transcribed ones and record the
CSV's sha256 in data/published_deployments.yml.

    .venv/bin/python tools/published_deployments.py           # rewrite the derived cells
    .venv/bin/python tools/published_deployments.py --check   # exit 1 if a derived cell differs

Every number a source printed is typed into the CSV as printed. The cells below are derived, never
typed, so that a derivation is code and not hand arithmetic:

* ``target_params`` / ``target_tokens`` (and ``draft_*``) of a model that is a preset of
  data/presets.csv (``target_preset`` set): the preset's ``params`` and ``tokens``, with the sources
  ``data/presets.csv: <preset>``; of a model that is not a preset but has a preset's architecture
  (``*_params_source`` reads ``same architecture as data/presets.csv: <preset> ...``): the preset's
  ``params`` only (its training tokens are not the preset's).
* ``alpha`` where ``alpha_derivation`` is ``reported``: the source's alpha (``measured_value``).
* ``alpha`` where ``alpha_derivation`` starts with ``inverted``: the root of
  ``E(alpha, gamma) = (1 - alpha^(gamma+1)) / (1 - alpha) = L`` (Leviathan et al. 2023, Eq. 1) for the
  source's mean accepted length ``L`` (bonus token counted) at its fixed integer ``gamma``, by
  :func:`sdsl.measure.estimators.alpha_from_mean_tokens`.
* ``speedup`` where ``speedup_derivation`` is ``spec_value/baseline_value`` (throughputs),
  ``baseline_value/spec_value`` (latencies) or ``1/slowdown`` (a source that prints a slowdown
  factor in ``spec_value``).
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys

from sdsl import data
from sdsl.measure.estimators import alpha_from_mean_tokens
from sdsl.paths import DATA

CSV = DATA / "published_deployments.csv"
YML = DATA / "published_deployments.yml"
PRESETS = DATA / "presets.csv"

#: ``alpha_derivation`` of an alpha this tool computes from a mean accepted length
INVERTED = (
    "inverted from the mean accepted length L (bonus token counted) at the fixed gamma: "
    "(1 - alpha^(gamma+1)) / (1 - alpha) = L, by sdsl.measure.estimators.alpha_from_mean_tokens "
    "(tools/published_deployments.py)"
)
_SAME_ARCH = re.compile(r"same architecture as data/presets\.csv: ([A-Za-z0-9.\-]+)")
SPEEDUP_RULES = ("reported", "spec_value/baseline_value", "baseline_value/spec_value", "1/slowdown")


def _presets() -> dict[str, dict[str, str]]:
    with open(PRESETS, encoding="utf-8", newline="") as fh:
        return {r["preset"]: r for r in csv.DictReader(fh)}


def _fill_model(row: dict[str, str], side: str, presets: dict[str, dict[str, str]]) -> None:
    """The parameters (and, for a preset, the training tokens) of the target or draft."""
    preset = row[f"{side}_preset"]
    if preset:
        if preset not in presets:
            raise ValueError(f"row {row['row_id']}: {side}_preset {preset!r} is not in data/presets.csv")
        p = presets[preset]
        row[f"{side}_params"] = p["params"]
        row[f"{side}_params_source"] = f"data/presets.csv: {preset}"
        row[f"{side}_tokens"] = p["tokens"]
        row[f"{side}_tokens_source"] = f"data/presets.csv: {preset}" if p["tokens"] else ""
        return
    m = _SAME_ARCH.search(row[f"{side}_params_source"])
    if m:
        if m.group(1) not in presets:
            raise ValueError(f"row {row['row_id']}: {side}_params_source names {m.group(1)!r}, not in data/presets.csv")
        row[f"{side}_params"] = presets[m.group(1)]["params"]


def derived_alpha(measured_value: float, gamma: int) -> float:
    """alpha whose expected tokens per iteration ``E(alpha, gamma)`` equal the mean accepted length
    ``measured_value`` (the bonus token counted), by :func:`alpha_from_mean_tokens` (the point
    estimate does not depend on the number of iterations, given as 1)."""
    return float(alpha_from_mean_tokens(measured_value, gamma, 1).alpha)


def _fill_alpha(row: dict[str, str]) -> None:
    how = row["alpha_derivation"]
    if how == "reported":
        if row["measured"] != "alpha":
            raise ValueError(f"row {row['row_id']}: a reported alpha needs measured = alpha")
        row["alpha"] = row["measured_value"]
    elif how.startswith("inverted"):
        if row["measured"] != "mean_accepted_length" or not row["gamma"].isdigit():
            raise ValueError(f"row {row['row_id']}: inverting needs a mean accepted length at an integer gamma")
        row["alpha"] = f"{derived_alpha(float(row['measured_value']), int(row['gamma'])):.4f}"
        row["alpha_derivation"] = INVERTED
    elif row["alpha"]:
        raise ValueError(f"row {row['row_id']}: alpha given but alpha_derivation is {how!r}")


def _fill_speedup(row: dict[str, str]) -> None:
    how = row["speedup_derivation"]
    if how not in SPEEDUP_RULES and (how or row["speedup"]):
        raise ValueError(f"row {row['row_id']}: speedup_derivation {how!r} is not one of {SPEEDUP_RULES}")
    if how == "spec_value/baseline_value":
        row["speedup"] = f"{float(row['spec_value']) / float(row['baseline_value']):.3f}"
    elif how == "baseline_value/spec_value":
        row["speedup"] = f"{float(row['baseline_value']) / float(row['spec_value']):.3f}"
    elif how == "1/slowdown":
        row["speedup"] = f"{1.0 / float(row['spec_value']):.3f}"


def derive(text: str) -> str:
    """The CSV ``text`` with every derived cell recomputed (columns and rows in their order)."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    fields = list(reader.fieldnames or [])
    presets = _presets()
    rows = []
    for row in reader:
        for side in ("target", "draft"):
            _fill_model(row, side, presets)
        _fill_alpha(row)
        _fill_speedup(row)
        rows.append(row)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--check", action="store_true", help="compare the derived cells with the committed file; write nothing"
    )
    args = ap.parse_args(argv)
    text = CSV.read_text(encoding="utf-8")
    fresh = derive(text)
    if args.check:
        same = fresh == text
        print("published_deployments.csv is up to date" if same else "published_deployments.csv: derived cells differ")
        return 0 if same else 1
    CSV.write_text(fresh, encoding="utf-8")
    yml = YML.read_text(encoding="utf-8")
    YML.write_text(re.sub(r"(?m)^sha256: .*$", f"sha256: {data.sha256(CSV)}", yml), encoding="utf-8")
    print(f"wrote {CSV} and the sha256 in {YML}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
