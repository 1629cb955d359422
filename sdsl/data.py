"""The only reader of ``data/``: validated tables of the paper and of the models it uses.

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

import copy
import hashlib
import math
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd
import yaml

from sdsl.paths import DATA

__all__ = [
    "DataError",
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
]

_TYPES = ("float", "int", "str")
_CONSTRAINTS = ("min", "max", "min_exclusive", "max_exclusive", "allowed")
_PROVENANCE_FIELDS = ("title", "source", "licence", "description", "key", "sha256")


class DataError(ValueError):
    """A data file or table does not match its schema (the message names file, line and column)."""


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
                name=str(c["name"]), type=c["type"], unit=str(c.get("unit") or ""),
                description=str(c.get("description") or ""), required=bool(c.get("required", True)),
                allowed=allowed, **bounds,
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
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise DataError(f"{path}: not valid YAML ({exc})") from None


def _is_pathlike(name_or_path: str | Path) -> bool:
    s = str(name_or_path)
    return isinstance(name_or_path, Path) or "/" in s or "\\" in s or s.endswith((".csv", ".yml", ".yaml"))


def data_path(name_or_path: str | Path) -> Path:
    """The CSV path of a dataset name (``data/<name>.csv``) or of a given path."""
    if _is_pathlike(name_or_path):
        p = Path(name_or_path).expanduser().resolve()
        return p.with_suffix(".csv") if p.suffix in (".yml", ".yaml") else p
    p = DATA / f"{name_or_path}.csv"
    if not p.exists():
        raise DataError(
            f"unknown dataset {name_or_path!r}: no {p}; available: {', '.join(list_datasets())}"
        )
    return p


def _yml_beside(csv_path: Path) -> Path:
    for suffix in (".yml", ".yaml"):
        p = csv_path.with_suffix(suffix)
        if p.exists():
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


def provenance(name_or_path: str | Path) -> dict[str, Any]:
    """Title, source, licence, description, key, sha256 and the CSV path of a dataset."""
    s = schema(name_or_path)
    out = {k: copy.deepcopy(s.meta.get(k)) for k in _PROVENANCE_FIELDS}
    out["key"] = list(s.key)
    out["path"] = str(data_path(name_or_path))
    return out


def list_datasets() -> list[str]:
    """Names of the datasets in ``data/`` (each ``<name>.csv`` that has a ``<name>.yml``)."""
    return sorted(p.stem for p in DATA.glob("*.csv") if p.with_suffix(".yml").exists())


def sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# reading and validation


def _read_raw(path: Path) -> pd.DataFrame:
    """The CSV as text cells (no type inference, no NA guessing)."""
    if not path.exists():
        raise DataError(f"{path}: no such file")
    try:
        raw = pd.read_csv(
            path, dtype=str, keep_default_na=False, na_filter=False, skip_blank_lines=False,
            encoding="utf-8",
        )
    except pd.errors.EmptyDataError:
        raise DataError(f"{path}: the file is empty (it needs a header line)") from None
    except pd.errors.ParserError as exc:
        raise DataError(f"{path}: not a well-formed CSV: {str(exc).strip()}") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return raw


_CACHE: dict[tuple[str, int, int, str], pd.DataFrame] = {}
_CACHE_MAX = 256


def _pos(i: int, line_offset: int | None) -> str:
    return f"row {i + 1}" if line_offset is None else f"line {i + line_offset}"


def _where(source: str, i: int, line_offset: int | None) -> str:
    return f"{source}, {_pos(i, line_offset)}"


def _cell_text(value: Any) -> str:
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
    line_offset: int | None = None,
) -> pd.DataFrame:
    """Check ``df`` against a schema and return a typed copy (columns in schema order).

    Parameters
    ----------
    df : the table; cells may be text (as read from a CSV) or already numeric.
    schema : a dataset name (``"acceptance"``), a ``.yml`` path, a mapping or a :class:`Schema`.
    source : what to call the table in messages (usually the file path).
    line_offset : CSV line of the first data row (2 when a header line precedes it); ``None``
        reports 1-based data rows instead of lines.

    Raises
    ------
    DataError (a ValueError) naming ``source``, the line or row, the column and the problem: a
    missing or unexpected column, an empty cell in a required column, a non-numeric or
    non-integer cell, a value outside its range or not among the allowed ones, a duplicate key.
    """
    s = _schema_of(schema)
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"{source}: expected a pandas DataFrame, got {type(df).__name__}")
    cols = [str(c).strip() for c in df.columns]
    names = s.names
    missing = [c for c in names if c not in cols]
    if missing:
        raise DataError(
            f"{source}: missing column(s) {missing} (schema {s.name!r} expects {names})"
        )
    unexpected = [c for c in cols if c not in names]
    if unexpected:
        raise DataError(
            f"{source}: unexpected column(s) {unexpected} (schema {s.name!r} expects {names})"
        )
    dup_cols = sorted({c for c in cols if cols.count(c) > 1})
    if dup_cols:
        raise DataError(f"{source}: column(s) {dup_cols} appear more than once in the header")
    frame = df.copy()
    frame.columns = cols
    out: dict[str, Any] = {}
    for col in s.columns:
        values = frame[col.name].tolist()
        texts = [_cell_text(v) for v in values]
        if col.type == "str":
            conv: list[Any] = []
            for i, t in enumerate(texts):
                if t == "":
                    if col.required:
                        raise DataError(f"{_where(source, i, line_offset)}, column {col.name!r}: empty cell in a required column")
                    conv.append(None)
                    continue
                if col.allowed is not None and t not in [str(a) for a in col.allowed]:
                    raise DataError(
                        f"{_where(source, i, line_offset)}, column {col.name!r}: value {t!r} is not "
                        f"among the allowed values {list(col.allowed)}"
                    )
                conv.append(t)
            out[col.name] = pd.Series(conv, dtype=object)
            continue
        nums: list[float] = []
        for i, (v, t) in enumerate(zip(values, texts)):
            where = f"{_where(source, i, line_offset)}, column {col.name!r}"
            if t == "":
                if col.required:
                    raise DataError(f"{where}: empty cell in a required column")
                nums.append(math.nan)
                continue
            if isinstance(v, (bool, np.bool_)):
                raise DataError(f"{where}: expected a number, got the boolean {v!r}")
            try:
                x = float(t)
            except ValueError:
                raise DataError(f"{where}: non-numeric value {t!r} (expected {col.type})") from None
            if not math.isfinite(x):
                raise DataError(f"{where}: value {t!r} is not a finite number")
            if col.type == "int":
                if not x.is_integer():
                    raise DataError(f"{where}: value {t!r} is not an integer")
                try:
                    x = int(Decimal(t))
                except InvalidOperation:
                    x = int(x)
            if col.min is not None and x < col.min:
                raise DataError(f"{where}: value {t} is out of range (must be {col.range_text()})")
            if col.min_exclusive is not None and x <= col.min_exclusive:
                raise DataError(f"{where}: value {t} is out of range (must be {col.range_text()})")
            if col.max is not None and x > col.max:
                raise DataError(f"{where}: value {t} is out of range (must be {col.range_text()})")
            if col.max_exclusive is not None and x >= col.max_exclusive:
                raise DataError(f"{where}: value {t} is out of range (must be {col.range_text()})")
            if col.allowed is not None and x not in [float(a) for a in col.allowed]:
                raise DataError(f"{where}: value {t} is not among the allowed values {list(col.allowed)}")
            nums.append(x)
        if col.type == "int":
            # int64 when every cell is filled; pandas' nullable Int64 when an optional cell is empty
            has_empty = any(isinstance(x, float) and math.isnan(x) for x in nums)
            out[col.name] = pd.Series(
                [pd.NA if isinstance(x, float) else x for x in nums], dtype="Int64"
            ) if has_empty else pd.Series(nums, dtype="int64")
        else:
            out[col.name] = pd.Series(nums, dtype="float64")
    result = pd.DataFrame(out, columns=names)
    if s.key:
        seen: dict[tuple, int] = {}
        keys = result[list(s.key)].itertuples(index=False, name=None)
        for i, k in enumerate(keys):
            if k in seen:
                shown = ", ".join(f"{c}={v!r}" for c, v in zip(s.key, k))
                raise DataError(
                    f"{_where(source, i, line_offset)}: duplicate key ({shown}) in column(s) "
                    f"{list(s.key)}: same as {_pos(seen[k], line_offset)}"
                )
            seen[k] = i
    return result


def load(
    name_or_path: str | Path,
    schema: str | Path | Schema | Mapping[str, Any] | None = None,  # noqa: A002 - public keyword
) -> pd.DataFrame:
    """A validated table: a dataset name in ``data/`` (``"acceptance"``), or a path to any CSV with
    a ``.yml`` schema beside it, or a path plus an explicit ``schema`` (a dataset name such as
    ``"acceptance"``, a ``.yml`` path, a mapping or a :class:`Schema`).

    Returns a new DataFrame each call (parsed files are cached by path and modification time).
    Raises :class:`DataError` (a ``ValueError``) naming the file, line and column of any problem.
    """
    path = data_path(name_or_path)
    s = _schema_of(path if schema is None else schema)
    try:
        st = path.stat()
    except OSError:
        raise DataError(f"{path}: no such file") from None
    # keyed by the file's identity and by the schema's content (a schema edit is seen at once)
    key = (str(path), st.st_mtime_ns, st.st_size, repr(s))
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[key] = validate(_read_raw(path), s, str(path), line_offset=2)
    return _CACHE[key].copy()


def _half_unit(text: str) -> float:
    """Half a unit in the last printed digit of ``text`` (``"0.599"`` -> 5e-4)."""
    try:
        d = Decimal(text.strip())
    except InvalidOperation:
        return math.nan
    if not d.is_finite():
        return math.nan
    return float(Decimal(5).scaleb(d.as_tuple().exponent - 1))


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
    raw = _read_raw(data_path(name_or_path))
    raw.columns = [str(c).strip() for c in raw.columns]
    out = df.copy()
    for col in s.columns:
        if col.type != "str":
            out[col.name] = [_half_unit(_cell_text(t)) if _cell_text(t) else math.nan for t in raw[col.name]]
    return out


def _main(argv: Iterable[str] | None = None) -> int:
    """``python -m sdsl.data [check|sha]``: validate every dataset (and its sha256), or print the
    sha256 of each CSV for its ``.yml``."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    cmd = args[0] if args else "check"
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
        recorded = provenance(name).get("sha256")
        if recorded != digest:
            print(f"FAIL {name}: sha256 in {name}.yml is {recorded}, the CSV's is {digest}")
            bad += 1
        else:
            print(f"ok   {name}: {len(df)} rows")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(_main())
