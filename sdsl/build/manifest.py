"""The artifacts tree: its files, the provenance of each chapter, and the manifest.

Every notebook writes its tables (``<name>.csv``) and figures (``<name>.svg`` for the book,
``<name>.png`` for a quick look, ``<name>.data.csv`` for the numbers plotted) into one folder per
chapter under :func:`sdsl.paths.artifacts_root`. When a chapter's run succeeds, the pipeline
publishes its folder together with ``.provenance.json`` (:func:`write_provenance`): the sha256 of
the notebook that made those artifacts and the parameters of that run, so that the manifest never
pairs artifacts with another version of their notebook. After a run the pipeline writes
``manifest.json`` at the root (:func:`write_manifest`): every file with its sha256 and size, each
chapter's provenance, the versions of the packages that matter and the machine (CPU, BLAS kernel,
numpy's vector extensions, torch's CPU capability, the kernel-selecting environment), so that a
report can say why two runs differ. No dates or timings: two runs of the same inputs on one
machine give the same manifest.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from sdsl._machine import cpu_flags, cpu_model
from sdsl._owned import WRITTEN
from sdsl.build.parameters import PATH_PARAMETERS
from sdsl.data import sha256

__all__ = [
    "PACKAGES",
    "MANIFEST_NAME",
    "PROVENANCE_NAME",
    "KERNEL_ENVIRONMENT",
    "artifact_kind",
    "list_files",
    "tree_digest",
    "package_versions",
    "machine_info",
    "write_provenance",
    "read_provenance",
    "foreign_artifacts",
    "build_manifest",
    "read_manifest",
    "write_manifest",
]

#: Distributions whose versions the manifest records (they decide the numbers and the pictures).
PACKAGES: tuple[str, ...] = (
    "numpy",
    "scipy",
    "pandas",
    "statsmodels",
    "matplotlib",
    "seaborn",
    "papermill",
    "jupytext",
    "jupyter-book",
    "myst-nb",
    "torch",
    "transformers",
    "threadpoolctl",
)
#: The manifest's file name, at the root of an artifacts tree (not itself an artifact).
MANIFEST_NAME = "manifest.json"
#: A chapter's provenance, inside its folder (hidden: not an artifact).
PROVENANCE_NAME = ".provenance.json"
#: Environment variables that choose the CPU kernels of a run (recorded when set).
KERNEL_ENVIRONMENT = (
    "OPENBLAS_CORETYPE",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "ATEN_CPU_CAPABILITY",
    "NPY_DISABLE_CPU_FEATURES",
    "MKL_CBWR",
    "SDSL_ULP_NOISE",
)


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
    folder, without hidden files or folders (provenance, staging, temporary files) or the
    manifest. ``chapters`` restricts the list to those folders."""
    root = Path(root)
    if not root.is_dir():
        return []
    wanted = set(chapters) if chapters is not None else None
    out = []
    for p in root.rglob("*"):
        if not p.is_file():
            continue
        parts = p.relative_to(root).parts
        if len(parts) < 2 or any(part.startswith(".") for part in parts):
            continue
        if wanted is not None and parts[0] not in wanted:
            continue
        out.append(Path(*parts).as_posix())
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
        h.update(sha256(root / rel).encode())
    return h.hexdigest()


def package_versions(packages: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each distribution (``None`` when it is not installed), plus Python."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


#: The vector extensions the manifest records (those that select BLAS, numpy and torch kernels).
_VECTOR_FLAGS = ("avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl")


def machine_info(torch: bool = True) -> dict[str, Any]:
    """The machine a run was made on: CPU model and vector flags, core count, the BLAS libraries
    in use with their kernel (threadpoolctl), numpy's enabled vector extensions, torch's CPU
    capability (``torch=False`` skips importing torch) and the kernel-selecting environment. The
    BLAS libraries are those of numpy and scipy (imported here), whatever the caller imported."""
    import numpy as np
    import scipy.linalg  # noqa: F401 - loads scipy's BLAS, which the numbers use too: always listed
    from threadpoolctl import threadpool_info

    info: dict[str, Any] = {
        "cpu": cpu_model(),
        "cpu_flags": [f for f in _VECTOR_FLAGS if f in cpu_flags()],
        "cores": os.cpu_count(),
        "platform": platform.platform(),
    }
    # sorted: threadpoolctl lists the libraries in the order they were loaded (numpy's and scipy's
    # OpenBLAS swap places with the import order), and the status page must not change with it
    info["blas"] = sorted(
        (
            {k: lib.get(k) for k in ("internal_api", "version", "architecture", "threading_layer", "num_threads")}
            for lib in threadpool_info()
            if lib.get("user_api") == "blas"
        ),
        key=lambda lib: tuple(str(lib[k]) for k in ("internal_api", "version", "architecture")),
    )
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

        info["numpy_simd"] = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
    except ImportError:  # another numpy layout
        info["numpy_simd"] = None
    info["numpy_version"] = np.__version__
    if torch:
        try:
            import torch as _torch

            info["torch_cpu_capability"] = _torch.backends.cpu.get_cpu_capability()
        except ImportError:
            info["torch_cpu_capability"] = None
    info["environment"] = {k: os.environ[k] for k in KERNEL_ENVIRONMENT if k in os.environ}
    if any("ulp_noise" in p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)):
        info["environment"]["PYTHONPATH"] = "tools/ulp_noise (one-ulp noise on numpy's exp, log, power)"
    return info


