"""Processes that have never exported: where a cell's saved program is loaded again, as a user would.

Exporting can leave state in a process that loading then relies on: a higher-order op set up by
tracing, a registration made by a pass. A program that loads in the process that exported it
may not load anywhere else, so a cell's save/load outcome is what a process that never exported
sees. The runner's parent and its lanes have exported (the warm-up), so the engine forks a
server before the warm-up, with torch imported and nothing exported; each job sent to it runs
in a process forked from it (a handler per connection, running the job in the usual fork
isolation: its timeout, memory limit and crash handling).

Unix only (fork and Unix sockets); elsewhere the engine's spawn isolation starts a fresh
interpreter per job, which is fresh already. Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import gc
import os
import shutil
import signal
import socket
import sys
import tempfile
from typing import Any, Dict, Optional, Sequence

from ..contract.schema import Status
from . import first_use, framing
from .jobs import work
from .lanes import die_with_parent

Result = Dict[str, Any]


# A Unix socket's path must fit in about 100 bytes (108 on Linux, 104 on macOS, with the final NUL).
MAX_SOCKET_PATH = 100


def _private_folder() -> str:
    """A new folder only this user can enter, for the socket: under the temporary folder, or /tmp
    where that path is too long for a socket."""
    folder = tempfile.mkdtemp(prefix="export-matrix-fresh-")
    if len(os.path.join(folder, "socket")) <= MAX_SOCKET_PATH or not os.path.isdir("/tmp"):
        return folder
    os.rmdir(folder)
    return tempfile.mkdtemp(prefix="export-matrix-fresh-", dir="/tmp")


class Server:
    """A process forked now (before any export in this process) that runs jobs sent to ``address``.

    ``libraries``: requirements beside torch that the jobs' programs were saved with; the server
    imports them once, as a user's process that loads such a program does, so that each job
    does not pay their import again.
    """

    def __init__(self, memory_mb: Optional[int], libraries: Sequence[str] = ()) -> None:
        self.folder = _private_folder()
        self.address = os.path.join(self.folder, "socket")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.address)
        listener.listen(64)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                die_with_parent()
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle
                if libraries:
                    from ..contract.dependencies import preimport

                    preimport(libraries)
                first_use.load()
                gc.collect()
                gc.freeze()  # once: each job's processes share these pages instead of copying them
                _serve(listener, memory_mb)
            except BaseException:
                code = 70
            finally:
                os._exit(code)
        listener.close()
        self.pid: Optional[int] = pid

    def stop(self) -> None:
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            self.pid = None
        shutil.rmtree(self.folder, ignore_errors=True)


def _serve(listener: socket.socket, memory_mb: Optional[int]) -> None:
    while True:
        connection, _ = listener.accept()
        _reap()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                die_with_parent()
                listener.close()
                _handle(connection, memory_mb)
            except BaseException:
                code = 70
            finally:
                os._exit(code)
        connection.close()


def _reap() -> None:
    """Collect handlers that have ended."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _handle(connection: socket.socket, memory_mb: Optional[int]) -> None:
    from .isolate import ForkIsolation

    request = framing.read(connection.fileno())
    if request is None:
        return
    # One job per handler: no cell forked ahead, and the heap the server froze is not collected again.
    isolation = ForkIsolation(work, memory_mb, ahead=False, freeze=False)
    try:
        result = isolation.run(request["job"], request["timeout"])
        framing.write(connection.fileno(), {"result": result})  # the engine goes on while this one cleans up
    finally:
        isolation.close()


class Client:
    """The engine's side of a :class:`Server`: ``run(job, timeout)`` like any isolation backend."""

    def __init__(self, address: str) -> None:
        self.address = address

    def run(self, job: Dict[str, Any], timeout: float) -> Result:
        message = None
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                connection.connect(self.address)
                framing.write(connection.fileno(), {"job": job, "timeout": timeout})
                message = framing.read(connection.fileno())
        except OSError as exc:
            problem = "%s: %s" % (type(exc).__name__, exc)
        else:
            problem = "it closed the connection without a result"
        if isinstance(message, dict) and isinstance(message.get("result"), dict):
            return message["result"]
        return {
            "status": Status.CRASH.value,
            "error_type": "matrix.worker.pristine.ServerGone",
            "error_message": "the process that runs jobs where nothing was exported failed: %s" % problem,
        }

    def close(self) -> None:
        pass
