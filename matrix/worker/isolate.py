"""Isolation of cells: each runs in its own process so a crash, hang or leaked state stays there.

``fork`` (the default where available) forks from the warm parent, which has imported
torch and exported once, so a cell pays only the fork. The next cell's processes are
forked while the current one runs, which hides most of the fork's cost on a machine with
two cores or more. ``spawn`` starts a fresh interpreter per cell (slow: it imports torch
each time) for platforms without fork. ``inline`` runs cells in this process, without any
isolation, for debugging.

Under ``fork`` and ``spawn`` a cell has two processes, its keeper (:mod:`.keeper`) and the cell
process. Logs go to anonymous temporary files, so a runner killed by a signal leaves no folder behind.
"""

from __future__ import annotations

import gc
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from typing import IO, Any, Callable, Dict, List, Optional, Set, Tuple

from . import framing, gpu, reads
from .failure import OUT_OF_MEMORY
from .keeper import CRASH, Cell, close, collect, flush_output, keep, kill, ready, tail

Job = Dict[str, Any]
Result = Dict[str, Any]

# How long the runner waits at the end of a run for keepers to clean up before killing them.
_KEEPER_GRACE_S = 10.0


def limit_memory(megabytes: Optional[int]) -> None:
    """Cap this process's address space at its current size plus ``megabytes``."""
    if not megabytes:
        return
    try:
        with open("/proc/self/statm") as f:
            current = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return
    cap = current + megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def _not_started(exc: Optional[BaseException]) -> Result:
    return {"status": CRASH, "error_type": type(exc).__name__,
            "error_message": "the cell's process could not be started: %s" % exc}  # fmt: skip


def read_job(fd: int) -> Optional[Job]:
    """The job the runner wrote to ``fd``; None when it closed the pipe without one (an unused spare)."""
    try:
        return framing.read(fd)
    finally:
        close(fd)


def run_job(work: Callable[[Job], Result], job: Job) -> Result:
    """Run ``work`` and return its result; whatever it raises becomes a crash record."""
    try:
        result = work(job)
    except MemoryError as exc:
        result = {"status": CRASH, "reason": OUT_OF_MEMORY, "error_type": "MemoryError",
                  "error_message": str(exc) or "the cell ran out of memory"}  # fmt: skip
    except BaseException as exc:  # noqa: B036 - the cell must always report
        result = {"status": CRASH, "error_type": type(exc).__name__, "error_message": str(exc)[:500]}
    result["peak_rss_mb"] = peak_rss_mb()
    flush_output()  # os._exit does not flush: keep what the case printed in the log
    return result


