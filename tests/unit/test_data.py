"""Tests of data/ and its loader sdsl.data: schemas, provenance, error messages, tolerances."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from sdsl import data
from sdsl.paths import DATA

DATASETS = [
    "acceptance",
    "models",
    "latency",
    "paper_table3",
    "paper_table4",
    "paper_table5",
    "paper_table6",
    "paper_table7",
    "paper_table8",
    "paper_table9",
    "paper_metrics",
]
EXPECTED_COLUMNS = {
    "acceptance": ["target", "draft", "draft_family", "source_table", "draft_ppl", "target_ppl", "alpha", "alpha_hw95"],
    "models": ["model", "family", "role", "params", "tokens", "params_source", "tokens_source"],
    "latency": [
        "target",
        "draft",
        "draft_family",
        "ttft_s",
        "ttft_moe_s",
        "ttot_s",
        "ttot_moe_s",
        "tpot_s",
        "tpot_moe_s",
    ],
    "paper_table3": ["parameter", "estimate", "std_error", "moe", "ci_lower", "ci_upper"],
    "paper_table4": [
        "target",
        "function",
        "p1",
        "moe1",
        "ci1_lower",
        "ci1_upper",
        "p2",
        "moe2",
        "ci2_lower",
        "ci2_upper",
        "mse",
        "r2",
    ],
    "paper_table5": ["target", "m", "d_target", "draft_family", "d_draft", "n_star", "tokens_per_flop"],
    "paper_table6": ["draft", "draft_family", "n_star_printed", "distance"],
    "paper_table7": ["parameter", "low", "high", "points"],
    "paper_table8": ["parameter", "estimate", "moe", "ci_lower", "ci_upper"],
    "paper_table9": ["parameter", "estimate", "moe", "ci_lower", "ci_upper"],
    "paper_metrics": ["table", "metric", "value"],
}
EXPECTED_ROWS = {
    "acceptance": 50,
    "latency": 6,
    "paper_table3": 3,
    "paper_table4": 6,
    "paper_table5": 6,
    "paper_table6": 6,
    "paper_table7": 4,
    "paper_table8": 4,
    "paper_table9": 2,
    "paper_metrics": 6,
}
_DTYPES = {"float": "float64", "int": "int64", "str": "object"}


# --- every dataset -------------------------------------------------------------------------------


def test_list_datasets_has_every_dataset():
    assert set(DATASETS) <= set(data.list_datasets())


@pytest.mark.parametrize("name", data.list_datasets())
def test_every_listed_dataset_loads_and_has_its_sha256(name):
    """Also the datasets other modules add to data/ (e.g. presets)."""
    assert len(data.load(name)) > 0
    assert data.provenance(name)["sha256"] == data.sha256(DATA / f"{name}.csv"), f"update {name}.yml"


@pytest.mark.parametrize("name", DATASETS)
def test_dataset_loads_and_matches_schema(name):
    df = data.load(name)
    s = data.schema(name)
    assert list(df.columns) == s.names == EXPECTED_COLUMNS[name]
    if name in EXPECTED_ROWS:
        assert len(df) == EXPECTED_ROWS[name]
    for col in s.columns:
        assert str(df[col.name].dtype) == _DTYPES[col.type], col.name
        if col.required:
            assert df[col.name].notna().all(), col.name
        if col.type != "str":
            v = df[col.name].dropna().astype(float)
            if col.min is not None:
                assert (v >= col.min).all()
            if col.max is not None:
                assert (v <= col.max).all()
            if col.min_exclusive is not None:
                assert (v > col.min_exclusive).all()
            if col.max_exclusive is not None:
                assert (v < col.max_exclusive).all()
        if col.allowed is not None:
            assert set(df[col.name].dropna()) <= set(col.allowed)
    if s.key:
        assert not df.duplicated(list(s.key)).any()


@pytest.mark.parametrize("name", DATASETS)
def test_yml_provenance_and_sha256(name):
    meta = yaml.safe_load((DATA / f"{name}.yml").read_text())
    for field in ("title", "source", "licence", "description", "key", "columns", "sha256"):
        assert meta.get(field), f"{name}.yml lacks {field}"
    for col in meta["columns"]:
        assert {"name", "type", "unit", "description"} <= set(col)
    # the CSV cannot drift from its description: update sha256 (python -m sdsl.data sha) on edit
    assert meta["sha256"] == data.sha256(DATA / f"{name}.csv"), f"{name}.csv changed: update {name}.yml"
    prov = data.provenance(name)
    assert prov["sha256"] == meta["sha256"] and prov["key"] == meta["key"]
    assert "2603.11053" in prov["source"] or name == "models"


def test_load_returns_copies():
    a = data.load("acceptance")
    a.loc[0, "alpha"] = -1.0
    assert data.load("acceptance").loc[0, "alpha"] == pytest.approx(0.5959)


def test_unknown_dataset_lists_available():
    with pytest.raises(ValueError, match=r"unknown dataset 'nope'.*acceptance"):
        data.load("nope")


# --- transcription spot checks (values as printed in the seed) ------------------------------------


def test_acceptance_spot_values():
    a = data.load("acceptance").set_index(["target", "draft"])
    assert a.loc[("Qwen1.5-14B", "OPT-125M"), "alpha"] == 0.599
    assert a.loc[("OPT-13B", "OPT-125M"), "alpha_hw95"] == 0.0018
    assert a.loc[("Qwen1.5-32B", "Qwen1.5-4B"), "alpha"] == 0.7084
    assert a.loc[("OPT-66B", "Qwen2.5-3B"), "draft_ppl"] == 12.5883894
    assert (a.groupby("source_table").size().to_dict()) == {1: 20, 2: 30}
    assert set(a["draft_family"]) == {"OPT", "Qwen1.5", "Qwen2.5"}
    # family is the prefix of the draft's name
    assert all(d.startswith(f + "-") for (_, d), f in a["draft_family"].items())


def test_table_spot_values():
    t5 = data.load("paper_table5").set_index(["target", "draft_family"])
    assert t5.loc[("Qwen1.5-14B", "OPT"), "n_star"] == 124039820.3
    assert t5.loc[("Qwen1.5-32B", "Qwen2.5"), "tokens_per_flop"] == 4.183e-11
    assert t5.loc[("Qwen1.5-14B", "Qwen1.5"), "d_draft"] == 2.4e12
    t8 = data.load("paper_table8").set_index("parameter")
    assert t8.loc["g", "ci_upper"] == -4.28e-5
    m = data.load("paper_metrics").set_index(["table", "metric"])["value"]
    assert m[(3, "r2")] == 0.602296 and m[(9, "observations")] == 288


def test_models_parameter_counts():
    m = data.load("models").set_index("model")
    assert m.loc["Qwen1.5-14B", "params"] == 14_167_290_880
    assert m.loc["Qwen1.5-32B", "params"] == 32_512_218_112
    assert m.loc["OPT-13B", "params"] == 12_853_473_280
    assert m.loc["OPT-125M", "params"] == 125_239_296
    assert m.loc["Qwen2.5-3B", "params"] == 3_085_938_688
    assert m.loc["OPT-350M", "tokens"] == 180e9
    assert m.loc["Qwen1.5-0.5B", "tokens"] == 2.4e12 and m.loc["Qwen1.5-32B", "tokens"] == 3e12
    assert m.loc["Qwen2.5-1.5B", "tokens"] == 18e12
    # Table 5's M equals models.params
    t5 = data.load("paper_table5")
    for row in t5.itertuples():
        assert m.loc[row.target, "params"] == row.m


# --- cross-checks ---------------------------------------------------------------------------------


def test_every_model_is_in_models():
    models = data.load("models").set_index("model")
    acc, lat = data.load("acceptance"), data.load("latency")
    t6 = data.load("paper_table6")
    for col, role in (("target", "target"), ("draft", "draft")):
        for name in set(acc[col]) | set(lat[col]):
            assert name in models.index, name
            assert models.loc[name, "role"] == role, name
    assert set(t6["draft"]) <= set(models.index)
    # the draft family of every row agrees with models.family
    for df in (acc, lat, t6):
        assert (df["draft_family"].to_numpy() == models.loc[df["draft"], "family"].to_numpy()).all()


def test_perplexity_is_the_same_in_every_row():
    acc = data.load("acceptance")
    assert (acc.groupby("target")["target_ppl"].nunique() == 1).all()
    assert (acc.groupby("draft")["draft_ppl"].nunique() == 1).all()
    assert acc.groupby("target").size().eq(10).all()


def test_confidence_intervals_are_consistent():
    """Printed CI ends equal estimate -+ margin of error to the printed precision."""
    for name, est, moe, lo, hi in (
        ("paper_table3", "estimate", "moe", "ci_lower", "ci_upper"),
        ("paper_table8", "estimate", "moe", "ci_lower", "ci_upper"),
        ("paper_table9", "estimate", "moe", "ci_lower", "ci_upper"),
        ("paper_table4", "p1", "moe1", "ci1_lower", "ci1_upper"),
        ("paper_table4", "p2", "moe2", "ci2_lower", "ci2_upper"),
    ):
        df, tol = data.load(name), data.printed_tolerance(name)
        slack = tol[est] + tol[moe] + tol[lo] + 1e-15
        assert ((df[est] - df[moe] - df[lo]).abs() <= slack + tol[lo]).all(), name
        assert ((df[est] + df[moe] - df[hi]).abs() <= slack + tol[hi]).all(), name


# --- printed tolerance ----------------------------------------------------------------------------


def test_printed_tolerance_values():
    acc = data.load("acceptance")
    tol = data.printed_tolerance("acceptance")
    assert list(tol.columns) == list(acc.columns)
    assert (tol["target"] == acc["target"]).all()  # text columns kept to identify rows
    i = acc.index[(acc.target == "Qwen1.5-14B") & (acc.draft == "OPT-125M")][0]
    assert tol.loc[i, "alpha"] == pytest.approx(5e-4, rel=1e-12)  # printed 0.599
    j = acc.index[(acc.target == "OPT-13B") & (acc.draft == "OPT-125M")][0]
    assert tol.loc[j, "alpha"] == pytest.approx(5e-5, rel=1e-12)  # printed 0.5959
    assert tol.loc[j, "target_ppl"] == pytest.approx(5e-9, rel=1e-12)  # 15.58453751
    t8 = data.printed_tolerance("paper_table8").set_index("parameter")
    assert t8.loc["mu", "estimate"] == pytest.approx(5e-6, rel=1e-12)  # 4.89e-03
    assert t8.loc["M0", "estimate"] == pytest.approx(5e4, rel=1e-12)  # 7.23e+07
    t5 = data.printed_tolerance("paper_table5")
    assert t5["n_star"].tolist() == pytest.approx([0.05] * 6)
    assert t5["tokens_per_flop"].tolist() == pytest.approx([5e-15] * 6)
    assert t5["m"].tolist() == [0.5] * 6
    lat = data.printed_tolerance("latency")
    assert lat.loc[5, "ttft_moe_s"] == pytest.approx(5e-6)  # 0.01120 keeps its trailing zero


def test_printed_tolerance_from_text(tmp_path):
    text = "parameter,estimate,moe,ci_lower,ci_upper\nmu,0.599,4.89e-03,-1.20,180e9\nM0,288,1e8,0.5990,5E+2\n"
    p = _write(tmp_path, "t.csv", text, schema_name="paper_table9")
    tol = data.printed_tolerance(p)
    assert tol["estimate"].tolist() == pytest.approx([5e-4, 0.5])
    assert tol["moe"].tolist() == pytest.approx([5e-6, 5e7])
    assert tol["ci_lower"].tolist() == pytest.approx([5e-3, 5e-5])
    assert tol["ci_upper"].tolist() == pytest.approx([5e8, 50.0])


# --- error messages --------------------------------------------------------------------------------


def _write(tmp_path: Path, name: str, text: str, schema_name: str = "acceptance") -> Path:
    """A CSV in tmp_path with a copy of a dataset's schema beside it."""
    p = tmp_path / name
    p.write_text(text)
    meta = yaml.safe_load((DATA / f"{schema_name}.yml").read_text())
    meta["sha256"] = data.sha256(p)  # a provenance file records the sha256 of its CSV
    p.with_suffix(".yml").write_text(yaml.safe_dump(meta, sort_keys=False))
    return p


