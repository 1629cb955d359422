"""The data-damage part of the bad-input corpus (``bad_inputs`` re-exports it): a
copy of data/ in a temporary folder, damaged, then loaded through the public loaders with an
explicit path. Each row is ``(id, damage)``; ``damage(folder)`` returns the loader call to run and
the substrings its one-line message must hold (the file, the line, the column, what is wrong)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sdsl.paths import DATA

# --------------------------------------------------------------------------------------------
# data damage: a copy of data/ in a temporary folder, damaged, then loaded through the public
# loaders with an explicit path. Each damage returns the loader call to run.


def copy_data(dest: Path) -> Path:
    """The CSVs of data/ and their provenance files, copied into ``dest`` (the folder)."""
    dest.mkdir(parents=True, exist_ok=True)
    for p in DATA.iterdir():
        if p.is_file() and p.suffix in (".csv", ".yml"):
            shutil.copy(p, dest / p.name)
    return dest


def set_sha(d: Path, name: str, value: str | None) -> None:
    """Rewrite (or, with None, delete) the sha256 line of ``d/<name>.yml``."""
    yml = d / f"{name}.yml"
    text = yml.read_text()
    text = re.sub(r"^sha256:.*\n", "" if value is None else f"sha256: {value}\n", text, flags=re.M)
    yml.write_text(text)


def rewrite(d: Path, name: str, data: bytes) -> Path:
    """Write ``data`` into ``d/<name>.csv`` and record its sha256 (a deliberate edit, so that the
    damage itself is what the loader must report)."""
    import hashlib

    p = d / f"{name}.csv"
    p.write_bytes(data)
    set_sha(d, name, hashlib.sha256(data).hexdigest())
    return p


def _lines(d: Path, name: str = "acceptance") -> list[bytes]:
    return (d / f"{name}.csv").read_bytes().split(b"\n")


def _edit_line(d: Path, i: int, old: bytes, new: bytes, name: str = "acceptance") -> Path:
    lines = _lines(d, name)
    assert old in lines[i - 1], (i, lines[i - 1])
    lines[i - 1] = lines[i - 1].replace(old, new, 1)
    return rewrite(d, name, b"\n".join(lines))


def _load(path: Path, schema: str | None = None) -> Callable[[], Any]:
    from sdsl import data

    return lambda: data.load(path, schema=schema)


def _records(path: Path) -> Callable[[], Any]:
    from sdsl import data

    return lambda: data.records(path)


def _measurements(path: Path) -> Callable[[], Any]:
    from sdsl import plan as P

    return lambda: P.check_inputs("llama-3-70b", alpha_source=str(path))


def _chapter(path: Path) -> Callable[[], Any]:
    from sdsl.chapters.acceptance import check_parameters

    return lambda: check_parameters(measurements=str(path))


def _d_changed_value(d):
    p = d / "acceptance.csv"
    p.write_bytes(p.read_bytes().replace(b"0.5959", b"0.5960", 1))
    return _load(p), ("acceptance.csv", "sha256", "acceptance.yml")


def _d_zeroed_sha(d):
    set_sha(d, "acceptance", "0" * 64)  # YAML reads 64 unquoted zeros as the number 0
    return _load(d / "acceptance.csv"), ("acceptance.yml", "64 hexadecimal digits", "quoted")


def _d_zeroed_sha_quoted(d):
    set_sha(d, "acceptance", '"' + "0" * 64 + '"')
    return _load(d / "acceptance.csv"), ("acceptance.csv", "sha256", "acceptance.yml records 0000")


def _d_missing_sha(d):
    set_sha(d, "acceptance", None)
    return _load(d / "acceptance.csv"), ("acceptance.yml", "no sha256")


def _d_malformed_sha(d):
    set_sha(d, "acceptance", "abc")
    return _load(d / "acceptance.csv"), ("acceptance.yml", "64 hexadecimal digits")


def _d_integer_sha(d):
    set_sha(d, "acceptance", "0")
    return _load(d / "acceptance.csv"), ("acceptance.yml", "64 hexadecimal digits")


def _d_changed_value_chapter(d):
    p = d / "acceptance.csv"
    p.write_bytes(p.read_bytes().replace(b"0.5959", b"0.6959", 1))
    return _chapter(p), ("acceptance.csv", "sha256")


def _d_changed_value_explicit_schema(d):
    p = d / "acceptance.csv"
    p.write_bytes(p.read_bytes().replace(b"0.5959", b"0.6959", 1))
    return _load(p, "acceptance"), ("acceptance.csv", "sha256")


def _d_changed_presets_records(d):
    p = d / "presets.csv"
    p.write_bytes(p.read_bytes().replace(b"12853473280", b"12853473281", 1))
    return _records(p), ("presets.csv", "sha256")


def _d_nul(d):
    return _load(_edit_line(d, 2, b"OPT-13B", b"O\x00PT-13B")), ("line 2", "column 'target'", "NUL")


def _d_nul_records(d):
    return _records(_edit_line(d, 3, b"opt-350m", b"opt\x00-350m", name="presets")), ("presets.csv", "line 3", "NUL")


def _d_control(d):
    return _load(_edit_line(d, 5, b"OPT", b"OP\x07T")), ("line 5", "control character")


def _d_latin1(d):
    return _load(_edit_line(d, 31, b"Qwen", b"Qw\xe9n")), ("line 31", "column 'draft'", "not UTF-8", "0xe9")


def _d_latin1_header(d):
    return _load(_edit_line(d, 1, b"alpha_hw95", b"alpha_hw\xb095")), ("line 1", "not UTF-8")


def _d_duplicated_header(d):
    return _load(_edit_line(d, 1, b"alpha_hw95", b"alpha")), ("line 1", "'alpha' appears twice", "columns 7 and 8")


def _d_trailing_header_comma(d):
    return _load(_edit_line(d, 1, b"alpha_hw95", b"alpha_hw95,")), (
        "line 1, column 9",
        "empty column name",
        "trailing comma",
    )


def _d_empty_header_name(d):
    return _load(_edit_line(d, 1, b",draft,", b",,")), ("line 1, column 2", "empty column name")


def _d_header_only(d):
    return _load(rewrite(d, "acceptance", _lines(d)[0] + b"\n")), ("acceptance.csv", "only the header", "line 1")


def _d_header_only_measurements(d):
    p = d / "mine.csv"
    p.write_text("draft_ppl,target_ppl,alpha\n")
    return _measurements(p), ("mine.csv", "only the header")


def _d_header_only_chapter(d):
    p = d / "mine.csv"
    p.write_text(_lines(d)[0].decode() + "\n")
    return _chapter(p), ("mine.csv", "only the header")


def _d_empty_file(d):
    return _load(rewrite(d, "acceptance", b"")), ("acceptance.csv", "empty")


def _d_blank_file(d):
    return _load(rewrite(d, "acceptance", b"\n \n")), ("acceptance.csv", "empty")


def _d_quoted_newline(d):
    lines = _lines(d)
    lines[1] = b'"OPT\n-13B"' + lines[1][len(b"OPT-13B") :]
    lines[5] = lines[5].replace(b",0.", b",x.", 1)
    # the quoted newline makes the file one line longer: the bad cell is on line 7
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("line 7", "column 'alpha'", "non-numeric")


def _d_unterminated_quote(d):
    return _load(_edit_line(d, 3, b"OPT-350M", b'"OPT-350M')), ("line 3", "never closed")


def _d_text_after_quote(d):
    return _load(_edit_line(d, 3, b"OPT-350M", b'"OPT"-350M')), ("line 3", "well-formed")


def _d_blank_line_inside(d):
    lines = _lines(d)
    lines.insert(2, b"")
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("line 3", "blank line inside")


def _d_extra_field(d):
    return _load(_edit_line(d, 4, b"0.0", b"x,0.0")), ("line 4", "9 fields", "8")


def _d_trailing_comma_row(d):
    lines = _lines(d)
    lines[3] += b","
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("line 4", "9 fields", "trailing comma")


def _d_missing_field(d):
    lines = _lines(d)
    lines[3] = lines[3].rsplit(b",", 1)[0]
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("line 4", "7 fields", "8")


def _d_non_numeric(d):
    return _load(_edit_line(d, 6, b",0.", b",abc0.")), ("line 6", "column 'alpha'", "non-numeric")


def _d_alpha_out_of_range(d):
    return _load(_edit_line(d, 7, b",0.", b",1.")), ("line 7", "column 'alpha'", "> 0 and < 1")


def _d_nan_text(d):
    return _load(_edit_line(d, 8, b",0.", b",nan,0.")), ("line 8", "fields")


def _d_inf(d):
    lines = _lines(d)
    cells = lines[8].split(b",")
    cells[4] = b"inf"
    lines[8] = b",".join(cells)
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("line 9", "column 'draft_ppl'", "not a finite number")


def _d_empty_required(d):
    lines = _lines(d)
    cells = lines[9].split(b",")
    cells[6] = b""
    lines[9] = b",".join(cells)
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("line 10", "column 'alpha'", "empty cell")


def _d_not_allowed(d):
    lines = _lines(d)
    cells = lines[10].split(b",")
    cells[3] = b"3"
    lines[10] = b",".join(cells)
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("line 11", "column 'source_table'", "[1, 2]")


def _d_duplicate_key(d):
    lines = _lines(d)
    lines.insert(3, lines[1])
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("line 4", "duplicate key", "same as line 2")


def _d_missing_column(d):
    return _load(_edit_line(d, 1, b"alpha_hw95", b"alpha_hw")), ("acceptance.csv", "missing column", "alpha_hw95")


def _d_renamed_column_records(d):
    return _records(_edit_line(d, 1, b"params", b"parameters", name="presets")), ("presets.csv", "params")


def _d_is_a_folder(d):
    p = d / "folder.csv"
    p.mkdir()
    return _load(p, "acceptance"), ("folder.csv", "folder")


def _d_no_schema(d):
    p = d / "lonely.csv"
    p.write_bytes((d / "acceptance.csv").read_bytes())
    return _load(p), ("lonely.csv", "no schema beside it")


def _d_bad_yaml(d):
    (d / "acceptance.yml").write_text("columns: [unclosed\n")
    return _load(d / "acceptance.csv"), ("acceptance.yml", "not valid YAML")


def _d_measurements_latin1(d):
    p = d / "mine.csv"
    p.write_bytes(b"draft_ppl,target_ppl,alpha\n20,10,0.6\n21,11,0.6\n22,12,0.7\n2\xe93,13,0.6\n")
    return _measurements(p), ("mine.csv", "line 5", "not UTF-8")


def _d_measurements_duplicated_header(d):
    p = d / "mine.csv"
    p.write_text("draft_ppl,target_ppl,alpha,alpha\n20,10,0.6,0.6\n")
    return _measurements(p), ("mine.csv", "line 1", "'alpha' appears twice")


def _d_measurements_too_few_for_chapter(d):
    p = d / "mine.csv"
    p.write_text(b"\n".join(_lines(d)[:3]).decode() + "\n")
    return _chapter(p), ("mine.csv", "at least 4 pairs")


def _d_measurements_target_with_two_drafts(d):
    lines = _lines(d)[:7]  # the header, OPT-13B's four OPT drafts and two of OPT-30B's
    p = d / "mine.csv"
    p.write_text(b"\n".join(lines).decode() + "\n")
    return _chapter(p), ("mine.csv", "target 'OPT-30B'", "at least 3 drafts")


def _d_tab_separated(d):
    return _load(rewrite(d, "acceptance", b"\n".join(ln.replace(b",", b"\t") for ln in _lines(d)))), (
        "acceptance.csv",
        "line 1",
        "separated by commas",
        "'\\t'",
    )


def _d_semicolon_separated(d):
    return _load(rewrite(d, "acceptance", b"\n".join(ln.replace(b",", b";") for ln in _lines(d)))), (
        "acceptance.csv",
        "line 1",
        "separated by commas",
        "';'",
    )


def _d_yml_latin1(d):
    y = d / "acceptance.yml"
    y.write_bytes(y.read_bytes() + b"note: caf\xe9\n")
    return _load(d / "acceptance.csv"), ("acceptance.yml", "line ", "0xe9", "not UTF-8")


def _d_yml_empty(d):
    (d / "acceptance.yml").write_text("")
    return _load(d / "acceptance.csv"), ("acceptance.yml", "mapping with 'columns'")


def _d_no_yml(d):
    (d / "acceptance.yml").unlink()
    return _load(d / "acceptance.csv"), ("acceptance.csv", "no schema beside it", "schema=")


def _d_utf16(d):
    return _load(rewrite(d, "acceptance", b"\n".join(_lines(d)).decode().encode("utf-16"))), (
        "acceptance.csv",
        "line 1",
        "not UTF-8",
    )


def _d_decimal_comma(d):
    lines = _lines(d)
    cells = lines[3].split(b",")
    cells[4] = b"25,3"
    lines[3] = b",".join(cells)
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("line 4", "9 fields", "8")


def _d_overflowing_number(d):
    lines = _lines(d)
    cells = lines[3].split(b",")
    cells[4] = b"1e400"
    lines[3] = b",".join(cells)
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("line 4", "column 'draft_ppl'", "not a finite number")


def _d_negative_perplexity(d):
    lines = _lines(d)
    cells = lines[3].split(b",")
    cells[4] = b"-5"
    lines[3] = b",".join(cells)
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("line 4", "column 'draft_ppl'", ">= 1")


def _d_crlf_bad_value(d):
    lines = _lines(d)
    lines[5] = lines[5].replace(b",0.", b",x.", 1)
    return _load(rewrite(d, "acceptance", b"\r\n".join(lines))), ("line 6", "column 'alpha'", "non-numeric")


def _d_unexpected_column(d):
    lines = _lines(d)
    lines = [lines[0] + b",extra"] + [ln + b",1" if ln else ln for ln in lines[1:]]
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), ("acceptance.csv", "unexpected column", "'extra'")


# a key given twice in a provenance file: refused naming the file, the line and the key, never
# taken last-wins (a second max_exclusive would let alpha = 1.5 load; a second sha256 would
# replace the first and let a changed table through)


def _yml_insert_after(d: Path, name: str, anchor: str, extra: str, nth: int = 1) -> int:
    """Insert the line ``extra`` after the ``nth`` line equal to ``anchor`` in ``d/<name>.yml``;
    returns the inserted line's 1-based number."""
    y = d / f"{name}.yml"
    lines = y.read_text().split("\n")
    at = [i for i, ln in enumerate(lines) if ln == anchor][nth - 1]
    lines.insert(at + 1, extra)
    y.write_text("\n".join(lines))
    return at + 2


