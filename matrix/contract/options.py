"""Command options: a frozen dataclass per command, built once from argparse and validated there.

Standard library only, Python 3.8 syntax: the worker's commands use it inside every
torch environment. Internals receive these dataclasses, never an ``argparse.Namespace``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import re
from typing import Any, Iterable, Optional, Sequence, Tuple, Type, TypeVar

from .errors import UserError, report_errors

T = TypeVar("T")

# A name that may become part of a file name: no separator, no "..", no control character.
_SAFE = re.compile(r"[A-Za-z0-9_+\-][A-Za-z0-9._+\-]{0,99}")


def from_namespace(cls: Type[T], namespace: argparse.Namespace, **overrides: Any) -> T:
    """``cls`` filled from the namespace's attributes of the same names (dashes read as underscores)."""
    values = {f.name: getattr(namespace, f.name) for f in dataclasses.fields(cls) if hasattr(namespace, f.name)}  # type: ignore[arg-type]
    values.update(overrides)
    return cls(**values)


def add_fields(cls: Type[T], fields: Iterable[Tuple[str, str, Any]]) -> Type[T]:
    """``cls``, before ``dataclass`` makes it one, with these fields (name, annotation, default) after its own: the
    options declared beside what they bound (a stage's budget, a product's use) rather than with the command."""
    annotations = cls.__dict__.get("__annotations__", {})
    for name, annotation, default in fields:
        annotations[name] = annotation
        setattr(cls, name, default)
    cls.__annotations__ = annotations
    return cls


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


# Seconds one isolated cell or load may take, the same for every command: the case set's
# slowest cells take about 20 s on a 2-core machine, so this leaves room without letting a
# hang hold a whole matrix for long.
DEFAULT_TIMEOUT_S = 120.0
MODE_CHOICES = ("strict", "non-strict", "both")
# What ``--fail-on`` takes (``check``, ``report``): exit 1 when a candidate (a nightly, a release candidate)
# regresses against the newest release, when any cell fails, or never.
FAIL_ON = ("regression", "failing", "never")


def add_timeout(parser: argparse.ArgumentParser, item: str) -> None:
    """``--timeout S``: seconds per isolated ``item`` (a cell, a load)."""
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help="seconds per %s (default %g)" % (item, DEFAULT_TIMEOUT_S),
    )


def add_mode(parser: argparse.ArgumentParser, default: str = "both", both: bool = True) -> None:
    """``--mode``: the export modes; ``both`` only where the command runs both."""
    choices: Sequence[str] = MODE_CHOICES if both else MODE_CHOICES[:2]
    meaning = "export with strict=True, strict=False, or both" if both else "the export mode whose cell is compared"
    parser.add_argument("--mode", choices=choices, default=default, help="%s (default %s)" % (meaning, default))


def add_variant(parser: argparse.ArgumentParser, meaning: str, default: Optional[str] = None) -> None:
    """``--variant NAME``: a wheel variant (``pypi``, ``cpu``, ``cu126``, ...); ``meaning`` says what it picks."""
    parser.add_argument("--variant", default=default, metavar="NAME", help=meaning)


def add_with(parser: argparse.ArgumentParser) -> None:
    """``--with REQUIREMENT``, repeatable: added to every case's PEP 723 dependencies."""
    parser.add_argument(
        "--with",
        dest="with_requirements",
        action="append",
        default=[],
        metavar="REQUIREMENT",
        help="a requirement added to every case's PEP 723 dependencies (repeatable), e.g. transformers==4.57.1",
    )


def requirements(option: str, values: Sequence[str]) -> Tuple[str, ...]:
    """Requirement strings as given, each checked to name a package, else a UserError naming the option."""
    from .dependencies import name_of

    for value in values:
        if not isinstance(value, str) or name_of(value) is None:
            raise UserError("%s %r: give a requirement such as transformers==4.57.1" % (option, value))
    return tuple(values)


def add_limits(parser: argparse.ArgumentParser, item: str) -> None:
    """``--timeout`` and ``--max-memory``: what one isolated ``item`` (a cell, a load) may take."""
    add_timeout(parser, item)
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


ISOLATIONS = ("fork", "spawn", "inline")


def add_batch(parser: argparse.ArgumentParser, item: str, force: str) -> None:
    """The options of a batch of isolated ``item``s (``run``'s cells, ``load``'s artifacts); ``force`` helps --force."""
    add_limits(parser, item)
    parser.add_argument("--force", action="store_true", help=force)
    parser.add_argument(
        "--isolation",
        choices=ISOLATIONS,
        default=None,
        help="fork per %s (default where available), a fresh interpreter per %s, or none (debugging only)"
        % (item, item),
    )
    add_progress(parser, item)
    add_jobs(
        parser,
        "%ss at once, each in its own forked process (default 0: the usable cores,"
        " as many as memory holds at --max-memory each)" % item,
    )


def add_cache(parser: argparse.ArgumentParser, item: str) -> None:
    """``--cache DIR`` and ``--no-cache``: where results are reused from (matrix/worker/reuse.py)."""
    parser.add_argument(
        "--cache",
        metavar="DIR",
        default=None,
        help="reuse %ss recorded before with everything that decides them unchanged, and keep new ones, in DIR"
        " (default: EXPORT_MATRIX_RESULT_CACHE, else the user's cache folder; `off` there turns it off)" % item,
    )
    parser.add_argument("--no-cache", action="store_true", help="run every %s, reusing and keeping nothing" % item)


def run_command(prog: str, module: Any, argv: Sequence[str], description: str) -> int:
    """Parse ``argv`` for a command module and run it; every expected failure is one line and an exit status.

    A command module has ``configure(parser)``, ``OPTIONS`` (its frozen options class, filled by
    :func:`from_namespace` unless it has its own ``from_args(namespace)``) and ``main(options) -> int``.
    """
    parser = argparse.ArgumentParser(prog=prog, description=description)
    module.configure(parser)
    namespace = parser.parse_args(list(argv))
    read = getattr(module.OPTIONS, "from_args", None) or functools.partial(from_namespace, module.OPTIONS)
    return report_errors(prog, lambda: int(module.main(read(namespace))))
