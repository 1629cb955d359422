"""Damaged inputs never become a number, and valid ones are read (sdsl.measure.engines): a scrape
cut anywhere in its last line, --delta files in the wrong order told from a restart through
_created, a --gamma the export contradicts; a byte-order mark, CRLF, UTF-16, standard input;
an empty file and a directory named as such. Known answers: vllm_single.txt was simulated with
4000 drafts, k = 3 (the MLE by hand below); the before/after pair added 2000 drafts."""

from __future__ import annotations

import io
import json
import sys

import pytest
from engine_fixtures import ENG, ROOT

from sdsl.measure.engines.detect import read_files, read_text
from sdsl.measure.engines.prometheus import counter_values, delta_values, parse_scrape

SINGLE = ROOT / "vllm_single.txt"
#: The MLE of vllm_single.txt by hand: accepted / (drafts + drafts reaching positions 2 and 3).
ALPHA_SINGLE = 6957 / (4000 + 3014 + 2256)
ACCEPTED_LINE = 'vllm:spec_decode_num_accepted_tokens_total{model_name="facebook/opt-13b",engine="0"} 6957.0'


@pytest.fixture
def run(capsys):
    """``sdsl alpha ARGS`` in-process: (exit status, stdout, stderr)."""
    from sdsl.cli import main

    def call(*args):
        code = main(["alpha", *map(str, args)])
        cap = capsys.readouterr()
        return code, cap.out, cap.err

    return call


def _refused(run, *args) -> str:
    code, out, err = run(*args)
    assert code == 2 and not out and err.startswith("sdsl alpha: error: ") and err.count("\n") == 1, (code, out, err)
    return err


def _alpha(read) -> float:
    (x,) = read.readings
    return x.estimate.alpha


# -- a scrape cut inside its last line -----------------------------------------------------------


def _cut_at(marker: str, offset: int) -> str:
    """vllm_single.txt cut ``offset`` characters after ``marker`` in the accepted-tokens line."""
    text = SINGLE.read_text()
    start = text.index(ACCEPTED_LINE)
    return text[: start + ACCEPTED_LINE.index(marker) + offset]


@pytest.mark.parametrize(
    "marker, offset",
    [
        ("} 6957", 4),  # inside the number: 69 of 6957 (alpha 0.0170 before the fix)
        ("} 6957", 3),  # after one digit
        ("} 6957", 7),  # 6957. : the decimal point
        ("} 6957", len("} 6957.0")),  # the whole value, no newline: digits may have followed
        ("} 6957", 1),  # after the label set, before the value
        ("accepted_tokens", 4),  # inside the metric name
        ("model_name", 5),  # inside a label name
        ('="facebook', 6),  # inside a label value
        ('engine="0"}', len('engine="0"}')),  # after the closing brace
    ],
)
def test_a_scrape_cut_inside_its_last_line_is_refused(tmp_path, run, marker, offset):
    text = _cut_at(marker, offset)
    lineno = text.count("\n") + 1
    with pytest.raises(ValueError, match=rf"^s line {lineno}: the exposition ends inside this line .*truncated"):
        read_text(text, "s")
    f = tmp_path / "cut.txt"
    f.write_text(text, encoding="utf-8")
    err = _refused(run, f)
    assert f"{f} line {lineno}: " in err and "truncated" in err


def test_the_cut_file_alone_would_give_a_wrong_alpha():
    """Why the refusal matters: the cut line reads as 69 accepted tokens, not 6957."""
    text = _cut_at("} 6957", 4)
    fixed = text + "\n"  # what a reader that does not check the last line sees
    assert abs(_alpha(read_text(fixed, "s")) - ALPHA_SINGLE) > 0.5


LOG_V1 = ENG / "vllm_log_v1.txt"


