"""The worker's output as the `run` session shows it: the runner's own lines on the terminal, all of it in a log.

torch prints on its own: warnings when it is imported (FutureWarning, "pkg_resources is
deprecated"), messages from its C++ side, nanobind's leak report at exit. They say
nothing about the cells (each cell's own output is in its record's ``stderr_tail``) and
bury the progress lines. So the worker's stdout and stderr go into one pipe: every byte
lands in the log file, and the terminal gets only the lines the runner writes itself,
which have known forms (``RUNNER_LINE``). A pipe, not a terminal, needs no tty: the same
works in CI.
"""

from __future__ import annotations

import collections
import datetime
import os
import re
import sys
import threading
from pathlib import Path
from typing import IO, Deque, List, Optional, Sequence

# The lines the worker's commands (run, load) write themselves, and the one-line errors of matrix/contract/errors.py.
# tests/unit/test_noxfile.py checks every message of batch.py, runner.py, loader.py and progress.py against this list.
RUNNER_LINE = re.compile(
    r"\[\d+/\d+\] "  # a cell ended: "[3/264] pass  1.02s torch-2.4.1/strict/case"
    r"|torch \S+ \(\S+\): (?:\d+ \w+s, |nothing selected)"  # the plan: selected, recorded, to do, the file
    r"|importing torch"
    r"|every \w+ known to the result cache"  # a run answered without importing torch (matrix/worker/cell_cache.py)
    r"|detected the capabilities"
    r"|\w+ \d+ \w+s(?: again)?, (?:\d+|one) at a time"  # "running 264 cells, 2 at a time", "loading ..."
    r"|warming up"
    r"|\d+ \w+s reused from "  # results kept by an earlier run (matrix/worker/reuse.py)
    r"|cache: \S+ runs again: "  # run --explain-cache: why a kept result was not reused
    r"|imported \S+.* once, before forking"  # a case's libraries, imported in the parent
    r"|crash \(the runner died"  # a cell or artifact an earlier, killed run was in
    r"|nothing under .* was saved with "  # a load of one dependency set, which no program was saved with
    r"|left out the programs saved on another device"  # a load of one device (load --device)
    r"|warning: "  # the runner's warnings; Python's own read "FILE:LINE: FutureWarning: ..."
    r"|done: "
    r"|export-matrix \w+: "  # an error or an interrupt
)
# Lines of other output kept for the message of a failed run; the log has all of them.
KEPT_LINES = 20
# How long to wait for the pipe to drain after the worker exits: a process it left behind
# may hold the pipe open, and must not hold the session too.
DRAIN_S = 5.0


def is_runner_line(line: str) -> bool:
    # A progress bar (--progress bar) redraws with \r and an erase sequence: what follows the last \r shows.
    text = line.rsplit("\r", 1)[-1].replace("\x1b[K", "")
    return RUNNER_LINE.match(text) is not None


def log_path(out: Path, name: str) -> Path:
    """The log of one environment's runs: ``OUT/logs/torch-2.5.1_pypi_py3.11.log``."""
    return Path(out) / "logs" / (name + ".log")


class Tee:
    """A pipe to give the worker as stdout and stderr; the log gets all of it, ``terminal`` the runner's lines.

    Use as a context manager around the command: ``fd`` is the pipe's writing end. Each
    run appends to the log after a line naming the time and the command, so a resumed
    run keeps the output of the one that died.
    """

    def __init__(self, path: Path, command: Sequence[str] = (), terminal: Optional[IO[str]] = None) -> None:
        self.path = Path(path)
        self.command = list(command)
        self.terminal = terminal
        self.hidden: Deque[str] = collections.deque(maxlen=KEPT_LINES)
        self.fd: Optional[int] = None
        self._log: Optional[IO[bytes]] = None
        self._thread: Optional[threading.Thread] = None

    def __enter__(self) -> Tee:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.path, "ab")
        when = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
        self._log.write(("=== %s %s\n" % (when, " ".join(self.command))).encode("utf-8"))
        self._log.flush()
        read, self.fd = os.pipe()
        self._thread = threading.Thread(target=self._copy, args=(read, self._log), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop writing: the reader sees the end of the pipe once every process holding it is gone."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self._thread is not None:
            self._thread.join(DRAIN_S)
            self._thread = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def last_lines(self) -> List[str]:
        """The last lines of output that did not reach the terminal (what a failure message shows)."""
        return [line for line in self.hidden if line.strip()]

    def _copy(self, read: int, log: IO[bytes]) -> None:
        try:
            with os.fdopen(read, "rb") as pipe:
                for raw in pipe:
                    log.write(raw)
                    log.flush()  # a user may follow the log while the run goes on
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if is_runner_line(line):
                        terminal = self.terminal or sys.stderr
                        terminal.write(line.rsplit("\r", 1)[-1].replace("\x1b[K", "") + "\n")
                        terminal.flush()
                    else:
                        self.hidden.append(line)
        except (OSError, ValueError):  # the log was closed after DRAIN_S: what is left is lost
            pass
