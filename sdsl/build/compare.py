"""Comparing a regenerated artifacts tree with the baseline, by the tolerance policy.

:func:`compare_trees` walks both trees (:func:`sdsl.build.manifest.list_files`): a file only in the
baseline is *missing*, one only in the new tree *extra*. Tables and figure data are compared cell by
cell under :mod:`sdsl.tolerance` (each column by the rule of its class; tables of raw draws as
samples); figures by image comparison of their PNGs where their data are deterministic; any other
file byte for byte. The :class:`Report` names every file, cell and rule that failed.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdsl import tolerance as policy
from sdsl._owned import note_written
from sdsl.build.manifest import PROVENANCE_NAME, artifact_kind, list_files, read_provenance
from sdsl.data import sha256

__all__ = [
    "check_recorded",
    "DamagedArtifact",
    "Finding",
    "Report",
    "check_readable",
    "compare_tables",
    "compare_samples",
    "compare_figures",
    "compare_trees",
]


class DamagedArtifact(ValueError):
    """An artifact that cannot be read as what it is (a truncated PNG, a CSV that is not UTF-8):
    one line naming the file; nothing is compared, no number is made from it."""


def _read_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read as its kind of artifact (``None``: it can): a CSV must be UTF-8
    and parse, a PNG must decode whole."""
    try:
        if path.name.endswith(".csv"):
            with open(path, encoding="utf-8") as fh:
                pd.read_csv(fh)
        elif path.name.endswith(".png"):
            from PIL import Image

            with Image.open(path) as im:
                im.load()
        else:
            path.read_bytes()
    except UnicodeDecodeError as exc:
        return f"byte {exc.start} is not UTF-8"
    except (OSError, ValueError, SyntaxError) as exc:  # PIL, pandas (ParserError, EmptyDataError)
        return f"{type(exc).__name__}: {' '.join(str(exc).split()) or 'unreadable'}"
    return None


def check_readable(root: Path | str, files: Iterable[str], what: str = "baseline") -> None:
    """Raise :class:`DamagedArtifact` naming the first of ``files`` (relative to ``root``) that
    cannot be read as its kind of artifact."""
    root = Path(root)
    for rel in files:
        problem = _read_problem(root / rel)
        if problem is not None:
            raise DamagedArtifact(f"{what} artifact {root / rel} is damaged ({problem}): nothing was compared")


def check_recorded(root: Path | str, manifest: dict[str, Any], chapters: Iterable[str] | None = None) -> None:
    """Raise :class:`DamagedArtifact` naming the first file of the tree ``root`` (of ``chapters``,
    default all) whose bytes are not those its manifest records (sha256), or whose chapter's
    provenance record is not a JSON object: a tree the tools wrote, changed since (a truncated
    figure whose PNG still reads, a byte flipped in a CSV), is damaged, not "changed"."""
    root = Path(root)
    wanted = None if chapters is None else set(chapters)
    for rel, entry in sorted(manifest["files"].items()):
        path = root / rel
        if (wanted is not None and rel.split("/", 1)[0] not in wanted) or not path.is_file():
            continue
        if not isinstance(entry, dict) or sha256(path) != entry.get("sha256"):
            raise DamagedArtifact(
                f"baseline artifact {path} is not the file its manifest records (sha256 differs): damaged or "
                "edited by hand; nothing was compared"
            )
    for chapter in sorted({rel.split("/", 1)[0] for rel in manifest["files"]} & (wanted or set(manifest["chapters"]))):
        try:
            record = read_provenance(root / chapter)
            damaged = record is not None and not isinstance(record, dict)
        except (UnicodeDecodeError, ValueError):  # not text, not JSON
            damaged = True
        if damaged:
            raise DamagedArtifact(
                f"baseline record {root / chapter / PROVENANCE_NAME} is damaged (not a JSON object): nothing was compared"
            )


@dataclass
class Finding:
    """One artifact that does not match: ``kind`` is ``missing``, ``extra`` or ``changed``;
    ``artifact`` is ``table``, ``figure``, ``figure data`` or ``file``; ``path`` is relative to the
    tree (for a figure, its stem ``acceptance/figure1``)."""

    kind: str
    artifact: str
    path: str
    detail: str = ""
    cells: list[dict[str, Any]] = field(default_factory=list)
    rms: float | None = None
    diff_image: str | None = None

    @property
    def name(self) -> str:
        """``chapter/name`` without extension (``acceptance/figure1``)."""
        for suffix in (".data.csv", ".csv", ".png", ".svg"):
            if self.path.endswith(suffix):
                return self.path[: -len(suffix)]
        return self.path

    def text(self) -> str:
        head = f"{self.kind.upper():8} {self.artifact} {self.path}"
        return head + ("\n" + _indent(self.detail) if self.detail else "")


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line if line else line for line in text.splitlines())


