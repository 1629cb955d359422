"""The registry of the book's tables and figures (sdsl.book.registry) is complete and resolvable:
the browser test and the artifact index rely on it."""

from __future__ import annotations

from sdsl.book import registry as R
from sdsl.paths import DATA, ROOT

SUFFIXES = (".data.csv", ".csv", ".svg", ".png")


def _stem(name: str) -> str:
    for s in SUFFIXES:
        if name.endswith(s):
            return name[: -len(s)]
    return name


def test_paper_items_are_tables_1_to_9_and_figures_1_to_5():
    keys = [i.key for i in R.paper_items()]
    assert keys == [f"Table {i}" for i in range(1, 10)] + [f"Figure {i}" for i in range(1, 6)]
    assert all(i.shown for i in R.paper_items())
    assert [i.figure for i in R.paper_items()] == [False] * 9 + [True] * 5


def test_every_baseline_artifact_is_in_the_registry():
    listed = {(i.chapter, a) for i in R.REGISTRY for a in i.artifacts}
    missing = sorted(
        f"{p.parent.name}/{p.name}"
        for p in (ROOT / "baseline").glob("*/*")
        if p.is_file() and not p.name.startswith(".") and (p.parent.name, _stem(p.name)) not in listed
    )
    assert not missing, f"artifacts of baseline/ that no registry item names: {missing}"


def test_every_registered_artifact_exists_in_the_baseline():
    absent = [
        f"{i.chapter}/{a}"
        for i in R.REGISTRY
        for a in i.artifacts
        if not any((ROOT / "baseline" / i.chapter / f"{a}{s}").is_file() for s in SUFFIXES)
    ]
    assert not absent, f"registry items without a baseline artifact: {absent}"


def test_every_function_and_dataset_exists():
    for item in R.REGISTRY:
        assert callable(R.resolve(item.function)), item.key
        for d in item.data:
            assert any(DATA.glob(f"{d}.*")) or (DATA / d).is_dir(), f"{item.key}: no data/{d}"


def test_keys_are_unique():
    keys = [i.key for i in R.REGISTRY]
    assert len(keys) == len(set(keys))
