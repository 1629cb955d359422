"""The corpus of the laptop-scale experiment and its fixed train / validation / prompt split.

Sources, all freely licensed and installable from Debian's registry (``apt-get install bible-kjv
fortunes python3.11-doc``):

* ``kjv``: the King James Version of the Bible (public domain), dumped by the ``bible`` program of
  ``bible-kjv`` (text in ``bible-kjv-text``), one verse per line; verse references are removed and
  each chapter is one document;
* ``fortunes``: the fortune cookies of Debian's ``fortunes`` and ``fortunes-min`` (BSD-style
  licence), one document per cookie;
* ``python-docs``: the reStructuredText sources of the Python 3.11 documentation shipped by
  ``python3.11-doc`` (PSF licence), one document per file;
* ``linux-docs`` (the ``debian-large`` corpus of the GPU scale only): the reStructuredText sources
  of the Linux 6.1 kernel documentation shipped by ``linux-doc-6.1`` (GPL-2.0), one document per
  file, the translations left out.

The smoke scale reads only ``data/kjv_genesis.txt`` (Genesis, committed in the same format, so CI
does not depend on apt). Documents are cut into chunks of at most ``max_chunk_chars`` characters at
paragraph or line boundaries; a seeded permutation assigns chunks to the splits, so every split
mixes all sources.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sdsl.paths import DATA

__all__ = [
    "KJV_SLICE",
    "Document",
    "SourceInfo",
    "chunk_documents",
    "load_sources",
    "RECORDED_SOURCES",
    "recorded_sources",
    "source_differences",
    "parse_kjv",
    "read_fortunes",
    "read_kjv",
    "read_linux_docs",
    "read_python_docs",
    "split_chunks",
]

#: The committed slice of the KJV (Genesis) used by the smoke scale.
KJV_SLICE = DATA / "kjv_genesis.txt"
FORTUNES_DIR = Path("/usr/share/games/fortunes")
PYTHON_DOCS_DIR = Path("/usr/share/doc/python3.11/html/_sources")
LINUX_DOCS_DIR = Path("/usr/share/doc/linux-doc-6.1/Documentation")
_VERSE = re.compile(r"^([1-3]?[A-Za-z]+)(\d+):(\d+) (.*)$")


@dataclass(frozen=True)
class Document:
    """One document of one source."""

    source: str
    doc_id: str
    text: str


@dataclass(frozen=True)
class SourceInfo:
    """Where a source came from: Debian package and version (or the committed file), its licence,
    the number of documents and characters, and the sha256 of its text (documents joined by
    blank lines)."""

    source: str
    origin: str
    package: str
    version: str
    licence: str
    documents: int
    characters: int
    sha256: str


def _sha(docs: list[Document]) -> str:
    return hashlib.sha256("\n\n".join(d.text for d in docs).encode("utf-8")).hexdigest()


def _package_version(package: str) -> str:
    if shutil.which("dpkg-query") is None:
        return "unknown"
    res = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True, text=True, check=False)
    return res.stdout.strip() if res.returncode == 0 else "not installed"


def parse_kjv(text: str) -> list[Document]:
    """Chapters of the KJV from ``bible -f`` output (``Ge1:1 In the beginning ...``, one verse per
    line): the references are dropped and each chapter's verses are joined with spaces."""
    chapters: dict[tuple[str, str], list[str]] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _VERSE.match(line)
        if m is None:
            raise ValueError(f"KJV text line {n}: expected 'BookC:V text', got {line[:40]!r}")
        chapters.setdefault((m.group(1), m.group(2)), []).append(m.group(4).strip())
    return [Document("kjv", f"{b}{c}", " ".join(v)) for (b, c), v in chapters.items()]


def read_kjv(path: str | Path | None = None) -> tuple[list[Document], SourceInfo]:
    """The KJV: from ``path`` (text in the ``bible -f`` format) or, if None, dumped by Debian's
    ``bible`` program (``bible -f gen1:1-rev22:21``)."""
    if path is not None:
        docs = parse_kjv(Path(path).read_text(encoding="utf-8"))
        origin, package, version = str(Path(path).name), "committed slice (data/kjv_genesis.yml)", "-"
    else:
        exe = shutil.which("bible")
        if exe is None:
            raise ValueError(
                "the full corpus needs Debian's bible-kjv: apt-get install -y bible-kjv "
                "(or run --scale smoke, which uses the committed slice)"
            )
        res = subprocess.run([exe, "-f", "gen1:1-rev22:21"], capture_output=True, text=True, check=True)
        docs = parse_kjv(res.stdout)
        origin, package, version = "bible -f gen1:1-rev22:21", "bible-kjv-text", _package_version("bible-kjv-text")
    info = SourceInfo(
        "kjv",
        origin,
        package,
        version,
        "public domain (King James Version, 1611)",
        len(docs),
        sum(len(d.text) for d in docs),
        _sha(docs),
    )
    return docs, info


