"""Side processes for the host's CPU-bound steps, forked: order, errors, dropped work."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from matrix import parallel

linux_only = pytest.mark.skipif(
    parallel.cores() < 2, reason="side processes are forked on Linux only, with two usable cores or more"
)


def square_and_pid(number: int):
    return number * number, os.getpid()


def refuse(name: str):
    raise ValueError("%s: refused" % name)


@linux_only
def test_side_processes_keep_the_order_of_the_items():
    with parallel.pool(2) as side:
        results = list(side.map(square_and_pid, range(12)))
        later = side.submit(square_and_pid, 5)
        assert later()[0] == 25
    assert [value for value, _ in results] == [n * n for n in range(12)]
    assert os.getpid() not in {pid for _, pid in results}


@linux_only
def test_an_error_in_a_side_process_reaches_the_caller():
    with parallel.pool(1) as side:
        failing = side.submit(refuse, "cells.jsonl")
        with pytest.raises(ValueError, match="cells.jsonl: refused"):
            failing()
        with pytest.raises(ValueError, match="a.jsonl: refused"):
            list(side.map(refuse, ["a.jsonl"]))


def slow_mark(folder: str, number: int) -> int:
    import time

    time.sleep(0.2)  # long enough that the rest of the work is still queued when the error comes
    open(os.path.join(folder, str(number)), "w").close()
    return number


@linux_only
def test_an_error_drops_the_work_not_yet_started(tmp_path: Path):
    with pytest.raises(ValueError, match="stop"):
        with parallel.pool(1) as side:
            pending = [side.submit(slow_mark, str(tmp_path), n) for n in range(20)]
            raise ValueError("stop")
    ran = sorted(int(path.name) for path in tmp_path.iterdir())
    # Only what the side process had already taken ran; the rest of the twenty was dropped, not waited for.
    assert ran == list(range(len(ran))) and len(ran) < len(pending) // 2
    # How long the drop saves is a speed figure: benchmarks/side_processes.py measures it.
