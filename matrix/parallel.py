"""Side processes for the host's CPU-bound steps (parsing records, drawing charts).

Work is handed to processes forked from the current one, so they start in milliseconds
with everything already imported and loaded. Side processes are used where they can
help: on Linux (elsewhere forking is unsafe or unavailable) with two usable cores or
more. Otherwise the work runs in this process, with the same results.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def cores() -> int:
    """Cores this process may run on (1 where forking is not used)."""
    if not sys.platform.startswith("linux"):
        return 1
    return len(os.sched_getaffinity(0))


class Pool:
    """``map`` and ``submit`` in forked side processes, or in this process when there are none."""

    def __init__(self, executor: Optional[ProcessPoolExecutor]) -> None:
        self._executor = executor

    def map(self, function: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """Results in the order of ``items``, as they are ready."""
        if self._executor is None:
            return map(function, items)
        return self._executor.map(function, items)

    def submit(self, function: Callable[..., R], *args: Any) -> Callable[[], R]:
        """Start ``function(*args)``; the returned callable waits for its result (or raises its error)."""
        if self._executor is None:
            result = function(*args)
            return lambda: result
        future: Future[R] = self._executor.submit(function, *args)
        return future.result


@contextlib.contextmanager
def pool(processes: int) -> Iterator[Pool]:
    """A :class:`Pool` of ``processes`` forked processes; none with 0, on one core, or without fork."""
    if processes <= 0 or cores() < 2:
        yield Pool(None)
        return
    executor = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork"))
    try:
        yield Pool(executor)
    except BaseException:
        # E.g. a broken record file: drop the work not yet started rather than wait for it.
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    executor.shutdown(wait=True)