@pytest.mark.parametrize(
    "keep",
    [
        "Accepted: 6",  # inside the accepted count: 6 of 69
        "Accepted: 69 tokens, Drafted: 10",  # inside the drafted count: 10 of 104
        "Per-position acceptance rate: 0.808, 0.",  # inside the per-position rates
        "Avg Draft acceptance rate: 66.3%",  # the whole line, no newline: a logger ends every line
    ],
)
def test_a_vllm_log_cut_inside_a_spec_decode_line_is_refused(tmp_path, run, keep):
    lines = LOG_V1.read_text().splitlines(keepends=True)
    last = max(i for i, line in enumerate(lines) if "SpecDecoding metrics" in line)
    text = "".join(lines[:last]) + lines[last][: lines[last].index(keep) + len(keep)]
    f = tmp_path / "cut.log"
    f.write_text(text, encoding="utf-8")
    err = _refused(run, f)
    assert f"{f} line {last + 1}: the log ends inside this spec-decode line" in err and "truncated" in err


def test_a_vllm_log_cut_after_its_last_spec_decode_line_is_read(tmp_path, run):
    """Only a cut spec-decode line loses counts: a log cut inside another line reads like the whole."""
    text = LOG_V1.read_text()
    f = tmp_path / "cut.log"
    f.write_text(text[:-40], encoding="utf-8")
    code, out, _ = run(f)
    code_whole, out_whole, _ = run(LOG_V1)
    assert code == code_whole == 0
    assert [x for x in out.splitlines() if "alpha =" in x] == [x for x in out_whole.splitlines() if "alpha =" in x]


def test_a_cut_comment_line_and_a_cut_type_line_are_refused_with_their_line():
    text = SINGLE.read_text()
    cut = text[: text.index("# TYPE vllm:spec_decode_num_draft_tokens_total") + len("# TYPE vllm:spec_d")]
    n = cut.count("\n") + 1
    with pytest.raises(ValueError, match=rf"^s line {n}: the exposition ends inside this line"):
        read_text(cut, "s")
    # the same # TYPE line broken in the middle of the file (not at its end) is named by its line
    broken = text.replace("# TYPE vllm:spec_decode_num_draft_tokens_total counter", "# TYPE vllm:spec_d")
    with pytest.raises(
        ValueError, match=rf"^s line {n}: not a Prometheus '# TYPE name type' line: '# TYPE vllm:spec_d'"
    ):
        parse_scrape(broken, "s")


def test_a_complete_exposition_is_read_with_or_without_openmetrics_eof():
    text = SINGLE.read_text()
    assert _alpha(read_text(text, "s")) == pytest.approx(ALPHA_SINGLE, rel=1e-12)
    assert _alpha(read_text(text + "# EOF", "s")) == pytest.approx(ALPHA_SINGLE, rel=1e-12)  # EOF ends it
    assert _alpha(read_text(text + "# EOF\n", "s")) == pytest.approx(ALPHA_SINGLE, rel=1e-12)
    assert _alpha(read_text(text + "\n  ", "s")) == pytest.approx(ALPHA_SINGLE, rel=1e-12)  # blank last line


@pytest.mark.parametrize("at", [0, 1, 17, 29, 40])
def test_a_bad_line_anywhere_is_named_by_its_number(at):
    lines = SINGLE.read_text().splitlines(keepends=True)
    assert at <= len(lines)
    text = "".join(lines[:at] + ['bad{x="1} 2\n'] + lines[at:])
    with pytest.raises(ValueError, match=rf"^s line {at + 1}: not a Prometheus sample: 'bad\{{x=\"1\}} 2'$"):
        parse_scrape(text, "s")


# -- --delta in the wrong order, told from a restart -------------------------------------------


def test_swapped_delta_files_are_refused_naming_both(run):
    before, after = ROOT / "vllm_before.txt", ROOT / "vllm_after.txt"
    with pytest.raises(ValueError, match=r"vllm_after.txt is later than .*vllm_before.txt: .*same _created.*swap them"):
        read_files([after, before], delta=True)
    err = _refused(run, "--delta", after, before)
    assert f"{after} is later than {before}" in err and "swap them" in err
    code, out, _ = run("--delta", before, after, "--json")  # the right order: the 2000 drafts between
    assert code == 0 and json.loads(out)["files"][0]["readings"][0]["num_drafts"] == 2000


