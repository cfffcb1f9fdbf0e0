"""``python -m matrix.worker run|cases ...``: the worker's own entry, inside a torch environment.

It needs the standard library and torch only: environments run it from a copy of the
worker on PYTHONPATH, with nothing of the host side installed.
"""

from __future__ import annotations

import importlib
import sys

from ..contract.options import run_command
from .commands import COMMANDS


def main() -> int:
    from . import gpu

    gpu.prepare()  # before torch is imported: this process forks cells, so it asks NVML, never CUDA
    argv = sys.argv[1:]
    if not argv or argv[0] not in COMMANDS:
        sys.stderr.write("usage: python -m matrix.worker {%s} ...\n" % ",".join(COMMANDS))
        return 2
    module_name, description = COMMANDS[argv[0]]
    return run_command("export-matrix " + argv[0], importlib.import_module(module_name), argv[1:], description)


if __name__ == "__main__":
    sys.exit(main())
