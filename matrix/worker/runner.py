"""``export-matrix run``: run the case set in the installed torch and append records.

This module says what a cell is and how it runs; the batch engine (:mod:`.batch`) imports
torch once, warms up, runs each (case, mode, run) cell in isolation and records it. Records
are flushed one by one, so an interrupted run keeps every finished cell and the next run resumes.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from ..contract import dependencies, records, stages
from ..contract.case import CaseInfo
from ..contract.errors import UserError
from ..contract.requests import RunRequest
from ..contract.schema import CELL_KEYS, STATUSES, Status, cell_id
from . import batch, exportdb, gpu, reuse, scratch, stage
from .case import missing_for
from .cell_cache import CachedCells
from .cell_job import CellJob
from .environment import environment_record, installed_torch_version, variant_of
from .journal import Key
from .progress import say
from .sources import cases_of, plan

configure = RunRequest.add_arguments  # one definition, shared with the host's requests (matrix.contract.requests)


@dataclasses.dataclass(frozen=True)
class RunOptions(batch.Options, RunRequest):
    """The options of ``export-matrix run``: a run request, validated before torch is imported."""

    SECONDS = ("timeout",) + tuple(budget.field for budget in stages.BUDGETS)

    def settings(self, path: str) -> batch.Settings:
        """How the engine runs the cells that go to the record file ``path``."""
        return batch.Settings(
            out=path, timeout=self.cell_timeout, max_memory=self.max_memory, isolation=self.isolation, jobs=self.jobs,
            force=self.force, progress=self.progress, warm_up=self.warm_up, device=self.device,
            cache=reuse.root(self.cache, self.no_cache), explain_cache=self.explain_cache,
        )  # fmt: skip


OPTIONS = RunOptions


class CellBatch(CachedCells):
    """The cells of one run: (case, mode, run) in the installed torch."""

    noun, verb, doing = "cell", "run", "running"
    statuses = STATUSES
    record_keys = CELL_KEYS + stages.keys_of(stages.KNOWN)  # a stage's own only where it ran

    def __init__(self, options: RunOptions, cells: List[Tuple[CaseInfo, str, int]], version: str, variant: str):
        self.options, self.version, self.variant = options, version, variant
        self.cells = {(info.name, mode, run): info for info, mode, run in cells}
        self.env: Dict[str, Any] = {}
        self.found: Dict[str, bool] = {}
        super().__init__()
        self._installed: Dict[str, Optional[str]] = {}
        # Programs kept only to be loaded again in a fresh process (no --artifacts, or runs after the first).
        self.scratch: Optional[str] = None
        self.settings = None
        self.stage_keys = {}
        self.gpu = {}

    @property
    def follow_ups(self) -> bool:  # type: ignore[override]
        # Each kept program, and each kept package, is loaded again where nothing was exported or compiled.
        return stages.follow_ups(self.options.stages)

    def wanted(self) -> List[Key]:
        return list(self.cells)

    def done(self, path: str) -> Tuple[Set[Key], List[str]]:
        return records.done_keys(path, self.options.device)

    def set_up(self, settings: batch.Settings, run_id: str) -> Optional[Dict[str, Any]]:
        import torch

        from .capabilities import cached_detect

        options = self.options
        self.settings = settings
        self.gpu = gpu.checked(torch, options.device)
        found, cached = cached_detect()
        if not cached:
            say("detected the capabilities of this torch (kept for the next run)")
        hidden = sorted(set(options.hide_capability) - set(found))
        if hidden:
            known = ", ".join(sorted(found))
            raise UserError("--hide-capability: unknown capabilities %s; known: %s" % (hidden, known))
        found.update({name: False for name in options.hide_capability})
        self.found = found
        self.env = environment_record(torch, found, options.device, options.source, run_id, self.variant)
        self.env.update(dependencies.environment_fields(options.dependency_set))
        self.build = reuse.build_fields()
        self._keep_environment(settings)
        if stages.follow_ups(options.stages):
            self.scratch = tempfile.mkdtemp(prefix="export-matrix-programs-")
        self.stage_keys = stage.set_up(options.stages)  # before forking: what each cell would do again
        return self.env

    def prepare(self, settings: batch.Settings) -> None:
        """What every cell imports, once before forking them; not where every result is reused."""
        import torch.export  # noqa: F401

        try:  # strict export traces with dynamo: 1.5 s of import that each forked cell would pay again
            import torch._dynamo  # noqa: F401
        except Exception:
            pass
        self.preimport(settings)

    def libraries(self) -> List[str]:
        declared = {r for info in self.cells.values() for r in info.dependencies}
        return sorted(declared | set(self.options.with_requirements))

    def items(self, keys: Sequence[Key]) -> List[batch.Item]:
        return [self._item(key) for key in keys]

    def _item(self, key: Key) -> batch.Item:
        info, (_, mode, run) = self.cells[key], key
        env, options = self.env, self.options
        record = records.empty_cell(
            run_id=env["run_id"], env_id=env["env_id"], cell_id=cell_id(env["torch_version"], mode, info.name),
            torch_version=env["torch_version"], variant=env["variant"], python=env["python"], device=options.device,
            source=info.source, case=info.name, case_file=info.path, mode=mode, run=run, tags=list(info.tags),
            requires=list(info.requires), expected=info.expected, dependency_set=needs(info, options),
            with_set=dependencies.set_key(options.with_requirements), exportdb_claim=exportdb.claim(info),
            gpu=gpu.label(self.gpu),
        )  # fmt: skip
        record.update({name: None for name in stages.keys_of(options.stages)})  # every cell of such a run has them
        label = record["cell_id"]
        if info.problem:
            record.update(
                status=Status.CASE_ERROR.value,
                failed_stage="load",
                error_type="matrix.worker.case.CaseError",
                error_message=info.problem,
            )
            return batch.Item(key, label, record)
        missing = missing_for(info, mode, self.found)
        if missing:
            lacks = "needs %s, which torch %s lacks" % (", ".join(missing), env["torch_version"])
            record.update(status=Status.NOT_APPLICABLE.value, missing=missing, error_message=lacks)
            return batch.Item(key, label, record)
        absent = self.absent(info)
        if absent:
            record.update(status=Status.NOT_APPLICABLE.value, missing=absent[0], error_message=absent[1])
            return batch.Item(key, label, record)
        job = CellJob(
            info=info, mode=mode, device=options.device, stages=options.stages, found=self.found,
            timeout=options.timeout, budgets=budgets(options),
            artifacts=options.artifacts if run == 0 else None,  # one program per cell, whatever --runs
            variant=env["variant"], scratch=self.scratch, dependency_set=record["dependency_set"] or "",
            with_set=record["with_set"] or "", cache=self.settings.cache if self.settings is not None else None,
            origin="%s/%s" % (record["torch_version"], record["run_id"]),
        )  # fmt: skip
        return batch.Item(key, label, record, job)

    def absent(self, info: CaseInfo) -> Optional[Tuple[List[str], str]]:
        """What of a case's PEP 723 needs this environment lacks: (missing, message), or None."""
        python = dependencies.python_version()
        if info.requires_python and dependencies.python_satisfies(info.requires_python, python) is False:
            needs = "python" + info.requires_python
            return [needs], "needs Python %s; this environment has %s" % (info.requires_python, self.env["python"])
        wanted = (*info.dependencies, *self.options.with_requirements)
        if not wanted:
            return None
        names = sorted(name for name, version in self.installed(wanted).items() if version is None)
        if not names:
            return None
        return names, (
            "needs %s, which this environment does not have: the nox sessions and `check` install a case's"
            " dependencies into an environment of their own" % ", ".join(names)
        )

    def installed(self, requirements: Sequence[str]) -> Dict[str, Optional[str]]:
        todo = [r for r in requirements if dependencies.name_of(r) not in self._installed]
        self._installed.update(dependencies.installed(todo))
        return {name: self._installed.get(name) for name in map(dependencies.name_of, requirements) if name}

    def died(self, item: batch.Item) -> None:
        item.record.update(
            status=Status.CRASH.value,
            reason="runner-killed",
            error_type="matrix.worker.runner.RunnerDied",
            error_message="the runner died while this cell ran (killed by the case or from outside);"
            " recorded as a crash and not run again without --force",
        )

    def warm_up(self) -> None:
        import torch

        from .cell import warm_up

        cuda_possible = gpu.available(torch, self.gpu or None)
        how = (
            "one non-strict export: a strict one would initialise CUDA" if cuda_possible else "one export in each mode"
        )
        say("warming up (%s, so that forked cells time their case, not first use)..." % how)
        problem = warm_up(self.found, cuda_possible)
        if problem:
            say("warning: the warm-up export failed (%s); timings of the first cells include warm-up" % problem)


