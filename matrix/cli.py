"""export-matrix: run torch.export cases across torch releases and report what works.

Commands that run inside a torch environment (run, cases) need only torch and the
standard library; the others run on the host with pandas and matplotlib.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import List, Optional

from .contract.errors import USAGE
from .contract.options import run_command

# command -> (module, one-line help). Each module defines configure(parser), OPTIONS and
# main(options) -> int; modules are imported only when chosen, so `run` works where only torch is.
COMMANDS = {
    "run": ("matrix.worker.runner", "run the cases in this interpreter's torch and append records to --out"),
    "cases": ("matrix.worker.catalogue", "list the cases with their tags, requirements and expectations"),
    "load": ("matrix.worker.loader", "load programs saved by `run --artifacts` on any release, run and compare them"),
    "gpu-check": (
        "matrix.worker.gpu_check",
        "on a GPU machine: the case set on the CPU, with the GPU hidden, and on CUDA",
    ),
    "check": (
        "matrix.commands.check",
        "run case files (or folders of them) against several torch releases and print a table",
    ),
    "bisect": ("matrix.commands.bisect", "find the first release where a case's status or graph changes"),
    "repro": (
        "matrix.commands.repro",
        "write a standalone script that reproduces a recorded cell's failure without this tool",
    ),
    "report": ("matrix.report.build", "build the Markdown report, tables and charts from record folders"),
    "merge": ("matrix.records.merge", "merge record shards from several machines into one folder"),
    "cache": ("matrix.worker.cache", "show the result cache's size, entries and hit rate, or prune it by age or size"),
}

EPILOG = """\
The whole matrix runs through nox, which installs each torch release in its own
environment and runs `export-matrix run` there:
  nox -s run load report   the quick selection of releases, each loading the programs
                           all of them saved, then the report in reports/local/
  nox -l                every session (tests, unit, lint, check, bisect, publish, ...)

`export-matrix COMMAND --help` describes a command's options. Exit status: 0 done,
1 the answer is no (e.g. bisect found no change), 2 bad input, 3 a release or
environment could not be had.
"""


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        parser = argparse.ArgumentParser(
            prog="export-matrix",
            description=__doc__.splitlines()[0].split(": ", 1)[1],
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub = parser.add_subparsers(dest="command", metavar="COMMAND")
        for name, (_, help_text) in COMMANDS.items():
            sub.add_parser(name, help=help_text, add_help=False)
        parser.parse_args(argv or ["--help"])
        return USAGE
    module_name, description = COMMANDS[argv[0]]
    return run_command("export-matrix " + argv[0], importlib.import_module(module_name), argv[1:], description)


if __name__ == "__main__":
    sys.exit(main())