def _d_yml_repeated_max_exclusive(d):
    # alpha = 1.5 in the CSV (its sha256 recorded): last-wins (max_exclusive: 100) would load it
    p = _edit_line(d, 7, b",0.", b",1.")
    line = _yml_insert_after(d, "acceptance", "  max_exclusive: 1", "  max_exclusive: 100")
    return _load(p), ("acceptance.yml", f"line {line}", "'max_exclusive'", "twice", f"first on line {line - 1}")


def _d_yml_repeated_sha256_wrong_first(d):
    p = d / "acceptance.csv"
    p.write_bytes(p.read_bytes().replace(b"0.5959", b"0.9959", 1))  # the file changed since its provenance
    y = d / "acceptance.yml"
    import hashlib

    good = hashlib.sha256(p.read_bytes()).hexdigest()
    text = y.read_text()
    y.write_text(text.replace("\nsha256: ", f"\nsha256: {good}\nsha256: ", 1))  # the changed file's first
    line = text.count("\n", 0, text.index("\nsha256: ")) + 3
    return _load(p), ("acceptance.yml", f"line {line}", "'sha256'", "twice")


def _d_yml_repeated_sha256_records(d):
    y = d / "presets.yml"
    text = y.read_text()
    sha = re.search(r"^sha256: .*$", text, re.M).group()
    y.write_text(text.replace(sha, f"sha256: {'0' * 63}1\n{sha}"))
    line = text.count("\n", 0, text.index(sha)) + 2
    return _records(d / "presets.csv"), ("presets.yml", f"line {line}", "'sha256'", "twice")


