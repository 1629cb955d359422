"""Resumable task execution: a killed run restarts from its last finished task."""

from __future__ import annotations

import json

import pytest

from sdsl.experiment.tasks import Task, done_marker, execute_tasks, is_done


class Killed(RuntimeError):
    pass


def _tasks():
    return [
        Task("corpus", "corpus", 1.0, phase=0),
        Task("train/a", "train", 5.0, phase=1),
        Task("train/b", "train", 5.0, phase=1),
        Task("alpha/a__b__t1", "alpha", 1.0, phase=2),
    ]


def test_a_killed_run_resumes_from_its_last_finished_task(tmp_path):
    calls = []

    def work(task_id, advance):
        if task_id == "train/b" and len(calls) == 2:
            raise Killed("simulated kill")
        advance(0.5)
        calls.append(task_id)

    with pytest.raises(Killed):
        execute_tasks(_tasks(), work, tmp_path, session=0, progress=False)
    assert calls == ["corpus", "train/a"]
    assert is_done(tmp_path, "train/a") and not is_done(tmp_path, "train/b")
    ran = execute_tasks(_tasks(), lambda t, adv: calls.append(t), tmp_path, session=1, progress=False)
    assert ran == ["train/b", "alpha/a__b__t1"]
    assert calls == ["corpus", "train/a", "train/b", "alpha/a__b__t1"]
    marker = json.loads(done_marker(tmp_path, "train/b").read_text())
    assert marker["session"] == 1 and marker["kind"] == "train"
    assert execute_tasks(_tasks(), lambda t, adv: calls.append(t), tmp_path, session=2, progress=False) == []


def test_phases_run_in_order_whatever_the_list_order(tmp_path):
    calls = []
    tasks = list(reversed(_tasks()))
    execute_tasks(tasks, lambda t, adv: calls.append(t), tmp_path, session=0, progress=False)
    assert calls[0] == "corpus" and calls[-1] == "alpha/a__b__t1"


def test_duplicate_ids_and_bad_workers_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unique"):
        execute_tasks(
            [Task("x", "k", 1.0), Task("x", "k", 1.0)], lambda t, a: None, tmp_path, session=0, progress=False
        )
    with pytest.raises(ValueError, match="workers must be >= 1"):
        execute_tasks(_tasks(), lambda t, a: None, tmp_path, session=0, workers=0, progress=False)
