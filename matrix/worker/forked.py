"""A function run in a process forked from this one, with a deadline of its own: where the aoti stage compiles.

An AOTInductor compile can take minutes, hang in the C++ compiler or take all the memory it may.
Run in the cell's own process, any of these would end the cell and lose what its other stages
found. Forked, in a process group of its own, it ends alone: at its deadline the group (the
compiler with it) is killed and the result says ``timeout``; a process that dies (a signal, the
memory limit the cell's process passes down) says ``crash``. The child inherits the exported
program, so nothing is serialized to hand it over; its result comes back as JSON through a pipe.

Where there is no fork, or this process holds a CUDA context that a child could not use (a cell on
``--device cuda``), the function runs in this process, bounded by the cell's own limits.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time
from typing import Any, Callable, Dict, Optional

from ..contract.schema import Status
from . import framing, gpu
from .keeper import flush_output, kill, signal_name

Result = Dict[str, Any]
CRASH, TIMEOUT = Status.CRASH.value, Status.TIMEOUT.value


def run(work: Callable[[], Result], timeout: float) -> Result:
    """``work()``'s result, from a forked child; or ``{"status": "timeout"|"crash", "error_type", "error_message"}``."""
    if not hasattr(os, "fork") or gpu.initialised():
        # A process that holds a CUDA context (a cell on --device cuda) cannot hand it to a child: run here.
        return _guarded(work)
    read_fd, write_fd = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.close(read_fd)
            os.setpgid(0, 0)
            framing.write(write_fd, _guarded(work))
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    try:
        os.setpgid(pid, pid)  # also here, so that the group exists before this process may kill it
    except OSError:  # the child made it first
        pass
    try:
        result = _collect(read_fd, timeout)
    finally:
        os.close(read_fd)
        # Killed before it is reaped: until then its pid, and so its group's id, cannot be another's.
        kill(pid, signal.SIGKILL, group=True)
        _, status = os.waitpid(pid, 0)
    return result if result is not None else _died(status)


def _guarded(work: Callable[[], Result]) -> Result:
    try:
        return work()
    except MemoryError as exc:
        return {"status": CRASH, "error_type": "MemoryError", "error_message": str(exc) or "out of memory"}
    except BaseException as exc:  # noqa: B036 - the child must always report
        return {"status": CRASH, "error_type": type(exc).__name__, "error_message": str(exc)[:500]}
    finally:
        flush_output()


def _collect(fd: int, timeout: float) -> Optional[Result]:
    """The child's result, a timeout, or None where it closed the pipe without a result."""
    deadline = time.monotonic() + timeout
    data = bytearray()
    while not framing.complete(data):
        left = deadline - time.monotonic()
        if left <= 0:
            return {"status": TIMEOUT, "error_type": "Timeout",
                    "error_message": "ran past its %g s limit and was killed" % timeout}  # fmt: skip
        if not select.select([fd], [], [], left)[0]:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return None
        data += chunk
    try:
        result = framing.decode(data)
    except ValueError:
        result = None
    if not isinstance(result, dict):
        return {"status": CRASH, "error_type": "ValueError",
                "error_message": "its process reported an unreadable result"}  # fmt: skip
    return result


def _died(status: int) -> Result:
    """The result of a child that ended without a result: how it ended (its wait status)."""
    if os.WIFSIGNALED(status):
        name = signal_name(os.WTERMSIG(status))
        return {"status": CRASH, "error_type": "signal." + name, "error_message": "its process was killed by %s" % name}
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    return {"status": CRASH, "error_type": "SystemExit",
            "error_message": "its process exited with code %d before reporting a result" % code}  # fmt: skip