def test_a_later_created_is_a_restart_and_an_earlier_one_a_wrong_order():
    fresh, later, restarted = ENG / "vllm_fresh.prom", ENG / "vllm_fresh_later.prom", ENG / "vllm_restarted.prom"
    (r,) = read_files([later, restarted], delta=True)  # _created moved on: the server restarted
    (x,) = r.readings
    assert x.num_drafts == 15000 and any("the server restarted" in n for n in x.notes)
    with pytest.raises(ValueError, match=r"vllm_restarted.prom is later than .*vllm_fresh_later.prom: .*goes back"):
        read_files([restarted, later], delta=True)
    # three files: the pair in the wrong order is the one named
    with pytest.raises(ValueError, match=r"vllm_restarted.prom is later than .*vllm_fresh_later.prom"):
        read_files([fresh, restarted, later], delta=True)


def test_without_created_a_decrease_is_read_as_a_restart_and_says_it_may_be_a_swap(tmp_path):
    strip = lambda p: "".join(ln for ln in p.read_text().splitlines(keepends=True) if "_created" not in ln)  # noqa: E731
    before, after = tmp_path / "before.txt", tmp_path / "after.txt"
    before.write_text(strip(ROOT / "vllm_before.txt"))
    after.write_text(strip(ROOT / "vllm_after.txt"))
    (r,) = read_files([after, before], delta=True)
    (x,) = r.readings
    assert any("no _created timestamp" in n and "swap them" in n for n in x.notes)


def test_counter_deltas_of_sglang_and_trtllm_tell_a_swap_from_a_restart():
    early = counter_values(parse_scrape('c_total{m="a"} 10\nc_created{m="a"} 100\n'), "c")
    late = counter_values(parse_scrape('c_total{m="a"} 25\nc_created{m="a"} 100\n'), "c")
    restarted = counter_values(parse_scrape('c_total{m="a"} 4\nc_created{m="a"} 200\n'), "c")
    assert delta_values(early, late) == ({(("m", "a"),): 15.0}, [])
    with pytest.raises(ValueError, match=r"^late.prom is later than early.prom: the counters of m=a decrease"):
        delta_values(late, early, names=("late.prom", "early.prom"))
    d, notes = delta_values(late, restarted)
    assert d == {(("m", "a"),): 4.0} and "restarted" in notes[0]
    with pytest.raises(ValueError, match=r"goes back from 200.000 to 100.000"):
        delta_values(restarted, late)


# -- --gamma against an export that carries k ---------------------------------------------------


@pytest.mark.parametrize(
    "path, k",
    [
        (SINGLE, 3),  # vLLM: 3 per-position counters
        (ENG / "llamacpp.prom", 8),
        (ENG / "vllm_log_v1.txt", 2),  # 2 per-position rates
        (ENG / "trtllm.prom", 3),  # max_draft_len of trtllm_speculative_config_info
    ],
)
def test_gamma_that_contradicts_the_exported_k_is_refused(run, path, k):
    err = _refused(run, "--gamma", k + 4, path)
    assert f"--gamma {k + 4}" in err and f"{k}" in err and "drop --gamma" in err
    with pytest.raises(ValueError, match=rf"gamma {k + 4} conflicts with (k|max_draft_len) = {k}\b"):
        read_files([path], gamma=k + 4)
    (r,) = read_files([path], gamma=k)  # the same k: accepted, the reading unchanged
    assert {x.gamma for x in r.readings} == {k}
    (plain,) = read_files([path])
    assert [x.estimate.alpha for x in r.readings] == [x.estimate.alpha for x in plain.readings]


def test_gamma_unused_is_said_and_sglang_says_when_it_overrides_the_gauges(run):
    code, out, _ = run("--gamma", 7, ENG / "vllm_fresh.prom")  # every series idle: nothing carries k
    assert code == 1 and "note: --gamma 7 not used" in out
    text = (ENG / "sglang_gauges_only.prom").read_text()
    (x,) = read_text(text, "s", gamma=5).readings  # the gauges say k = 3 (4 draft tokens per step)
    assert x.gamma == 5 and any("k = 5 from gamma overrides" in n and "= 3" in n for n in x.notes)


