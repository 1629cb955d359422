"""Reading YAML (the schemas and provenance of ``data/``), with a parsed index of the shipped files.

PyYAML's import alone takes about 30 ms, a tenth of the 0.3 s that ``sdsl plan`` may take,
and ``sdsl plan`` reads five schema files. The YAML files of ``data/`` are therefore also stored
parsed, in ``sdsl/_yaml_index.json``, keyed by the sha256 of each file's text: a text whose sha256
is in the index is read from it, any other text (an edited file, a user's own schema) through
PyYAML's safe loader. The index is a cache: what is read never depends on it (a stale entry is
simply not found), only the time does. ``python -m sdsl._yaml`` rewrites it, and
``tests/unit/test_yaml_index.py`` fails when it is stale.

A key given twice in one mapping is refused (:class:`DuplicateKeyError`, naming the line and the
key), never taken last-wins: PyYAML's safe loader keeps the last value without a word, so that a
second ``max_exclusive:`` or ``sha256:`` line would silently replace the first. Both readers
refuse: the loader below checks every mapping, and the index holds only files it read (an index
of an earlier format, written before the check, is not used).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["YamlError", "DuplicateKeyError", "load", "build_index", "write_index", "INDEX"]

#: The parsed index, inside the package (it ships in the wheel beside the code that reads it).
INDEX = Path(__file__).resolve().parent / "_yaml_index.json"
#: 2: every entry was read with the duplicate-key check (format 1 indexes are not used).
_FORMAT = 2
_index: dict[str, Any] | None = None


class YamlError(ValueError):
    """The text is not valid YAML; the message is PyYAML's, on one line."""


class DuplicateKeyError(YamlError):
    """A key appears twice in one mapping; the message starts with ``line L``, the key's line."""


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


_loader: Any = None


def _unique_key_loader() -> Any:
    """PyYAML's safe loader (the C one where built) whose mappings refuse a repeated key."""
    global _loader
    if _loader is None:
        import yaml  # only on a miss: the planning path never imports it

        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

        class UniqueKeyLoader(base):  # type: ignore[misc, valid-type]
            def construct_mapping(self, node: Any, deep: bool = False) -> Any:
                if isinstance(node, yaml.MappingNode):
                    seen: dict[Any, int] = {}
                    for key_node, _ in node.value:
                        if key_node.tag == "tag:yaml.org,2002:merge":  # <<: merged keys may be overridden
                            continue
                        key = self.construct_object(key_node, deep=True)
                        line = key_node.start_mark.line + 1
                        try:
                            first = seen.get(key)
                        except TypeError:  # an unhashable key: the base class names it
                            break
                        if first is not None:
                            raise DuplicateKeyError(
                                f"line {line}: key {key!r} is given twice in one mapping (first on line "
                                f"{first}); give each key once"
                            )
                        seen[key] = line
                return super().construct_mapping(node, deep=deep)

        _loader = UniqueKeyLoader
    return _loader


def _parse(text: str) -> Any:
    import yaml

    try:
        return yaml.load(text, Loader=_unique_key_loader())
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
    trip unchanged (a date, a non-string key) is left out and is read through PyYAML. Raises
    :class:`YamlError` naming the file (and for a repeated key its line) if one is not valid YAML."""
    from sdsl.paths import DATA

    folder = DATA if folder is None else Path(folder)
    entries: dict[str, Any] = {}
    for path in sorted(folder.glob("*.yml")):
        text = path.read_text(encoding="utf-8")
        try:
            value = _parse(text)
        except DuplicateKeyError as exc:
            raise DuplicateKeyError(f"{path}, {exc}") from None
        except YamlError as exc:
            raise YamlError(f"{path}: not valid YAML ({exc})") from None
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
    try:
        path = write_index()
    except YamlError as exc:
        print(f"python -m sdsl._yaml: error: {exc}", file=sys.stderr)
        return 1
    n = len(json.loads(path.read_text(encoding="utf-8"))["entries"])
    print(f"wrote {path} ({n} files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
