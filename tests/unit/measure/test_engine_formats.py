"""Every engine fixture: its provenance is recorded (tests/helpers/engine_fixtures.py), it is
detected as its format and readable with --format, and no report of it prints NaN; the refusal of an
unknown file names every format; an interval with nothing accepted comes from the number of drafts."""

from __future__ import annotations

import json
import re

import pytest
from engine_fixtures import ENG, FIXTURES, KINDS, ROOT

from sdsl.measure.engines.detect import FORMATS, detect_format, read_files, read_text
from sdsl.measure.estimators import alpha_from_position_counts
from sdsl.measure.report import build_report, report_dict, report_text

#: Every engine fixture and its format.
FORMAT_OF = {
    "engines/vllm_dp_idle.prom": "vllm-prometheus",
    "engines/vllm_pr24049_table.txt": "vllm-prometheus",
    "engines/vllm_fresh.prom": "vllm-prometheus",
    "engines/vllm_fresh_later.prom": "vllm-prometheus",
    "engines/vllm_restarted.prom": "vllm-prometheus",
    "engines/vllm_short_drafts.prom": "vllm-prometheus",
    "engines/vllm_log_v1.txt": "vllm-log",
    "engines/vllm_log_v1_old.txt": "vllm-log",
    "engines/vllm_log_v0.txt": "vllm-log",
    "engines/vllm_log_short.txt": "vllm-log",
    "engines/vllm_log_zero_accept.txt": "vllm-log",
    "engines/vllm_requests_summary.json": "vllm-requests",
    "engines/vllm_requests_detailed.jsonl": "vllm-requests",
    "engines/vllm_requests_stream.txt": "vllm-requests",
    "engines/vllm_bench_serve.json": "vllm-bench",
    "engines/vllm_get_metrics.json": "vllm-get-metrics",
    "engines/vllm_spec_decode_pr26498.txt": "vllm-spec-decode",
    "engines/vllm_bench_text_pr48892.txt": "vllm-bench-text",
    "engines/llamacpp.prom": "llamacpp-prometheus",
    "engines/llamacpp_fresh.prom": "llamacpp-prometheus",
    "engines/llamacpp_server_pr24536.log": "llamacpp-log",
    "engines/llamacpp_docs_statistics.txt": "llamacpp-log",
    "engines/llamacpp_speculative_pr3006.txt": "llamacpp-log",
    "engines/llamacpp_server.log": "llamacpp-log",
    "engines/sglang.prom": "sglang-prometheus",
    "engines/sglang_gauges_only.prom": "sglang-prometheus",
    "engines/sglang_num_steps.prom": "sglang-prometheus",
    "engines/sglang_meta_info_pr33518.json": "sglang-requests",
    "engines/sglang_requests.jsonl": "sglang-requests",
    "engines/sglang_finish_log.txt": "sglang-requests",
    "engines/sglang_bench_pr13376.txt": "sglang-bench",
    "engines/sglang_bench.jsonl": "sglang-bench",
    "engines/trtllm.prom": "trtllm-prometheus",
    "engines/trtllm_fresh.prom": "trtllm-prometheus",
    "engines/trtllm_per_position.prom": "trtllm-prometheus",
    "engines/trtllm_iteration_stats.json": "trtllm-iteration-stats",
    "vllm_single.txt": "vllm-prometheus",
    "vllm_multi.txt": "vllm-prometheus",
    "vllm_before.txt": "vllm-prometheus",
    "vllm_after.txt": "vllm-prometheus",
}
#: The draft length of the fixtures whose export does not carry it.
GAMMA = {"engines/sglang_bench_pr13376.txt": 31, "engines/sglang_bench.jsonl": 3}
_NAN = re.compile(r"\bnan\b", re.IGNORECASE)


def _files() -> set[str]:
    on_disk = {f"engines/{p.name}" for p in ENG.iterdir() if p.name not in ("README.md", "make_fixtures.py")}
    return on_disk | {p.name for p in ROOT.glob("vllm_*.txt")}


def test_every_fixture_has_its_provenance_and_format():
    assert _files() == set(FIXTURES), (sorted(_files() - set(FIXTURES)), sorted(set(FIXTURES) - _files()))
    assert set(FORMAT_OF) == set(FIXTURES)
    for name, p in FIXTURES.items():
        assert p.kind in KINDS and p.source and p.note, name
        if p.kind == "verbatim":  # a verbatim copy names the thread or file it was copied from
            assert re.search(r"https://github\.com/\S+/(pull|issues|blob)/\S+", p.source), name
    assert set(FORMAT_OF.values()) == set(FORMATS)  # every format has a fixture