def _acc_text(rows: list[str] | None = None, header: str | None = None) -> str:
    header = header or "target,draft,draft_family,source_table,draft_ppl,target_ppl,alpha,alpha_hw95"
    rows = (
        rows
        if rows is not None
        else [
            "T1,D1,OPT,1,20.5,10.1,0.61,0.001",
            "T1,D2,OPT,1,18.5,10.1,0.65,0.001",
            "T2,D1,OPT,2,20.5,11.2,0.62,0.002",
        ]
    )
    return "\n".join([header, *rows]) + "\n"


def test_valid_user_file_loads(tmp_path):
    p = _write(tmp_path, "mine.csv", _acc_text(["T1,D1,Llama,,20.5,10.1,0.61,", "T1,D2,OPT,2,18,10.1,0.65,0.01"]))
    df = data.load(p)
    assert len(df) == 2 and pd.isna(df.loc[0, "source_table"]) and math.isnan(df.loc[0, "alpha_hw95"])
    # the same file with an explicit schema (no yml needed)
    q = tmp_path / "other.csv"
    q.write_text(p.read_text())
    assert data.load(q, schema="acceptance").equals(df)


def _assert_error(path: Path, *patterns: str, schema=None):
    with pytest.raises(ValueError) as info:
        data.load(path, schema=schema)
    msg = str(info.value)
    assert isinstance(info.value, data.DataError)
    assert path.name in msg, msg
    for pat in patterns:
        assert re.search(pat, msg), f"{pat!r} not in {msg!r}"
    assert "Traceback" not in msg
    return msg