@dataclass
class Report:
    """The result of :func:`compare_trees`."""

    baseline: str
    new: str
    compared: int = 0
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def affected(self) -> list[str]:
        """Sorted ``chapter/name`` of every table or figure that is missing, extra or changed."""
        return sorted({f.name for f in self.findings})

    def text(self) -> str:
        lines = [
            f"Compared {self.compared} artifact(s) of {self.new}",
            f"     with the baseline {self.baseline}",
            f"Policy: {policy.describe()}",
        ]
        if self.ok:
            lines.append("OK: every artifact matches the baseline.")
        else:
            counts: dict[str, int] = {}
            for f in self.findings:
                counts[f.kind] = counts.get(f.kind, 0) + 1
            summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
            lines.append(f"FAILED: {summary}; affected: {', '.join(self.affected())}")
            lines.extend(f.text() for f in self.findings)
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# cells


def _num(x: Any) -> float | None:
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, float, np.integer, np.floating)):
        return float(x)
    return None


def _is_numeric(s: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s)


def _integral(s: pd.Series) -> bool:
    """An integer column as written (``288``), not a float that happens to be integral when
    printed with 12 digits (``4.00001165033e+12``)."""
    return pd.api.types.is_integer_dtype(s)


def _row_label(df: pd.DataFrame, i: int) -> str:
    """Line of the row in the CSV plus its text cells, to find it again."""
    texts = [f"{c}={df.iat[i, j]}" for j, c in enumerate(df.columns) if isinstance(df.iat[i, j], str)][:3]
    return f"line {i + 2}" + (f" ({', '.join(texts)})" if texts else "")