def write_provenance(
    folder: Path | str, notebook: Path | str, parameters: dict[str, Any], digest: str | None = None
) -> Path:
    """Write ``folder/.provenance.json``: the notebook (path and sha256) and the parameters that
    made the artifacts of ``folder``, the inputs digest of the run and the files the run wrote
    there (:func:`foreign_artifacts` tells a file someone else put there from them)."""
    from sdsl.paths import ROOT

    notebook, folder = Path(notebook), Path(folder)
    written = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    record = {
        "notebook": notebook.relative_to(ROOT).as_posix() if notebook.is_relative_to(ROOT) else notebook.name,
        "notebook_sha256": sha256(notebook),
        "parameters": {k: v for k, v in parameters.items() if k not in PATH_PARAMETERS},
        "inputs": digest,
        "files": [f for f in written if f != PROVENANCE_NAME],
    }
    path = folder / PROVENANCE_NAME
    path.write_text(json.dumps(record, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return path


def read_provenance(folder: Path | str) -> dict[str, Any] | None:
    """A chapter folder's provenance record, or ``None`` when it has none."""
    path = Path(folder) / PROVENANCE_NAME
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def foreign_artifacts(folder: Path | str) -> list[str]:
    """The files of the chapter folder ``folder`` (relative POSIX paths) that no run wrote: not in
    its provenance record's list of files or, for a folder published before the record listed
    them (the committed baseline's, copied by the check), not in the manifest of the tree above it,
    or hidden where there is no manifest either; the files a copy recorded before it was made
    (:func:`sdsl._owned.note_written`) are the tools'."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    present = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink())
    try:
        rec = read_provenance(folder)
    except ValueError:  # a damaged record lists nothing
        rec = None
    if isinstance(rec, dict) and isinstance(rec.get("files"), list):
        ours = {str(f) for f in rec["files"]}
    else:
        try:
            manifest = read_manifest(folder.parent) or {}
        except ValueError:
            manifest = {}
        prefix = f"{folder.name}/"
        ours = {f.removeprefix(prefix) for f in manifest.get("files", {}) if f.startswith(prefix)}
        if not manifest and rec is not None:  # a run's folder with nothing to tell its files by
            ours = {f for f in present if not any(part.startswith(".") for part in f.split("/"))}
    ledger = folder / WRITTEN  # a copy the tools recorded before making it (the check's of the baseline)
    if ledger.is_file():
        ours |= set(ledger.read_text(encoding="utf-8").splitlines()) | {WRITTEN}
    return [f for f in present if f not in ours | {PROVENANCE_NAME}]


def build_manifest(root: Path | str, machine: dict[str, Any] | None = None) -> dict[str, Any]:
    """The manifest of the artifacts tree at ``root`` (see the module notes). A chapter without a
    provenance record (made before records existed) is listed with ``notebook_sha256: null``."""
    root = Path(root)
    files = list_files(root)
    chapters = sorted({f.split("/", 1)[0] for f in files})
    chapter_info = {}
    for chapter in chapters:
        rec = read_provenance(root / chapter)
        chapter_info[chapter] = (
            rec
            if rec is not None
            else {"notebook": f"notebooks/{chapter}.md", "notebook_sha256": None, "parameters": None, "inputs": None}
        )
        chapter_info[chapter].pop("inputs", None)
        chapter_info[chapter].pop("files", None)  # the manifest lists every file itself
    return {
        "description": "Artifacts of the SDSL companion: every file with its sha256, the notebook and "
        "parameters that made each chapter, the package versions and the machine (written by "
        "sdsl.build.pipeline.run).",
        "packages": package_versions(),
        "machine": machine if machine is not None else machine_info(),
        "chapters": chapter_info,
        "files": {
            rel: {
                "sha256": sha256(root / rel),
                "bytes": (root / rel).stat().st_size,
                "chapter": rel.split("/", 1)[0],
                "kind": artifact_kind(rel),
            }
            for rel in files
        },
    }


def read_manifest(root: Path | str) -> dict[str, Any] | None:
    """The manifest of the tree at ``root``, or ``None`` when it has none. ``ValueError``, one line
    naming the file (and the line and column), when it is not a manifest these tools wrote."""
    path = Path(root) / MANIFEST_NAME
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is damaged: byte {exc.start} is not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is damaged: not JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})") from None
    if not (isinstance(doc, dict) and isinstance(doc.get("files"), dict) and isinstance(doc.get("chapters"), dict)):
        raise ValueError(f"{path} is damaged: not a manifest (a JSON object with 'chapters' and 'files')")
    return doc


def write_manifest(root: Path | str, machine: dict[str, Any] | None = None) -> Path:
    """Write ``root/manifest.json`` (:func:`build_manifest`) atomically; returns its path. The file
    is only rewritten when its content changes."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    text = json.dumps(build_manifest(root, machine), indent=1, sort_keys=True, default=str) + "\n"
    path = root / MANIFEST_NAME
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return path