def read_fortunes(folder: str | Path = FORTUNES_DIR) -> tuple[list[Document], SourceInfo]:
    """Every cookie of the fortune files in ``folder`` (files without an extension; ``.dat``
    indexes and ``.u8`` links skipped), split on lines holding only ``%``; backspace overstrikes
    removed."""
    folder = Path(folder)
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.is_symlink() and p.suffix == "")
    if not files:
        raise ValueError(f"no fortune files in {folder}: apt-get install -y fortunes")
    docs = []
    for p in files:
        text = p.read_bytes().decode("utf-8", errors="replace")
        text = re.sub(r".\x08", "", text)  # overstrike: char, backspace
        for i, cookie in enumerate(re.split(r"\n%\n", text)):
            cookie = cookie.strip("\n%")
            if cookie.strip():
                docs.append(Document("fortunes", f"{p.name}/{i}", cookie))
    version = _package_version("fortunes")
    info = SourceInfo(
        "fortunes",
        str(folder),
        "fortunes, fortunes-min",
        version,
        "BSD-style (Debian fortune-mod copyright)",
        len(docs),
        sum(len(d.text) for d in docs),
        _sha(docs),
    )
    return docs, info


def read_python_docs(folder: str | Path = PYTHON_DOCS_DIR) -> tuple[list[Document], SourceInfo]:
    """The reST sources of the Python 3.11 documentation (``*.rst.txt`` under ``folder``), one
    document per file, in sorted path order."""
    folder = Path(folder)
    files = sorted(folder.rglob("*.txt"))
    if not files:
        raise ValueError(f"no reST sources under {folder}: apt-get install -y python3.11-doc")
    docs = [
        Document("python-docs", str(p.relative_to(folder)), p.read_text(encoding="utf-8", errors="replace"))
        for p in files
    ]
    info = SourceInfo(
        "python-docs",
        str(folder),
        "python3.11-doc",
        _package_version("python3.11-doc"),
        "PSF License (Python documentation)",
        len(docs),
        sum(len(d.text) for d in docs),
        _sha(docs),
    )
    return docs, info


def read_linux_docs(folder: str | Path = LINUX_DOCS_DIR) -> tuple[list[Document], SourceInfo]:
    """The reST sources of the Linux kernel documentation (``*.rst`` and ``*.rst.gz`` under
    ``folder``, the ``translations`` tree left out), one document per file, in sorted path order."""
    import gzip

    folder = Path(folder)
    files = sorted(
        p for p in folder.rglob("*") if p.name.endswith((".rst", ".rst.gz")) and "translations" not in p.parts
    )
    if not files:
        raise ValueError(f"no reST sources under {folder}: apt-get install -y linux-doc-6.1")
    docs = []
    for p in files:
        raw = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        docs.append(Document("linux-docs", str(p.relative_to(folder)), raw.decode("utf-8", errors="replace")))
    info = SourceInfo(
        "linux-docs",
        str(folder),
        "linux-doc-6.1",
        _package_version("linux-doc-6.1"),
        "GPL-2.0 (Linux kernel documentation)",
        len(docs),
        sum(len(d.text) for d in docs),
        _sha(docs),
    )
    return docs, info


#: The readers of each corpus kind, in order.
_CORPORA = {
    "debian": (read_kjv, read_fortunes, read_python_docs),
    "debian-large": (read_kjv, read_fortunes, read_python_docs, read_linux_docs),
}


def load_sources(kind: str) -> tuple[list[Document], list[SourceInfo]]:
    """The documents of a scale's corpus: ``"debian"`` (KJV, fortunes, Python docs, installed
    packages), ``"debian-large"`` (those and the Linux kernel documentation: about 39 M
    characters, for the GPU scale) or ``"committed"`` (the Genesis slice in ``data/``)."""
    if kind == "committed":
        docs, info = read_kjv(KJV_SLICE)
        return docs, [info]
    if kind in _CORPORA:
        out, infos = [], []
        for reader in _CORPORA[kind]:
            d, i = reader()
            out.extend(d)
            infos.append(i)
        return out, infos
    raise ValueError(f"corpus must be one of {['committed', *_CORPORA]}, got {kind!r}")


