"""A kernel that dies before it answers is started again; nothing else is retried
(:func:`sdsl.build.pipeline._execute_with_kernel_retries`)."""

from __future__ import annotations

import pytest

from sdsl.build import pipeline

DIED = "Kernel died before replying to kernel_info"


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch):
    monkeypatch.setattr(pipeline.time, "sleep", lambda s: None)


def _flaky(failures: int, message: str = DIED):
    calls = []

    def execute(*args, **kwargs):
        calls.append((args, kwargs))
        if len(calls) <= failures:
            raise RuntimeError(message)
        return "executed"

    return execute, calls


def test_a_kernel_start_collision_is_retried_with_the_same_arguments():
    execute, calls = _flaky(pipeline.KERNEL_START_ATTEMPTS - 1)
    assert pipeline._execute_with_kernel_retries(execute, "in.ipynb", "out.ipynb", kernel_name="python3") == "executed"
    assert len(calls) == pipeline.KERNEL_START_ATTEMPTS
    assert all(c == (("in.ipynb", "out.ipynb"), {"kernel_name": "python3"}) for c in calls)


def test_a_kernel_that_never_starts_is_given_up_after_the_last_attempt():
    execute, calls = _flaky(99)
    with pytest.raises(RuntimeError, match=DIED):
        pipeline._execute_with_kernel_retries(execute)
    assert len(calls) == pipeline.KERNEL_START_ATTEMPTS == 3


def test_a_failing_cell_is_not_run_again():
    execute, calls = _flaky(1, "ZeroDivisionError: division by zero")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        pipeline._execute_with_kernel_retries(execute)
    assert len(calls) == 1
