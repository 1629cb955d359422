"""The kernel matrix's schedule: which combinations run side by side (:mod:`sdsl.build.matrix`)."""

from __future__ import annotations

from sdsl.build.matrix import Combination, _batches, combinations


def _names(batches):
    return [[c.name for c in b] for b in batches]


def test_one_thread_runs_of_few_chapters_go_two_at_a_time_and_the_rest_alone():
    combos = combinations(["measure_acceptance"])
    batches = _batches(combos)
    assert [c for b in batches for c in b] == combos  # every combination once, in order
    for b in batches:
        if len(b) > 1:
            assert len(b) == 2 and all(c.chapters is not None and c.threads == 1 for c in b)
    # an all-chapter run (two notebooks at once already) and a two-thread run are never paired
    for c in combos:
        if c.chapters is None or c.threads != 1:
            assert [c] in batches
    # the six one-thread torch runs (3 coretypes x 2 capabilities) make three pairs
    assert sum(len(b) == 2 for b in batches) == 3


def test_a_pair_never_spans_a_run_that_must_go_alone():
    one = Combination("one", {}, ["c"], 1)
    alone = Combination("all", {}, None, 1)
    two = Combination("two", {}, ["c"], 1)
    assert _names(_batches([one, alone, two])) == [["one"], ["all"], ["two"]]
    assert _names(_batches([one, two, Combination("three", {}, ["c"], 1)])) == [["one", "two"], ["three"]]