def budgets(options: RunRequest) -> Dict[str, float]:
    """Each selected stage's budget, by stage name, as its declared option sets it."""
    return {s.name: float(getattr(options, s.budget.field)) for s in stages.selected(options.stages) if s.budget}


def needs(info: CaseInfo, options: RunRequest) -> str:
    """A case's dependency set in this run: its own PEP 723 dependencies and every --with."""
    return dependencies.set_key((*info.dependencies, *options.with_requirements))


def record_path(options: RunOptions, torch_version: str, variant: str) -> str:
    """The record file: one per environment, and one per dependency set beside it."""
    python = "%d.%d" % sys.version_info[:2]
    name = records.env_file_name(torch_version, variant, python)[: -len(".jsonl")]
    chosen = options.dependency_set
    if chosen is None:  # run by hand: the --with set alone names the file, so that two sets do not mix
        chosen = dependencies.set_key(options.with_requirements)
    return os.path.join(options.out, name + dependencies.set_suffix(chosen) + ".jsonl")


def execute(options: RunOptions) -> Dict[str, int]:
    """Run the selected cells; returns counts per status of the cells recorded now."""
    infos = cases_of(options)
    if options.dependency_set is not None:
        infos = [info for info in infos if needs(info, options) == options.dependency_set]
    version = installed_torch_version()
    variant = options.variant or variant_of(version)
    cells = plan(infos, options.modes, options.runs, version, options.select)
    if not cells and options.dependency_set is not None:
        # The sessions run every set a selection may reach; the selection is checked where none is given.
        say("torch %s (%s): nothing selected needs %s" % (version, variant, options.dependency_set or "torch alone"))
        return {}
    if not cells:
        raise UserError(
            "nothing selected: no case of %d matches --select %s --tag %s in --mode %s"
            % (len(infos), " ".join(options.select or ["*"]), " ".join(options.tag or ["*"]), options.mode)
        )
    if options.artifacts or stages.follow_ups(options.stages):
        from .signing import signing_key

        signing_key()  # every kept program is signed: a key that cannot be had is bad input, said once
    settings = options.settings(record_path(options, version, variant))
    cell_batch = CellBatch(options, cells, version, variant)
    with scratch.dies_cleanly():  # SIGTERM too leaves no program or socket behind
        try:
            return batch.execute(cell_batch, settings, version, variant)
        finally:
            if cell_batch.scratch:
                shutil.rmtree(cell_batch.scratch, ignore_errors=True)


def main(options: RunOptions) -> int:
    sys.stderr.write(batch.summary(execute(options), STATUSES, "nothing to run") + "\n")
    return 0
