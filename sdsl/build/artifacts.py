"""The artifacts tree: its manifest, the comparison of two trees, and the build status page.

Every notebook writes its tables (``<name>.csv``) and figures (``<name>.svg`` for the book,
``<name>.png`` for a quick look, ``<name>.data.csv`` for the numbers plotted, see
:func:`sdsl.book.outputs.save_figure`) into one folder per chapter under
:func:`sdsl.paths.artifacts_root`. After a run the pipeline writes ``manifest.json`` at the root of
the tree (:func:`write_manifest`): every file with its sha256 and size, the notebook and the
parameters that made it, and the versions of the packages that matter. The manifest holds no
dates or timings, so two runs of the same inputs give the same manifest.

:func:`compare_trees` compares a regenerated tree with the committed baseline
(``python -m sdsl.build.check``):

- tables cell by cell: numbers agree when ``|new - old| <= atol + rtol * |old|``
  (:class:`Tolerance`, default ``rtol = 1e-6``, ``atol = 1e-12``), text exactly, NaN equals NaN;
- figures by image comparison of the PNGs with :func:`matplotlib.testing.compare.compare_images`:
  a figure changed when the RMS difference (0-255 grey levels) exceeds ``figure_rms``
  (default 0.5); a diff image is saved for inspection; the data behind each figure
  (``<name>.data.csv``) must be byte-identical;
- any other file byte for byte;
- a file in the baseline but not regenerated is *missing*, one regenerated but not in the
  baseline is *extra*.

The result is a :class:`Report` whose :meth:`Report.text` names every file and what changed.
"""

from __future__ import annotations

import hashlib
import json
import math
import platform
import shutil
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pandas as pd

__all__ = [
    "PACKAGES",
    "MANIFEST_NAME",
    "STATUS_NAME",
    "VOLATILE_COLUMNS",
    "Tolerance",
    "Finding",
    "Report",
    "package_versions",
    "artifact_kind",
    "list_files",
    "tree_digest",
    "build_manifest",
    "write_manifest",
    "read_manifest",
    "executed_info",
    "last_duration",
    "compare_tables",
    "compare_figures",
    "compare_trees",
    "status_table",
    "write_status",
]

#: Distributions whose versions the manifest records (they decide the numbers and the pictures).
PACKAGES: tuple[str, ...] = (
    "numpy", "scipy", "pandas", "statsmodels", "matplotlib", "seaborn", "papermill", "jupytext",
    "jupyter-book", "myst-nb", "torch", "transformers",
)
#: The manifest's file name, at the root of an artifacts tree (not itself an artifact).
MANIFEST_NAME = "manifest.json"
#: The status page written next to the executed notebooks.
STATUS_NAME = "status.md"
#: Columns measured on the machine that runs the notebook (wall-clock latencies of the local
#: speculative-decoding harness): they change on every run, so the check compares that they are
#: there and numeric, not their values. ``fnmatch`` pattern of the artifact path -> column names.
VOLATILE_COLUMNS: dict[str, tuple[str, ...]] = {
    "measure_acceptance/*.csv": ("ttft_s", "ttft_moe_s", "tpot_s", "tpot_moe_s", "ttot_s", "ttot_moe_s"),
}
#: Parameters that name a place on disk, not a choice of the run: left out of the manifest.
_PATH_PARAMETERS = ("artifacts_dir", "artifacts_root")


# ---------------------------------------------------------------------------------------------
# files and hashes


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def artifact_kind(relpath: str) -> str:
    """``"figure data"`` (``*.data.csv``), ``"table"`` (``*.csv``), ``"figure"`` (``*.png``,
    ``*.svg``) or ``"file"``."""
    name = relpath.rsplit("/", 1)[-1]
    if name.endswith(".data.csv"):
        return "figure data"
    if name.endswith(".csv"):
        return "table"
    if name.endswith((".png", ".svg")):
        return "figure"
    return "file"


def list_files(root: Path | str, chapters: Iterable[str] | None = None) -> list[str]:
    """Relative POSIX paths of the artifacts under ``root`` (sorted): every file in a chapter
    folder, without hidden files, temporary files or the manifest. ``chapters`` restricts the
    list to those folders."""
    root = Path(root)
    if not root.is_dir():
        return []
    wanted = set(chapters) if chapters is not None else None
    out = []
    for p in root.rglob("*"):
        if not p.is_file():
            continue
        rel = p.relative_to(root)
        parts = rel.parts
        if len(parts) < 2 or any(part.startswith(".") for part in parts):
            continue  # files at the root (the manifest) and hidden staging/temporary files
        if parts[0].startswith("sdsl-"):
            continue  # the pipeline's staging folders of a run in progress
        if wanted is not None and parts[0] not in wanted:
            continue
        out.append(rel.as_posix())
    return sorted(out)


