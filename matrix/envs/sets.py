"""Dependency sets: which environments a selection of cases needs on one release, and what cannot be had.

A case's PEP 723 block (``matrix.contract.dependencies``) names what it imports besides torch.
Cases with the same needs share a *set*, and each set of a release has one environment
(``Spec.dependency_set``) with torch pinned to the release's build. What cannot be had is
an answer, not a failure of the run:

- a set the resolver cannot satisfy with this torch build: the set's cells on this release
  are ``not-applicable``, ``missing`` naming the package and the resolver's reason in one line;
- any other install failure (network, a build error): an env-error for that set alone.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from ..contract import dependencies, records
from ..contract.case import CaseError, CaseInfo, cell_selected, discover
from ..contract.errors import UserError
from ..contract.requests import RunRequest
from ..contract.schema import Status, cell_id, first_line, now
from . import env_errors, environments
from .install import BuildUnavailable, Installer, InstallError


def group(infos: Iterable[CaseInfo], added: Sequence[str] = ()) -> Dict[str, List[CaseInfo]]:
    """The cases of each dependency set (a case's own requirements and ``added``), the base set ("") first."""
    sets: Dict[str, List[CaseInfo]] = {}
    for info in infos:
        sets.setdefault(dependencies.set_key((*info.dependencies, *added)), []).append(info)
    return {key: sets[key] for key in sorted(sets)}


@dataclass(frozen=True)
class Plan:
    """The cases a run selects, grouped by dependency set ("" is torch alone), and its modes."""

    sets: Dict[str, List[CaseInfo]]
    modes: Tuple[str, ...]


def plan(request: RunRequest, torch_version: str) -> Optional[Plan]:
    """What ``export-matrix run`` with this request selects on ``torch_version``, read without running a case.

    The same selection the worker makes (``sources.cases_of`` and ``sources.plan``), each case
    in the set of its own dependencies and every ``--with``. None when the request or the
    case folders cannot be read: the worker then says what is wrong.
    """
    if request.source != "cases":
        return None  # ExportDB's examples need nothing but torch
    try:
        request.validate()
        infos = discover(list(request.cases) if request.cases else ["cases"])
    except (UserError, CaseError):
        return None
    tags = set(request.tag or ())
    chosen: Dict[str, CaseInfo] = {}
    for info in infos:
        if tags and not tags & set(info.tags):
            continue
        for mode in request.modes:
            if cell_selected(info.name, cell_id(torch_version, mode, info.name), request.select):
                chosen.setdefault(info.name, info)
    return Plan(group(chosen.values(), request.with_requirements), request.modes)


def _missing(spec: environments.Spec, output: str) -> List[str]:
    """The set's packages that the resolver's words name; all of them when it names none."""
    names = [dependencies.name_of(r) or r for r in spec.dependencies]
    text = output.lower()
    named = [name for name in names if re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), text)]
    return named or names


def requested(dependency_set: str, info: CaseInfo) -> str:
    """The part of a case's set that ``--with`` added (the record's ``with_set``): what the case does not declare."""
    own = {dependencies.canonical(r) for r in info.dependencies}
    return dependencies.set_key(r for r in dependencies.key_requirements(dependency_set) if r not in own)


def unresolvable_cells(
    spec: environments.Spec, infos: Iterable[CaseInfo], modes: Sequence[str], error: InstallError
) -> List[Dict[str, object]]:
    """``not-applicable`` cell records for a set that cannot be resolved with this torch build."""
    build = spec.build
    missing = _missing(spec, "%s\n%s" % (error, error.output))
    reason = "%s cannot be installed with torch %s: %s" % (
        ", ".join(missing),
        build.torch_version,
        first_line(str(error), limit=400),
    )
    run_id = uuid.uuid4().hex[:12]
    found = []
    for info in infos:
        for mode in modes:
            found.append(
                records.empty_cell(
                    run_id=run_id,
                    env_id=spec.name,
                    cell_id=cell_id(build.torch_version, mode, info.name),
                    torch_version=build.torch_version,
                    variant=build.variant.name,
                    python=spec.python,
                    source=info.source,
                    case=info.name,
                    case_file=info.path,
                    mode=mode,
                    run=0,
                    tags=list(info.tags),
                    requires=list(info.requires),
                    expected=info.expected,
                    dependency_set=spec.dependency_set,
                    with_set=requested(spec.dependency_set, info),
                    status=Status.NOT_APPLICABLE.value,
                    missing=missing,
                    reason="dependencies-unavailable",
                    error_message=records.without_paths(reason),
                    finished_at=now(),
                )  # fmt: skip
            )
    return found


def prepare(
    spec: environments.Spec,
    out: Path,
    infos: Sequence[CaseInfo],
    modes: Sequence[str],
    force: bool = False,
    log: environments.Log = environments.log_to_stderr,
    envs: Optional[Path] = None,
    tool: Optional[Installer] = None,
) -> Optional[environments.Environment]:
    """A set's environment; None, with the answer recorded in ``out``, where it cannot be had."""
    if not spec.dependency_set:
        return env_errors.prepare_or_record(spec, out, envs, tool, force=force, log=log)
    base = env_errors.prepare_or_record(spec.base, out, envs, tool, log=log)
    if base is None:
        return None  # torch itself cannot be had: the release's env-error says so
    spec = replace(spec, build=base.spec.build)  # a channel's word, as the base pinned it: asked once
    try:
        return environments.prepare(spec, envs, tool, force=force, log=log)
    except BuildUnavailable as error:
        # The base installed, so what the resolver refuses is the set with this torch build.
        Path(out).mkdir(parents=True, exist_ok=True)
        cells = unresolvable_cells(spec, infos, modes, error)
        with records.Writer(str(Path(out) / (spec.name + ".jsonl"))) as writer:
            for cell in cells:
                writer.write(cell)
        log("%s: %s" % (spec.name, cells[0]["error_message"] if cells else error))
        return None
    except InstallError as error:  # the network, a build from source: this set alone goes without
        env_errors.record_env_error(spec, out, error, log)
        return None
