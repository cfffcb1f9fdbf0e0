"""export-matrix: run torch.export cases across torch releases and report what works.

Commands that run inside a torch environment (run, cases) need only torch and the
standard library; the others run on the host with pandas and matplotlib.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import List, Optional

from .errors import USAGE
from .options import run_command

# command -> (module, one-line help). Each module defines configure(parser), OPTIONS and
# main(options) -> int; modules are imported only when chosen, so `run` works where only torch is.
COMMANDS = {
    "run": ("matrix.worker.runner", "run cases in the installed torch and append records to --out"),
    "cases": ("matrix.worker.catalogue", "list the cases with their tags, requirements and expectations"),
    "check": ("matrix.check", "run one case file against several torch releases and print a table"),
    "bisect": ("matrix.bisect", "find the first release where a case's status or graph changes"),
    "report": ("matrix.report.build", "build tables, Markdown and charts from record folders"),
    "merge": ("matrix.records.merge", "merge record shards from several machines into one folder"),
}


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        parser = argparse.ArgumentParser(
            prog="export-matrix",
            description=__doc__.splitlines()[0].split(": ", 1)[1],
            epilog="`export-matrix COMMAND --help` describes a command's options.",
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
