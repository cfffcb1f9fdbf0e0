"""The products: what a run makes on one torch release for another release to use, each declared once.

A product is made by a cell on the release that exported it (the *making* release, ``saved_*`` in its
records) and used by ``export-matrix load`` on another build (``torch_version``, ``variant``, ``python``).
Each declaration says what identifies one (a load's identity, ``schema.LOAD_IDENTITY``: the making and the
using environment, the case, the mode and the ``--with`` set), which job uses it and the kind and keys of
that job's record, the outcomes such a record may hold and which of them tried the product (the others say
nothing of torch: never counted as a failure), what each outcome means, and the promise upstream makes of
it, where it makes one. Every reader of these records (the store, the tables, the report model, the load
batch) walks :data:`PRODUCTS` instead of naming the kinds one by one.

Standard library only, and Python 3.8 syntax: the worker imports this module inside every torch environment.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple, Type, TypeVar

from .errors import UserError
from .options import add_fields, positive_seconds
from .schema import (
    AOTI_COMPILE_KEYS,
    AOTI_COMPILE_KIND,
    AOTI_COMPILE_MEANING,
    AOTI_LOAD_KEYS,
    AOTI_LOAD_KIND,
    AOTI_LOAD_MEANING,
    AOTI_STATUSES,
    AOTI_TRIED,
    LOAD_KEYS,
    LOAD_STATUSES,
    SCHEMA_VERSION,
    LoadStatus,
)
from .stages import AOTI_BUDGET


@dataclass(frozen=True)
class Option:
    """An option of ``load`` that a product declares: its flag (its dashes read as underscores name the request's
    field), its default (False: a switch; a float: seconds above 0), what its help says (``%g`` for a default in
    seconds), and the words it takes where it is a choice."""

    flag: str
    default: Any
    help: str
    choices: Tuple[str, ...] = ()

    @property
    def field(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        if self.choices:
            parser.add_argument(self.flag, choices=self.choices, default=self.default, help=self.help)
        elif self.default is False:
            parser.add_argument(self.flag, action="store_true", help=self.help)
        else:
            parser.add_argument(self.flag, type=float, default=self.default, metavar="S", help=self.help % self.default)

    def check(self, value: Any) -> None:
        """A UserError naming the flag where ``value`` is not one it takes."""
        if self.choices and value not in self.choices:
            raise UserError("%s %s: choose %s" % (self.flag, value, ", ".join(self.choices)))
        if isinstance(self.default, float):
            positive_seconds(self.flag, value)


@dataclass(frozen=True)
class Product:
    """One product (see the module's docstring)."""

    name: str  # the Store's table of its records and the report's name for it: loads, aoti_loads, aoti_compiles
    kind: str  # the kind of the record that says how one use went, and the job kind that makes it (jobs.KINDS)
    keys: Tuple[str, ...]  # every key such a record carries
    statuses: Tuple[str, ...]  # the outcomes a record may hold, in display order
    tried: Tuple[str, ...]  # the outcomes that tried the product: the others say nothing of torch
    meaning: Mapping[str, str]  # what each outcome says of this product
    noun: str  # what one item of the load batch is: "artifact", "package", "program"
    made: str  # what the making release did: "saved", "compiled", "exported"
    used: str  # what the using build did: "loaded", "compiled"
    # The first release whose products upstream promises to be usable on every newer release (backward
    # compatibility); None where upstream promises nothing.
    promised_from: Optional[str] = None
    # The options of ``load`` that make it use this product, and bound each use (``load --aoti``); none: every
    # ``load`` uses it where it is found.
    options: Tuple[Option, ...] = ()
    # The module of matrix.worker whose ``USE`` uses it (``matrix.worker.use.Use``); "": a program's load.
    module: str = ""
    # Its own words in the report (the rest is drawn alike for every product): the title of its part of the
    # saved-programs page, what its uses are called together (a chart's title, a verdict's), one use and many as a
    # count names them, what one use is (its part of that page and of a case's page open with it), the known-issue
    # stage its failures are matched under (records/known_issues.toml), and the phrase of the promise its verdict
    # holds it to ("" for no verdict).
    title: str = ""
    many: str = ""
    counted: Tuple[str, str] = ("use", "uses")
    about: str = ""
    stage: str = "load"
    promise: str = ""
    # The steps a use goes through before its run (a compile's: compile, then the package's load): a square of its
    # shares counts the uses past each, then those that matched, of those tried.
    steps: Tuple[str, ...] = ()
    # The parts of its section of the saved-programs page, in order (matrix/report/artifacts.py draws each).
    parts: Tuple[str, ...] = ("shares", "legend")

    @property
    def table(self) -> str:
        """The report's Parquet table of it."""
        return self.name + ".parquet"


# A program saved with torch.export.save, loaded with torch.export.load on another build (``load`` records).
PROGRAM = Product(
    name="loads", kind="load", keys=LOAD_KEYS, statuses=LOAD_STATUSES,
    tried=tuple(s.value for s in LoadStatus if s.rank is not None), meaning={s.value: s.meaning for s in LoadStatus},
    noun="artifact", made="saved", used="loaded",
    title="Saved programs", many="Saved programs", parts=("reach", "shares", "regressions", "legend"),
    counted=("load of a saved program", "loads of saved programs"),
    about="The exported program, saved with torch.export.save with its inputs and eager's outputs (run --artifacts),"
    " loaded on another release in a process of its own and run on those inputs.",
)  # fmt: skip
# The AOTInductor package a cell's aoti stage compiled from its program, loaded on another build.
PACKAGE = Product(
    name="aoti_loads", kind=AOTI_LOAD_KIND, keys=AOTI_LOAD_KEYS, statuses=LOAD_STATUSES, tried=PROGRAM.tried,
    meaning=AOTI_LOAD_MEANING, noun="package", made="compiled", used="loaded", promised_from="2.6",
    module="aoti_stage",
    title="Compiled packages (AOTInductor) across releases", many="AOTInductor packages", stage="aoti",
    counted=("package load", "package loads"),
    promise="a package compiled on 2.6 or later loads and matches on every newer release",
    parts=("epochs", "promise", "shares", "cases", "legend"),
    about="The AOTInductor package compiled from the exported program (run with --stages …,aoti), loaded on another"
    " release in a process of its own and run on the saved inputs.",
)  # fmt: skip
# Which older releases' programs ``load --aoti`` compiles on the loading one: every one (N releases make about
# N^2/2 compiles), or the newest before it and the oldest of its serializer epoch (about 2N: one step of an
# upgrade, and the widest).
AOTI_FROM = ("all", "nearest-and-oldest")
# A program saved on an older release, compiled with AOTInductor on a newer one (``load --aoti``).
COMPILE = Product(
    name="aoti_compiles", kind=AOTI_COMPILE_KIND, keys=AOTI_COMPILE_KEYS, statuses=AOTI_STATUSES, tried=AOTI_TRIED,
    meaning=AOTI_COMPILE_MEANING, noun="program", made="exported", used="compiled", module="aoti_compiles",
    options=(
        Option(
            "--aoti", False,
            "also compile each program saved on an older release with this release's AOTInductor (a C++ compiler,"
            " g++, is needed), in a process of its own, then load the package in a process that never compiled, run"
            " it on the saved inputs and compare: exported on an older release, compiled on this one. Opt-in: a"
            " compile takes seconds to minutes. Programs saved on this release are the aoti stage of `run`, never"
            " compiled here",
        ),
        Option(
            "--aoti-timeout", AOTI_BUDGET.default,
            "with --aoti: seconds one compile may take, on top of --timeout (default %g): a compile past it is"
            " killed and recorded as that program's timeout",
        ),
        Option(
            "--aoti-from", AOTI_FROM[0],
            "with --aoti: the older releases whose programs are compiled here. all (default): every one;"
            " nearest-and-oldest: the newest release before this one and the oldest saved with the same major"
            " serializer schema version, among those found, so that a matrix of N releases makes about 2N of these"
            " compiles rather than N^2/2",
            choices=AOTI_FROM,
        ),
    ),
    title="Exported on one release, compiled on a newer one", many="AOTInductor compiles", stage="aoti",
    counted=("compile of a saved program", "compiles of saved programs"),
    promise="a program exported on an older release compiles, loads and matches on a newer one",
    steps=("compile", "load"), parts=("shares", "cost", "failures", "legend"),
    about="The exported program saved on one release, compiled with AOTInductor on a newer one (load --aoti), its"
    " package loaded there in a process that never compiled and run on the saved inputs. A square without a"
    " record: that release compiled none of them (load --aoti-from nearest-and-oldest compiles on each release"
    " the programs of the newest older release and of the oldest of its serializer epoch only).",
)  # fmt: skip
PRODUCTS = (PROGRAM, PACKAGE, COMPILE)
OPTIONS = tuple(option for product in PRODUCTS for option in product.options)  # load's, in the products' order
T = TypeVar("T")


def with_options(cls: Type[T]) -> Type[T]:
    """``cls``, before ``dataclass`` makes it one, with a field per product's option of ``load`` (its default)."""
    return add_fields(cls, ((o.field, type(o.default).__name__, o.default) for o in OPTIONS))


def option_values(options: object) -> Dict[str, Any]:
    """Each product's option of ``load`` as ``options`` (a load request) holds it, by field."""
    return {option.field: getattr(options, option.field) for option in OPTIONS}


BY_KIND: Dict[str, Product] = {product.kind: product for product in PRODUCTS}


def keys_of(kind: object) -> Tuple[str, ...]:
    """The keys of a record of product kind ``kind``; a program load's for any other."""
    return BY_KIND.get(str(kind), PROGRAM).keys


def tally(record: Mapping[str, Any]) -> Any:
    """The word a load's summary counts a record under: its status, after what was done where a product's outcomes
    are not the loads' (a compile's ``ok`` is ``compiled ok``)."""
    product = BY_KIND.get(str(record.get("kind")), PROGRAM)
    return record["status"] if product.statuses == PROGRAM.statuses else "%s %s" % (product.used, record["status"])


# Every word of a load's summary, in order (:func:`tally`).
TALLIES = tuple(
    dict.fromkeys(s if p.statuses == PROGRAM.statuses else "%s %s" % (p.used, s) for p in PRODUCTS for s in p.statuses)
)


def planned_record(product: Product, artifact: Any, env: Mapping[str, Any], device: Any) -> Dict[str, Any]:
    """The record of one use of ``product`` made from ``artifact`` (a ``layout.Artifact``) on this build (``env``:
    its torch_version, variant, python and run_id), as far as the parent knows it before the use."""
    record: Dict[str, Any] = {key: None for key in product.keys}
    record.update(
        schema_version=SCHEMA_VERSION, kind=product.kind, run_id=env.get("run_id"),
        saved_torch_version=artifact.saved_torch_version, saved_variant=artifact.saved_variant,
        saved_python=artifact.saved_python, torch_version=env["torch_version"], variant=env["variant"],
        python=env["python"], device=device, case=artifact.case, mode=artifact.mode, artifact=artifact.relative,
        dependency_set=artifact.dependency_set, with_set=artifact.with_set,
    )  # fmt: skip
    return record