@pytest.mark.parametrize("name", sorted(FORMAT_OF))
def test_every_fixture_is_detected_and_readable_with_format(name):
    text = (ROOT / name).read_text()
    assert detect_format(text, name)[0] == FORMAT_OF[name]
    detected = read_text(text, name, gamma=GAMMA.get(name))
    given = read_text(text, name, fmt=FORMAT_OF[name], gamma=GAMMA.get(name))
    assert [r.estimate.alpha for r in given.readings] == [r.estimate.alpha for r in detected.readings]


@pytest.mark.parametrize("name", sorted(FORMAT_OF))
def test_no_report_prints_nan(name):
    for gamma in {None, GAMMA.get(name)}:
        rep = build_report([str(ROOT / name)], gamma=gamma)
        text = report_text(rep)
        assert not _NAN.search(text), text
        js = json.dumps(report_dict(rep), allow_nan=False)  # raises on a NaN left in the numbers
        assert not _NAN.search(js), js


def test_the_zero_acceptance_interval_comes_from_the_drafts():
    """0 of 1485 draft tokens accepted, k = 5: 297 drafts if every draft had 5 tokens (up to 1485 if
    every draft had 1). Alpha is 0 and the interval is the exact estimator's at the fewest drafts,
    the widest the counts allow, not the [0, 0.85] of one evaluated position."""
    (x,) = read_files([ENG / "vllm_log_zero_accept.txt"])[0].readings
    ref = alpha_from_position_counts([0, 0, 0, 0, 0], 297)
    assert x.estimate.alpha == 0 and x.estimate.ci_low == 0
    assert x.estimate.ci_high == pytest.approx(ref.ci_high, rel=1e-9)
    assert 0.0063 < ref.ci_high < 0.0065  # 1 - exp(-chi2_1(0.95) / 2 / 297)
    assert x.estimate.ci_high >= alpha_from_position_counts([0] * 5, 1485).ci_high
    out = report_text(build_report([str(ENG / "vllm_log_zero_accept.txt")]))
    assert "every draft had k tokens" not in out  # the drafts may be 297 to 1485: not all k long
    assert "0 to 1485 draft(s) shorter than k" in out and "[0.0000, 0.0064]" in out


def test_the_refusal_names_every_format(tmp_path):
    with pytest.raises(ValueError) as err:
        detect_format("hello world\nthis is no engine output\n", "x.txt")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("x.txt: not a recognised source")
    assert all(k in msg for k in FORMATS)
    # a printout line "key: value" is not taken for a Prometheus sample
    with pytest.raises(ValueError, match="not a recognised source"):
        detect_format("total_num_output_tokens: 16994\nmean acceptance length: 3.64\n", "p.txt")


def test_the_cli_refuses_an_unknown_file_in_one_line(tmp_path, capsys):
    from sdsl.cli import main

    f = tmp_path / "notes.txt"
    f.write_text("nothing an engine writes\n")
    assert main(["alpha", str(f)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("sdsl alpha: error: ")
    assert all(k in err for k in FORMATS)


def test_every_fixture_is_read_in_the_light_install():
    """numpy, PyYAML and prometheus_client only: with scipy, pandas and the rest made unimportable,
    every fixture is still read (the bootstrap over requests and the constant-alpha p-value say that
    they need the analysis extra)."""
    import subprocess
    import sys

    names = [str(ROOT / n) for n in sorted(FORMAT_OF)]
    code = (
        "import sys, io, contextlib\n"
        "for m in ('scipy', 'pandas', 'statsmodels', 'matplotlib', 'torch'): sys.modules[m] = None\n"
        "from sdsl.cli import main\n"
        f"names, gamma = {names!r}, {dict((str(ROOT / k), v) for k, v in GAMMA.items())!r}\n"
        "for n in names:\n"
        "    buf = io.StringIO()\n"
        "    extra = ['--gamma', str(gamma[n])] if n in gamma else []\n"
        "    with contextlib.redirect_stdout(buf):\n"
        "        code = main(['alpha', *extra, n])\n"
        "    assert code in (0, 1), (n, code)\n"
        "    assert 'scipy' not in buf.getvalue() or 'sdsl[analysis]' in buf.getvalue(), n\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
