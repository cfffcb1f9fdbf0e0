"""Side processes for the host's CPU-bound steps: without them, the work runs here."""

from __future__ import annotations

import os

import pytest

from matrix import parallel


def square_and_pid(number: int):
    return number * number, os.getpid()


def test_without_processes_the_work_runs_here_in_order():
    with parallel.pool(0) as side:
        results = list(side.map(square_and_pid, [3, 1, 2]))
        later = side.submit(square_and_pid, 4)
    assert results == [(9, os.getpid()), (1, os.getpid()), (4, os.getpid())]
    assert later() == (16, os.getpid())


def test_one_usable_core_runs_the_work_here(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(parallel, "cores", lambda: 1)
    with parallel.pool(2) as side:
        assert [pid for _, pid in side.map(square_and_pid, [1, 2])] == [os.getpid()] * 2
