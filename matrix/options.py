"""Command options: a frozen dataclass per command, built once from argparse and validated there.

Standard library only, Python 3.8 syntax: the worker's commands use it inside every
torch environment. Internals receive these dataclasses, never an ``argparse.Namespace``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
from typing import Any, Optional, Sequence, Type, TypeVar

from .errors import UserError, report_errors

T = TypeVar("T")

# A name that may become part of a file name: no separator, no "..", no control character.
_SAFE = re.compile(r"[A-Za-z0-9_+\-][A-Za-z0-9._+\-]{0,99}")


def from_namespace(cls: Type[T], namespace: argparse.Namespace, **overrides: Any) -> T:
    """``cls`` filled from the namespace's attributes of the same names (dashes read as underscores)."""
    values = {f.name: getattr(namespace, f.name) for f in dataclasses.fields(cls) if hasattr(namespace, f.name)}  # type: ignore[arg-type]
    values.update(overrides)
    return cls(**values)


def positive_seconds(option: str, value: float) -> float:
    """A finite number of seconds above zero, else a UserError naming the option."""
    if not isinstance(value, (int, float)) or math.isnan(value) or math.isinf(value) or value <= 0:
        raise UserError("%s %s: give a finite number of seconds above 0" % (option, value))
    return float(value)


def at_least(option: str, value: int, lowest: int) -> int:
    if value < lowest:
        raise UserError("%s %s: must be at least %d" % (option, value, lowest))
    return value


def safe_name(option: str, value: Optional[str]) -> Optional[str]:
    """A name that becomes part of a record file's name: letters, digits and ``._+-``, no leading dot."""
    if value is not None and not _SAFE.fullmatch(value):
        raise UserError("%s %r: use letters, digits and . _ + - only (at most 100, no leading dot)" % (option, value))
    return value


def is_safe_name(value: object) -> bool:
    return isinstance(value, str) and _SAFE.fullmatch(value) is not None


PROGRESS = ("auto", "bar", "lines", "none")


def add_jobs(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--jobs/-j N``: how many things at once, 0 for the command's default."""
    parser.add_argument("--jobs", "-j", type=int, default=0, metavar="N", help=help_text)


def add_limits(parser: argparse.ArgumentParser, item: str) -> None:
    """``--timeout`` and ``--max-memory``: what one isolated ``item`` (a cell, a load) may take."""
    parser.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds per %s (default 120)" % item)
    parser.add_argument(
        "--max-memory",
        type=int,
        default=8192,
        metavar="MB",
        help="address space a %s may add before it is stopped (default 8192; 0: no limit)" % item,
    )


def memory_mb(option: str, value: int) -> int:
    """Megabytes above 0, or 0 for no limit, else a UserError naming the option."""
    if value < 0:
        raise UserError("%s %d: give megabytes above 0, or 0 for no limit" % (option, value))
    return value


def add_progress(parser: argparse.ArgumentParser, item: str) -> None:
    """``--progress``: a bar on a terminal, a line per ``item``, or nothing."""
    parser.add_argument(
        "--progress",
        choices=PROGRESS,
        default="auto",
        help="a bar on a terminal, a line per %s, or nothing (default: a bar on a terminal, else lines)" % item,
    )


def run_command(prog: str, module: Any, argv: Sequence[str], description: str) -> int:
    """Parse ``argv`` for a command module and run it; every expected failure is one line and an exit status.

    A command module has ``configure(parser)``, ``OPTIONS`` (its frozen options class, with
    ``from_args(namespace)``) and ``main(options) -> int``.
    """
    parser = argparse.ArgumentParser(prog=prog, description=description)
    module.configure(parser)
    namespace = parser.parse_args(list(argv))
    return report_errors(prog, lambda: int(module.main(module.OPTIONS.from_args(namespace))))
