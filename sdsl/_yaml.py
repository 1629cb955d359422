"""Reading YAML (the schemas and provenance of ``data/``), with a parsed index of the shipped files.

PyYAML's import alone takes about 30 ms, a tenth of the 0.3 s that ``sdsl plan`` may take (issue 15),
and ``sdsl plan`` reads five schema files. The YAML files of ``data/`` are therefore also stored
parsed, in ``sdsl/_yaml_index.json``, keyed by the sha256 of each file's text: a text whose sha256
is in the index is read from it, any other text (an edited file, a user's own schema) through
PyYAML's safe loader. The index is a cache: what is read never depends on it (a stale entry is
simply not found), only the time does. ``python -m sdsl._yaml`` rewrites it, and
``tests/unit/test_yaml_index.py`` fails when it is stale.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["YamlError", "load", "build_index", "write_index", "INDEX"]

#: The parsed index, inside the package (it ships in the wheel beside the code that reads it).
INDEX = Path(__file__).resolve().parent / "_yaml_index.json"
_FORMAT = 1
_index: dict[str, Any] | None = None


class YamlError(ValueError):
    """The text is not valid YAML; the message is PyYAML's, on one line."""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _entries() -> dict[str, Any]:
    global _index
    if _index is None:
        try:
            raw = json.loads(INDEX.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # no index, or an unreadable one: PyYAML reads everything
            raw = {}
        _index = raw.get("entries", {}) if isinstance(raw, dict) and raw.get("format") == _FORMAT else {}
    return _index


def _parse(text: str) -> Any:
    import yaml  # only on a miss: the planning path never imports it

    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise YamlError(" ".join(str(exc).split())) from None


def load(text: str) -> Any:
    """The value of the YAML document ``text`` (PyYAML's safe loader, or the same value from the index).

    Parameters
    ----------
    text : the document.

    Returns
    -------
    Any
        What ``yaml.safe_load(text)`` returns; a fresh copy on each call.

    Raises
    ------
    YamlError
        If ``text`` is not valid YAML.
    """
    entry = _entries().get(_digest(text))
    if entry is not None:  # a fresh copy; JSON's C codec copies ten times faster than copy.deepcopy
        return json.loads(json.dumps(entry["value"]))
    return _parse(text)


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN and ``bool`` and ``int`` told apart (a JSON round trip keeps both)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def build_index(folder: Path | None = None) -> dict[str, Any]:
    """The index of every ``*.yml`` directly in ``folder`` (default :data:`sdsl.paths.DATA`): for each, the
    sha256 of its text, its name and its parsed value. A file whose value does not survive a JSON round
    trip unchanged (a date, a non-string key) is left out and is read through PyYAML."""
    from sdsl.paths import DATA

    folder = DATA if folder is None else Path(folder)
    entries: dict[str, Any] = {}
    for path in sorted(folder.glob("*.yml")):
        text = path.read_text(encoding="utf-8")
        value = _parse(text)
        try:
            back = json.loads(json.dumps(value))
        except (TypeError, ValueError):  # a date, a set: not JSON
            continue
        if _same(back, value):  # not so for a non-string key
            entries[_digest(text)] = {"file": path.name, "value": value}
    return {"format": _FORMAT, "entries": entries}


def write_index(path: Path = INDEX, folder: Path | None = None) -> Path:
    """Write :func:`build_index` to ``path`` atomically (a temporary file renamed over it)."""
    import tempfile

    text = json.dumps(build_index(folder), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would make the installed file unreadable to other users
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def main(argv: list[str] | None = None) -> int:
    """``python -m sdsl._yaml``: rewrite the index from ``data/*.yml``."""
    if argv:
        print(f"python -m sdsl._yaml takes no arguments, got {' '.join(argv)}", file=sys.stderr)
        return 2
    path = write_index()
    n = len(json.loads(path.read_text(encoding="utf-8"))["entries"])
    print(f"wrote {path} ({n} files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