def tree_digest(root: Path | str, exclude: Iterable[str] = ()) -> str:
    """sha256 over the names and bytes of every artifact under ``root`` except the chapters in
    ``exclude``: what a chapter that reads other chapters' artifacts depends on."""
    root = Path(root)
    skip = set(exclude)
    h = hashlib.sha256()
    for rel in list_files(root):
        if rel.split("/", 1)[0] in skip:
            continue
        h.update(rel.encode())
        h.update(_sha256(root / rel).encode())
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# manifest


def package_versions(packages: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each distribution (``None`` when it is not installed), plus Python."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def executed_info(executed: Path | str) -> dict[str, Any]:
    """What papermill recorded in an executed notebook: ``parameters`` (without the paths of the
    run), ``duration`` (seconds), ``start_time``, ``end_time`` and ``exception`` (bool)."""
    nb = json.loads(Path(executed).read_text(encoding="utf-8"))
    pm = nb.get("metadata", {}).get("papermill", {}) or {}
    params = {k: v for k, v in (pm.get("parameters") or {}).items() if k not in _PATH_PARAMETERS}
    return {
        "parameters": params,
        "duration": pm.get("duration"),
        "start_time": pm.get("start_time"),
        "end_time": pm.get("end_time"),
        "exception": bool(pm.get("exception")),
    }


def last_duration(executed: Path | str) -> float:
    """Seconds papermill recorded for an executed notebook; ``inf`` when unknown (never run yet),
    so that unknown notebooks are scheduled first."""
    try:
        duration = executed_info(executed)["duration"]
    except (OSError, ValueError):
        return math.inf
    return float(duration) if duration is not None else math.inf


def build_manifest(
    root: Path | str,
    executed_dir: Path | str | None = None,
    previous: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest of the artifacts tree at ``root`` (see the module docstring).

    The parameters of a chapter come from papermill's record in ``executed_dir/<chapter>.ipynb``
    when it exists, else from ``previous`` (the manifest written before), else from
    ``notebooks/runs.yml``.
    """
    from sdsl.paths import NOTEBOOKS, ROOT

    root = Path(root)
    files = list_files(root)
    chapters = sorted({f.split("/", 1)[0] for f in files})
    prev_chapters = (previous or {}).get("chapters", {})
    try:
        from sdsl.build.pipeline import load_runs

        runs = load_runs()
    except Exception:  # a runs.yml that does not parse must not hide the artifacts
        runs = {}
    chapter_info: dict[str, Any] = {}
    for chapter in chapters:
        source = NOTEBOOKS / f"{chapter}.md"
        info: dict[str, Any] = {
            "notebook": source.relative_to(ROOT).as_posix(),
            "notebook_sha256": _sha256(source) if source.is_file() else None,
        }
        executed = Path(executed_dir) / f"{chapter}.ipynb" if executed_dir is not None else None
        if executed is not None and executed.is_file():
            info["parameters"] = executed_info(executed)["parameters"]
        elif chapter in prev_chapters and "parameters" in prev_chapters[chapter]:
            info["parameters"] = prev_chapters[chapter]["parameters"]
        else:
            info["parameters"] = {k: v for k, v in runs.get(chapter, {}).items() if k not in _PATH_PARAMETERS}
        chapter_info[chapter] = info
    return {
        "description": "Artifacts of the SDSL companion: every file with its sha256, the notebook and "
        "parameters that made it, and the package versions (written by sdsl.build.pipeline.run).",
        "packages": package_versions(),
        "chapters": chapter_info,
        "files": {
            rel: {
                "sha256": _sha256(root / rel),
                "bytes": (root / rel).stat().st_size,
                "chapter": rel.split("/", 1)[0],
                "kind": artifact_kind(rel),
            }
            for rel in files
        },
    }


def read_manifest(root: Path | str) -> dict[str, Any] | None:
    """The manifest of the tree at ``root``, or ``None`` when it has none."""
    path = Path(root) / MANIFEST_NAME
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def write_manifest(root: Path | str, executed_dir: Path | str | None = None) -> Path:
    """Write ``root/manifest.json`` (:func:`build_manifest`); returns its path. The file is only
    rewritten when its content changes."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    manifest = build_manifest(root, executed_dir, previous=read_manifest(root))
    text = json.dumps(manifest, indent=1, sort_keys=True, default=str) + "\n"
    path = root / MANIFEST_NAME
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    return path


# ---------------------------------------------------------------------------------------------
# comparison


@dataclass(frozen=True)
class Tolerance:
    """How close regenerated artifacts must be to the baseline.

    ``rtol``, ``atol``: a table's numeric cell agrees when ``|new - old| <= atol + rtol * |old|``.
    ``figure_rms``: a figure agrees when the RMS difference of its PNGs (grey levels 0-255, as
    computed by :func:`matplotlib.testing.compare.compare_images`) is at most this.
    The data behind a figure (``*.data.csv``) and every other file must be identical.
    """

    rtol: float = 1e-6
    atol: float = 1e-12
    figure_rms: float = 0.5
    volatile: tuple[tuple[str, tuple[str, ...]], ...] = tuple(VOLATILE_COLUMNS.items())

    def volatile_columns(self, relpath: str) -> tuple[str, ...]:
        """Columns of the artifact ``relpath`` whose values are not compared (see
        :data:`VOLATILE_COLUMNS`)."""
        import fnmatch

        return tuple(c for pattern, cols in self.volatile if fnmatch.fnmatch(relpath, pattern) for c in cols)

    def __post_init__(self) -> None:
        for name in ("rtol", "atol", "figure_rms"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")

    def describe(self) -> str:
        return (
            f"tables: |new - old| <= {self.atol:g} + {self.rtol:g}*|old| per numeric cell, text exact; "
            f"figures: PNG RMS <= {self.figure_rms:g}, figure data exact; other files byte for byte"
            + ("; timing columns measured on this machine: presence only" if self.volatile else "")
        )


@dataclass
class Finding:
    """One artifact that does not match: ``kind`` is ``missing``, ``extra`` or ``changed``;
    ``artifact`` is ``table``, ``figure``, ``figure data`` or ``file``; ``path`` is relative to the
    tree (``acceptance/table3.csv``; for a figure, its stem ``acceptance/figure1``)."""

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
        p = self.path
        for suffix in (".data.csv", ".csv", ".png", ".svg"):
            if p.endswith(suffix):
                return p[: -len(suffix)]
        return p

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
    tolerance: Tolerance
    compared: int = 0
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def affected(self) -> list[str]:
        """Sorted ``chapter/name`` of every table or figure that is missing, extra or changed."""
        return sorted({f.name for f in self.findings})

    def _finding_lines(self) -> list[str]:
        """One entry per finding; a chapter that is wholly missing or wholly extra in one line."""
        def chapters(root: str) -> set[str]:
            return {f.split("/", 1)[0] for f in list_files(root)}

        whole = {"missing": chapters(self.baseline) - chapters(self.new),
                 "extra": chapters(self.new) - chapters(self.baseline)}
        grouped: dict[tuple[str, str], list[Finding]] = {}
        lines: list[str] = []
        for f in self.findings:
            chapter = f.path.split("/", 1)[0]
            if f.kind in whole and chapter in whole[f.kind]:
                if (f.kind, chapter) not in grouped:
                    grouped[(f.kind, chapter)] = []
                    lines.append(f"@{f.kind}:{chapter}")
                grouped[(f.kind, chapter)].append(f)
            else:
                lines.append(f.text())
        where = {"missing": "in the baseline, not regenerated", "extra": "regenerated, not in the baseline"}
        out = []
        for line in lines:
            if line.startswith("@"):
                kind, chapter = line[1:].split(":", 1)
                files = grouped[(kind, chapter)]
                out.append(f"{kind.upper():8} chapter {chapter}/: {len(files)} file(s) {where[kind]}: "
                           + ", ".join(f.path.split("/", 1)[1] for f in files))
            else:
                out.append(line)
        return out

    def text(self) -> str:
        lines = [
            f"Compared {self.compared} artifact(s) of {self.new}",
            f"     with the baseline {self.baseline}",
            f"Tolerance: {self.tolerance.describe()}",
        ]
        if self.ok:
            lines.append("OK: every artifact matches the baseline.")
        else:
            counts: dict[str, int] = {}
            for f in self.findings:
                counts[f.kind] = counts.get(f.kind, 0) + 1
            summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
            lines.append(f"FAILED: {summary}; affected: {', '.join(self.affected())}")
            lines.extend(self._finding_lines())
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


def _read_csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=True)


def _row_label(df: pd.DataFrame, i: int) -> str:
    """Line of the row in the CSV plus its text cells, to find it again."""
    texts = [f"{c}={df.iat[i, j]}" for j, c in enumerate(df.columns) if isinstance(df.iat[i, j], str)][:3]
    return f"line {i + 2}" + (f" ({', '.join(texts)})" if texts else "")


def _num(x: Any) -> float | None:
    if isinstance(x, (bool, np.bool_)):
        return None
    if isinstance(x, (int, float, np.integer, np.floating)):
        return float(x)
    return None


def compare_tables(
    old: Path | str, new: Path | str, rtol: float = 1e-6, atol: float = 1e-12,
    volatile: Iterable[str] = (),
) -> tuple[str, list[dict[str, Any]]]:
    """Compare two CSV tables cell by cell. Returns ``(summary, cells)``: ``summary`` is ``""`` when
    they agree, else what differs (columns, rows, cells); ``cells`` lists each differing cell as
    ``{row, column, old, new, rel}`` (``row`` is the CSV line and the row's text cells).
    ``volatile`` columns must be present and numeric in both, their values are not compared."""
    volatile = set(volatile)
    a, b = _read_csv(Path(old)), _read_csv(Path(new))
    problems: list[str] = []
    cols_a, cols_b = list(a.columns), list(b.columns)
    removed = [c for c in cols_a if c not in cols_b]
    added = [c for c in cols_b if c not in cols_a]
    if removed:
        problems.append(f"columns removed: {removed}")
    if added:
        problems.append(f"columns added: {added}")
    if not removed and not added and cols_a != cols_b:
        problems.append(f"columns reordered: {cols_a} -> {cols_b}")
    if len(a) != len(b):
        problems.append(f"rows: {len(a)} -> {len(b)}")
    cells: list[dict[str, Any]] = []
    common = [c for c in cols_a if c in cols_b]
    for c in [c for c in common if c in volatile]:
        if not (pd.api.types.is_numeric_dtype(b[c]) or b[c].isna().all()):
            problems.append(f"column {c!r} (not compared: measured on this machine) is not numeric")
    for i in range(min(len(a), len(b))):  # row by row, so that one row's changes read together
        for c in common:
            if c in volatile:
                continue
            x, y = a[c].iat[i], b[c].iat[i]
            fx, fy = _num(x), _num(y)
            if fx is not None and fy is not None:
                if math.isnan(fx) and math.isnan(fy):
                    continue
                if not (math.isnan(fx) or math.isnan(fy)) and abs(fy - fx) <= atol + rtol * abs(fx):
                    continue
                rel = abs(fy - fx) / abs(fx) if fx not in (0.0,) and not math.isnan(fx) and not math.isnan(fy) else math.inf
            else:
                if (pd.isna(x) and pd.isna(y)) or str(x) == str(y):
                    continue
                rel = None
            cells.append({"row": _row_label(a, i), "column": c, "old": x, "new": y, "rel": rel})
    if cells:
        problems.append(f"{len(cells)} cell(s) differ")
    return "; ".join(problems), cells


def _show(x: Any) -> str:
    """A cell as it reads in the CSV (numbers without numpy's repr, text quoted)."""
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
        rel_txt = "" if rel is None else (" (relative change inf)" if math.isinf(rel) else f" (relative change {rel:.3g})")
        lines.append(f"{cell['row']}, column {cell['column']!r}: {_show(cell['old'])} -> {_show(cell['new'])}{rel_txt}")
    if len(cells) > limit:
        lines.append(f"... and {len(cells) - limit} more cell(s)")
    return "\n".join(lines)


def compare_figures(
    old_png: Path | str, new_png: Path | str, tol: float, diff_dir: Path | str
) -> tuple[float, str | None]:
    """RMS difference of two PNGs (0 when identical) and the path of the diff image saved in
    ``diff_dir`` (``None`` when identical). Images of different sizes raise ``ValueError``."""
    from matplotlib.testing.compare import compare_images
    from matplotlib.testing.exceptions import ImageComparisonFailure

    old_png, new_png = Path(old_png), Path(new_png)
    if old_png.read_bytes() == new_png.read_bytes():
        return 0.0, None
    diff_dir = Path(diff_dir)
    diff_dir.mkdir(parents=True, exist_ok=True)
    stem = new_png.stem
    expected = diff_dir / f"{stem}-baseline.png"
    actual = diff_dir / f"{stem}-new.png"
    shutil.copyfile(old_png, expected)
    shutil.copyfile(new_png, actual)
    try:
        result = compare_images(str(expected), str(actual), tol=0, in_decorator=True)
    except ImageComparisonFailure as exc:
        raise ValueError(str(exc)) from None
    if result is None:
        return 0.0, None
    return float(result["rms"]), str(result["diff"])


def compare_trees(
    baseline: Path | str,
    new: Path | str,
    tolerance: Tolerance = Tolerance(),
    diff_dir: Path | str | None = None,
    chapters: Iterable[str] | None = None,
) -> Report:
    """Compare the artifacts tree ``new`` with ``baseline`` (only ``chapters`` if given).

    Diff images of changed figures go to ``diff_dir/<chapter>/`` (default: ``build/check/diff``).
    """
    from sdsl.paths import BUILD

    baseline, new = Path(baseline), Path(new)
    diff_dir = Path(diff_dir) if diff_dir is not None else BUILD / "check" / "diff"
    chapters = list(chapters) if chapters is not None else None
    old_files = set(list_files(baseline, chapters))
    new_files = set(list_files(new, chapters))
    report = Report(str(baseline), str(new), tolerance)
    report.compared = len(old_files | new_files)
    for rel in sorted(old_files - new_files):
        report.findings.append(Finding("missing", artifact_kind(rel), rel,
                                       "in the baseline, not regenerated"))
    for rel in sorted(new_files - old_files):
        report.findings.append(Finding("extra", artifact_kind(rel), rel,
                                       "regenerated, not in the baseline (accept it with --accept)"))
    common = old_files & new_files
    figures_done: set[str] = set()
    volatile_seen: list[str] = []
    for rel in sorted(common):
        kind = artifact_kind(rel)
        if kind == "table":
            skip = tolerance.volatile_columns(rel)
            summary, cells = compare_tables(baseline / rel, new / rel, tolerance.rtol, tolerance.atol, skip)
            if skip:
                present = [c for c in skip if c in pd.read_csv(new / rel, nrows=0).columns]
                if present:
                    volatile_seen.append(f"{rel} [{', '.join(present)}]")
            if summary:
                report.findings.append(Finding("changed", "table", rel, summary + "\n" + _cells_text(cells), cells))
        elif kind in ("figure", "figure data"):
            stem = rel[: -len(".data.csv")] if kind == "figure data" else rel.rsplit(".", 1)[0]
            if stem in figures_done:
                continue
            figures_done.add(stem)
            finding = _compare_figure(stem, baseline, new, common, tolerance, diff_dir)
            if finding is not None:
                report.findings.append(finding)
        elif (baseline / rel).read_bytes() != (new / rel).read_bytes():
            report.findings.append(Finding("changed", "file", rel, "bytes differ"))
    if volatile_seen:
        report.notes.append("values not compared (wall-clock timings measured on this machine; present and "
                            "numeric): " + "; ".join(volatile_seen))
    flagged = {f.path for f in report.findings} | {f.name for f in report.findings}
    unstable = [rel for rel in sorted(common)
                if rel not in flagged and _strip(rel) not in flagged and not tolerance.volatile_columns(rel)
                and (baseline / rel).read_bytes() != (new / rel).read_bytes()]
    if unstable:
        report.notes.append(
            "within tolerance but not byte-identical to the baseline (figures should be byte-stable): "
            + ", ".join(unstable)
        )
    no_data = sorted({f[:-4] for f in new_files if f.endswith(".png")} - {f[:-9] for f in new_files if f.endswith(".data.csv")})
    if no_data:
        report.notes.append(
            "figures saved without their data (save_figure(..., data=df) writes <name>.data.csv): "
            + ", ".join(no_data)
        )
    return report


def _strip(rel: str) -> str:
    for suffix in (".data.csv", ".csv", ".png", ".svg"):
        if rel.endswith(suffix):
            return rel[: -len(suffix)]
    return rel


def _compare_figure(stem: str, baseline: Path, new: Path, common: set[str], tol: Tolerance,
                    diff_dir: Path) -> Finding | None:
    parts: list[str] = []
    rms = diff = None
    changed = False
    png = f"{stem}.png"
    if png in common:
        chapter = stem.split("/", 1)[0]
        try:
            rms, diff = compare_figures(baseline / png, new / png, tol.figure_rms, diff_dir / chapter)
        except ValueError as exc:
            changed = True
            parts.append(f"PNG cannot be compared: {exc}")
        else:
            if rms > tol.figure_rms:
                changed = True
                parts.append(f"PNG RMS difference {rms:.3f} > tolerance {tol.figure_rms:g}; diff image: {diff}")
            elif rms > 0:
                parts.append(f"PNG RMS difference {rms:.3f} (within tolerance {tol.figure_rms:g}); diff image: {diff}")
    svg = f"{stem}.svg"
    if svg in common and png not in common and (baseline / svg).read_bytes() != (new / svg).read_bytes():
        changed = True
        parts.append("SVG bytes differ (no PNG to compare as an image)")
    data = f"{stem}.data.csv"
    cells: list[dict[str, Any]] = []
    if data in common and (baseline / data).read_bytes() != (new / data).read_bytes():
        changed = True
        summary, cells = compare_tables(baseline / data, new / data, rtol=0.0, atol=0.0)
        parts.append(f"data {data} differs (must be identical): {summary or 'bytes differ'}")
        if cells:
            parts.append(_indent(_cells_text(cells)))
    if not changed:
        return None
    return Finding("changed", "figure", stem, "\n".join(parts), cells, rms, diff)


# ---------------------------------------------------------------------------------------------
# build status


def status_table(executed_dir: Path | str, chapters: Iterable[str]) -> pd.DataFrame:
    """Per chapter, what papermill recorded in its executed notebook: ``chapter``, ``seconds``,
    ``finished`` (UTC) and ``parameters`` (``defaults`` when the run used the notebook's own)."""
    rows = []
    for chapter in chapters:
        path = Path(executed_dir) / f"{chapter}.ipynb"
        if not path.is_file():
            rows.append({"chapter": chapter, "seconds": math.nan, "finished": "not executed", "parameters": ""})
            continue
        info = executed_info(path)
        params = info["parameters"]
        rows.append({
            "chapter": chapter,
            "seconds": float(info["duration"]) if info["duration"] is not None else math.nan,
            "finished": (info["end_time"] or "")[:19].replace("T", " "),
            "parameters": ", ".join(f"{k}={v!r}" for k, v in sorted(params.items())) or "defaults",
        })
    return pd.DataFrame(rows, columns=["chapter", "seconds", "finished", "parameters"])


def write_status(executed_dir: Path | str, chapters: Iterable[str]) -> Path:
    """Write ``executed_dir/status.md``: a page of the book listing each notebook's execution time
    (papermill's ``duration``), when it finished and its parameters. Rewritten only when its
    content changes (a rebuild with nothing executed leaves it untouched)."""
    executed_dir = Path(executed_dir)
    table = status_table(executed_dir, list(chapters))
    total = float(np.nansum(table["seconds"].to_numpy(dtype=float)))
    lines = [
        "# Build status",
        "",
        "How long each notebook took when it was last executed by papermill "
        "(`python -m sdsl.build.pipeline run`), and the parameters of that run (from "
        "`notebooks/runs.yml`; *defaults* means the notebook's own, which reproduce the paper). "
        "A notebook whose inputs did not change is not executed again, so its time is that of "
        "its last execution.",
        "",
        "| chapter | seconds | finished (UTC) | parameters |",
        "|:--|--:|:--|:--|",
    ]
    for r in table.itertuples(index=False):
        secs = "" if math.isnan(r.seconds) else f"{r.seconds:.1f}"
        params = str(r.parameters).replace("|", "\\|")
        link = f"{{doc}}`{r.chapter}`" if (executed_dir / f"{r.chapter}.ipynb").is_file() else r.chapter
        lines.append(f"| {link} | {secs} | {r.finished} | {params} |")
    lines += ["", f"Total execution time of the last runs: {total:.1f} s.", ""]
    text = "\n".join(lines)
    path = executed_dir / STATUS_NAME
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path
