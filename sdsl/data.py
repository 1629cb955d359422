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
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pandas as pd

# the pandas-free half (schemas, per-cell checks, records()), shared with the planning path
from sdsl._schema import (  # noqa: F401 - re-exported
    Column,
    DataError,
    Schema,
    check_header,
    check_key,
    check_sha256,
    convert_column,
    data_path,
    list_datasets,
    read_csv_text,
    records,
    schema,
)
from sdsl._schema import (
    schema as _schema_of,  # for functions whose keyword is called schema
)

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
    "records",
]

_PROVENANCE_FIELDS = ("title", "source", "licence", "description", "key", "sha256")


def provenance(name_or_path: str | Path) -> dict[str, Any]:
    """Title, source, licence, description, key, sha256 and the CSV path of a dataset."""
    s = schema(name_or_path)
    out = {k: copy.deepcopy(s.meta.get(k)) for k in _PROVENANCE_FIELDS}
    out["key"] = list(s.key)
    out["path"] = str(data_path(name_or_path))
    return out


def sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# reading and validation


def _read_raw(path: Path) -> tuple[pd.DataFrame, list[int]]:
    """The CSV as text cells (no type inference, no NA guessing) and the line of each row
    (:func:`sdsl._schema.read_csv_text`: encoding, NUL bytes, header, quoting, blank lines)."""
    table = read_csv_text(path)
    return pd.DataFrame(table.rows, columns=table.header, dtype=object), table.lines


_CACHE: dict[tuple[str, int, int, str], pd.DataFrame] = {}
_CACHE_MAX = 256


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
