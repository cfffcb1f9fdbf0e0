"""What the worker's commands show while they work: their own lines, and a bar or a line per item.

The runner's own lines are what the `run` session keeps on the terminal (torch's output
goes to the log), so every message of ``run`` and ``load`` goes through here.
"""

from __future__ import annotations

import os
import sys


def say(line: str) -> None:
    """A line of the runner's own progress, apart from what torch prints."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class Progress:
    """A one-line bar on a terminal, plain lines elsewhere (CI, pipes)."""

    def __init__(self, total: int, style: str) -> None:
        if style == "auto":
            style = "bar" if sys.stderr.isatty() and not os.environ.get("CI") else "lines"
        self.style, self.total, self.done = style, total, 0

    def start(self, cell: str) -> None:
        if self.style == "bar":
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            line = "[%s%s] %d/%d %s" % ("#" * filled, "." * (width - filled), self.done, self.total, cell)
            sys.stderr.write("\r\033[K" + line[:160])
            sys.stderr.flush()

    def finish(self, cell: str, status: str, seconds: float) -> None:
        self.done += 1
        if self.style == "lines":
            sys.stderr.write("[%d/%d] %-14s %6.2fs %s\n" % (self.done, self.total, status, seconds, cell))
            sys.stderr.flush()

    def close(self) -> None:
        if self.style == "bar":
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
