"""Dependency sets: which environments a selection of cases needs on one release, and what cannot be had.

A case's PEP 723 block (``matrix.contract.dependencies``) names what it imports besides torch.
Cases with the same needs share a *set*, and each set of a release has one environment
(``Spec.dependency_set``) with torch pinned to the release's build. What cannot be had is
an answer, not a failure of the run:

- a set the resolver cannot satisfy with this torch build: the set's cells on this release
  are ``not-applicable``, ``missing`` naming the package and the resolver's reason in one line;
- any other install failure (network, a build error): an env-error for that set alone.

A stage that runs with packages of its own (``Stage.requires``: the onnx stage's onnx, onnxscript and
onnxruntime) adds them to each set's environment where a run selects it (:func:`with_stages`), never to the
release's base environment, and a run without it installs none of them. Where they cannot be installed, the
set's own environment serves: said once on stderr, naming the stage and the package, and the cells keep their
export results (the stage records not-applicable).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from ..contract import dependencies, records
from ..contract import stages as declared
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
    stages: Tuple[str, ...] = ()  # the run's --stages: those that run with packages of their own add them

    @property
    def packages(self) -> Tuple[str, ...]:
        """What the selected stages add to every set's environment (:func:`with_stages`)."""
        return declared.requirements(self.stages)


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
    return Plan(group(chosen.values(), request.with_requirements), request.modes, request.stages)


def with_stages(spec: environments.Spec, names: Sequence[str]) -> environments.Spec:
    """The environment a set runs in where a run selects the stages ``names``: the set and the packages those
    stages run with (bounded per release as companions are), an environment of its own; ``spec`` itself where
    they need none."""
    packages = declared.requirements(names)
    if not packages:
        return spec
    return replace(spec, dependency_set=dependencies.set_key((*spec.dependencies, *packages)))


def _missing(spec: environments.Spec, output: str) -> List[str]:
    """The set's packages that the resolver's words name; all of them when it names none."""
    return _named([dependencies.name_of(r) or r for r in spec.dependencies], output)


def _named(names: Sequence[str], output: str) -> List[str]:
    """Those of ``names`` that ``output`` names as words; all of them when it names none."""
    text = output.lower()
    named = [name for name in names if re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(name), text)]
    return named or list(names)


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


# What a stage's packages could not be installed with in this process, (torch build, Python, packages): said once,
# and not tried again for the release's other sets, which would fail alike.
_REFUSED: Set[Tuple[str, str, Tuple[str, ...]]] = set()


def prepare(
    spec: environments.Spec,
    out: Path,
    infos: Sequence[CaseInfo],
    modes: Sequence[str],
    force: bool = False,
    log: environments.Log = environments.log_to_stderr,
    envs: Optional[Path] = None,
    tool: Optional[Installer] = None,
    stages: Sequence[str] = (),
) -> Optional[environments.Environment]:
    """A set's environment; None, with the answer recorded in ``out``, where it cannot be had.

    ``stages``: the run's; where some run with packages of their own, the environment holds them too
    (:func:`with_stages`), or, where they cannot be installed, is the set's own, said once.
    """
    wider = with_stages(spec, stages)
    refusal = (spec.build.torch_version, spec.python, declared.requirements(stages))
    if wider == spec or refusal in _REFUSED:
        return _prepare(spec, out, infos, modes, force, log, envs, tool)
    base = env_errors.prepare_or_record(spec.base, out, envs, tool, log=log)
    if base is None:
        return None  # torch itself cannot be had: the release's env-error says so
    try:
        return environments.prepare(replace(wider, build=base.spec.build), envs, tool, force=force, log=log)
    except InstallError as error:
        own = _prepare(spec, out, infos, modes, force, log, envs, tool)
        if own is not None:  # the set installs alone: what the stages add is what cannot be had
            _REFUSED.add(refusal)
            log(refused(stages, spec, error))
        return own


def refused(names: Sequence[str], spec: environments.Spec, error: InstallError) -> str:
    """The one line that says which stage's packages cannot be installed beside ``spec``'s set, and what the
    cells do without them."""
    named = _named(declared.requirements(names), "%s\n%s" % (error, error.output))
    whose = ",".join(stage.name for stage in declared.selected(names) if set(stage.requires) & set(named))
    why = first_line(records.without_paths(str(error)), limit=300)
    return "--stages %s: %s cannot be installed beside torch %s for Python %s (%s); the cells run without %s, and" \
        " the stage records not-applicable" % (whose, ", ".join(named), spec.build.torch_version, spec.python, why,
                                                "it" if len(named) == 1 else "them")  # fmt: skip


def _prepare(
    spec: environments.Spec,
    out: Path,
    infos: Sequence[CaseInfo],
    modes: Sequence[str],
    force: bool,
    log: environments.Log,
    envs: Optional[Path],
    tool: Optional[Installer],
) -> Optional[environments.Environment]:
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
