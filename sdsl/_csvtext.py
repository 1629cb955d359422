"""Reading the text of a data file: a CSV, every problem with its file, line and column, its YAML
provenance file (a key given twice refused, never taken last-wins) and the sha256 check between
the two: the one reader of :func:`sdsl.data.load`, :func:`sdsl._schema.records` and the user's
measurement files (pandas-free)."""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sdsl.validation import one_line


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


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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
        digest = _digest(csv_path)
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
