"""export-matrix: run torch.export cases across torch releases and report what works.

Commands that run inside a torch environment (run, cases) need only torch and the
standard library; the others run on the host with pandas and matplotlib.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import List, Optional

from .commands import COMMANDS
from .contract.errors import USAGE
from .contract.options import run_command

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