def _d_yml_repeated_column_type(d):
    line = _yml_insert_after(d, "acceptance", "  type: str", "  type: float")  # the first column: target
    return _load(d / "acceptance.csv"), ("acceptance.yml", f"line {line}", "'type'", "twice")


def _d_yml_repeated_first_key_at_the_end(d):
    y = d / "acceptance.yml"
    text = y.read_text()
    y.write_text(text + "title: another title\n")
    line = text.count("\n") + 1
    return _load(d / "acceptance.csv"), ("acceptance.yml", f"line {line}", "'title'", "first on line 3")


def _d_measurements_yml_repeated_sha256(d):
    import hashlib

    p = d / "mine.csv"
    p.write_text("draft_ppl,target_ppl,alpha\n20,10,0.6\n21,11,0.6\n22,12,0.7\n23,13,0.6\n")
    digest = hashlib.sha256(p.read_bytes()).hexdigest()
    (d / "mine.yml").write_text(f"sha256: {'f' * 64}\nsha256: {digest}\n")
    return _measurements(p), ("mine.yml", "line 2", "'sha256'", "twice")


# a one-character sha256 typo: the message says where the two digests part


def _typo(digest: str, i: int) -> str:
    return digest[:i] + ("0" if digest[i] != "0" else "1") + digest[i + 1 :]


