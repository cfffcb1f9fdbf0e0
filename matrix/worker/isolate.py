"""Isolation of cells: each runs in its own process so a crash, hang or leaked state stays there.

``fork`` (the default where available) forks from the warm parent, which has imported
torch and exported once, so a cell pays only the fork. The next cell's processes are
forked while the current one runs, which hides most of the fork's cost on a machine with
two cores or more. A child's result comes with a length header, so the parent records it
without waiting for the child's address space to be torn down. ``spawn`` starts a fresh
interpreter per cell (slow: it imports torch each time) for platforms without fork.
``inline`` runs cells in this process, without any isolation, for debugging.

Under ``fork`` and ``spawn`` every cell has two processes, each in a session of its own:

- the *keeper*, a child of the runner, which does nothing but watch;
- the *cell process*, a child of the keeper, which loads and exports the case.

So a case that signals its process group reaches only its own processes, and one that
signals its parent (``os.kill(os.getppid(), ...)``) reaches the keeper, which reports the
signal instead of dying of it. The keeper reports the cell process's exit status as soon
as it exits, so a grandchild that keeps the result pipe open cannot turn a crash into a
timeout. When the runner ends the cell, or dies, the keeper kills the cell's process group
and, on Linux, every process the cell left behind (the keeper is their subreaper), then
exits. Logs go to anonymous temporary files, so a runner killed by a signal leaves no
folder behind.
"""

from __future__ import annotations

import gc
import os
import resource
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from typing import IO, Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..contract.records import without_paths
from ..contract.schema import Status
from . import framing, gpu, reads
from .cell import OUT_OF_MEMORY
from .fingerprint import normalize_text

Job = Dict[str, Any]
Result = Dict[str, Any]
STDERR_TAIL = 4000
CRASH, TIMEOUT = Status.CRASH.value, Status.TIMEOUT.value  # a load records them under the same names
# The keeper's notes to the runner: (kind, value).
_NOTE = struct.Struct("!ii")
_CELL_PID, _CELL_EXIT, _SIGNALLED = 1, 2, 3
# How long the runner waits at the end of a run for keepers to clean up before killing them.
_KEEPER_GRACE_S = 10.0


def _signals(*names: str) -> Tuple[int, ...]:
    found = [getattr(signal, name) for name in names if hasattr(signal, name)]
    if hasattr(signal, "SIGRTMIN") and hasattr(signal, "SIGRTMAX"):
        found.extend(range(signal.SIGRTMIN, signal.SIGRTMAX + 1))
    return tuple(found)


# Signals whose default action would end or stop the keeper. Faults (SIGSEGV, SIGBUS, ...)
# are left out: a handler that returns from a real fault would fault again forever.
PARENT_SIGNALS = _signals(
    "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGABRT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM",
    "SIGPROF", "SIGXCPU", "SIGXFSZ", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGIO", "SIGPWR",
)  # fmt: skip


def _tail(fd: int, limit: int = STDERR_TAIL) -> Optional[str]:
    try:
        size = os.fstat(fd).st_size
        data = os.pread(fd, limit, max(0, size - limit)).decode("utf-8", "replace")
    except OSError:
        return None
    # Logs carry absolute paths of the environment (tracebacks torch prints): keep file names only.
    return without_paths(normalize_text(data)) or None


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


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return str(sig)


def _exit_code(status: int) -> int:
    """A wait status as a return code: the exit code, or minus the signal that killed the process."""
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1


def _died(code: int) -> Result:
    if code < 0:
        name = _signal_name(-code)
        return {"status": CRASH, "exit_code": code, "error_type": "signal." + name,
                "error_message": "the cell's process was killed by %s" % name}  # fmt: skip
    return {"status": CRASH, "exit_code": code, "error_type": "SystemExit",
            "error_message": "the cell's process exited with code %d before reporting a result" % code}  # fmt: skip


def _parent_signalled(sig: int) -> Result:
    name = _signal_name(sig)
    return {"status": CRASH, "error_type": "signal." + name,
            "error_message": "the case sent %s to its parent process; the cell was stopped, the run goes on"
            % name}  # fmt: skip


