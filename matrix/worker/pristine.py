"""Processes that have never exported: where a cell's saved program is loaded again, as a user would.

Exporting can leave state in a process that loading then relies on: a higher-order op set up by
tracing, a registration made by a pass. A program that loads in the process that exported it
may not load anywhere else, so a cell's save/load outcome is what a process that never exported
sees. The runner's parent and its lanes have exported (the warm-up), so the engine forks a
server per lane before the warm-up, with torch imported and nothing exported. A server runs the
jobs sent to it one at a time, each in the usual fork isolation (its timeout, memory limit and
crash handling) with the next job's processes forked ahead while one runs: a fresh load waits
for no fork. Every job's processes are forked from the server itself, which runs nothing but
this loop, so no job sees another's state.

Unix only (fork and Unix sockets); elsewhere the engine's spawn isolation starts a fresh
interpreter per job, which is fresh already. Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import gc
import os
import shutil
import signal
import socket
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence

from ..contract.schema import Status
from . import first_use, framing
from .jobs import work
from .lanes import fork_child

Result = Dict[str, Any]


# Seconds a server may take to end its processes forked ahead when stopped, before it is killed.
STOP_GRACE_S = 5.0
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
    """Processes forked now (before any export in this process) that run jobs sent to ``addresses``: one per lane.

    The first one imports what loads need (and ``libraries``: requirements beside torch that the jobs' programs
    were saved with, as a user's process that loads such a program imports them), freezes its heap, then forks
    the others from itself, so that the imports are paid once. Each serves one address, one job at a time.
    """

    def __init__(self, memory_mb: Optional[int], libraries: Sequence[str] = (), count: int = 1) -> None:
        self.folder = _private_folder()
        self.addresses = [os.path.join(self.folder, str(index)) for index in range(max(1, count))]
        listeners = []
        for address in self.addresses:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(address)
            listener.listen(64)
            listeners.append(listener)

        def first() -> None:
            if libraries:
                from ..contract.dependencies import preimport

                preimport(libraries)
            first_use.load()
            gc.collect()
            gc.freeze()  # once: each job's processes share these pages instead of copying them
            _serve_all(listeners, memory_mb)

        self.pid: Optional[int] = fork_child(first)
        for listener in listeners:
            listener.close()

    def stop(self) -> None:
        """End the servers: each ends its processes forked ahead first; killed where they do not within seconds."""
        if self.pid is not None:
            _end(self.pid)
            self.pid = None
        shutil.rmtree(self.folder, ignore_errors=True)


def _end(pid: int) -> None:
    """SIGTERM to a server, and SIGKILL where it has not ended within STOP_GRACE_S."""
    try:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        while os.waitpid(pid, os.WNOHANG) == (0, 0):
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return
            time.sleep(0.01)
    except OSError:  # gone already
        pass


def _serve_all(listeners: List[socket.socket], memory_mb: Optional[int]) -> None:
    """In the first server: fork one sibling per other listener, serve the first, and end the siblings with it."""
    siblings = []
    signal.signal(signal.SIGTERM, _stop)
    try:
        for at in range(1, len(listeners)):

            def sibling(at: int = at) -> None:
                for other in listeners[:at] + listeners[at + 1 :]:
                    other.close()
                _serve(listeners[at], memory_mb)

            siblings.append(fork_child(sibling))
        for listener in listeners[1:]:
            listener.close()
        _serve(listeners[0], memory_mb)
    finally:
        for pid in siblings:
            _end(pid)


def _serve(listener: socket.socket, memory_mb: Optional[int]) -> None:
    from .isolate import ForkIsolation

    # The heap was frozen by the caller; the first job's processes are forked now, each next one's while one runs.
    isolation = ForkIsolation(work, memory_mb, freeze=False)
    signal.signal(signal.SIGTERM, _stop)
    try:
        isolation.prepare()
        while True:
            connection, _ = listener.accept()
            with connection:
                request = framing.read(connection.fileno())
                if request is None:
                    continue
                result = isolation.run(request["job"], request["timeout"])
                try:
                    framing.write(connection.fileno(), {"result": result})
                except OSError:  # the lane that asked is gone
                    pass
    finally:
        isolation.close()  # ends the processes forked ahead and reaps what remains


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(0)


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