def test_error_missing_column(tmp_path):
    text = _acc_text(
        [r.rsplit(",", 1)[0] for r in _acc_text().splitlines()[1:]],
        header="target,draft,draft_family,source_table,draft_ppl,target_ppl,alpha",
    )
    p = _write(tmp_path, "missing.csv", text)
    _assert_error(p, r"missing column.*alpha_hw95")


def test_error_unexpected_column(tmp_path):
    rows = [r + ",x" for r in _acc_text().splitlines()[1:]]
    p = _write(tmp_path, "extra.csv", _acc_text(rows, header=_acc_text().splitlines()[0] + ",notes"))
    _assert_error(p, r"unexpected column.*notes")


def test_error_non_numeric(tmp_path):
    rows = _acc_text().splitlines()[1:]
    rows[1] = "T1,D2,OPT,1,eighteen,10.1,0.65,0.001"
    p = _write(tmp_path, "text.csv", _acc_text(rows))
    _assert_error(p, r"line 3\b", r"column 'draft_ppl'", r"non-numeric.*'eighteen'")


def test_error_nan_text_is_not_a_number(tmp_path):
    rows = _acc_text().splitlines()[1:]
    rows[0] = "T1,D1,OPT,1,20.5,nan,0.61,0.001"
    p = _write(tmp_path, "nan.csv", _acc_text(rows))
    _assert_error(p, r"line 2\b", r"column 'target_ppl'", r"not a finite number")