def _keeper_died(code: Optional[int]) -> Result:
    if code is not None and code < 0:
        name = _signal_name(-code)
        error_type, how = "signal." + name, "was killed by " + name
    else:
        error_type, how = "SystemExit", "exited with code %s" % code
    return {"status": CRASH, "exit_code": code, "error_type": error_type,
            "error_message": "the cell's parent process %s: the case signalled its parent or its parent's"
            " process group; the cell was stopped, the run goes on" % how}  # fmt: skip


def _timeout(seconds: float) -> Result:
    return {"status": TIMEOUT, "error_type": "Timeout",
            "error_message": "the cell ran past the %s s timeout and was killed" % seconds}  # fmt: skip


def _not_started(exc: Optional[BaseException]) -> Result:
    return {"status": CRASH, "error_type": type(exc).__name__,
            "error_message": "the cell's process could not be started: %s" % exc}  # fmt: skip


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _kill(pid: int, sig: int, group: bool = False) -> None:
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except OSError:  # gone already, or no longer ours
        pass


# --- in the cell process ---------------------------------------------------------------


def read_job(fd: int) -> Optional[Job]:
    """The job the runner wrote to ``fd``; None when it closed the pipe without one (an unused spare)."""
    try:
        return framing.read(fd)
    finally:
        _close(fd)


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
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()  # os._exit does not flush: keep what the case printed in the log
        except (OSError, ValueError):
            pass
    return result


def report(fd: int, result: Result) -> None:
    framing.write(fd, result)


# --- in the keeper ---------------------------------------------------------------------


def keep(cell: Callable[[], int], control_r: int, notes_w: int, cell_fds: Sequence[int]) -> int:
    """Run ``cell`` in a child process in a new session and watch it until the runner ends the cell.

    Called in the keeper. ``cell_fds`` are the cell's ends of its pipes: the keeper closes
    them, so that the cell's death is seen on them. The keeper notes the cell's pid, its
    wait status when it exits and any signal sent to the keeper; when ``control_r`` is
    closed (the runner ended the cell, or died) it kills what is left and returns.
    """
    _become_subreaper()
    watched = (signal.SIGCHLD,) + PARENT_SIGNALS
    # Blocked across the fork, so that a signal sent to either process at once waits for its handler.
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.setsid()
            _close(control_r)
            _close(notes_w)
            for sig in PARENT_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
            code = cell()
        finally:
            os._exit(code)
    for fd in cell_fds:
        _close(fd)
    _note(notes_w, _CELL_PID, pid)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    for sig in watched:
        signal.signal(sig, _wake_only)
    signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    while True:
        ready = select.select([control_r, wake_r], [], [])[0]
        if wake_r in ready:
            for signum in sorted(set(os.read(wake_r, 512))):
                if signum == signal.SIGCHLD:
                    for child, status in _reap_exited():
                        if child == pid:
                            _note(notes_w, _CELL_EXIT, status)
                else:
                    _note(notes_w, _SIGNALLED, signum)
        if control_r in ready:
            break
    _kill_descendants(pid)
    return 0


def _wake_only(signum: int, frame: Any) -> None:
    """The wakeup fd carries the signal to the keeper's loop; the handler itself has nothing to do."""


def _note(fd: int, kind: int, value: int) -> None:
    try:
        os.write(fd, _NOTE.pack(kind, value))
    except OSError:  # the runner has ended the cell and closed its end
        pass


def _reap_exited() -> List[Tuple[int, int]]:
    reaped = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if not pid:
            break
        reaped.append((pid, status))
    return reaped