class _Isolation:
    """What the fork and spawn backends share: one keeper per cell, ended and reaped by the runner."""

    def __init__(self) -> None:
        self.spare: Optional[Cell] = None
        self.exiting: List[Cell] = []  # ended cells whose keepers are still cleaning up
        # The runner's ends of every cell's pipes and logs; a forked keeper closes those it inherits.
        self.fds: Set[int] = set()

    def _start(self) -> Cell:
        raise NotImplementedError

    def _ahead(self) -> None:
        """Prepare the next cell while this one runs (fork only)."""

    def prepare(self) -> None:
        """Prepare the first cell before it is asked for, as ``run`` prepares each next one (fork only)."""
        if self.spare is None:
            self._ahead()

    def _take_spare(self) -> Optional[Cell]:
        cell, self.spare = self.spare, None
        if cell is not None and cell.wait(block=False) is not None:
            self._end(cell)  # its keeper died while it waited
            return None
        return cell

    def run(self, job: Job, timeout: float) -> Result:
        self._reap(block=False)
        cell, failure = self._launch(job)
        if cell is None:
            return _not_started(failure)
        try:
            self._ahead()
            result = collect(cell, timeout)
        finally:
            self._end(cell)
        result["stderr_tail"] = cell.tail
        return result

    def _launch(self, job: Job) -> Tuple[Optional[Cell], Optional[BaseException]]:
        failure: Optional[BaseException] = None
        for _ in range(2):  # a spare that died while it waited is replaced once
            cell = self._take_spare()
            try:
                if cell is None:
                    cell = self._start()
                framing.write(cell.fd("job"), job)
                self._close_fd(cell, "job")
                return cell, None
            except OSError as exc:  # BrokenPipeError: the cell process died before it read its job
                failure = exc
                if cell is not None:
                    self._end(cell)
        return None, failure

    def _started(self, keeper: int, opened: List[int], log: IO[bytes], proc: Optional[subprocess.Popen] = None) -> Cell:
        """The runner's end of a cell whose keeper started: the keeper's ends of the pipes closed here."""
        job_r, job_w, result_r, result_w, notes_r, notes_w, control_r, control_w = opened
        for fd in (job_r, result_w, notes_w, control_r):
            os.close(fd)
        self.fds.update((job_w, result_r, notes_r, control_w, log.fileno()))
        return Cell(keeper, job_w, result_r, notes_r, control_w, log, proc)

    def _close_fd(self, cell: Cell, name: str) -> None:
        fd = cell.fds[name]
        if fd is not None:
            close(fd)
            self.fds.discard(fd)
            cell.fds[name] = None

    def _end(self, cell: Cell) -> None:
        """End a cell: its keeper kills everything the cell started, then exits and is reaped later."""
        if cell.ended:
            return
        cell.ended = True
        notes = cell.fds["notes"]
        if cell.pid is None and notes is not None and ready([notes], 0):
            cell.read_notes()
        self._close_fd(cell, "control")
        if cell.pid is not None:  # at once, even if the keeper itself is gone or stopped
            kill(cell.pid, signal.SIGKILL, group=True)
        if cell.keeper_code is None:  # a keeper the case stopped cannot clean up
            kill(cell.keeper, signal.SIGCONT)
        for name in ("job", "result", "notes"):
            self._close_fd(cell, name)
        cell.tail = tail(cell.log.fileno())
        self.fds.discard(cell.log.fileno())
        cell.log.close()
        if cell.keeper_code is None:
            self.exiting.append(cell)

    def _reap(self, block: bool) -> None:
        self.exiting = [cell for cell in self.exiting if cell.wait(block=False) is None]
        if not block:
            return
        deadline = time.monotonic() + _KEEPER_GRACE_S
        while self.exiting and time.monotonic() < deadline:
            time.sleep(0.01)
            self.exiting = [cell for cell in self.exiting if cell.wait(block=False) is None]
        for cell in self.exiting:  # a keeper stuck on a process that does not die
            kill(cell.keeper, signal.SIGKILL)
            cell.wait(block=True)
        self.exiting = []

    def close(self) -> None:
        if self.spare is not None:
            self._end(self.spare)
            self.spare = None
        self._reap(block=True)


