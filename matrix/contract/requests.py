"""Typed requests: what the host asks of the worker, turned into the worker's command line and read back.

``RunRequest`` is ``export-matrix run``, ``LoadRequest`` is ``export-matrix load``. A request parses
and writes the options as :mod:`matrix.contract.commands` declares them for the worker's own parser,
so the host never writes a worker flag by hand.

- ``request.argv()``: the options, *without* the command word (``COMMAND`` gives it):
  ``["--out", "results", "--mode", "strict"]``. Only what differs from the parser's defaults is
  written, ``--out`` (and load's folders) always.
- ``Request.from_argv(argv, **defaults)``: the options as a user types them after the command
  word; ``defaults`` stand where ``argv`` says nothing (a required option too). A word the parser
  refuses raises ``RequestError`` with argparse's message; nothing exits.
- ``request.validate()``: the checks the worker makes before it imports torch, with its messages.
  A request is data: building one checks nothing, so that a host can still hand a bad one to the
  worker and let the worker say what is wrong.

Standard library only, Python 3.8 syntax: the worker's copy ships it.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, ClassVar, List, NoReturn, Optional, Sequence, Tuple, Type, TypeVar

from . import products, stages
from .commands import KEY_VARIABLE as KEY_VARIABLE  # the worker's signing reads it from here
from .commands import SOURCES, WARM_UPS, add_load_arguments, add_run_arguments
from .commands import WARM_UP_FROM as WARM_UP_FROM  # the worker's batch reads it from here
from .errors import UserError
from .options import (
    DEFAULT_TIMEOUT_S,
    ISOLATIONS,
    PROGRESS,
    at_least,
    from_namespace,
    memory_mb,
    positive_seconds,
    requirements,
    safe_name,
)
from .schema import MODES

# The words of the options, read by the worker (runner, sources, batch, signing) from here.
# STAGES is the default of --stages; KNOWN_STAGES adds those run only where --stages names them (contract/stages.py).
STAGES, KNOWN_STAGES = stages.DEFAULT, stages.KNOWN


class RequestError(UserError):
    """Words the command's parser refuses; the message is argparse's."""


class _Parser(argparse.ArgumentParser):
    """A parser that raises RequestError where argparse would print usage and exit."""

    def error(self, message: str) -> NoReturn:
        raise RequestError("%s: error: %s" % (self.prog, message))


R = TypeVar("R", bound="_Request")


def _strings(value: Any) -> Optional[Tuple[str, ...]]:
    """A list of words as a tuple; None and an empty list alike as None (the parser's "not given")."""
    return tuple(value) if value else None


class _Request:
    """What RunRequest and LoadRequest share: argv from the parser's own actions, and back."""

    COMMAND: ClassVar[str]

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        raise NotImplementedError

    @classmethod
    def parser(cls, **defaults: Any) -> argparse.ArgumentParser:
        """The command's parser, raising RequestError; ``defaults`` stand in for what argv leaves out."""
        parser = _Parser(prog="export-matrix " + cls.COMMAND, add_help=False)
        cls.add_arguments(parser)
        for action in parser._actions:
            if action.dest in defaults:
                action.required = False
                if not action.option_strings and action.nargs == "+":
                    action.nargs = "*"  # a positional the defaults give: argv may leave it out
        parser.set_defaults(**defaults)
        return parser

    @classmethod
    def from_argv(cls: Type[R], argv: Sequence[str], **defaults: Any) -> R:
        """The request the command's parser reads from ``argv`` (the words after the command word).

        ``defaults`` (field names) fill what ``argv`` does not give; what it gives wins, and
        ``--with`` adds to a default list as it adds to the parser's own.
        """
        unknown = sorted(set(defaults) - {f.name for f in dataclasses.fields(cls)})  # type: ignore[arg-type]
        if unknown:
            raise TypeError("%s.from_argv: unknown fields %s" % (cls.__name__, ", ".join(unknown)))
        defaults = {k: list(v) if isinstance(v, tuple) else v for k, v in defaults.items()}
        return from_namespace(cls, cls.parser(**defaults).parse_args(list(argv)))

    def argv(self) -> List[str]:
        """The words that make the command's parser read this request (without the command word)."""
        words: List[str] = []
        defaults = {f.name: f.default for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        parser = type(self).parser()
        for action in parser._actions:
            if not action.option_strings:  # positionals first: an option of nargs="+" would take them
                words += [str(v) for v in getattr(self, action.dest)]
        done = set()
        for action in parser._actions:
            name = action.dest
            if not action.option_strings or name in done or type(action) is argparse._StoreConstAction:
                continue
            done.add(name)
            value = getattr(self, name)
            if not action.required and value == defaults[name]:
                continue
            flag = action.option_strings[0]
            if isinstance(action, argparse._StoreTrueAction):
                words.append(flag)
            elif isinstance(action, argparse._AppendAction):
                for item in value:
                    words += [flag, str(item)]
            elif action.nargs == "+":
                words += [flag, *(str(v) for v in value)]
            elif isinstance(value, tuple):  # several words in one (``--stages check,aoti``)
                words += [flag, ",".join(value)]
            else:
                words += [flag, str(value)]
        return words

    def command(self) -> List[str]:
        """The command word and argv: what follows ``python -m matrix.worker``."""
        return [self.COMMAND, *self.argv()]


@dataclasses.dataclass(frozen=True)
@stages.with_budgets  # and a field per stage's budget option (``--diagnosis-budget``: ``diagnosis_budget``)
class RunRequest(_Request):
    """``export-matrix run``: the fields of the worker's ``RunOptions``, with the parser's defaults."""

    COMMAND: ClassVar[str] = "run"

    out: str
    cases: Optional[Tuple[str, ...]] = None
    source: str = "cases"
    select: Optional[Tuple[str, ...]] = None
    tag: Optional[Tuple[str, ...]] = None
    mode: str = "both"
    timeout: float = DEFAULT_TIMEOUT_S
    max_memory: int = 8192
    device: str = "cpu"
    variant: Optional[str] = None
    runs: int = 1
    force: bool = False
    isolation: Optional[str] = None
    stages: Tuple[str, ...] = STAGES  # "check,serialize" is read as the parser reads it
    hide_capability: Tuple[str, ...] = ()
    progress: str = "auto"
    warm_up: str = "auto"
    jobs: int = 0
    artifacts: Optional[str] = None
    with_requirements: Tuple[str, ...] = ()
    dependency_set: Optional[str] = None  # "" is torch alone; None: every case
    cache: Optional[str] = None  # the result cache's folder; None: EXPORT_MATRIX_RESULT_CACHE or the default
    no_cache: bool = False
    explain_cache: bool = False

    def __post_init__(self) -> None:
        for name in ("cases", "select", "tag"):
            object.__setattr__(self, name, _strings(getattr(self, name)))
        object.__setattr__(self, "hide_capability", tuple(self.hide_capability or ()))
        object.__setattr__(self, "with_requirements", tuple(self.with_requirements or ()))
        object.__setattr__(self, "stages", stages.parse(self.stages))

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        add_run_arguments(parser)

    @property
    def modes(self) -> Tuple[str, ...]:
        return MODES if self.mode == "both" else (self.mode,)

    @property
    def cell_timeout(self) -> float:
        """What one isolated cell may take: --timeout, and on top the budgets of the selected stages that extend it
        (``Budget.extends_cell``)."""
        return self.timeout + stages.extra_seconds(self.stages, self)

    def validate(self) -> None:
        """The checks ``RunOptions`` makes before torch is imported, with its messages: a UserError, or None."""
        requirements("--with", self.with_requirements)
        wrong = stages.unknown(self.stages)
        if wrong:
            raise UserError(wrong)
        positive_seconds("--timeout", self.timeout)
        for budget in stages.BUDGETS:
            positive_seconds(budget.option, getattr(self, budget.field))
        memory_mb("--max-memory", self.max_memory)
        at_least("--runs", self.runs, 1)
        at_least("--jobs", self.jobs, 0)
        safe_name("--variant", self.variant)
        if self.source not in SOURCES:
            raise UserError("--source %s: choose one of %s" % (self.source, ", ".join(SOURCES)))
        if self.mode not in ("both",) + MODES:
            raise UserError("--mode %s: choose strict, non-strict or both" % self.mode)
        batch_choices(self.isolation, self.progress, self.warm_up)
        if self.tag:
            from .case import TAGS

            unknown = sorted(set(self.tag) - TAGS)
            if unknown:
                raise UserError(
                    "--tag: unknown tag(s) %s; the taxonomy is in matrix/contract/case.py (e.g. %s)"
                    % (", ".join(unknown), ", ".join(sorted(TAGS)[:4]))
                )


@dataclasses.dataclass(frozen=True)
@products.with_options  # and a field per product's option (``contract/products.py``)
class LoadRequest(_Request):
    """``export-matrix load ARTIFACT_DIR...``: the fields of the worker's ``LoadOptions``, the parser's defaults."""

    COMMAND: ClassVar[str] = "load"

    artifacts: Tuple[str, ...]
    out: str
    select: Optional[Tuple[str, ...]] = None
    timeout: float = DEFAULT_TIMEOUT_S
    max_memory: int = 8192
    variant: Optional[str] = None
    force: bool = False
    isolation: Optional[str] = None
    progress: str = "auto"
    jobs: int = 0
    trust: bool = False
    device: str = "cpu"  # the programs saved on this device, loaded and run there
    dependency_set: Optional[str] = None  # "" is torch alone; None: every program
    cache: Optional[str] = None
    no_cache: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "artifacts", tuple(self.artifacts))
        object.__setattr__(self, "select", _strings(self.select))

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        add_load_arguments(parser)

    def validate(self) -> None:
        """The checks ``LoadOptions`` makes before torch is imported, with its messages: a UserError, or None."""
        at_least("--jobs", self.jobs, 0)
        if not self.artifacts:
            raise UserError("ARTIFACT_DIR: give at least one folder written by `run --artifacts`")
        positive_seconds("--timeout", self.timeout)
        for option in products.OPTIONS:
            option.check(getattr(self, option.field))
        memory_mb("--max-memory", self.max_memory)
        safe_name("--variant", self.variant)
        batch_choices(self.isolation, self.progress, "auto")


def batch_choices(isolation: Optional[str], progress: str, warm_up: str) -> None:
    """The choices of a batch's settings, checked once for requests and the engine's Settings alike."""
    if isolation not in (None,) + ISOLATIONS:
        raise UserError("--isolation %s: choose %s" % (isolation, ", ".join(ISOLATIONS)))
    if warm_up not in WARM_UPS:
        raise UserError("--warm-up %s: choose %s" % (warm_up, ", ".join(WARM_UPS)))
    if progress not in PROGRESS:
        raise UserError("--progress %s: choose %s" % (progress, ", ".join(PROGRESS)))


# The options of `run` that `load` reads too, and load's own flags: one `nox -s run load -- ...` passes
# the rest (--mode, --tag, ...) to the run sessions only. --trust and --aoti are load's alone (`nox -s load --
# --aoti`): the run and load sessions of one machine share the signing key, and --stages chooses run's aoti stage.
# --device is both's: the programs a run on a device kept are loaded there.
SHARED_WITH_LOAD = (
    "select", "timeout", "max_memory", "out", "progress", "force", "trust", "cache", "no_cache", "device",
    *(option.field for option in products.OPTIONS),
)  # fmt: skip


def load_words(argv: Sequence[str]) -> List[str]:
    """The words of a ``run`` command line (after the command word) that ``load`` takes: ``SHARED_WITH_LOAD``."""
    parser = argparse.ArgumentParser(add_help=False)
    add_load_arguments(parser)
    takes = {
        flag: action.nargs != 0
        for action in parser._actions
        if action.dest in SHARED_WITH_LOAD
        for flag in action.option_strings
        if flag.startswith("--")
    }
    kept: List[str] = []
    taking = False
    for word in argv:
        if word.startswith("--"):
            taking = takes.get(word, False)
            if word in takes:
                kept.append(word)
        elif taking:
            kept.append(word)
    return kept
