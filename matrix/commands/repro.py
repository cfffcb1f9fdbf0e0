"""``export-matrix repro CELL_ID``: write the standalone script that reproduces a recorded cell's failure.

The cell is looked up in record folders (``results/`` by default), its runs summarised as the
report summarises them; a cell id that several builds recorded (a release and its candidate from
a channel's index share a version) is narrowed with ``--variant``, as other environments are with
``--python`` and ``--with``, and a build run on two devices with ``--device`` (:mod:`matrix.records.repro_lookup`);
the script of a cell run on a GPU moves the case's model and inputs there. The script
(:mod:`matrix.records.repro_script`) inlines its case, read from the file its record names inside
the case folders, and needs only torch to run.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Optional, Tuple

from ..contract import dependencies
from ..contract.options import add_variant, add_with, requirements, safe_name
from ..records import repro, repro_lookup, store
from ..report import case_page
from ..report import repro as report_repro

DEFAULT_RESULTS = "results"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "cell", metavar="CELL_ID", help="the cell, as reports name it: torch-2.13.0+cpu/strict/exportdb/cond_predicate"
    )
    parser.add_argument(
        "--results",
        nargs="+",
        default=[DEFAULT_RESULTS],
        metavar="DIR",
        help="record folders (or .jsonl files) to find the cell in (default %s)" % DEFAULT_RESULTS,
    )
    parser.add_argument("--out", default=None, metavar="FILE", help="write the script here (default: print it)")
    parser.add_argument(
        "--python", default=None, metavar="X.Y", help="the cell's Python, where several environments recorded it"
    )
    add_variant(
        parser,
        "the build's variant, where several builds recorded the cell: a release (cpu) and the candidate of the"
        " same number from a channel's index (test-cpu), say",
    )
    add_with(parser)
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default=None,
        help="the device the cell ran on, where its build ran on the CPU and a GPU (`run --device`)",
    )
    parser.add_argument(
        "--case-root",
        action="append",
        metavar="DIR",
        help="a folder of case files to read the cell's case from, besides the project's cases/ (repeat for several)",
    )


@dataclass(frozen=True)
class ReproOptions:
    """The options of ``export-matrix repro``."""

    cell: str
    results: Tuple[str, ...] = (DEFAULT_RESULTS,)
    out: Optional[str] = None
    python: Optional[str] = None
    with_requirements: Tuple[str, ...] = ()
    case_root: Tuple[str, ...] = ()
    variant: Optional[str] = None
    device: Optional[str] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "results", tuple(self.results))
        safe_name("--variant", self.variant)
        object.__setattr__(self, "with_requirements", requirements("--with", self.with_requirements))
        object.__setattr__(self, "case_root", tuple(self.case_root or ()))


OPTIONS = ReproOptions


def main(options: ReproOptions) -> int:
    where = ", ".join(options.results)
    loaded = store.load(list(options.results))
    narrowing = repro_lookup.Narrowing(
        options.python, dependencies.set_key(options.with_requirements), options.variant, options.device
    )
    cell = repro_lookup.find(loaded.cells, options.cell, where, narrowing, loaded.environments)
    roots = case_page.default_roots() + options.case_root
    text = report_repro.script_for(cell, roots)
    if text is None:
        raise repro.ReproError(
            "%s: its case file %s is not a readable file in the case folders (%s); give the folder that holds it"
            " with --case-root" % (cell.cell_id, cell.case_file, ", ".join(roots))
        )
    if options.out is None:
        sys.stdout.write(text)
        return 0
    with open(options.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print("wrote %s: reproduces %s (%s)" % (options.out, cell.cell_id, repro.reproduces(cell)), file=sys.stderr)
    return 0
