"""The ``export-matrix`` command line: a dispatcher that imports only the chosen command.

``run`` and ``cases`` must work inside a torch environment where only the worker is
installed (no pandas), so every command's module is imported lazily.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import List, Optional

# command -> (module, one-line help). Each module defines configure(parser) and main(args) -> int.
COMMANDS = {
    "run": ("matrix.worker.runner", "run cases in the installed torch and append records to --out"),
    "cases": ("matrix.worker.catalogue", "list the cases with their tags, requirements and expectations"),
    "report": ("matrix.report.build", "build tables, Markdown and charts from record folders"),
    "merge": ("matrix.records.merge", "merge record shards from several machines into one folder"),
    "check": ("matrix.check", "run one case file against several torch releases and print a table"),
    "bisect": ("matrix.bisect", "find the first release where a case's status or graph changes"),
}


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="export-matrix", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    if not argv or argv[0] not in COMMANDS:
        parser.parse_args(argv or ["--help"])
        return 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    command = argparse.ArgumentParser(prog="export-matrix " + argv[0], description=COMMANDS[argv[0]][1])
    module.configure(command)
    args = command.parse_args(argv[1:])
    return int(module.main(args))


if __name__ == "__main__":
    sys.exit(main())