class ForkIsolation(_Isolation):
    """Fork-per-cell from a warm parent, keeping the next cell's processes forked ahead."""

    def __init__(
        self, work: Callable[[Job], Result], memory_mb: Optional[int] = None, ahead: bool = True, freeze: bool = True
    ) -> None:
        """``ahead``: fork the next cell's processes while one runs (for a stream of jobs; not for one job).
        ``freeze``: collect and freeze the heap now, so that children do not copy its pages; a process
        forked from one that froze its heap already passes False (a collection there copies every page)."""
        super().__init__()
        self.work = work
        self.memory_mb = memory_mb
        self.ahead = ahead
        # Where this process holds a CUDA context after all (a case's import, a user's sitecustomize), no
        # child forked from it could use CUDA: its cells then run in fresh interpreters.
        self.fallback: Optional[SpawnIsolation] = None
        if freeze:
            # Frozen objects are skipped by the collector, so children do not copy their pages.
            gc.collect()
            gc.freeze()

    def run(self, job: Job, timeout: float) -> Result:
        if self.fallback is None and gpu.initialised():
            self._poisoned()
        if self.fallback is not None:
            return self.fallback.run(job, timeout)
        return super().run(job, timeout)

    def _poisoned(self) -> None:
        """Fork no more: a child of this process would fail at its first CUDA call, for the runner's fault."""
        gpu.say_once(
            "warning: %s, so no process forked from it can use CUDA: its jobs start in fresh interpreters"
            " (as --isolation spawn does, slower)" % gpu.initialised()
        )
        if self.spare is not None:
            self._end(self.spare)
            self.spare = None
        self.fallback = SpawnIsolation(self.memory_mb)

    def close(self) -> None:
        super().close()
        if self.fallback is not None:
            self.fallback.close()

    def _ahead(self) -> None:
        if not self.ahead or gpu.initialised():
            return
        try:
            self.spare = self._start()
        except OSError:  # no process to spare now: the next cell forks its own
            self.spare = None

    def _start(self) -> Cell:
        opened: List[int] = []
        log = None
        try:
            for _ in range(4):
                opened.extend(os.pipe())
            log = tempfile.TemporaryFile()
            pid = os.fork()
        except OSError:
            for fd in opened:
                close(fd)
            if log is not None:
                log.close()
            raise
        job_r, job_w, result_r, result_w, notes_r, notes_w, control_r, control_w = opened
        if pid == 0:  # the keeper
            code = 70
            try:
                os.setsid()
                for fd in self.fds | {job_w, result_r, notes_r, control_w}:
                    close(fd)
                log_fd = log.fileno()
                code = keep(lambda: self._cell(job_r, result_w, log_fd), control_r, notes_w, (job_r, result_w, log_fd))
            finally:
                os._exit(code)
        return self._started(pid, opened, log)

    def _cell(self, job_r: int, result_w: int, log: int) -> int:
        job = read_job(job_r)
        if job is None:
            return 0  # the runner ended without a job for this spare
        sys.stdout.flush()
        sys.stderr.flush()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)  # a case does not read the runner's input
        os.dup2(log, 1)
        os.dup2(log, 2)
        close(null)
        close(log)
        limit_memory(self.memory_mb)
        reads.allow()  # this process runs this one job and ends: what its cell reads may be recorded
        framing.write(result_w, run_job(self.work, job))
        return 0


class SpawnIsolation(_Isolation):
    """A fresh interpreter per cell: ``python -m matrix.worker.child`` is its keeper."""

    def __init__(self, memory_mb: Optional[int] = None) -> None:
        super().__init__()
        self.memory_mb = memory_mb

    def run(self, job: Job, timeout: float) -> Result:
        return super().run(dict(job, memory_mb=self.memory_mb), timeout)

    def _start(self) -> Cell:
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        opened: List[int] = []
        try:
            for _ in range(4):
                opened.extend(os.pipe())
            job_r, job_w, result_r, result_w, notes_r, notes_w, control_r, control_w = opened
            theirs = (job_r, result_w, notes_w, control_r)
            command = [sys.executable, "-m", "matrix.worker.child"] + [str(fd) for fd in theirs]
            log = tempfile.TemporaryFile()
            try:
                proc = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                    pass_fds=theirs, start_new_session=True,
                )  # fmt: skip
            except OSError:
                log.close()
                raise
        except OSError:
            for fd in opened:
                close(fd)
            raise
        return self._started(proc.pid, opened, log, proc)


class InlineIsolation:
    """No isolation: cells run in this process. For debugging only."""

    def __init__(self, work: Callable[[Job], Result]) -> None:
        self.work = work

    def run(self, job: Job, timeout: float) -> Result:
        try:
            result = self.work(job)
        except SystemExit as exc:  # a case that exits must not end the run, least of all with status 0
            result = {
                "status": CRASH,
                "exit_code": exc.code if isinstance(exc.code, int) else 1,
                "error_type": "SystemExit",
                "error_message": "the case called sys.exit(%r); without isolation the cell ran in the runner"
                % exc.code,
            }
        result["peak_rss_mb"] = peak_rss_mb()
        return result

    def close(self) -> None:
        pass