def _columns_problems(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    problems = []
    ca, cb = list(a.columns), list(b.columns)
    removed = [c for c in ca if c not in cb]
    added = [c for c in cb if c not in ca]
    if removed:
        problems.append(f"columns removed: {removed}")
    if added:
        problems.append(f"columns added: {added}")
    if not removed and not added and ca != cb:
        problems.append(f"columns reordered: {ca} -> {cb}")
    return problems


def compare_tables(old: Path | str, new: Path | str, artifact: str) -> tuple[str, list[dict[str, Any]]]:
    """Compare two CSV tables cell by cell under the policy (each column by :func:`policy.rule_for`).

    Returns ``(summary, cells)``: ``summary`` is ``""`` when they agree, else what differs;
    ``cells`` lists each failing cell as ``{row, column, old, new, rel, rule, bound}``.
    """
    a, b = pd.read_csv(old), pd.read_csv(new)
    problems = _columns_problems(a, b)
    if len(a) != len(b):
        problems.append(f"rows: {len(a)} -> {len(b)}")
    common = [c for c in a.columns if c in b.columns]
    rules = {c: policy.rule_for(artifact, c, _is_numeric(a[c]), _is_numeric(a[c]) and _integral(a[c])) for c in common}
    cells: list[dict[str, Any]] = []
    for c in common:
        if rules[c].cls == "timing" and not (_is_numeric(b[c]) or b[c].isna().all()):
            problems.append(f"column {c!r} (timing: presence only) is not numeric")
    for i in range(min(len(a), len(b))):
        for c in common:
            rule = rules[c]
            x, y = a[c].iat[i], b[c].iat[i]
            fx, fy = _num(x), _num(y)
            if fx is not None and fy is not None:
                ok, bound = policy.cell_agrees(rule, fx, fy, a, b, i)
                if ok:
                    continue
                rel = abs(fy - fx) / abs(fx) if fx and math.isfinite(fx) and math.isfinite(fy) else math.inf
            else:
                if rule.cls == "timing" or (pd.isna(x) and pd.isna(y)) or str(x) == str(y):
                    continue
                rel, bound = None, "exact"
            cells.append(
                {
                    "row": _row_label(a, i),
                    "column": c,
                    "old": x,
                    "new": y,
                    "rel": rel,
                    "rule": rule.cls,
                    "bound": bound,
                    "reason": rule.reason,
                }
            )
    if cells:
        problems.append(f"{len(cells)} cell(s) differ")
    return "; ".join(problems), cells


def compare_samples(old: Path | str, new: Path | str, artifact: str = "") -> str:
    """Compare two tables of raw draws as samples (see :mod:`sdsl.tolerance`); ``""`` when
    they agree, else what differs."""
    a, b = pd.read_csv(old), pd.read_csv(new)
    problems = _columns_problems(a, b)
    na, nb = len(a), len(b)
    if abs(na - nb) > policy.STOCHASTIC_Z * math.sqrt(na + nb) + 1:
        problems.append(f"rows: {na} -> {nb}, more than the Poisson spread allows")
    z = policy.STOCHASTIC_Z
    for c in [c for c in a.columns if c in b.columns and _is_numeric(a[c])]:
        if policy.rule_for(artifact, c, True, False).cls == "timing":
            continue
        u, v = a[c].to_numpy(float), b[c].to_numpy(float)
        u, v = u[np.isfinite(u)], v[np.isfinite(v)]
        if u.size < 2 or v.size < 2:
            continue
        se = math.sqrt(u.var(ddof=1) / u.size + v.var(ddof=1) / v.size)
        diff = abs(u.mean() - v.mean())
        if diff > z * se and diff > 1e-12 * max(abs(u.mean()), 1.0):
            problems.append(
                f"column {c!r}: mean {u.mean():.6g} -> {v.mean():.6g}, more than {z:g} standard "
                f"errors of the difference ({se:.3g})"
            )
    return "; ".join(problems)


def _show(x: Any) -> str:
    f = _num(x)
    if f is not None:
        return "NaN" if math.isnan(f) else f"{f:.12g}"
    if x is None or (isinstance(x, float) and math.isnan(x)) or x is pd.NA:
        return "(empty)"
    return repr(str(x))


def _cells_text(cells: list[dict[str, Any]], limit: int = 12) -> str:
    lines = []
    for cell in cells[:limit]:
        rel = cell["rel"]
        rel_txt = (
            "" if rel is None else (" (relative change inf)" if math.isinf(rel) else f" (relative change {rel:.3g})")
        )
        lines.append(
            f"{cell['row']}, column {cell['column']!r}: {_show(cell['old'])} -> {_show(cell['new'])}"
            f"{rel_txt}; {cell['rule']}: {cell['bound']}"
        )
    if len(cells) > limit:
        lines.append(f"... and {len(cells) - limit} more cell(s)")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# figures and trees


def compare_figures(old_png: Path | str, new_png: Path | str, diff_dir: Path | str) -> tuple[float, str | None]:
    """RMS difference of two PNGs (0 when identical) and the path of the diff image saved in
    ``diff_dir`` (``None`` when identical). Images of different sizes (a figure's canvas grows to
    hold a text that reaches beyond its edge, :func:`sdsl.book.style.saved_bbox`) are compared on
    the larger canvas, each padded with white at its right and bottom edges."""
    from matplotlib.testing.compare import compare_images
    from matplotlib.testing.exceptions import ImageComparisonFailure
    from PIL import Image

    old_png, new_png = Path(old_png), Path(new_png)
    if old_png.read_bytes() == new_png.read_bytes():
        return 0.0, None
    diff_dir = Path(diff_dir)
    expected = diff_dir / f"{new_png.stem}-baseline.png"
    actual = diff_dir / f"{new_png.stem}-new.png"
    # recorded before they are written: the next check clears these, and only these
    note_written(diff_dir, [expected.name, actual.name, f"{actual.stem}-failed-diff.png"])
    with Image.open(old_png) as a, Image.open(new_png) as b:
        size = (max(a.width, b.width), max(a.height, b.height))
        for im, source, dest in ((a, old_png, expected), (b, new_png, actual)):
            if im.size == size:
                shutil.copyfile(source, dest)
            else:
                canvas = Image.new("RGBA", size, (255, 255, 255, 255))
                canvas.paste(im.convert("RGBA"), (0, 0))
                canvas.save(dest)
    try:
        result = compare_images(str(expected), str(actual), tol=0, in_decorator=True)
    except ImageComparisonFailure as exc:
        raise ValueError(str(exc)) from None
    if result is None:
        return 0.0, None
    return float(result["rms"]), str(result["diff"])


def _deterministic(artifact: str, frame: pd.DataFrame) -> bool:
    """True when every column of a figure's data is of a deterministic class."""
    if policy.is_sample_table(artifact):
        return False
    return all(
        policy.rule_for(artifact, c, _is_numeric(frame[c]), False).cls not in ("stochastic", "timing")
        for c in frame.columns
    )


def _compare_figure(
    stem: str, baseline: Path, new: Path, common: set[str], diff_dir: Path, notes: list[str]
) -> Finding | None:
    parts: list[str] = []
    rms = diff = None
    changed = False
    data = f"{stem}.data.csv"
    deterministic = True
    cells: list[dict[str, Any]] = []
    if data in common:
        deterministic = _deterministic(data, pd.read_csv(baseline / data, nrows=5))
        if policy.is_sample_table(data):
            summary = compare_samples(baseline / data, new / data, data)
        else:
            summary, cells = compare_tables(baseline / data, new / data, data)
        if summary:
            changed = True
            parts.append(f"data {data}: {summary}")
            if cells:
                parts.append(_indent(_cells_text(cells)))
    png = f"{stem}.png"
    if png in common and deterministic:
        chapter = stem.split("/", 1)[0]
        try:
            rms, diff = compare_figures(baseline / png, new / png, diff_dir / chapter)
        except ValueError as exc:
            changed = True
            parts.append(f"PNG cannot be compared: {exc}")
        else:
            if rms > policy.FIGURE_RMS:
                changed = True
                parts.append(f"PNG RMS difference {rms:.3f} > {policy.FIGURE_RMS:g}; diff image: {diff}")
    elif png in common:
        notes.append(f"{stem}: pixels not compared (its data are sampled); its data were compared")
    svg = f"{stem}.svg"
    if svg in common and png not in common and (baseline / svg).read_bytes() != (new / svg).read_bytes():
        changed = True
        parts.append("SVG bytes differ (no PNG to compare as an image)")
    if not changed:
        return None
    return Finding("changed", "figure", stem, "\n".join(parts), cells, rms, diff)


def _compare_one(
    rel: str,
    baseline: Path,
    new: Path,
    common: set[str],
    diff_dir: Path,
    report: Report,
    figures_done: set[str],
    timing: list[str],
) -> None:
    """Compare the artifact ``rel`` of both trees, adding what differs to ``report``."""
    kind = artifact_kind(rel)
    if kind == "table":
        cells: list[dict[str, Any]]
        if policy.is_sample_table(rel):
            summary, cells = compare_samples(baseline / rel, new / rel, rel), []
        else:
            summary, cells = compare_tables(baseline / rel, new / rel, rel)
        cols = pd.read_csv(baseline / rel, nrows=0).columns
        timed = [c for c in cols if policy.rule_for(rel, c, True, False).cls == "timing"]
        if timed:
            timing.append(f"{rel} [{', '.join(timed)}]")
        if summary:
            detail = summary + ("\n" + _cells_text(cells) if cells else "")
            report.findings.append(Finding("changed", "table", rel, detail, cells))
    elif kind in ("figure", "figure data"):
        stem = rel[: -len(".data.csv")] if kind == "figure data" else rel.rsplit(".", 1)[0]
        if stem in figures_done:
            return
        figures_done.add(stem)
        finding = _compare_figure(stem, baseline, new, common, diff_dir, report.notes)
        if finding is not None:
            report.findings.append(finding)
    elif (baseline / rel).read_bytes() != (new / rel).read_bytes():
        report.findings.append(Finding("changed", "file", rel, "bytes differ"))


def compare_trees(
    baseline: Path | str, new: Path | str, diff_dir: Path | str | None = None, chapters: Iterable[str] | None = None
) -> Report:
    """Compare the artifacts tree ``new`` with ``baseline`` (only ``chapters`` if given), by the
    policy of :mod:`sdsl.tolerance`. Diff images of changed figures go to ``diff_dir/<chapter>/``
    (default ``build/check/diff``)."""
    from sdsl.paths import BUILD

    baseline, new = Path(baseline), Path(new)
    diff_dir = Path(diff_dir) if diff_dir is not None else BUILD / "check" / "diff"
    chapters = list(chapters) if chapters is not None else None
    old_files = set(list_files(baseline, chapters))
    new_files = set(list_files(new, chapters))
    report = Report(str(baseline), str(new))
    report.compared = len(old_files | new_files)
    for rel in sorted(old_files - new_files):
        report.findings.append(Finding("missing", artifact_kind(rel), rel, "in the baseline, not regenerated"))
    for rel in sorted(new_files - old_files):
        report.findings.append(
            Finding("extra", artifact_kind(rel), rel, "regenerated, not in the baseline (accept it with --accept)")
        )
    common = old_files & new_files
    figures_done: set[str] = set()
    timing: list[str] = []
    for rel in sorted(common):
        try:
            _compare_one(rel, baseline, new, common, diff_dir, report, figures_done, timing)
        except (OSError, ValueError) as exc:  # a file that cannot be read: name it, make no number
            for root, what in ((baseline, "baseline"), (new, "regenerated")):
                stem = rel.rsplit(".", 1)[0].removesuffix(".data")
                check_readable(
                    root, sorted(f for f in common if f.rsplit(".", 1)[0].removesuffix(".data") == stem), what
                )
            raise DamagedArtifact(
                f"{rel} cannot be compared ({type(exc).__name__}: {' '.join(str(exc).split())})"
            ) from None
    if timing:
        report.notes.append(
            "timings not compared (wall clock of this machine; present and numeric): " + "; ".join(timing)
        )
    no_data = sorted(
        {f[:-4] for f in new_files if f.endswith(".png")} - {f[:-9] for f in new_files if f.endswith(".data.csv")}
    )
    if no_data:
        report.notes.append(
            "figures saved without their data (save_figure(..., data=df) writes <name>.data.csv): " + ", ".join(no_data)
        )
    return report