#: The provenance of the committed laptop-scale run, whose ``corpus.sources`` record what each
#: Debian source held when it ran (package version and sha256 of the text).
RECORDED_SOURCES = DATA / "laptop_scale" / "provenance.yml"


def recorded_sources(provenance: str | Path = RECORDED_SOURCES) -> dict[str, dict]:
    """Source name -> its record (``package``, ``version``, ``sha256``, ...) in the committed run's
    provenance; empty when the file or its ``corpus.sources`` is missing."""
    import yaml

    path = Path(provenance)
    if not path.is_file():
        return {}
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {str(r["source"]): dict(r) for r in (doc.get("corpus") or {}).get("sources") or []}


def source_differences(infos: list[SourceInfo], recorded: dict[str, dict]) -> list[str]:
    """One phrase per source of ``infos`` whose text differs from its record in ``recorded``
    (:func:`recorded_sources`), naming both package versions and digests and the command that
    installs the recorded version; sources without a record are not compared. A Debian point
    release that edits a few pages of a source changes the tokenizer and every model after it:
    a corpus that is not the committed run's does not reproduce its prediction."""
    out = []
    for i in infos:
        r = recorded.get(i.source)
        if r is None or r.get("sha256") == i.sha256:
            continue
        package = str(r.get("package", i.package)).split(",")[0].strip()
        out.append(
            f"{i.source} is {i.package} {i.version} (sha256 {i.sha256[:12]}...) where the committed run read "
            f"{r.get('version')} (sha256 {str(r.get('sha256'))[:12]}...): apt-get update && apt-get install -y "
            f"{package}={r.get('version')}"
        )
    return out


def chunk_documents(docs: list[Document], max_chars: int) -> list[Document]:
    """Documents cut into chunks of at most ``max_chars`` characters, at blank lines when possible,
    else at line ends, else at spaces (a single longer word is cut hard)."""
    if int(max_chars) < 100:
        raise ValueError(f"max_chars must be >= 100, got {max_chars!r}")
    out: list[Document] = []
    for d in docs:
        pieces = _split(d.text, int(max_chars))
        out.extend(Document(d.source, f"{d.doc_id}#{i}", p) for i, p in enumerate(pieces) if p.strip())
    return out


def _split(text: str, limit: int) -> list[str]:
    if len(text) <= limit:
        return [text]
    for sep in ("\n\n", "\n", " "):
        parts = text.split(sep)
        if len(parts) > 1:
            break
    else:
        return [text[i : i + limit] for i in range(0, len(text), limit)]
    out, cur = [], ""
    for p in parts:
        cand = p if not cur else cur + sep + p
        if len(cand) <= limit:
            cur = cand
            continue
        if cur:
            out.append(cur)
        if len(p) > limit:
            out.extend(_split(p, limit))
            cur = ""
        else:
            cur = p
    if cur:
        out.append(cur)
    return out


def split_chunks(
    chunks: list[Document], val_fraction: float, prompt_fraction: float, rng: np.random.Generator
) -> dict[str, list[Document]]:
    """Assign chunks to ``train``, ``val`` and ``prompts`` by a seeded permutation (``rng``):
    the first ``val_fraction`` of the permuted chunks are validation, the next ``prompt_fraction``
    prompts, the rest training; each split keeps the corpus order of its chunks."""
    for name, v in (("val_fraction", val_fraction), ("prompt_fraction", prompt_fraction)):
        if not 0 < float(v) < 0.5:
            raise ValueError(f"{name} must lie in (0, 0.5), got {v!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    n = len(chunks)
    n_val, n_prompt = max(1, round(n * val_fraction)), max(1, round(n * prompt_fraction))
    if n_val + n_prompt >= n:
        raise ValueError(f"the corpus has {n} chunks: too few for validation and prompt splits")
    order = rng.permutation(n)
    val, prompt = set(order[:n_val].tolist()), set(order[n_val : n_val + n_prompt].tolist())
    out: dict[str, list[Document]] = {"train": [], "val": [], "prompts": []}
    for i, c in enumerate(chunks):
        out["val" if i in val else "prompts" if i in prompt else "train"].append(c)
    return out