def _d_sha256_typo_inside(d):
    import hashlib

    digest = hashlib.sha256((d / "acceptance.csv").read_bytes()).hexdigest()
    set_sha(d, "acceptance", _typo(digest, 40))
    return _load(d / "acceptance.csv"), ("acceptance.csv", "differ from character 41", digest, repr(digest[40:48]))


def _d_sha256_typo_last(d):
    import hashlib

    digest = hashlib.sha256((d / "presets.csv").read_bytes()).hexdigest()
    set_sha(d, "presets", _typo(digest, 63))
    return _records(d / "presets.csv"), ("presets.csv", "differ from character 64", repr(digest[63]))


# fields separated by ';' (Excel in locales with a decimal comma): refused, naming the separator


def _d_measurements_semicolon(d):
    p = d / "mine.csv"
    p.write_text("draft_ppl;target_ppl;alpha\n20;10;0.6\n21;11;0.6\n22;12;0.7\n23;13;0.6\n")
    return _measurements(p), ("mine.csv", "line 1", "uses ';' between fields", "separated by commas")


def _d_measurements_semicolon_decimal_comma(d):
    p = d / "mine.csv"
    p.write_text("draft_ppl;target_ppl;alpha\n20;10;0,6\n21;11;0,6\n22;12;0,7\n23;13;0,6\n")
    return _measurements(p), ("mine.csv", "line 1", "uses ';' between fields", "'.' as the decimal point")


