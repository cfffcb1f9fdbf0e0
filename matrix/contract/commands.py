"""The options of the worker's commands, ``export-matrix run`` and ``export-matrix load``, declared once.

The worker's ``configure`` calls ``add_run_arguments`` and ``add_load_arguments``; the typed requests
(:mod:`matrix.contract.requests`) read and write argv through the same declarations, and another command
that passes options on to ``run`` (``check``) takes them from here with ``add_run_options``.

Standard library only, Python 3.8 syntax: the worker's copy ships it.
"""

from __future__ import annotations

import argparse
import copy
from typing import Optional

from . import stages
from .case import EXPORTDB_SOURCE
from .options import add_batch, add_cache, add_mode, add_variant, add_with
from .products import OPTIONS

DEFAULT_STAGES = stages.DEFAULT  # the default of --stages
SOURCES = ("cases", EXPORTDB_SOURCE)
WARM_UPS = ("auto", "always", "never")
# From this many items on, a warm-up in the parent costs less than each forked item paying
# first-use costs itself (benchmarks/overhead.py --warm-up measures the break-even).
WARM_UP_FROM = 6
# Where `load` finds the key that signed the saved programs (matrix/worker/signing.py).
KEY_VARIABLE = "EXPORT_MATRIX_SIGNING_KEY"


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``export-matrix run``."""
    parser.add_argument(
        "--cases", nargs="+", metavar="PATH", default=None, help="case files or folders (default: ./cases)"
    )
    parser.add_argument(
        "--source",
        choices=SOURCES,
        default="cases",
        help="our case files, or the ExportDB examples bundled with the installed torch",
    )
    parser.add_argument(
        "--select",
        nargs="+",
        metavar="GLOB",
        default=None,
        help="keep cells whose case name or cell id matches one of these globs",
    )
    parser.add_argument("--tag", nargs="+", metavar="TAG", default=None, help="keep cases with one of these tags")
    add_mode(parser)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the cases run (default cpu)")
    parser.add_argument("--runs", type=int, default=1, metavar="N", help="repetitions of each cell (default 1)")
    parser.add_argument(
        "--stages",
        default=",".join(DEFAULT_STAGES),
        help="stages after export, comma-separated: %s; default: %s" % (stages.HELP, ",".join(DEFAULT_STAGES)),
    )
    for budget in stages.BUDGETS:  # each stage's own, from its declaration
        help_text = budget.help % budget.default
        parser.add_argument(budget.option, type=float, default=budget.default, metavar="S", help=help_text)
    parser.add_argument(
        "--hide-capability",
        nargs="+",
        metavar="NAME",
        default=[],
        help="treat these capabilities as missing, to preview how older releases report",
    )
    add_batch(parser, "cell", "re-run cells already recorded in --out (and cells a dead run left)")
    add_cache(parser, "cell")
    parser.add_argument(
        "--explain-cache",
        action="store_true",
        help="for each cell that runs again although the result cache was on, say why: what changed since the"
        " cell's latest kept result (a file it read, a variable that steers torch, the torch build), or no entry",
    )
    parser.add_argument(
        "--warm-up",
        choices=WARM_UPS,
        default="auto",
        help="export a tiny model before forking cells: auto does it from %d cells on (default auto)" % WARM_UP_FROM,
    )
    parser.add_argument(
        "--artifacts",
        metavar="DIR",
        default=None,
        help="keep each passing cell's saved program, inputs and eager outputs under DIR, for `load` on other releases",
    )
    parser.add_argument(
        "--no-artifacts", dest="artifacts", action="store_const", const=None, help="keep none (default)"
    )
    add_variant(parser, "wheel variant to record (default: from torch's version tag)")
    add_with(parser)
    parser.add_argument(
        "--dependency-set",
        metavar="KEY",
        default=None,
        help='run only the cases whose PEP 723 dependencies are this set ("" for none): what the nox sessions and'
        " `check` pass in each environment they install for a set (default: every case)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the record files")


def add_run_options(parser: argparse.ArgumentParser, **helps: Optional[str]) -> None:
    """``run``'s options on another command, by field name in the order given, declared as ``run`` declares them
    (type, default, choices), each with the help given (None: run's own)."""
    run = argparse.ArgumentParser(add_help=False)
    add_run_arguments(run)
    declared = {action.dest: action for action in run._actions}
    for name, help_text in helps.items():
        action = copy.copy(declared[name])
        action.help = action.help if help_text is None else help_text
        parser._add_action(action)


def add_load_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``export-matrix load`` (and its epilog)."""
    parser.epilog = (
        "Loading a folder of saved programs runs code from it, on every release that loads it. Programs that"
        " `run --artifacts` signed with this machine's key load; others are recorded as untrusted, unless"
        " --trust: give it only for folders you made or trust."
    )
    parser.add_argument(
        "artifacts",
        nargs="+",
        metavar="ARTIFACT_DIR",
        help="folders written by `run --artifacts` (or one release's folder in one)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the record file")
    parser.add_argument(
        "--select",
        nargs="+",
        metavar="GLOB",
        default=None,
        help="keep artifacts whose case name or path (release/mode/case) matches one of these globs",
    )
    parser.add_argument(
        "--trust",
        action="store_true",
        help="load the programs under every ARTIFACT_DIR given even where their signature is missing or made"
        " with another key. Loading a saved program runs code from its folder (torch.export.load unpickles"
        " on some releases), on every release that loads it: give --trust only for folders you made or trust."
        " Without it, a program not signed with this machine's key (%s, else the key file in the user's"
        " cache folder) is recorded as untrusted and not read" % KEY_VARIABLE,
    )
    parser.add_argument(
        "--dependency-set",
        default=None,
        metavar="KEY",
        help="load only the programs saved with this set of packages beside torch (a key as `run` records"
        " it; '' for torch alone), in an environment that has them; the record file is named after the set."
        " The nox load sessions run one load per set. Default: every program",
    )
    parser.add_argument(
        "--device",
        choices=("cpu", "cuda"),
        default="cpu",
        help="load the programs saved on this device (`run --device`) and run them there (default cpu); those"
        " saved on another device are left out, and the command says how many",
    )
    for option in OPTIONS:  # the products' own (``--aoti``), from their declarations
        option.add_to(parser)
    add_variant(parser, "wheel variant to record (default: from torch's version tag)")
    add_batch(parser, "artifact", "load artifacts already recorded in --out again")
    add_cache(parser, "load")
