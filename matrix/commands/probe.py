"""Run case files in one torch environment and read back their records: what check and bisect share.

The flow is ``probe_cases``: prepare the environment, run the worker once on every case, read
the folder's records, and pick each case's cell in each mode with ``schema.recency``, the one
rule for which of several records wins. ``probe_case`` is that flow for one case.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from ..contract import records
from ..contract.case import CaseInfo, read_info
from ..contract.errors import UserError
from ..contract.requests import RunRequest
from ..contract.schema import recency
from ..envs import environments, sets

Record = Dict[str, Any]


class CaseFileError(UserError):
    """A case file that check or bisect cannot use; the message names it."""


def validate_case(path: str) -> CaseInfo:
    """The case's metadata (its name, what it needs), or CaseFileError naming the file and what is wrong with it."""
    file = Path(path)
    if not file.is_file():
        raise CaseFileError("%s: no such case file" % path)
    if file.suffix != ".py":
        raise CaseFileError("%s: a case file is a Python module (.py)" % path)
    info = read_info(file, file.stem)
    if info.problem:
        raise CaseFileError(info.problem)
    return info


def cases_request(
    cases: Sequence[str],
    modes: Sequence[str],
    out: Path,
    timeout: float,
    verbose: bool = False,
    jobs: int = 0,
    added: Sequence[str] = (),
) -> RunRequest:
    """The worker's ``run`` of case files in ``modes``, every cell run again, their records to ``out``.

    Each file is a root of its own, as ``run --cases FILE...`` reads it: a case is named by its file's
    stem and imports the modules beside it. ``jobs``: cells at once in the worker (0: its default), so
    that releases checked side by side share the cores. ``added``: ``--with`` requirements. The
    environment's variant and dependency set are ``probe_cases``' to fill in.
    """
    return RunRequest(
        out=str(out),
        cases=tuple(cases),
        mode=modes[0] if len(modes) == 1 else "both",
        force=True,
        timeout=timeout,
        progress="lines" if verbose else "none",
        jobs=jobs,
        with_requirements=tuple(added),
    )


def run_case(command: List[str], env: Mapping[str, str], request: RunRequest, verbose: bool = False) -> Optional[str]:
    """Run the worker's ``request``; None when it ran, else what went wrong (its last output line).

    ``command`` runs the worker (``python -m matrix.worker``) and ``env`` is its environment (its
    PYTHONPATH names the worker's copy).
    """
    cells = len(request.modes) * max(1, len(request.cases or ()))
    try:
        done = subprocess.run(
            command + request.command(), capture_output=not verbose, text=True, env=dict(env),
            timeout=request.cell_timeout * cells + 600,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return "the worker did not finish in time"
    if done.returncode == 0:
        return None
    lines = [line for line in ((done.stderr or "") + (done.stdout or "")).splitlines() if line.strip()]
    return "export-matrix run exited with %d%s" % (done.returncode, (": " + lines[-1]) if lines else "")


def read_folder(folder: Path) -> List[Dict[str, Any]]:
    """Every record in a folder's record files."""
    found: List[Dict[str, Any]] = []
    if folder.is_dir():
        for path in records.iter_files(str(folder)):
            found.extend(records.read(path)[0])
    return found


def latest(found: Iterable[Record]) -> Optional[Record]:
    """The record that ``schema.recency`` says wins, whatever the reading order; None for none."""
    return max(found, key=recency, default=None)


def winners(found: Iterable[Record], case: str, modes: Sequence[str]) -> Dict[str, Record]:
    """Each mode's winning cell record of the case; a mode without one is left out."""
    cells: Dict[str, List[Record]] = {mode: [] for mode in modes}
    for record in found:
        if record.get("kind") == "cell" and record.get("case") == case and record.get("mode") in cells:
            cells[record["mode"]].append(record)
    chosen = {mode: latest(candidates) for mode, candidates in cells.items()}
    return {mode: best for mode, best in chosen.items() if best is not None}


@dataclass(frozen=True)
class Probed:
    """What one case left in one environment: each mode's winning cell, or why a mode has none."""

    cells: Mapping[str, Record] = field(default_factory=dict)
    env_error: Optional[Record] = None  # the environment did not install; this record says why
    problem: Optional[str] = None  # the worker did not finish cleanly: its exit status and last line
    environment: Optional[Record] = None  # the worker's environment record: torch, what a set added
    installed: bool = False  # its environment was installed for this probe, not reused

    def cell(self, mode: str) -> Optional[Record]:
        return self.cells.get(mode)


def probe_case(
    spec: Optional[environments.Spec],
    info: CaseInfo,
    request: RunRequest,
    reinstall: bool = False,
    verbose: bool = False,
) -> Probed:
    """``probe_cases`` for one case: what it left in the environment."""
    return probe_cases(spec, [info], request, reinstall, verbose)[info.name]


def probe_cases(
    spec: Optional[environments.Spec],
    infos: Sequence[CaseInfo],
    request: RunRequest,
    reinstall: bool = False,
    verbose: bool = False,
) -> Dict[str, Probed]:
    """Install (or reuse) ``spec``'s environment, or take this interpreter's torch for None, and run the cases
    there in one worker: what each case left, by its name.

    ``request`` (``cases_request``) runs the cases; its ``out`` is the folder the records go to. The
    spec's variant is recorded as given (PyPI's builds of older releases report a local tag,
    ``2.1.2+cu121``, that the worker would otherwise take for the variant), and its
    ``dependency_set`` is the cases' PEP 723 dependencies and ``--with`` (one set for all of them):
    a set the resolver refuses on this release leaves not-applicable cells, other install failures
    an env-error. Where ``request``'s stages run with packages of their own, the environment adds them
    (``sets.with_stages``). Where the environment does not install, only its env-error counts: cells an
    earlier run left in the folder are not this release's answer now.
    """
    folder, modes = Path(request.out), request.modes
    fresh = False
    if spec is None:
        command, env = environments.current_worker()
    else:
        environment = sets.prepare(spec, folder, infos, modes, force=reinstall, stages=request.stages)
        if environment is None:
            return {info.name: _not_installed(read_folder(folder), info, modes) for info in infos}
        command, env, fresh = environment.worker_command(), environment.worker_env(), not environment.reused
        request = replace(request, variant=spec.build.variant.name, dependency_set=spec.dependency_set)
    problem = run_case(command, env, request, verbose)
    found = read_folder(folder)
    environment_record = latest(r for r in found if r.get("kind") == "environment")
    return {
        info.name: Probed(
            winners(found, info.name, modes), problem=problem, environment=environment_record, installed=fresh
        )
        for info in infos
    }


def _not_installed(found: List[Record], info: CaseInfo, modes: Sequence[str]) -> Probed:
    """A case whose environment was not had: its not-applicable cells where the resolver refused its set, else
    the env-error."""
    refused = winners([r for r in found if r.get("reason") == "dependencies-unavailable"], info.name, modes)
    if refused:
        return Probed(cells=refused, environment=None)
    return Probed(env_error=latest(r for r in found if r.get("kind") == "env-error"))
