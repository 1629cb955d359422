"""The only reader of ``data/``: validated tables of the paper and of the models it uses, and of a
user's measurement files, in three layers: the text of a CSV and its YAML provenance (every problem
with its file, line and column; a key given twice refused; the sha256 between the two), the schemas
and per-cell checks (:func:`records`: plain dicts, pandas-free, what ``sdsl plan`` reads), and the
DataFrame API (:func:`load`, :func:`validate`; pandas is imported there, when a table is built).

Every ``data/<name>.csv`` has ``data/<name>.yml`` beside it with its provenance (title, source,
licence, description), its key (columns that must be unique together), the schema of each
column (type, unit, description and optional constraints ``min``, ``max``, ``min_exclusive``,
``max_exclusive``, ``allowed``, ``required``) and the sha256 of the CSV bytes.

Numbers are kept as the paper printed them (``0.599``, not ``0.5990``), so the precision of each
printed value can be recovered with :func:`printed_tolerance`.

CSVs are read as text first and converted cell by cell, so that every problem is reported as a
:class:`DataError` (a ``ValueError``) naming the file, the 1-based CSV line, the column and what is
wrong, never as a pandas traceback. :func:`validate` is public: it checks a user's own
measurements against one of the schemas, e.g. ``validate(df, "acceptance", "my_runs.csv")``.

Example::

    from sdsl import data
    acc = data.load("acceptance")                   # validated DataFrame
    tol = data.printed_tolerance("paper_table5")    # half a unit in the last printed digit
    mine = data.load("runs.csv", schema="acceptance")
"""

from __future__ import annotations

import codecs
import copy
import csv
import hashlib
import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from sdsl.paths import DATA

if TYPE_CHECKING:  # pandas costs import time and `sdsl plan` reads data/ without it
    import pandas as pd

__all__ = [
    "DataError",
    "YamlError",
    "CsvText",
    "Column",
    "Schema",
    "load",
    "validate",
    "schema",
    "printed_tolerance",
    "provenance",
    "list_datasets",
    "sha256",
    "data_path",
    "records",
    "read_csv_text",
    "check_sha256",
    "yml_beside",
    "load_yaml",
]


# ---------------------------------------------------------------------------------------------
# the text of a CSV and its provenance


class YamlError(ValueError):
    """The text is not valid YAML; the message is PyYAML's, on one line."""


class DuplicateKeyError(YamlError):
    """A key appears twice in one mapping; the message starts with ``line L``, the key's line."""


def _unique_key_loader() -> Any:
    """PyYAML's safe loader (the C one where built) whose mappings refuse a repeated key: PyYAML
    alone keeps the last value without a word, so that a second ``max_exclusive:`` or ``sha256:``
    line would silently replace the first."""
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class UniqueKeyLoader(base):  # type: ignore[misc, valid-type]  # base is one of two loader classes
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

    return UniqueKeyLoader


_LOADER = _unique_key_loader()


def load_yaml(text: str) -> Any:
    """The value of the YAML document ``text``, as ``yaml.safe_load`` reads it, except that a key
    given twice in one mapping raises :class:`DuplicateKeyError` (naming its line).

    Parameters
    ----------
    text : the document.

    Returns
    -------
    Any
        The parsed value.

    Raises
    ------
    YamlError
        If ``text`` is not valid YAML, on one line.
    """
    try:
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise YamlError(" ".join(str(exc).split())) from None


__all__ = ["DataError", "CsvText", "read_csv_text", "check_sha256", "yml_beside"]


class DataError(ValueError):
    """A data file or table does not match its schema (the message names file, line and column)."""


def one_line(message: object) -> str:
    return " ".join(str(message).split())


def yaml_problem(path: Path, exc: YamlError) -> str:
    """The one line for a ``.yml`` file that is not valid YAML: ``path, line L: key ... twice`` for a
    repeated key, ``path: not valid YAML (PyYAML's message)`` otherwise."""
    if isinstance(exc, DuplicateKeyError):
        return f"{path}, {exc}"
    return f"{path}: not valid YAML ({exc})"


def yml_beside(csv_path: Path) -> Path | None:
    """The provenance file ``<name>.yml`` (or ``.yaml``) beside a CSV, or None."""
    for suffix in (".yml", ".yaml"):
        p = csv_path.with_suffix(suffix)
        if p.is_file():
            return p
    return None


#: Control characters a CSV may not hold (tab, line feed and carriage return are allowed).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class CsvText:
    """A CSV file read as text: the stripped header, the data records (cells as written) and the
    1-based line each record starts on (a quoted newline makes a record span lines)."""

    source: str
    header: list[str]
    rows: list[list[str]]
    lines: list[int]


