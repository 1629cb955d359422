"""The bad-input corpus holds at least 150 cases; this prints the count by area."""

from __future__ import annotations

from bad_inputs import API, CLI, COMMANDS, DATA_DAMAGE, DATA_VALID, NOTEBOOK


def test_corpus_size_by_area(capsys):
    counts = {
        "command line": len(CLI),
        "pipeline, check and experiment command lines": len(COMMANDS),
        "data damage": len(DATA_DAMAGE),
        "notebook parameters": len(NOTEBOOK),
        "public API": len(API()),
    }
    with capsys.disabled():
        print(
            "\nbad-input corpus: "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
            + f"; {sum(counts.values())} in all (and {len(DATA_VALID)} harmless changes that must load)"
        )
    assert sum(counts.values()) >= 150
    assert all(v >= 25 for v in counts.values())
    ids = (
        [c[0] for c in CLI]
        + [c[0] for c in COMMANDS]
        + [c[0] for c in DATA_DAMAGE]
        + [c[0] for c in NOTEBOOK]
        + [c[0] for c in API()]
    )
    assert len(ids) == len(set(ids)), "case ids must be unique"