def test_error_empty_required(tmp_path):
    rows = _acc_text().splitlines()[1:]
    rows[2] = "T2,D1,OPT,2,20.5,11.2,,0.002"
    p = _write(tmp_path, "empty.csv", _acc_text(rows))
    _assert_error(p, r"line 4\b", r"column 'alpha'", r"empty cell in a required column")
    rows[2] = ",D1,OPT,2,20.5,11.2,0.6,0.002"
    p = _write(tmp_path, "empty_str.csv", _acc_text(rows))
    _assert_error(p, r"line 4\b", r"column 'target'", r"empty cell")


@pytest.mark.parametrize("value, where", [("1.2", "alpha"), ("0", "alpha"), ("1", "alpha")])
def test_error_alpha_out_of_range(tmp_path, value, where):
    rows = _acc_text().splitlines()[1:]
    rows[1] = f"T1,D2,OPT,1,18.5,10.1,{value},0.001"
    p = _write(tmp_path, "range.csv", _acc_text(rows))
    _assert_error(p, r"line 3\b", rf"column '{where}'", r"out of range.*> 0 and < 1")


def test_error_size_not_positive(tmp_path):
    text = (
        "model,family,role,params,tokens,params_source,tokens_source\n"
        "A,OPT,draft,100,1e9,x,y\nB,OPT,target,-5,1e9,x,y\n"
    )
    p = _write(tmp_path, "sizes.csv", text, schema_name="models")
    _assert_error(p, r"line 3\b", r"column 'params'", r"out of range.*> 0")
    text = text.replace("B,OPT,target,-5,1e9", "B,OPT,target,5,0")
    p = _write(tmp_path, "tokens.csv", text, schema_name="models")
    _assert_error(p, r"line 3\b", r"column 'tokens'", r"out of range")
    text = text.replace("B,OPT,target,5,0", "B,OPT,target,5.5,1")
    p = _write(tmp_path, "int.csv", text, schema_name="models")
    _assert_error(p, r"line 3\b", r"column 'params'", r"not an integer")


