"""Parallel cells: lanes forked from the warm runner, each running cells one at a time in its own isolation.

A lane is a process forked from the runner after torch is imported and warmed up, so it
starts warm in milliseconds. It runs the jobs it is handed through its own isolation
backend (one forked child per cell, as in a serial run), so a cell's crash, hang or
changed global state stays in that cell, and no state crosses from one cell to another.
The runner stays single-threaded: it hands jobs out, waits on the lanes' result pipes
and records results as they come. A lane that dies (it should not: its cells are
isolated from it) costs only the cell it was running, recorded as a crash, and is
replaced by a new lane.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import os
import select
import signal
import sys
from typing import Any, Callable, Dict, Iterable, Iterator, List, Tuple

from ..contract.schema import Status
from . import framing
from .keeper import close, prctl

Job = Dict[str, Any]
Result = Dict[str, Any]


def fork_child(body: Callable[[], None]) -> int:
    """A child (a lane, a fresh-load server) that runs ``body`` and exits (70 where it raised); Ctrl-C is the
    runner's to handle, and a child whose runner is gone has nobody to report to: the kernel ends it (Linux)."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            body()
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    return pid


class _Lane:
    def __init__(self, pid: int, jobs_w: int, results_r: int) -> None:
        self.pid, self.jobs_w, self.results_r = pid, jobs_w, results_r
        self.key: Any = None  # the cell in flight, None when idle

    def close(self) -> None:
        for fd in (self.jobs_w, self.results_r):
            close(fd)


def _lane_main(backend: Any, jobs_r: int, results_w: int) -> None:
    while True:
        message = framing.read(jobs_r)
        if message is None:
            return
        try:
            result = backend.run(message["job"], message["timeout"])
        except Exception as exc:  # the backend itself failed: the cell is a crash, the lane goes on
            result = {"status": Status.CRASH.value, "error_type": type(exc).__name__, "error_message": str(exc)[:500]}
        framing.write(results_w, {"result": result})


class Lanes:
    """``count`` lanes, each with the backend ``make_backend(index)`` builds inside it (index: 0 to count - 1;
    a lane that replaces a dead one gets its index)."""

    def __init__(self, make_backend: Callable[[int], Any], count: int) -> None:
        self._make_backend = make_backend
        self._lanes: List[_Lane] = []
        for index in range(count):
            self._lanes.append(self._fork(index))

    def _fork(self, index: int) -> _Lane:
        jobs_r, jobs_w = os.pipe()
        results_r, results_w = os.pipe()

        def lane() -> None:
            os.close(jobs_w)
            os.close(results_r)
            for other in self._lanes:  # the other lanes' pipes are not this lane's to hold open
                other.close()
            backend = self._make_backend(index)
            try:
                _lane_main(backend, jobs_r, results_w)
            finally:
                backend.close()

        pid = fork_child(lane)
        os.close(jobs_r)
        os.close(results_w)
        return _Lane(pid, jobs_w, results_r)

    def run(self, jobs: Iterable[Tuple[Any, Job]], timeout: float) -> Iterator[Tuple[Any, Result]]:
        """Run ``(key, job)`` pairs, ``len(lanes)`` at a time; yields ``(key, result)`` as cells finish.

        ``jobs`` is read lazily, one pair each time a lane is free, so the caller can note
        a cell as started just before it is handed out.
        """
        pending = iter(jobs)
        exhausted = False
        while True:
            for index, lane in enumerate(self._lanes):
                if lane.key is None and not exhausted:
                    try:
                        key, job = next(pending)
                    except StopIteration:
                        exhausted = True
                        break
                    try:
                        framing.write(lane.jobs_w, {"job": job, "timeout": timeout})
                    except OSError:  # the lane is gone: replace it and hand the job to the new one
                        lane, _ = self._replace(index)
                        framing.write(lane.jobs_w, {"job": job, "timeout": timeout})
                    lane.key = key
            busy = [lane for lane in self._lanes if lane.key is not None]
            if not busy:
                return
            ready, _, _ = select.select([lane.results_r for lane in busy], [], [])
            for lane in busy:
                if lane.results_r not in ready:
                    continue
                key, lane.key = lane.key, None
                message = framing.read(lane.results_r)
                if message is None:
                    _, status = self._replace(self._lanes.index(lane))
                    yield (
                        key,
                        {
                            "status": Status.CRASH.value,
                            "error_type": "matrix.worker.lanes.LaneDied",
                            "error_message": "the process running this cell's isolation died (%s)" % status,
                        },
                    )
                else:
                    yield key, message["result"]

    def _bury(self, lane: _Lane) -> str:
        lane.close()
        try:
            _, status = os.waitpid(lane.pid, 0)
        except ChildProcessError:
            return "exit status unknown"
        if os.WIFSIGNALED(status):
            return "killed by signal %d" % os.WTERMSIG(status)
        return "exit status %d" % os.WEXITSTATUS(status)

    def _replace(self, index: int) -> Tuple[_Lane, str]:
        """A new lane in place of a dead one, and how the dead one ended."""
        status = self._bury(self._lanes[index])
        self._lanes[index] = self._fork(index)
        return self._lanes[index], status

    def close(self) -> None:
        """End every lane: closing its job pipe is its signal to finish and close its backend."""
        for lane in self._lanes:
            close(lane.jobs_w)
        for lane in self._lanes:
            close(lane.results_r)
            try:
                os.waitpid(lane.pid, 0)
            except ChildProcessError:
                pass
        self._lanes = []