def _d_measurements_tab_separated(d):
    p = d / "mine.csv"
    p.write_text("draft_ppl\ttarget_ppl\talpha\n20\t10\t0.6\n21\t11\t0.6\n22\t12\t0.7\n23\t13\t0.6\n")
    return _measurements(p), ("mine.csv", "line 1", "uses '\\t' between fields", "separated by commas")


# a comment line: not allowed, named with its line


def _d_comment_line_inside(d):
    lines = _lines(d)
    lines.insert(3, b"# OPT-13B with its smaller drafts")
    return _load(rewrite(d, "acceptance", b"\n".join(lines))), (
        "acceptance.csv",
        "line 4: a comment line",
        "holds no comments",
    )


def _d_comment_line_first(d):
    p = d / "mine.csv"
    p.write_text("# my runs, 2026-03\ndraft_ppl,target_ppl,alpha\n20,10,0.6\n21,11,0.6\n22,12,0.7\n23,13,0.6\n")
    return _measurements(p), ("mine.csv", "line 1: a comment line", "holds no comments")


def _d_comment_line_last_records(d):
    b = (d / "presets.csv").read_bytes().rstrip(b"\n")
    line = b.count(b"\n") + 2
    return _records(rewrite(d, "presets", b + b"\n  # end of table\n")), ("presets.csv", f"line {line}: a comment line")


def _d_comment_line_crlf_chapter(d):
    lines = _lines(d)
    lines.insert(2, b"#")
    p = d / "mine.csv"
    p.write_bytes(b"\r\n".join(lines))
    return _chapter(p), ("mine.csv", "line 3: a comment line")


# a data file that is a link to a folder: one line


def _d_csv_links_to_a_folder(d):
    (d / "acceptance.csv").unlink()
    (d / "acceptance.csv").symlink_to(d)
    return _load(d / "acceptance.csv"), ("acceptance.csv", "link to the folder", "not a CSV file")


def _d_csv_links_to_a_folder_records(d):
    (d / "presets.csv").unlink()
    (d / "presets.csv").symlink_to(d)
    return _records(d / "presets.csv"), ("presets.csv", "link to the folder")