def test_error_not_allowed(tmp_path):
    rows = _acc_text().splitlines()[1:]
    rows[0] = "T1,D1,OPT,3,20.5,10.1,0.61,0.001"
    p = _write(tmp_path, "allowed.csv", _acc_text(rows))
    _assert_error(p, r"line 2\b", r"column 'source_table'", r"not among the allowed values \[1, 2\]")
    text = "model,family,role,params,tokens,params_source,tokens_source\nA,OPT,teacher,100,1e9,x,y\n"
    p = _write(tmp_path, "role.csv", text, schema_name="models")
    _assert_error(p, r"line 2\b", r"column 'role'", r"'teacher' is not among the allowed.*target")


def test_error_duplicate_key(tmp_path):
    rows = _acc_text().splitlines()[1:] + ["T1,D2,OPT,1,18.5,10.1,0.66,0.001"]
    p = _write(tmp_path, "dup.csv", _acc_text(rows))
    _assert_error(p, r"line 5\b", r"duplicate key", r"target='T1', draft='D2'", r"same as line 3\b")


def test_error_ragged_and_empty_files(tmp_path):
    rows = _acc_text().splitlines()[1:]
    rows[1] += ",extra,cells"
    p = _write(tmp_path, "ragged.csv", _acc_text(rows))
    _assert_error(p, r"line 3: 10 fields, the header \(line 1\) has 8")
    p = _write(tmp_path, "void.csv", "")
    _assert_error(p, r"empty")


def test_error_no_schema_beside(tmp_path):
    p = tmp_path / "lonely.csv"
    p.write_text(_acc_text())
    _assert_error(p, r"no schema beside it")


def test_validate_dataframe_reports_rows():
    df = data.load("acceptance")
    df.loc[7, "alpha"] = 1.5
    with pytest.raises(ValueError, match=r"my_runs\.csv, row 8, column 'alpha': value 1\.5 is out of range"):
        data.validate(df, "acceptance", "my_runs.csv")
    good = data.validate(data.load("acceptance"), "acceptance", "x")
    pd.testing.assert_frame_equal(good, data.load("acceptance"))
    with pytest.raises(ValueError, match=r"x\.csv: missing column"):
        data.validate(df.drop(columns="alpha"), data.schema("acceptance"), "x.csv")


def test_schema_errors(tmp_path):
    bad = {"columns": [{"name": "a", "type": "complex"}]}
    with pytest.raises(ValueError, match="type 'complex'"):
        data.schema(bad)
    with pytest.raises(ValueError, match="key columns"):
        data.schema({"key": ["b"], "columns": [{"name": "a", "type": "int"}]})
    s = data.schema({"key": ["a"], "columns": [{"name": "a", "type": "int", "min": 0}]})
    assert data.validate(pd.DataFrame({"a": [1, 2]}), s)["a"].tolist() == [1, 2]