def _short(text: str, limit: int = 60) -> str:
    """``repr(text)`` cut to ``limit`` characters."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def _field_at(line_prefix: str, header: list[str] | None) -> str:
    """The CSV column a character position falls in, from the text of its line before it."""
    try:
        j = len(next(csv.reader([line_prefix]))) if line_prefix else 1
    except (csv.Error, StopIteration):
        return ""
    j = max(j, 1) if not line_prefix.endswith(",") else j + 1
    if header and j <= len(header):
        return f"column {header[j - 1]!r}"
    return f"column {j}"


def _position(text: str, pos: int, header: list[str] | None) -> str:
    """``line L, column 'name' (character C)`` of character ``pos`` of ``text``."""
    line = text.count("\n", 0, pos) + 1
    start = text.rfind("\n", 0, pos) + 1
    col = _field_at(text[start:pos], header if line > 1 else None)
    return f"line {line}, {col + ' ' if col else ''}(character {pos - start + 1})"


def _header_guess(text: str) -> list[str] | None:
    first = text.split("\n", 1)[0]
    try:
        return [c.strip() for c in next(csv.reader([first]))]
    except (csv.Error, StopIteration):
        return None


def read_csv_text(path: str | Path, source: str | None = None) -> CsvText:
    """The records of a CSV file, checked as text before any cell is converted.

    A :class:`DataError` names ``source`` (default: the path), the line and, where it applies, the
    column, for: a missing, unreadable or empty file; bytes that are not UTF-8; a NUL byte or another
    control character; a quote that is never closed or text after a closing quote; an empty or
    repeated column name in the header (a trailing comma leaves an empty one); a record whose number
    of fields differs from the header's; a blank line between records; a header without any data
    record; fields separated by ``;``, a tab or ``|`` rather than commas (Excel's ``;`` is refused, not
    guessed: its decimal commas would be misread); a comment line (one starting with ``#``: comments
    are not allowed, notes belong in the ``.yml``). Accepted as harmless: a UTF-8 byte-order mark,
    CRLF or CR-only line ends, blank lines at the end, newlines inside quoted cells (lines are counted
    in the file, so later messages stay right)."""
    path = Path(path)
    src = str(path) if source is None else source
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{src}: no such file") from None
    except IsADirectoryError:
        raise DataError(f"{src}: is a folder, not a CSV file") from None
    except OSError as exc:
        raise DataError(f"{src}: cannot be read ({exc.strerror or exc})") from None
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        rough = raw.decode("utf-8", errors="replace")
        # the position in characters of the bad byte: decode what precedes it
        pos = len(raw[: exc.start].decode("utf-8", errors="replace"))
        raise DataError(
            f"{src}, {_position(rough, pos, _header_guess(rough))}: byte 0x{raw[exc.start]:02x} is not "
            f"UTF-8 text ({exc.reason}); save the file as UTF-8"
        ) from None
    if not text.strip():
        raise DataError(f"{src}: the file is empty (it needs a header line and data)")
    bad = _CONTROL.search(text)
    if bad:
        ch = bad.group()
        what = "a NUL byte (\\x00)" if ch == "\x00" else f"the control character {ch!r}"
        raise DataError(
            f"{src}, {_position(text, bad.start(), _header_guess(text))}: {what}; a CSV holds text, "
            f"not control characters"
        )
    records: list[tuple[int, list[str]]] = []
    if '"' not in text:  # no quoting, so no newline inside a cell: record k is line k
        try:
            records = list(enumerate(csv.reader(io.StringIO(text, newline=""), strict=True), start=1))
        except csv.Error:
            records = []  # the record-by-record reader below names the line
    if not records:
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        end = 0
        while True:
            start = end + 1
            try:
                rec = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                why = (
                    "a quoted cell is never closed"
                    if "end of data" in str(exc) or reader.line_num > start
                    else str(exc)
                )
                raise DataError(f"{src}, line {start}: not a well-formed CSV record ({why})") from None
            end = reader.line_num
            records.append((start, rec))
    physical = re.split(r"\r\n|\r|\n", text)  # the file's lines, as the csv reader counts them

    def refuse_comment(line: int) -> None:
        if physical[line - 1].lstrip().startswith("#"):
            raise DataError(
                f"{src}, line {line}: a comment line ({_short(physical[line - 1])}); a CSV here holds no "
                f"comments: delete the line (notes belong in the .yml beside the file), or quote the cell if "
                f"'#' starts a value"
            )

    header_line, header_raw = records[0]
    if not any(c.strip() for c in header_raw):
        raise DataError(f"{src}, line {header_line}: the header line is blank")
    refuse_comment(header_line)
    header = [c.strip() for c in header_raw]
    sep = next((c for c in (";", "\t", "|") if c in header[0]), None) if len(header) == 1 else None
    if sep is not None:
        excel = " (as Excel writes a CSV where the decimal point is a comma)" if sep == ";" else ""
        raise DataError(
            f"{src}, line {header_line}: the file uses {sep!r} between fields{excel}; fields must be separated "
            f"by commas, with '.' as the decimal point (the header reads as one column {_short(header[0])})"
        )
    for j, name in enumerate(header):
        if not name:
            trailing = " (a trailing comma at the end of the header)" if j == len(header) - 1 else ""
            raise DataError(
                f"{src}, line {header_line}, column {j + 1}: empty column name{trailing}; every column needs a name"
            )
        if name in header[:j]:
            raise DataError(
                f"{src}, line {header_line}: column {name!r} appears twice in the header (columns "
                f"{header.index(name) + 1} and {j + 1}); each column once"
            )
    body = records[1:]
    while body and not any(c.strip() for c in body[-1][1]):
        body.pop()  # trailing blank lines: harmless
    if not body:
        raise DataError(f"{src}: no data, only the header (line {header_line}); the table needs at least one row")
    rows, lines = [], []
    for line, rec in body:
        refuse_comment(line)
        if not any(c.strip() for c in rec):
            raise DataError(
                f"{src}, line {line}: blank line inside the table (only blank lines at the end are allowed)"
            )
        if len(rec) != len(header):
            hint = " (a trailing comma?)" if len(rec) == len(header) + 1 and not rec[-1].strip() else ""
            raise DataError(
                f"{src}, line {line}: {len(rec)} fields, the header (line {header_line}) has {len(header)}{hint}"
            )
        rows.append(rec)
        lines.append(line)
    return CsvText(src, header, rows, lines)


def sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def check_sha256(csv_path: Path, yml_path: Path | None = None) -> None:
    """Raise :class:`DataError` unless the sha256 recorded in the provenance file beside ``csv_path``
    (``yml_path``; found if None, none: nothing to check) is that of the CSV's bytes."""
    yml = yml_beside(csv_path) if yml_path is None else yml_path
    if yml is None:
        return
    try:
        meta = load_yaml(yml.read_text(encoding="utf-8"))
    except YamlError as exc:
        raise DataError(yaml_problem(yml, exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{yml}: cannot read the provenance file ({one_line(exc)})") from None
    recorded = meta.get("sha256") if isinstance(meta, Mapping) else None
    try:
        digest = sha256(csv_path)
    except OSError:
        raise DataError(f"{csv_path}: no such file") from None
    if recorded is None or (isinstance(recorded, str) and not recorded.strip()):
        raise DataError(
            f"{yml}: no sha256 recorded for {csv_path.name}: its provenance needs the sha256 of the CSV "
            f"(64 hexadecimal digits; python -m sdsl.data sha {csv_path} prints it)"
        )
    if not isinstance(recorded, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", recorded.strip()):
        raise DataError(
            f"{yml}: sha256 must be 64 hexadecimal digits (as a string: quoted if they are all digits), "
            f"got {str(recorded)[:70]!r}"
        )
    recorded = recorded.strip().lower()
    if recorded != digest:
        # two digests a typo apart share most digits: say where they part, not only how they begin
        i = next(k for k, (a, b) in enumerate(zip(digest, recorded)) if a != b)
        raise DataError(
            f"{csv_path}: the file is not the one its provenance describes: its sha256 is {digest} but "
            f"{yml.name} records {recorded}; they differ from character {i + 1} on (the file's "
            f"{digest[i : i + 8]!r}, recorded {recorded[i : i + 8]!r}); restore the file, or record its new "
            f"sha256 in {yml.name} if the change is intended"
        )


# ---------------------------------------------------------------------------------------------
# schemas, per-cell checks and records (pandas-free)


_TYPES = ("float", "int", "str")
_CONSTRAINTS = ("min", "max", "min_exclusive", "max_exclusive", "allowed")


@dataclass(frozen=True)
class Column:
    """Schema of one column."""

    name: str
    type: str
    unit: str = ""
    description: str = ""
    required: bool = True
    min: float | None = None
    max: float | None = None
    min_exclusive: float | None = None
    max_exclusive: float | None = None
    allowed: tuple | None = None

    def range_text(self) -> str:
        """The column's numeric constraints as text, e.g. ``in (0, 1)`` or ``>= 1``."""
        parts = []
        if self.min is not None:
            parts.append(f">= {self.min:g}")
        if self.min_exclusive is not None:
            parts.append(f"> {self.min_exclusive:g}")
        if self.max is not None:
            parts.append(f"<= {self.max:g}")
        if self.max_exclusive is not None:
            parts.append(f"< {self.max_exclusive:g}")
        return " and ".join(parts)


@dataclass(frozen=True)
class Schema:
    """Schema of one table: its columns (in file order) and key, plus the provenance fields."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """Column names in order."""
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        """The :class:`Column` called ``name``."""
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


# ---------------------------------------------------------------------------------------------
# schemas


def _schema_from_mapping(meta: Mapping[str, Any], origin: str) -> Schema:
    """Build a :class:`Schema` from the parsed YAML of a ``.yml`` file (checking its form)."""
    if not isinstance(meta, Mapping):
        raise DataError(f"{origin}: a schema must be a mapping with 'columns', got {type(meta).__name__}")
    cols_raw = meta.get("columns")
    if not isinstance(cols_raw, list) or not cols_raw:
        raise DataError(f"{origin}: the schema needs a non-empty list 'columns'")
    columns = []
    for i, c in enumerate(cols_raw, start=1):
        if not isinstance(c, Mapping) or "name" not in c or "type" not in c:
            raise DataError(f"{origin}: column entry {i} needs 'name' and 'type', got {c!r}")
        if c["type"] not in _TYPES:
            raise DataError(f"{origin}: column {c['name']!r} has type {c['type']!r}; allowed: {list(_TYPES)}")
        unknown = set(c) - {"name", "type", "unit", "description", "required", *_CONSTRAINTS}
        if unknown:
            raise DataError(f"{origin}: column {c['name']!r} has unknown fields {sorted(unknown)}")
        allowed = c.get("allowed")
        if allowed is not None:
            if not isinstance(allowed, list) or not allowed:
                raise DataError(f"{origin}: 'allowed' of column {c['name']!r} must be a non-empty list")
            allowed = tuple(allowed)
        bounds = {}
        for k in ("min", "max", "min_exclusive", "max_exclusive"):
            if c.get(k) is not None:
                if c["type"] == "str":
                    raise DataError(f"{origin}: column {c['name']!r} is text; {k!r} does not apply")
                bounds[k] = float(c[k])
        columns.append(
            Column(
                name=str(c["name"]),
                type=c["type"],
                unit=str(c.get("unit") or ""),
                description=str(c.get("description") or ""),
                required=bool(c.get("required", True)),
                allowed=allowed,
                **bounds,
            )
        )
    names = [c.name for c in columns]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DataError(f"{origin}: columns {dup} are listed more than once")
    key = meta.get("key") or []
    if isinstance(key, str):
        key = [key]
    missing = [k for k in key if k not in names]
    if missing:
        raise DataError(f"{origin}: key columns {missing} are not among the columns {names}")
    name = str(meta.get("name") or Path(origin).stem)
    return Schema(name=name, columns=tuple(columns), key=tuple(key), meta=dict(meta))


def _read_yaml(path: Path) -> Mapping[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read the schema file ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raw = path.read_bytes()
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataError(
            f"{path}, line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8 text; save the file as UTF-8"
        ) from None
    try:
        return load_yaml(text)
    except YamlError as exc:
        raise DataError(yaml_problem(path, exc)) from None


def _is_pathlike(name_or_path: str | Path) -> bool:
    s = str(name_or_path)
    return isinstance(name_or_path, Path) or "/" in s or "\\" in s or s.endswith((".csv", ".yml", ".yaml"))


def data_path(name_or_path: str | Path) -> Path:
    """The CSV path of a dataset name (``data/<name>.csv``) or of a given path (a ``.yml`` path gives
    the CSV beside it), which must be an existing file: a missing one, a folder or a link to a folder
    raises :class:`DataError` (a dataset's name written as a file name, ``"latency.csv"``, that is not a
    file here is told to drop the extension)."""
    if _is_pathlike(name_or_path):
        given = Path(name_or_path).expanduser()
        if given.suffix in (".yml", ".yaml"):
            given = given.with_suffix(".csv")
        p = given.resolve()
    else:
        given = p = DATA / f"{name_or_path}.csv"
        if not p.exists() and not p.is_symlink():
            raise DataError(f"unknown dataset {name_or_path!r}: no {p}; available: {', '.join(list_datasets())}")
    if p.is_dir():
        what = f"a link to the folder {p}" if given.is_symlink() else "a folder"
        raise DataError(f"{given.absolute()}: is {what}, not a CSV file")
    if not p.is_file():
        hint = ""
        bare = Path(name_or_path)
        if len(bare.parts) == 1 and "\\" not in str(bare) and bare.stem in list_datasets():  # "latency.csv"
            hint = f"; for the dataset, give its name without {bare.suffix}: {bare.stem!r}"
        raise DataError(f"{given.absolute()}: no such file{hint}")
    return p


def _yml_beside(csv_path: Path) -> Path:
    p = yml_beside(csv_path)
    if p is not None:
        return p
    raise DataError(
        f"{csv_path}: no schema beside it ({csv_path.with_suffix('.yml').name}); pass schema= "
        f"(a dataset name such as 'acceptance', a .yml path or a Schema)"
    )


def schema(name_or_path: str | Path | Schema | Mapping[str, Any]) -> Schema:
    """The :class:`Schema` of a dataset (name), of a ``.yml`` file / the CSV it describes (path),
    or of a mapping of the same form. A :class:`Schema` is returned unchanged."""
    if isinstance(name_or_path, Schema):
        return name_or_path
    if isinstance(name_or_path, Mapping):
        return _schema_from_mapping(name_or_path, "<schema mapping>")
    p = Path(name_or_path)
    if _is_pathlike(name_or_path) and p.suffix in (".yml", ".yaml"):
        yml = p.expanduser().resolve()
    else:
        yml = _yml_beside(data_path(name_or_path))
    return _schema_from_mapping(_read_yaml(yml), str(yml))


#: module-level alias, so that functions with a ``schema`` keyword can still reach :func:`schema`
_schema_of = schema


def list_datasets() -> list[str]:
    """Names of the datasets in ``data/`` (each ``<name>.csv`` that has a ``<name>.yml``)."""
    return sorted(p.stem for p in DATA.glob("*.csv") if p.with_suffix(".yml").exists())


def _pos(i: int, line_offset: int | Sequence[int] | None) -> str:
    """Where row ``i`` is: ``row i+1`` (no file), ``line i+offset``, or the line a reader recorded
    (:attr:`CsvText.lines`: right after a quoted newline too)."""
    if line_offset is None:
        return f"row {i + 1}"
    if isinstance(line_offset, int):
        return f"line {i + line_offset}"
    return f"line {line_offset[i]}"


def _where(source: str, i: int, line_offset: int | Sequence[int] | None) -> str:
    return f"{source}, {_pos(i, line_offset)}"


def _fast_numeric(col: Column, texts: list[str]) -> list[Any] | None:
    """The numeric column converted by Python's own ``int`` / ``float`` in one pass and checked as
    arrays, or ``None`` when any cell needs the cell-by-cell path of :func:`convert_column`
    (an empty cell, a non-number, ``"5.0"`` or ``"1e3"`` in an integer column, a value out of range
    or not allowed): that path then converts it again and raises the message naming the cell, so
    both paths accept exactly the same tables and return the same values."""
    try:
        xs = [int(t) for t in texts] if col.type == "int" else [float(t) for t in texts]
    except ValueError:
        return None
    a = np.asarray(xs)
    if a.dtype.kind != ("i" if col.type == "int" else "f"):
        return None  # beyond int64 (uint64 or object): the cell path names the cell
    if col.type != "int" and not np.isfinite(a).all():
        return None
    if (
        (col.min is not None and (a < col.min).any())
        or (col.min_exclusive is not None and (a <= col.min_exclusive).any())
        or (col.max is not None and (a > col.max).any())
        or (col.max_exclusive is not None and (a >= col.max_exclusive).any())
        or (col.allowed is not None and not np.isin(a, [float(v) for v in col.allowed]).all())
    ):
        return None
    return xs


def convert_column(
    col: Column, values: list[Any], texts: list[str], source: str, line_offset: int | Sequence[int] | None
) -> list[Any]:
    """The cells of one column checked against its schema and converted: ``str`` cells as text
    (``None`` when empty), numeric cells as ``float`` or ``int`` (``nan`` when empty).

    ``values`` are the raw cells (for the boolean check), ``texts`` their stripped text. Raises
    :class:`DataError` naming ``source``, the line (or row), the column and the problem."""
    if col.type == "str":
        conv: list[Any] = []
        for i, t in enumerate(texts):
            if t == "":
                if col.required:
                    raise DataError(
                        f"{_where(source, i, line_offset)}, column {col.name!r}: empty cell in a required column"
                    )
                conv.append(None)
                continue
            if col.allowed is not None and t not in [str(a) for a in col.allowed]:
                raise DataError(
                    f"{_where(source, i, line_offset)}, column {col.name!r}: value {t!r} is not "
                    f"among the allowed values {list(col.allowed)}"
                )
            conv.append(t)
        return conv
    fast = _fast_numeric(col, texts)
    if fast is not None:
        return fast
    nums: list[float] = []

    def bad(i: int, problem: str) -> DataError:  # the message is built only for a bad cell
        return DataError(f"{_where(source, i, line_offset)}, column {col.name!r}: {problem}")

    for i, (v, t) in enumerate(zip(values, texts)):
        if t == "":
            if col.required:
                raise bad(i, "empty cell in a required column")
            nums.append(math.nan)
            continue
        if isinstance(v, (bool, np.bool_)):
            raise bad(i, f"expected a number, got the boolean {v!r}")
        try:
            x = float(t)
        except ValueError:
            raise bad(i, f"non-numeric value {t!r} (expected {col.type})") from None
        if not math.isfinite(x):
            raise bad(i, f"value {t!r} is not a finite number")
        if col.type == "int":
            if not x.is_integer():
                raise bad(i, f"value {t!r} is not an integer")
            try:
                x = int(t)  # plain digits: exact and fast
            except ValueError:
                try:
                    x = int(Decimal(t))  # "1e3", "5.0": exact beyond 2**53 too
                except InvalidOperation:
                    x = int(x)
            if not -(2**63) <= x < 2**63:
                raise bad(i, f"value {t} does not fit a 64-bit integer")
        if (
            (col.min is not None and x < col.min)
            or (col.min_exclusive is not None and x <= col.min_exclusive)
            or (col.max is not None and x > col.max)
            or (col.max_exclusive is not None and x >= col.max_exclusive)
        ):
            raise bad(i, f"value {t} is out of range (must be {col.range_text()})")
        if col.allowed is not None and x not in [float(a) for a in col.allowed]:
            raise bad(i, f"value {t} is not among the allowed values {list(col.allowed)}")
        nums.append(x)
    return nums


def check_key(s: Schema, keys: Iterable[tuple], source: str, line_offset: int | Sequence[int] | None) -> None:
    """Raise :class:`DataError` at the first row whose key (the schema's key columns) repeats."""
    seen: dict[tuple, int] = {}
    for i, k in enumerate(keys):
        if k in seen:
            shown = ", ".join(f"{c}={v!r}" for c, v in zip(s.key, k))
            raise DataError(
                f"{_where(source, i, line_offset)}: duplicate key ({shown}) in column(s) "
                f"{list(s.key)}: same as {_pos(seen[k], line_offset)}"
            )
        seen[k] = i


def check_header(cols: list[str], s: Schema, source: str) -> None:
    """Raise :class:`DataError` for a missing, unexpected or repeated column of a table's header."""
    names = s.names
    missing = [c for c in names if c not in cols]
    if missing and len(cols) == 1 and len(names) > 1:
        sep = next((f"{c!r}" for c in ("\t", ";", "|") if c in cols[0]), None)
        if sep is not None:
            raise DataError(
                f"{source}, line 1: the header is one column {_short(cols[0])}: fields must be separated "
                f"by commas, not {sep} (schema {s.name!r} expects {names})"
            )
    if missing:
        raise DataError(f"{source}: missing column(s) {missing} (schema {s.name!r} expects {names})")
    unexpected = [c for c in cols if c not in names]
    if unexpected:
        raise DataError(f"{source}: unexpected column(s) {unexpected} (schema {s.name!r} expects {names})")
    dup_cols = sorted({c for c in cols if cols.count(c) > 1})
    if dup_cols:
        raise DataError(f"{source}: column(s) {dup_cols} appear more than once in the header")


_RECORDS: dict[tuple[str, int, int, int, int], tuple[dict[str, Any], ...]] = {}


def records(name_or_path: str | Path) -> tuple[dict[str, Any], ...]:
    """The rows of a dataset as dicts, validated against its schema exactly as
    :func:`sdsl.data.load` does (same reader, same checks, same messages, the sha256 of its
    provenance file included), without pandas.

    Text cells are ``str`` (``None`` when empty), numbers ``float`` or ``int`` (``nan`` when empty).
    The planning path (``sdsl plan``, ``sdsl presets``) reads its tables this way: pandas is not part
    of the base install. Checked and parsed files are cached by
    the path, modification time and size of the CSV and of its schema file.
    """
    path = data_path(name_or_path)
    yml = _yml_beside(path)
    try:
        st, ys = path.stat(), yml.stat()
    except OSError:
        raise DataError(f"{path}: no such file") from None
    # the CSV and its schema as they were when last read and checked: the same rows
    key = (str(path), st.st_mtime_ns, st.st_size, ys.st_mtime_ns, ys.st_size)
    if key in _RECORDS:
        return _RECORDS[key]
    s = schema(path)
    check_sha256(path)
    table = read_csv_text(path)
    cols = table.header
    check_header(cols, s, str(path))
    converted = {}
    for col in s.columns:
        j = cols.index(col.name)
        values = [r[j] for r in table.rows]
        converted[col.name] = convert_column(col, values, [v.strip() for v in values], str(path), table.lines)
    if s.key:
        check_key(s, zip(*(converted[k] for k in s.key)), str(path), table.lines)
    out = tuple({c: converted[c][i] for c in s.names} for i in range(len(table.rows)))
    _RECORDS[key] = out
    return out


# ---------------------------------------------------------------------------------------------
# the DataFrame API


_PROVENANCE_FIELDS = ("title", "source", "licence", "description", "key", "sha256")


def provenance(name_or_path: str | Path) -> dict[str, Any]:
    """Title, source, licence, description, key, sha256 and the CSV path of a dataset."""
    s = schema(name_or_path)
    out = {k: copy.deepcopy(s.meta.get(k)) for k in _PROVENANCE_FIELDS}
    out["key"] = list(s.key)
    out["path"] = str(data_path(name_or_path))
    return out


# ---------------------------------------------------------------------------------------------
# reading and validation


def _read_raw(path: Path) -> tuple[pd.DataFrame, list[int]]:
    """The CSV as text cells (no type inference, no NA guessing) and the line of each row
    (:func:`sdsl.data.read_csv_text`: encoding, NUL bytes, header, quoting, blank lines)."""
    import pandas as pd

    table = read_csv_text(path)
    return pd.DataFrame(table.rows, columns=table.header, dtype=object), table.lines


_CACHE: dict[tuple[str, int, int, str], pd.DataFrame] = {}
_CACHE_MAX = 256


def _cell_text(value: Any) -> str:
    import pandas as pd

    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    if value is pd.NA or value is pd.NaT:
        return ""
    return str(value).strip()


def validate(
    df: pd.DataFrame,
    schema: str | Path | Schema | Mapping[str, Any],  # noqa: A002 - public keyword
    source: str = "<DataFrame>",
    line_offset: int | Sequence[int] | None = None,
) -> pd.DataFrame:
    """Check ``df`` against a schema and return a typed copy (columns in schema order).

    Parameters
    ----------
    df : the table; cells may be text (as read from a CSV) or already numeric.
    schema : a dataset name (``"acceptance"``), a ``.yml`` path, a mapping or a :class:`Schema`.
    source : what to call the table in messages (usually the file path).
    line_offset : CSV line of the first data row (2 when a header line precedes it), or the line
        of each row (a reader's, right after quoted newlines); ``None`` reports 1-based data rows.

    Raises
    ------
    DataError (a ValueError) naming ``source``, the line or row, the column and the problem: a
    missing or unexpected column, an empty cell in a required column, a non-numeric or
    non-integer cell, a value outside its range or not among the allowed ones, a duplicate key.
    """
    import pandas as pd

    s = _schema_of(schema)
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"{source}: expected a pandas DataFrame, got {type(df).__name__}")
    cols = [str(c).strip() for c in df.columns]
    names = s.names
    check_header(cols, s, source)
    frame = df.copy()
    frame.columns = cols
    out: dict[str, Any] = {}
    for col in s.columns:
        values = frame[col.name].tolist()
        # cells read from a CSV are all text; anything else (None, NaN, numbers) goes through _cell_text
        texts = [v.strip() for v in values] if all(type(v) is str for v in values) else [_cell_text(v) for v in values]
        conv = convert_column(col, values, texts, source, line_offset)
        if col.type == "str":
            out[col.name] = pd.Series(conv, dtype=object)
            continue
        nums = conv
        if col.type == "int":
            # int64 when every cell is filled; pandas' nullable Int64 when an optional cell is empty
            has_empty = "" in texts  # convert_column gives nan exactly for the empty cells
            out[col.name] = (
                pd.Series([pd.NA if isinstance(x, float) else x for x in nums], dtype="Int64")
                if has_empty
                else pd.Series(nums, dtype="int64")
            )
        else:
            out[col.name] = pd.Series(nums, dtype="float64")
    result = pd.DataFrame(out, columns=names)
    if s.key:
        check_key(s, result[list(s.key)].itertuples(index=False, name=None), source, line_offset)
    return result


def load(
    name_or_path: str | Path,
    schema: str | Path | Schema | Mapping[str, Any] | None = None,  # noqa: A002 - public keyword
) -> pd.DataFrame:
    """A validated table: a dataset name in ``data/`` (``"acceptance"``), or a path to any CSV with
    a ``.yml`` schema beside it, or a path plus an explicit ``schema`` (a dataset name such as
    ``"acceptance"``, a ``.yml`` path, a mapping or a :class:`Schema`).

    Returns a new DataFrame each call (parsed files are cached by path and modification time).
    Raises :class:`DataError` (a ``ValueError``) naming the file, line and column of any problem,
    and when the sha256 recorded in the ``.yml`` beside the CSV (if there is one) is missing or is
    not the file's: a table that changed since its provenance was written is never used.
    """

    path = data_path(name_or_path)
    s = _schema_of(path if schema is None else schema)
    try:
        st = path.stat()
    except OSError:
        raise DataError(f"{path}: no such file") from None
    # a provenance file beside the CSV records its sha256: checked on every load (cheap), also
    # when the schema is given explicitly
    check_sha256(path)
    # keyed by the file's identity and by the schema's content (a schema edit is seen at once)
    key = (str(path), st.st_mtime_ns, st.st_size, repr(s))
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        raw, lines = _read_raw(path)
        _CACHE[key] = validate(raw, s, str(path), line_offset=lines)
    return _CACHE[key].copy()


def _half_unit(text: str) -> float:
    """Half a unit in the last printed digit of ``text`` (``"0.599"`` -> 5e-4)."""
    try:
        d = Decimal(text.strip())
    except InvalidOperation:
        return math.nan
    exponent = d.as_tuple().exponent
    if not isinstance(exponent, int):  # 'n', 'N' or 'F': not finite
        return math.nan
    return float(Decimal(5).scaleb(exponent - 1))


def printed_tolerance(
    name_or_path: str | Path,
    schema: str | Path | Schema | Mapping[str, Any] | None = None,  # noqa: A002 - public keyword
) -> pd.DataFrame:
    """Per numeric cell, half a unit in the last digit as printed in the CSV.

    Same shape, index and columns as :func:`load`; text columns are kept as they are (so rows can
    be identified), numeric columns hold the tolerance (NaN for an empty optional cell). E.g.
    ``0.599`` -> ``5e-4``, ``4.89e-03`` -> ``5e-06``, ``180e9`` -> ``5e8``, ``288`` -> ``0.5``.
    Use it for "agrees with every printed digit" checks: ``abs(ours - paper) <= tol``.
    ``schema`` as in :func:`load` (for a CSV without a ``.yml`` beside it).
    """

    df = load(name_or_path, schema)
    s = _schema_of(name_or_path if schema is None else schema)
    raw, _ = _read_raw(data_path(name_or_path))
    raw.columns = [str(c).strip() for c in raw.columns]
    out = df.copy()
    for col in s.columns:
        if col.type != "str":
            out[col.name] = [_half_unit(_cell_text(t)) if _cell_text(t) else math.nan for t in raw[col.name]]
    return out


def _main(argv: Iterable[str] | None = None) -> int:
    """``python -m sdsl.data [check|sha [CSV ...]]``: validate every dataset (and its sha256), or
    print the sha256 of each CSV (of data/, or the files named) for its ``.yml``."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    cmd = args[0] if args else "check"
    if cmd not in ("check", "sha") or (cmd == "check" and len(args) > 1):
        print(
            f"python -m sdsl.data: error: expected 'check' or 'sha [CSV ...]', got {' '.join(args)!r}", file=sys.stderr
        )
        return 2
    if cmd == "sha" and len(args) > 1:
        for f in args[1:]:
            if not Path(f).is_file():
                print(f"python -m sdsl.data sha: error: {f}: no such file", file=sys.stderr)
                return 2
            print(f"{f}: {sha256(f)}")
        return 0
    bad = 0
    for name in list_datasets():
        digest = sha256(data_path(name))
        if cmd == "sha":
            print(f"{name}: {digest}")
            continue
        try:
            df = load(name)
        except DataError as exc:
            print(f"FAIL {exc}")
            bad += 1
            continue
        print(f"ok   {name}: {len(df)} rows")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(_main())
