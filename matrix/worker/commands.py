"""The worker's half of the command table: the commands that run inside a torch environment.

``python -m matrix.worker`` offers these; ``export-matrix`` (:mod:`matrix.cli`) offers them beside the host's
(:mod:`matrix.commands`). Each is ``name: (module, one-line help)``; a module defines ``configure(parser)``,
``OPTIONS`` and ``main(options) -> int``. Standard library only: the worker's copy ships it.
"""

from __future__ import annotations

from typing import Dict, Tuple

COMMANDS: Dict[str, Tuple[str, str]] = {
    "run": ("matrix.worker.runner", "run the cases in this interpreter's torch and append records to --out"),
    "cases": ("matrix.worker.catalogue", "list the cases with their tags, requirements and expectations"),
    "load": ("matrix.worker.loader", "load programs saved by `run --artifacts` on any release, run and compare them"),
    "gpu-check": (
        "matrix.worker.gpu_check",
        "on a GPU machine: the case set on the CPU, with the GPU hidden, and on CUDA",
    ),
}