def test_the_whole_column_path_and_the_cell_path_accept_the_same_cells():
    """A numeric column is converted in one pass when every cell is a plain number in range, and
    cell by cell otherwise (sdsl.data._fast_numeric): the cells that only the second path
    accepts come out the same, and a bad cell still gets its line and column named."""
    s = data.schema({"columns": [{"name": "n", "type": "int", "min": 0}, {"name": "x", "type": "float", "max": 10}]})
    plain = pd.DataFrame({"n": ["1", "2", "9007199254740993"], "x": ["0.5", "1e-3", "-2"]})
    out = data.validate(plain, s)
    assert out["n"].tolist() == [1, 2, 2**53 + 1] and out["x"].tolist() == [0.5, 0.001, -2.0]  # exact
    # "5.0" and "1e3" in an integer column take the cell path
    odd = pd.DataFrame({"n": ["5.0", "1e3"], "x": ["1", "2"]})
    assert data.validate(odd, s)["n"].tolist() == [5, 1000]
    for n, x, message in [
        (str(2**70), "1", r"row 2, column 'n': value 1180591620717411303424 does not fit a 64-bit integer"),
        (str(2**63), "1", r"row 2, column 'n': value 9223372036854775808 does not fit a 64-bit integer"),
        ("-1", "1", r"row 2, column 'n': value -1 is out of range"),
        ("1", "11", r"row 2, column 'x': value 11 is out of range"),
        ("1", "nan", r"row 2, column 'x': value 'nan' is not a finite number"),
        ("1.5", "1", r"row 2, column 'n': value '1.5' is not an integer"),
        ("one", "1", r"row 2, column 'n': non-numeric value 'one'"),
    ]:
        bad = pd.DataFrame({"n": ["0", n], "x": ["0", x]})
        with pytest.raises(ValueError, match=message):
            data.validate(bad, s)


def test_sha256_function(tmp_path):
    p = tmp_path / "x.bin"
    p.write_bytes(b"abc")
    assert data.sha256(p) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_cache_sees_edits(tmp_path):
    p = _write(tmp_path, "edit.csv", _acc_text())
    assert len(data.load(p)) == 3
    p.write_text(_acc_text(_acc_text().splitlines()[1:3]))
    _write(tmp_path, "edit.csv", p.read_text())
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))
    assert len(data.load(p)) == 2


def test_numeric_dtypes_are_plain_numpy():
    acc = data.load("acceptance")
    assert acc["source_table"].dtype == np.int64
    assert np.issubdtype(acc["alpha"].dtype, np.floating)


@pytest.mark.parametrize("name", ["latency.csv", "latency.yml", Path("latency.csv")], ids=["csv", "yml", "path"])
def test_a_dataset_name_with_its_extension_is_told_to_drop_it(name, tmp_path, monkeypatch):
    """``load('latency.csv')`` is a path (a file of the working directory), not the dataset: where no such
    file is there, the one line says so and names the dataset without the extension."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(data.DataError) as err:
        data.load(name)
    msg = str(err.value)
    assert "no such file" in msg and "without ." in msg and "'latency'" in msg and "\n" not in msg
    assert str(tmp_path) in msg  # the working directory's file was looked for, not data/'s


def test_a_file_named_like_a_dataset_in_the_working_directory_is_read_as_that_file(tmp_path, monkeypatch):
    """The user's own ``latency.csv`` (with its schema beside it) is what ``load('latency.csv')`` reads."""
    _write(tmp_path, "latency.csv", _acc_text())
    monkeypatch.chdir(tmp_path)
    assert data.load("latency.csv")["target"].tolist() == ["T1", "T1", "T2"]


def test_a_missing_path_is_no_such_file_not_a_missing_schema(tmp_path):
    with pytest.raises(data.DataError, match=r"gone\.csv: no such file$"):
        data.load(tmp_path / "gone.csv")


def test_a_quoted_cell_starting_with_a_hash_is_a_value_not_a_comment(tmp_path):
    p = _write(tmp_path, "hash.csv", _acc_text(['"#T1",D1,OPT,1,20.5,10.1,0.61,0.001', "T1,#D2,OPT,1,18.5,10.1,0.65,"]))
    assert data.load(p)[["target", "draft"]].values.tolist() == [["#T1", "D1"], ["T1", "#D2"]]


def test_no_data_file_records_a_machine_path():
    """Provenance records commands as typed; a folder of the machine that ran them (the checkout's
    place, a temporary folder) is not part of the record and is not committed."""
    import re

    from sdsl.paths import DATA

    machine = re.compile(rb"/(?:work|tmp|root|home|Users)/[A-Za-z0-9_.-]+/")
    hits = [
        p.relative_to(DATA).as_posix()
        for p in sorted(DATA.rglob("*"))
        if p.is_file() and machine.search(p.read_bytes())
    ]
    assert not hits, hits