def _become_subreaper() -> None:
    """Make orphans of the cell children of the keeper, so it can find and kill them (Linux)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _children() -> List[int]:
    """The keeper's child processes: the cell and the orphans it adopted (Linux; elsewhere none)."""
    me = os.getpid()
    try:
        with open("/proc/%d/task/%d/children" % (me, me)) as f:
            return [int(pid) for pid in f.read().split()]
    except OSError:
        pass
    found: List[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[1:2] == [str(me)]:
                found.append(int(entry))
    return found


def _kill_descendants(cell: int) -> None:
    _kill(cell, signal.SIGKILL, group=True)
    while True:
        for child in _children():
            _kill(child, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)  # a killed child's own children are re-parented here before it can be reaped
        except ChildProcessError:
            return


# --- in the runner ---------------------------------------------------------------------


class _Cell:
    """The runner's end of one cell: its keeper, the pipes to it and the cell's log."""

    def __init__(
        self,
        keeper: int,
        job_w: int,
        result_r: int,
        notes_r: int,
        control_w: int,
        log: IO[bytes],
        proc: Optional[subprocess.Popen] = None,
    ) -> None:
        self.keeper, self.log, self.proc = keeper, log, proc
        self.fds: Dict[str, Optional[int]] = {
            "job": job_w, "result": result_r, "notes": notes_r, "control": control_w,
        }  # fmt: skip
        self.pid: Optional[int] = None  # the cell process, which leads its process group
        self.exit_code: Optional[int] = None
        self.signalled: Optional[int] = None
        self.notes = bytearray()
        self.keeper_code: Optional[int] = None
        self.tail: Optional[str] = None
        self.ended = False

    def fd(self, name: str) -> int:
        fd = self.fds[name]
        assert fd is not None, name
        return fd

    def read_notes(self) -> bool:
        """Read what the keeper noted; False once the keeper has closed its end."""
        chunk = os.read(self.fd("notes"), 4096)
        self.notes += chunk
        while len(self.notes) >= _NOTE.size:
            kind, value = _NOTE.unpack_from(self.notes)
            del self.notes[: _NOTE.size]
            if kind == _CELL_PID:
                self.pid = value
            elif kind == _CELL_EXIT:
                self.exit_code = _exit_code(value)
            elif kind == _SIGNALLED and self.signalled is None:
                self.signalled = value
        return bool(chunk)

    def wait(self, block: bool) -> Optional[int]:
        """The keeper's return code once it has exited (reaping it), else None."""
        if self.keeper_code is None:
            if self.proc is not None:
                self.keeper_code = self.proc.wait() if block else self.proc.poll()
            else:
                try:
                    pid, status = os.waitpid(self.keeper, 0 if block else os.WNOHANG)
                except ChildProcessError:
                    pid, status = self.keeper, 0
                if pid:
                    self.keeper_code = _exit_code(status)
        return self.keeper_code


def _ready(fds: List[int], timeout: float) -> List[int]:
    return select.select(fds, [], [], max(0.0, timeout))[0]


def _parse(data: bytearray) -> Result:
    try:
        return dict(framing.decode(data))
    except (ValueError, TypeError):
        return {"status": CRASH, "error_type": "ValueError",
                "error_message": "the cell's process reported an unreadable result"}  # fmt: skip


def _drain(fd: int, data: bytearray) -> None:
    """Read what is in the pipe now. Bounded: a grandchild may hold the pipe open and keep writing."""
    for _ in range(64):
        if framing.complete(data) or not _ready([fd], 0):
            return
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return
        data += chunk


def _collect(cell: _Cell, timeout: float) -> Result:
    """The cell's result, or why there is none, judged by what the keeper notes as much as by the pipe."""
    deadline = time.monotonic() + timeout
    data = bytearray()
    watch = [cell.fd("result"), cell.fd("notes")]
    while True:
        if cell.signalled is not None:
            return _parent_signalled(cell.signalled)
        if framing.complete(data):
            return _parse(data)
        if cell.exit_code is not None:
            # What the process wrote before it exited is in the pipe: no need to wait for its end to close.
            if cell.fd("result") in watch:
                _drain(cell.fd("result"), data)
            return _parse(data) if framing.complete(data) else _died(cell.exit_code)
        if cell.fd("notes") not in watch:
            return _keeper_died(cell.wait(block=True))
        left = deadline - time.monotonic()
        if left <= 0:
            return _timeout(timeout)
        ready = _ready(watch, left)
        if cell.fd("result") in ready:
            chunk = os.read(cell.fd("result"), 1 << 20)
            if chunk:
                data += chunk
            else:
                watch.remove(cell.fd("result"))
        if cell.fd("notes") in ready and not cell.read_notes():
            watch.remove(cell.fd("notes"))


class _Isolation:
    """What the fork and spawn backends share: one keeper per cell, ended and reaped by the runner."""

    def __init__(self) -> None:
        self.spare: Optional[_Cell] = None
        self.exiting: List[_Cell] = []  # ended cells whose keepers are still cleaning up
        # The runner's ends of every cell's pipes and logs; a forked keeper closes those it inherits.
        self.fds: Set[int] = set()

    def _start(self) -> _Cell:
        raise NotImplementedError

    def _ahead(self) -> None:
        """Prepare the next cell while this one runs (fork only)."""

    def prepare(self) -> None:
        """Prepare the first cell before it is asked for, as ``run`` prepares each next one (fork only)."""
        if self.spare is None:
            self._ahead()

    def _take_spare(self) -> Optional[_Cell]:
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
            result = _collect(cell, timeout)
        finally:
            self._end(cell)
        result["stderr_tail"] = cell.tail
        return result

    def _launch(self, job: Job) -> Tuple[Optional[_Cell], Optional[BaseException]]:
        data = framing.encode(job)
        failure: Optional[BaseException] = None
        for _ in range(2):  # a spare that died while it waited is replaced once
            cell = self._take_spare()
            try:
                if cell is None:
                    cell = self._start()
                view = memoryview(data)
                while view:
                    view = view[os.write(cell.fd("job"), view) :]
                self._close_fd(cell, "job")
                return cell, None
            except OSError as exc:  # BrokenPipeError: the cell process died before it read its job
                failure = exc
                if cell is not None:
                    self._end(cell)
        return None, failure

    def _close_fd(self, cell: _Cell, name: str) -> None:
        fd = cell.fds[name]
        if fd is not None:
            _close(fd)
            self.fds.discard(fd)
            cell.fds[name] = None

    def _end(self, cell: _Cell) -> None:
        """End a cell: its keeper kills everything the cell started, then exits and is reaped later."""
        if cell.ended:
            return
        cell.ended = True
        notes = cell.fds["notes"]
        if cell.pid is None and notes is not None and _ready([notes], 0):
            cell.read_notes()
        self._close_fd(cell, "control")
        if cell.pid is not None:  # at once, even if the keeper itself is gone or stopped
            _kill(cell.pid, signal.SIGKILL, group=True)
        if cell.keeper_code is None:  # a keeper the case stopped cannot clean up
            _kill(cell.keeper, signal.SIGCONT)
        for name in ("job", "result", "notes"):
            self._close_fd(cell, name)
        cell.tail = _tail(cell.log.fileno())
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
            _kill(cell.keeper, signal.SIGKILL)
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

    def _start(self) -> _Cell:
        opened: List[int] = []
        log = None
        try:
            for _ in range(4):
                opened.extend(os.pipe())
            log = tempfile.TemporaryFile()
            pid = os.fork()
        except OSError:
            for fd in opened:
                _close(fd)
            if log is not None:
                log.close()
            raise
        job_r, job_w, result_r, result_w, notes_r, notes_w, control_r, control_w = opened
        if pid == 0:  # the keeper
            code = 70
            try:
                os.setsid()
                for fd in self.fds | {job_w, result_r, notes_r, control_w}:
                    _close(fd)
                log_fd = log.fileno()
                code = keep(lambda: self._cell(job_r, result_w, log_fd), control_r, notes_w, (job_r, result_w, log_fd))
            finally:
                os._exit(code)
        for fd in (job_r, result_w, notes_w, control_r):
            os.close(fd)
        cell = _Cell(pid, job_w, result_r, notes_r, control_w, log)
        self.fds.update((job_w, result_r, notes_r, control_w, log.fileno()))
        return cell

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
        _close(null)
        _close(log)
        limit_memory(self.memory_mb)
        reads.allow()  # this process runs this one job and ends: what its cell reads may be recorded
        report(result_w, run_job(self.work, job))
        return 0


class SpawnIsolation(_Isolation):
    """A fresh interpreter per cell: ``python -m matrix.worker.child`` is its keeper."""

    def __init__(self, memory_mb: Optional[int] = None) -> None:
        super().__init__()
        self.memory_mb = memory_mb

    def run(self, job: Job, timeout: float) -> Result:
        return super().run(dict(job, memory_mb=self.memory_mb), timeout)

    def _start(self) -> _Cell:
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
                _close(fd)
            raise
        for fd in theirs:
            os.close(fd)
        cell = _Cell(proc.pid, job_w, result_r, notes_r, control_w, log, proc)
        self.fds.update((job_w, result_r, notes_r, control_w, log.fileno()))
        return cell


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