def _d_measurements_link_to_a_folder(d):
    (d / "mine.csv").symlink_to(d)
    return _measurements(d / "mine.csv"), ("mine.csv", "is a folder")


DATA_DAMAGE: list[tuple[str, Callable[[Path], tuple[Callable[[], Any], tuple[str, ...]]]]] = [
    (f.__name__[3:].replace("_", "-"), f)
    for f in (
        _d_changed_value,
        _d_zeroed_sha,
        _d_zeroed_sha_quoted,
        _d_missing_sha,
        _d_malformed_sha,
        _d_integer_sha,
        _d_changed_value_chapter,
        _d_changed_value_explicit_schema,
        _d_changed_presets_records,
        _d_nul,
        _d_nul_records,
        _d_control,
        _d_latin1,
        _d_latin1_header,
        _d_duplicated_header,
        _d_trailing_header_comma,
        _d_empty_header_name,
        _d_header_only,
        _d_header_only_measurements,
        _d_header_only_chapter,
        _d_empty_file,
        _d_blank_file,
        _d_quoted_newline,
        _d_unterminated_quote,
        _d_text_after_quote,
        _d_blank_line_inside,
        _d_extra_field,
        _d_trailing_comma_row,
        _d_missing_field,
        _d_non_numeric,
        _d_alpha_out_of_range,
        _d_nan_text,
        _d_inf,
        _d_empty_required,
        _d_not_allowed,
        _d_duplicate_key,
        _d_missing_column,
        _d_renamed_column_records,
        _d_is_a_folder,
        _d_no_schema,
        _d_bad_yaml,
        _d_measurements_latin1,
        _d_measurements_duplicated_header,
        _d_measurements_too_few_for_chapter,
        _d_measurements_target_with_two_drafts,
        _d_tab_separated,
        _d_semicolon_separated,
        _d_yml_latin1,
        _d_yml_empty,
        _d_no_yml,
        _d_utf16,
        _d_decimal_comma,
        _d_overflowing_number,
        _d_negative_perplexity,
        _d_crlf_bad_value,
        _d_unexpected_column,
        _d_yml_repeated_max_exclusive,
        _d_yml_repeated_sha256_wrong_first,
        _d_yml_repeated_sha256_records,
        _d_yml_repeated_column_type,
        _d_yml_repeated_first_key_at_the_end,
        _d_measurements_yml_repeated_sha256,
        _d_sha256_typo_inside,
        _d_sha256_typo_last,
        _d_measurements_semicolon,
        _d_measurements_semicolon_decimal_comma,
        _d_measurements_tab_separated,
        _d_comment_line_inside,
        _d_comment_line_first,
        _d_comment_line_last_records,
        _d_comment_line_crlf_chapter,
        _d_csv_links_to_a_folder,
        _d_csv_links_to_a_folder_records,
        _d_measurements_link_to_a_folder,
    )
]


def _reversed_columns(b: bytes) -> bytes:
    return b"\n".join(b",".join(ln.split(b",")[::-1]) if ln else ln for ln in b.split(b"\n"))


#: Damage that is harmless and must load: (id, change of the bytes of acceptance.csv).
DATA_VALID: list[tuple[str, Callable[[bytes], bytes]]] = [
    ("one-trailing-blank-line", lambda b: b + b"\n"),
    ("several-trailing-blank-lines", lambda b: b + b"\n \n\n"),
    ("utf8-byte-order-mark", lambda b: b"\xef\xbb\xbf" + b),
    ("crlf-line-ends", lambda b: b.replace(b"\n", b"\r\n")),
    ("cr-only-line-ends", lambda b: b.replace(b"\n", b"\r")),  # old Mac line ends
    ("bom-crlf-and-a-trailing-blank-line", lambda b: b"\xef\xbb\xbf" + b.replace(b"\n", b"\r\n") + b"\r\n"),
    ("reordered-columns", lambda b: _reversed_columns(b)),  # columns are found by name, not position
    ("quoted-number", lambda b: b.replace(b",29.79318619,", b',"29.79318619",', 1)),
    ("spaces-around-a-number", lambda b: b.replace(b",29.79318619,", b", 29.79318619 ,", 1)),
]
