"""The pandas-free half of :mod:`sdsl.data`: schemas, per-cell validation and :func:`records`.

:mod:`sdsl.data` (the DataFrame API, ``sdsl.data.load``) re-exports everything here; the
planning path imports only this module, so that ``sdsl plan`` reads ``data/presets.csv`` and
``data/acceptance.csv`` through the same schemas and checks without importing pandas.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import numpy as np

from sdsl._csvtext import (
    CsvText,
    DataError,
    YamlError,
    check_sha256,
    load_yaml,
    read_csv_text,
    yaml_problem,
    yml_beside,
)
from sdsl.paths import DATA

__all__ = [
    "DataError",
    "Column",
    "Schema",
    "schema",
    "data_path",
    "list_datasets",
    "records",
    "convert_column",
    "check_header",
    "check_key",
    "CsvText",
    "read_csv_text",
    "check_sha256",
    "yml_beside",
]

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


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
