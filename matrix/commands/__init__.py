"""The host's commands, and the table of every entry point: ``export-matrix`` words and ``python -m`` modules.

``HOST`` is the host's half of ``export-matrix``'s words; the worker keeps its half
(:data:`matrix.worker.commands.COMMANDS`, what ``python -m matrix.worker`` takes), and ``COMMANDS`` joins them
for :mod:`matrix.cli`. ``MODULES`` are the entry points run as ``python -m MODULE``, by the workflow, the nox
sessions, the Action and the worker's own processes. No command is imported here: a command's module is imported
only when it is chosen, so ``export-matrix run`` works where only torch is. This table and
:mod:`matrix.envs.environments` are where the host reaches the worker.
"""

from __future__ import annotations

from typing import Dict, Tuple

from ..worker.commands import COMMANDS as WORKER

HOST: Dict[str, Tuple[str, str]] = {
    "check": (
        "matrix.commands.check",
        "run case files (or folders of them) against several torch releases and print a table",
    ),
    "bisect": ("matrix.commands.bisect", "find the first release, or nightly, where a case's status or graph changes"),
    "repro": (
        "matrix.commands.repro",
        "write a standalone script that reproduces a recorded cell's failure without this tool",
    ),
    "report": ("matrix.report.build", "build the Markdown report, tables and charts from record folders"),
    "merge": ("matrix.records.merge", "merge record shards from several machines into one folder"),
    "cache": ("matrix.worker.cache", "show the result cache's size, entries and hit rate, or prune it by age or size"),
}

COMMANDS: Dict[str, Tuple[str, str]] = {**WORKER, **HOST}  # command -> (module, one-line help), worker's first

MODULES: Dict[str, str] = {
    "matrix": "`export-matrix` itself",
    "matrix.commands.ci": "plan: the CI job matrix from nox's sessions; summary: the run's summary and its verdict",
    "matrix.commands.companion_probe": "probe: the newest version of a library that works with each torch release",
    "matrix.envs.removal": "remove the environments a selection of releases no longer uses",
    "matrix.report.previous": "the published report that is the baseline of the next one (the publish session)",
    "matrix.report.published_site": "the site of a committed report, from its tables (the site session)",
    "matrix.worker": "the worker's own entry inside a torch environment: run, cases, load, gpu-check",
    "matrix.worker.child": "the keeper of one cell in a fresh interpreter (started by the worker, not by hand)",
}
