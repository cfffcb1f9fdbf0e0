"""Isolation of cells: each runs in its own process so a crash, hang or leaked state stays there.

``fork`` (the default where available) forks a child from the warm parent, which has
imported torch and exported once, so a cell pays only the fork. The next child is forked
while the current one runs, which hides most of the fork's cost on a machine with two
cores or more. A child's result comes with a length header, so the parent records it
without waiting for the child's address space to be torn down. ``spawn`` starts a fresh
interpreter per cell (slow: it imports torch each time) for platforms without fork.
``inline`` runs cells in this process, without any isolation, for debugging.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Set

from .fingerprint import normalize_text

Job = Dict[str, Any]
Result = Dict[str, Any]
STDERR_TAIL = 4000
# A child's result is a length header and JSON, so the parent has it before the child exits.
_HEADER = struct.Struct("!Q")


def _tail(path: str, limit: int = STDERR_TAIL) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            data = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    # Logs carry absolute paths of the environment (tracebacks torch prints): keep file names only.
    return normalize_text(data) or None


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


def _died(status: int) -> Result:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return {"status": "crash", "exit_code": -sig, "error_type": "signal." + name,
                "error_message": "the cell's process was killed by %s" % name}  # fmt: skip
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    return {"status": "crash", "exit_code": code, "error_type": "SystemExit",
            "error_message": "the cell's process exited with code %d before reporting a result" % code}  # fmt: skip


def _timeout(seconds: float) -> Result:
    return {"status": "timeout", "error_type": "Timeout",
            "error_message": "the cell ran past the %s s timeout and was killed" % seconds}  # fmt: skip


class _Child:
    def __init__(self, pid: int, job_w: int, result_r: int) -> None:
        self.pid, self.job_w, self.result_r = pid, job_w, result_r


class ForkIsolation:
    """Fork-per-cell from a warm parent, keeping one spare child forked ahead."""

    def __init__(self, work: Callable[[Job], Result], memory_mb: Optional[int] = None) -> None:
        self.work = work
        self.memory_mb = memory_mb
        self.logs = tempfile.mkdtemp(prefix="export-matrix-")
        self.spare: Optional[_Child] = None
        self.exiting: List[int] = []  # children that reported and are still tearing down
        # The parent's ends of every child's pipes; a child closes those it inherits.
        self.pipes: Set[int] = set()
        self.count = 0
        # Frozen objects are skipped by the collector, so children do not copy their pages.
        gc.collect()
        gc.freeze()

    def _fork(self) -> _Child:
        job_r, job_w = os.pipe()
        result_r, result_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            for fd in self.pipes | {job_w, result_r}:
                os.close(fd)
            code = 0
            try:
                code = self._child(job_r, result_w)
            finally:
                os._exit(code)
        os.close(job_r)
        os.close(result_w)
        self.pipes.update((job_w, result_r))
        return _Child(pid, job_w, result_r)

    def _close(self, fd: int) -> None:
        os.close(fd)
        self.pipes.discard(fd)

    def _child(self, job_r: int, result_w: int) -> int:
        chunks = []
        while True:
            chunk = os.read(job_r, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        if not chunks:
            return 0  # parent closed without a job: the spare is not needed
        job = json.loads(b"".join(chunks))
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(log, 1)
        os.dup2(log, 2)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        limit_memory(self.memory_mb)
        try:
            result = self.work(job)
        except MemoryError:
            result = {"status": "crash", "error_type": "MemoryError", "error_message": "the cell ran out of memory"}
        except BaseException as exc:  # noqa: B036 - the child must always report
            result = {"status": "crash", "error_type": type(exc).__name__, "error_message": str(exc)[:500]}
        result["peak_rss_mb"] = peak_rss_mb()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()  # os._exit does not flush: keep what the case printed in the log
            except (OSError, ValueError):
                pass
        data = json.dumps(result, default=str).encode("utf-8")
        view = memoryview(_HEADER.pack(len(data)) + data)
        while view:
            written = os.write(result_w, view)
            view = view[written:]
        return 0

    def run(self, job: Job, timeout: float) -> Result:
        self.count += 1
        job = dict(job, log=os.path.join(self.logs, "cell-%d.log" % self.count))
        child = self.spare or self._fork()
        self.spare = None
        os.write(child.job_w, json.dumps(job).encode("utf-8"))
        self._close(child.job_w)
        self.spare = self._fork()
        try:
            result = self._collect(child, timeout)
        finally:
            self._close(child.result_r)
        result["stderr_tail"] = _tail(job["log"])
        try:
            os.unlink(job["log"])
        except OSError:
            pass
        return result

    def _collect(self, child: _Child, timeout: float) -> Result:
        """Read the child's result; a child that has reported is reaped later, not waited for.

        Tearing down a forked address space takes milliseconds; the next cell need not wait.
        """
        self._reap(block=False)
        deadline = time.monotonic() + timeout
        data = bytearray()
        size = None
        while size is None or len(data) < _HEADER.size + size:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(child.pid, signal.SIGKILL)
                os.waitpid(child.pid, 0)
                return _timeout(timeout)
            ready, _, _ = select.select([child.result_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(child.result_r, 1 << 20)
            if not chunk:  # the child exited before reporting in full
                _, status = os.waitpid(child.pid, 0)
                return _died(status)
            data += chunk
            if size is None and len(data) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(data)
        self.exiting.append(child.pid)
        try:
            return dict(json.loads(data[_HEADER.size :]))
        except ValueError:
            return {"status": "crash", "error_type": "ValueError",
                    "error_message": "the cell's process reported an unreadable result"}  # fmt: skip

    def _reap(self, block: bool) -> None:
        for pid in list(self.exiting):
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
            if done or block:
                self.exiting.remove(pid)

    def close(self) -> None:
        if self.spare is not None:
            self._close(self.spare.job_w)
            os.waitpid(self.spare.pid, 0)
            self._close(self.spare.result_r)
            self.spare = None
        self._reap(block=True)
        try:
            os.rmdir(self.logs)
        except OSError:
            pass


class SpawnIsolation:
    """A fresh interpreter per cell: ``python -m matrix.worker.child JOB RESULT``."""

    def __init__(self, memory_mb: Optional[int] = None) -> None:
        self.memory_mb = memory_mb
        self.logs = tempfile.mkdtemp(prefix="export-matrix-")
        self.count = 0

    def run(self, job: Job, timeout: float) -> Result:
        self.count += 1
        base = os.path.join(self.logs, "cell-%d" % self.count)
        with open(base + ".job.json", "w") as f:
            json.dump(dict(job, memory_mb=self.memory_mb), f)
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        command = [sys.executable, "-m", "matrix.worker.child", base + ".job.json", base + ".result.json"]
        with open(base + ".log", "wb") as log:
            proc = subprocess.Popen(command, stdout=log, stderr=log, env=env)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                result = _timeout(timeout)
            else:
                try:
                    with open(base + ".result.json") as f:
                        result = dict(json.load(f))
                except (OSError, ValueError):
                    status = proc.returncode
                    result = _died((-status) if status < 0 else (status << 8))
        result["stderr_tail"] = _tail(base + ".log")
        for suffix in (".job.json", ".result.json", ".log"):
            try:
                os.unlink(base + suffix)
            except OSError:
                pass
        return result

    def close(self) -> None:
        try:
            os.rmdir(self.logs)
        except OSError:
            pass


class InlineIsolation:
    """No isolation: cells run in this process. For debugging only."""

    def __init__(self, work: Callable[[Job], Result]) -> None:
        self.work = work

    def run(self, job: Job, timeout: float) -> Result:
        result = self.work(job)
        result["peak_rss_mb"] = peak_rss_mb()
        return result

    def close(self) -> None:
        pass
