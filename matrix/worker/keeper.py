"""A cell's keeper, the process between the runner and the cell that does nothing but watch, and the runner's end.

Under ``fork`` and ``spawn`` isolation (:mod:`.isolate`) every cell has two processes, each in a
session of its own:

- the *keeper*, a child of the runner, which does nothing but watch;
- the *cell process*, a child of the keeper, which loads and exports the case.

So a case that signals its process group reaches only its own processes, and one that
signals its parent (``os.kill(os.getppid(), ...)``) reaches the keeper, which reports the
signal instead of dying of it. The keeper reports the cell process's exit status as soon
as it exits, so a grandchild that keeps the result pipe open cannot turn a crash into a
timeout. When the runner ends the cell, or dies, the keeper kills the cell's process group
and, on Linux, every process the cell left behind (the keeper is their subreaper), then
exits. The runner's end (:class:`Cell`, :func:`collect`) judges a cell by what the keeper notes as
much as by the result the cell sends with a length header (:mod:`.framing`), so the runner records it
without waiting for the cell's address space to be torn down.
"""

from __future__ import annotations

import os
import select
import signal
import struct
import subprocess
import sys
import time
from typing import IO, Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..contract.records import without_paths
from ..contract.schema import Status
from . import framing
from .canonical import normalize_text

# The keeper's notes to the runner: (kind, value).
NOTE = struct.Struct("!ii")
CELL_PID, CELL_EXIT, SIGNALLED = 1, 2, 3
Result = Dict[str, Any]
STDERR_TAIL = 4000
CRASH, TIMEOUT = Status.CRASH.value, Status.TIMEOUT.value  # a load records them under the same names


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


def close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def flush_output() -> None:
    """Flush this process's stdout and stderr, where they still can be (``os._exit`` does not)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def kill(pid: int, sig: int, group: bool = False) -> None:
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except OSError:  # gone already, or no longer ours
        pass


def keep(cell: Callable[[], int], control_r: int, notes_w: int, cell_fds: Sequence[int]) -> int:
    """Run ``cell`` in a child process in a new session and watch it until the runner ends the cell.

    Called in the keeper. ``cell_fds`` are the cell's ends of its pipes: the keeper closes
    them, so that the cell's death is seen on them. The keeper notes the cell's pid, its
    wait status when it exits and any signal sent to the keeper; when ``control_r`` is
    closed (the runner ended the cell, or died) it kills what is left and returns.
    """
    prctl(36, 1)  # PR_SET_CHILD_SUBREAPER: the cell's orphans become the keeper's children, to be killed
    watched = (signal.SIGCHLD,) + PARENT_SIGNALS
    # Blocked across the fork, so that a signal sent to either process at once waits for its handler.
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.setsid()
            close(control_r)
            close(notes_w)
            for sig in PARENT_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            signal.set_wakeup_fd(-1)
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
            code = cell()
        finally:
            os._exit(code)
    for fd in cell_fds:
        close(fd)
    _note(notes_w, CELL_PID, pid)
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
                            _note(notes_w, CELL_EXIT, status)
                else:
                    _note(notes_w, SIGNALLED, signum)
        if control_r in ready:
            break
    _kill_descendants(pid)
    return 0


def _wake_only(signum: int, frame: Any) -> None:
    """The wakeup fd carries the signal to the keeper's loop; the handler itself has nothing to do."""


def _note(fd: int, kind: int, value: int) -> None:
    try:
        os.write(fd, NOTE.pack(kind, value))
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


def prctl(option: int, value: int) -> None:
    """Linux's ``prctl(option, value)``; nothing where there is none."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
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
    kill(cell, signal.SIGKILL, group=True)
    while True:
        for child in _children():
            kill(child, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)  # a killed child's own children are re-parented here before it can be reaped
        except ChildProcessError:
            return


# --- the runner's end ------------------------------------------------------------------


def tail(fd: int, limit: int = STDERR_TAIL) -> Optional[str]:
    try:
        size = os.fstat(fd).st_size
        data = os.pread(fd, limit, max(0, size - limit)).decode("utf-8", "replace")
    except OSError:
        return None
    # Logs carry absolute paths of the environment (tracebacks torch prints): keep file names only.
    return without_paths(normalize_text(data)) or None


def signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return str(sig)


def exit_code(status: int) -> int:
    """A wait status as a return code: the exit code, or minus the signal that killed the process."""
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1


def _died(code: int) -> Result:
    if code < 0:
        name = signal_name(-code)
        return {"status": CRASH, "exit_code": code, "error_type": "signal." + name,
                "error_message": "the cell's process was killed by %s" % name}  # fmt: skip
    return {"status": CRASH, "exit_code": code, "error_type": "SystemExit",
            "error_message": "the cell's process exited with code %d before reporting a result" % code}  # fmt: skip


def _parent_signalled(sig: int) -> Result:
    name = signal_name(sig)
    return {"status": CRASH, "error_type": "signal." + name,
            "error_message": "the case sent %s to its parent process; the cell was stopped, the run goes on"
            % name}  # fmt: skip


def _keeper_died(code: Optional[int]) -> Result:
    if code is not None and code < 0:
        name = signal_name(-code)
        error_type, how = "signal." + name, "was killed by " + name
    else:
        error_type, how = "SystemExit", "exited with code %s" % code
    return {"status": CRASH, "exit_code": code, "error_type": error_type,
            "error_message": "the cell's parent process %s: the case signalled its parent or its parent's"
            " process group; the cell was stopped, the run goes on" % how}  # fmt: skip


def timed_out(seconds: float) -> Result:
    return {"status": TIMEOUT, "error_type": "Timeout",
            "error_message": "the cell ran past the %s s timeout and was killed" % seconds}  # fmt: skip


class Cell:
    """The runner's end of one cell: its keeper, the pipes to it and the cell's log."""

    def __init__(
        self, keeper: int, job_w: int, result_r: int, notes_r: int, control_w: int, log: IO[bytes],
        proc: Optional[subprocess.Popen] = None,
    ) -> None:  # fmt: skip
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
        while len(self.notes) >= NOTE.size:
            kind, value = NOTE.unpack_from(self.notes)
            del self.notes[: NOTE.size]
            if kind == CELL_PID:
                self.pid = value
            elif kind == CELL_EXIT:
                self.exit_code = exit_code(value)
            elif kind == SIGNALLED and self.signalled is None:
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
                    self.keeper_code = exit_code(status)
        return self.keeper_code


def ready(fds: List[int], timeout: float) -> List[int]:
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
        if framing.complete(data) or not ready([fd], 0):
            return
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return
        data += chunk


def collect(cell: Cell, timeout: float) -> Result:
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
            return timed_out(timeout)
        readable = ready(watch, left)
        if cell.fd("result") in readable:
            chunk = os.read(cell.fd("result"), 1 << 20)
            if chunk:
                data += chunk
            else:
                watch.remove(cell.fd("result"))
        if cell.fd("notes") in readable and not cell.read_notes():
            watch.remove(cell.fd("notes"))