# -- valid encodings and line ends; stdin; empty files and directories --------------------------


@pytest.mark.parametrize(
    "encode",
    [
        lambda t: b"\xef\xbb\xbf" + t.encode("utf-8"),  # UTF-8 byte-order mark
        lambda t: b"\xef\xbb\xbf" + t.replace("\n", "\r\n").encode("utf-8"),  # BOM + CRLF
        lambda t: t.replace("\n", "\r\n").encode("utf-8"),  # CRLF
        lambda t: t.replace("\n", "\r\n").encode("utf-16"),  # PowerShell's '>': UTF-16 with its BOM
    ],
    ids=["bom", "bom-crlf", "crlf", "utf16"],
)
def test_bom_crlf_and_utf16_scrapes_read_like_the_plain_one(tmp_path, encode):
    f = tmp_path / "scrape.txt"
    f.write_bytes(encode(SINGLE.read_text()))
    (r,) = read_files([f])
    assert _alpha(r) == pytest.approx(ALPHA_SINGLE, rel=1e-12)
    text = encode(SINGLE.read_text()).decode("utf-16" if b"\x00" in encode("a") else "utf-8")
    assert _alpha(read_text(text, "s")) == pytest.approx(ALPHA_SINGLE, rel=1e-12)  # the API too


def test_bom_and_crlf_keep_line_numbers_and_the_truncation_check(tmp_path):
    f = tmp_path / "bad.txt"
    f.write_bytes(b'\xef\xbb\xbfok 1\r\n# c\r\nbad{a="x} 1\r\n')
    with pytest.raises(ValueError, match=r"bad.txt line 3: not a Prometheus sample"):
        read_files([f])
    f.write_bytes(b"\xef\xbb\xbf" + _cut_at("} 6957", 4).replace("\n", "\r\n").encode())
    with pytest.raises(ValueError, match=r"bad.txt line 30: the exposition ends inside this line"):
        read_files([f])


def test_ansi_coloured_bom_crlf_log_is_read(tmp_path):
    log = (ENG / "vllm_log_v1.txt").read_text().replace("INFO", "\x1b[32mINFO\x1b[0m")
    f = tmp_path / "log.txt"
    f.write_bytes(b"\xef\xbb\xbf" + log.replace("\n", "\r\n").encode())
    (r,) = read_files([f])
    (plain,) = read_files([ENG / "vllm_log_v1.txt"])
    assert [x.estimate.alpha for x in r.readings] == [x.estimate.alpha for x in plain.readings] != []


def _stdin(monkeypatch, data: bytes):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_dash_reads_standard_input(monkeypatch, run):
    _stdin(monkeypatch, SINGLE.read_bytes())
    code, out, _ = run("-")
    assert code == 0 and out.startswith("<stdin>: vLLM /metrics scrape") and f"alpha = {ALPHA_SINGLE:.4f}" in out
    _stdin(monkeypatch, b"\xef\xbb\xbf" + _cut_at("} 6957", 4).encode())
    assert "<stdin> line 30: the exposition ends inside this line" in _refused(run, "-")
    _stdin(monkeypatch, b"")
    assert "<stdin>: empty (0 bytes)" in _refused(run, "-")
    _stdin(monkeypatch, SINGLE.read_bytes())
    assert "- (standard input) given 2 times" in _refused(run, "--delta", "-", "-")


def test_empty_files_directories_and_missing_files_are_named_as_such(tmp_path, run):
    empty, blank = tmp_path / "empty.txt", tmp_path / "blank.txt"
    empty.write_bytes(b"")
    blank.write_bytes(b" \n\t\r\n")
    assert f"{empty}: empty (0 bytes)" in _refused(run, empty)
    assert f"{blank}: empty (only whitespace)" in _refused(run, blank)
    assert f"{tmp_path}: a directory, not a file" in _refused(run, tmp_path)
    assert f"{tmp_path / 'nope.txt'}: no such file" in _refused(run, tmp_path / "nope.txt")
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"ok 1\n\xff\n")
    assert f"{binary}: not a UTF-8 text file (byte 5 is 0xff)" in _refused(run, binary)
