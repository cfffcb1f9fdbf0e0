"""``export-matrix run``: run the case set in the installed torch and append records.

This module says what a cell is and how it runs; the batch engine (:mod:`.batch`) imports
torch once, warms up, runs each (case, mode, run) cell in isolation and records it. Records
are flushed one by one, so an interrupted run keeps every finished cell and the next run resumes.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from ..contract import dependencies, layout, records, stages
from ..contract.case import CaseError, CaseInfo, cell_selected
from ..contract.errors import UserError
from ..contract.options import DIAGNOSIS_SHARE, from_namespace
from ..contract.requests import AOTI, RunRequest, add_run_arguments
from ..contract.schema import ARTIFACT_SAVED, CELL_KEYS, STATUSES, Status, cell_id, now
from . import batch, exportdb, gpu, known, reads, reuse
from .aoti_job import FRESH_PACKAGE_LOAD
from .case import missing_for
from .cell_job import FRESH_LOAD, CellJob
from .environment import environment_record, installed_torch_version, variant_of
from .journal import Key
from .progress import say
from .sources import discover_source

WARM_UP_FROM = batch.WARM_UP_FROM
PREIMPORT_VARIABLE = batch.PREIMPORT_VARIABLE


def configure(parser: argparse.ArgumentParser) -> None:
    add_run_arguments(parser)  # one definition, shared with the host's requests (matrix.contract.requests)


@dataclasses.dataclass(frozen=True)
class RunOptions(RunRequest):
    """The options of ``export-matrix run``: a run request, validated before torch is imported."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate()
        object.__setattr__(self, "timeout", float(self.timeout))
        object.__setattr__(self, "diagnosis_budget", float(self.diagnosis_budget))
        object.__setattr__(self, "aoti_timeout", float(self.aoti_timeout))

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> RunOptions:
        return from_namespace(cls, namespace)

    def settings(self, path: str) -> batch.Settings:
        """How the engine runs the cells that go to the record file ``path``."""
        return batch.Settings(
            out=path, timeout=self.cell_timeout, max_memory=self.max_memory, isolation=self.isolation, jobs=self.jobs,
            force=self.force, progress=self.progress, warm_up=self.warm_up, device=self.device,
            cache=reuse.root(self.cache, self.no_cache), explain_cache=self.explain_cache,
        )  # fmt: skip


OPTIONS = RunOptions


def select_cases(infos: Sequence[CaseInfo], tags: Optional[Sequence[str]]) -> List[CaseInfo]:
    """The cases with one of ``tags`` (all cases when none are given); globs apply per cell, in ``plan``."""
    return [info for info in infos if not tags or set(tags) & set(info.tags)]


def plan(
    infos: Sequence[CaseInfo], modes: Sequence[str], runs: int, torch_version: str, select: Optional[Sequence[str]]
) -> List[Tuple[CaseInfo, str, int]]:
    cells = []
    for info in infos:
        for mode in modes:
            if not cell_selected(info.name, cell_id(torch_version, mode, info.name), select):
                continue
            for run in range(runs):
                cells.append((info, mode, run))
    return cells


class CellBatch(batch.Batch):
    """The cells of one run: (case, mode, run) in the installed torch."""

    noun, verb, doing = "cell", "run", "running"
    statuses = STATUSES
    record_keys = CELL_KEYS + stages.keys_of(stages.KNOWN)  # a stage's own only where it ran

    def __init__(self, options: RunOptions, cells: List[Tuple[CaseInfo, str, int]], version: str, variant: str):
        self.options, self.version, self.variant = options, version, variant
        self.cells = {(info.name, mode, run): info for info, mode, run in cells}
        self.env: Dict[str, Any] = {}
        self.found: Dict[str, bool] = {}
        self._installed: Dict[str, Optional[str]] = {}
        # Programs kept only to be loaded again in a fresh process (no --artifacts, or runs after the first).
        self.scratch: Optional[str] = None
        self._load_cache: Optional[reuse.ResultCache] = None  # where a kept program's fresh load is kept
        self.settings: Optional[batch.Settings] = None  # set_up's: the result cache where diagnoses are kept
        self.compiler = ""  # with the aoti stage: the C++ compiler its results were made with, for their key
        # The result cache's view of each cell: the fields of its key, what its process read (reads.Manifest;
        # None where that cannot be trusted) and why a kept result did not stand.
        self.identities: Dict[Key, Dict[str, Any]] = {}
        self.manifests: Dict[Key, Optional[reads.Manifest]] = {}
        self.why: Dict[Key, List[str]] = {}
        self.gpu: Dict[str, Any] = {}  # with --device cuda: the GPU, as NVML names it (gpu.facts)
        self.build: Dict[str, Any] = {}  # the torch build's fields of each cell's key (reuse.build_fields)

    @property
    def follow_ups(self) -> bool:  # type: ignore[override]
        # Each kept program, and each kept package, is loaded again where nothing was exported or compiled.
        return "serialize" in self.options.stages or AOTI in self.options.stages

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
        if "serialize" in options.stages or AOTI in options.stages:
            self.scratch = tempfile.mkdtemp(prefix="export-matrix-programs-")
        if AOTI in options.stages:
            self.compiler = self._set_up_aoti()
        return self.env

    def prepare(self, settings: batch.Settings) -> None:
        """What every cell imports, once before forking them; not where every result is reused."""
        import torch.export  # noqa: F401

        try:  # strict export traces with dynamo: 1.5 s of import that each forked cell would pay again
            import torch._dynamo  # noqa: F401
        except Exception:
            pass
        self.preimport(settings)

    def _known_run(self) -> Optional[Dict[str, Any]]:
        """The options this run's environment record depends on, where a later run may take it from the result
        cache without importing torch (:mod:`.known`); None where it may not: on a GPU, with the aoti stage
        (its compiler is part of each key) or with --artifacts (a reused cell puts its program back)."""
        options = self.options
        if options.device != "cpu" or AOTI in options.stages or options.artifacts:
            return None
        return {
            "device": options.device, "source": options.source, "variant": self.variant,
            "dependency_set": options.dependency_set, "hide_capability": sorted(options.hide_capability),
        }  # fmt: skip

    def _keep_environment(self, settings: batch.Settings) -> None:
        run = self._known_run()
        if not settings.cache or run is None:
            return
        key = known.environment_key(run)
        if key is not None:
            extra = {"environment": self.env, "build": self.build, "found": self.found}
            reuse.ResultCache(settings.cache, known.KIND).put(key, {"kind": known.KIND}, extra)

    def known_set_up(self, settings: batch.Settings, run_id: str) -> Optional[Dict[str, Any]]:
        """``set_up`` from what an earlier run kept of this environment, without importing torch (:mod:`.known`)."""
        run = self._known_run()
        key = known.environment_key(run) if settings.cache and run is not None else None
        entry = reuse.ResultCache(settings.cache, known.KIND).get(key) if settings.cache and key else None
        if entry is None:
            return None
        extra = entry["extra"]
        kept, build, found = extra.get("environment"), extra.get("build"), extra.get("found")
        if not (isinstance(kept, dict) and isinstance(build, dict) and isinstance(found, dict)):
            return None
        self.settings = settings
        self.found, self.build = dict(found), dict(build)
        self.env = dict(kept, run_id=run_id, started_at=now())
        return self.env

    def _set_up_aoti(self) -> str:
        """Import AOTInductor once, before forking (each cell would import it again), and name the compiler."""
        from .aoti import compiler_identity

        try:
            import torch._inductor  # noqa: F401
        except Exception:  # a release that cannot: each cell records why
            pass
        return compiler_identity()

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
            info=info,
            mode=mode,
            device=options.device,
            stages=options.stages,
            found=self.found,
            diagnose_s=DIAGNOSIS_SHARE * options.timeout if "diagnose" in options.stages else 0.0,
            diagnosis_budget_s=options.diagnosis_budget,
            artifacts=options.artifacts if run == 0 else None,  # one program per cell, whatever --runs
            variant=env["variant"],
            scratch=self.scratch,
            dependency_set=record["dependency_set"] or "",
            with_set=record["with_set"] or "",
            cache=self.settings.cache if self.settings is not None else None,
            origin="%s/%s" % (record["torch_version"], record["run_id"]),
            aoti_timeout_s=options.aoti_timeout,
        )
        return batch.Item(key, label, record, job)

    def cache_key(self, item: batch.Item) -> Optional[str]:
        job = _job(item)
        case = reuse.case_fingerprint(exportdb.source_file(job.info))  # a bundled example's file in torch
        if case is None:
            return None
        fields = {
            "kind": "cell", "format": reuse.FORMAT, "worker": reuse.worker_fingerprint(),
            "build": self.build, "variant": job.variant, "device": job.device,
            "capabilities": job.found, "case": job.info.name, "source": job.info.source, "case_hash": case,
            "mode": job.mode, "run": item.key[2], "stages": list(job.stages), "diagnose_s": job.diagnose_s,
            "diagnosis_budget_s": job.diagnosis_budget_s if job.diagnose_s else None,
            "keeps_program": job.artifacts is not None,
            "dependency_set": job.dependency_set, "with_set": job.with_set,
            "environment": reuse.environment_fields(),  # the variables that steer torch, as the run started
        }  # fmt: skip
        if job.device != "cpu":  # a result from one GPU (model, compute capability, driver) never stands for another
            fields["gpu"] = gpu.identity(self.gpu)
        if AOTI in job.stages:  # the stages tell a cell with the stage from one without; the compiler decides it too
            fields["aoti_compiler"] = self.compiler
        self.identities[item.key] = fields
        return reuse.digest(fields)

    def cache_index(self, item: batch.Item) -> str:
        job = _job(item)
        cell = (job.info.source, job.info.name, job.mode, item.key[2], job.device, job.variant, job.with_set)
        return reuse.digest({"kind": "cell", "cell": cell, "dependency_set": job.dependency_set})

    def explain(self, item: batch.Item, cache: reuse.ResultCache) -> List[str]:
        """What changed since this cell's latest kept result: its files, the key's fields, or "no entry"."""
        if item.key in self.why:
            return self.why[item.key]
        last = cache.latest(self.cache_index(item))
        if last is None:
            return ["no entry"]
        identity = last["extra"].get("identity")
        now = self.identities.get(item.key, {})
        if not isinstance(identity, dict):
            return ["the latest entry names no identity"]
        found = reuse.differences(identity, now)
        manifest = last["extra"].get("manifest")
        if reads.valid(manifest):
            found += reads.changed(manifest, exportdb.source_file(_job(item).info), cache.hashes)
        return found or ["the entry does not stand here (its saved program cannot be put back)"]

    def reusable(self, item: batch.Item, entry: Dict[str, Any], cache: reuse.ResultCache) -> bool:
        """A kept result stands where every file its cell read is as it was, and, where it saved a program, where
        that very program is in --artifacts, or can be put there."""
        job = _job(item)
        manifest = entry["extra"].get("manifest")
        if not reads.valid(manifest):
            cache.warn(
                "manifest", "ignoring entries without a readable list of the files their cell read; they run again"
            )
            self.why[item.key] = ["the entry lists no files its cell read"]
            return False
        changed = reads.changed(manifest, exportdb.source_file(job.info), cache.hashes)
        if changed:
            self.why[item.key] = changed
            return False
        if job.artifacts is None or entry["record"].get("artifact") != ARTIFACT_SAVED:
            return True
        folder, meta_sha256 = self._program_folder(item), entry["extra"].get("meta_sha256")
        if not isinstance(meta_sha256, str):
            return False
        if not os.path.exists(folder):
            cache.programs.restore(meta_sha256, folder)  # a fresh machine, a restored cache
        meta, problem = layout.read_meta(folder)
        return (
            meta is not None
            and reuse.file_hash(os.path.join(folder, layout.META)) == meta_sha256
            and layout.verify(folder, meta) is None
        )

    def cache_extra(
        self, item: batch.Item, record: Dict[str, Any], cache: reuse.ResultCache
    ) -> Optional[Dict[str, Any]]:
        job = _job(item)
        manifest = self.manifests.get(item.key)
        if manifest is None:  # not recorded (inline), or not to be trusted: the next run measures it again
            return None
        extra: Dict[str, Any] = {"manifest": manifest, "identity": self.identities.get(item.key)}
        if job.artifacts is None or record.get("artifact") != ARTIFACT_SAVED:
            return extra
        folder = self._program_folder(item)
        meta_sha256 = reuse.file_hash(os.path.join(folder, layout.META))
        if meta_sha256 is None or not cache.programs.keep(meta_sha256, folder):
            return extra  # no program to put back: a later run makes it again
        return dict(extra, meta_sha256=meta_sha256)

    def finished(self, item: batch.Item, result: Dict[str, Any]) -> None:
        """What the cell's process read is its kept result's manifest. A cell that kept its program (and package)
        in --artifacts loaded it fresh: ``load`` on this build reuses that load."""
        manifest = result.pop(reads.READS, None)
        self.manifests[item.key] = manifest if reads.valid(manifest) else None
        load = result.pop(FRESH_LOAD, None)
        package_load = result.pop(FRESH_PACKAGE_LOAD, None)
        cache = self.settings.cache if self.settings is not None else None
        job = item.job
        if not cache or not isinstance(job, CellJob) or job.artifacts is None:
            return
        if item.record.get("artifact") != ARTIFACT_SAVED:
            return
        from .fresh_loads import keep_fresh_load, keep_fresh_package_load
        from .loader import LoadBatch

        if self._load_cache is None:
            self._load_cache = reuse.ResultCache(cache, LoadBatch.noun)  # where `load` looks
        if isinstance(load, dict):
            keep_fresh_load(self._program_folder(item), load, self.env, self._load_cache)
        if isinstance(package_load, dict):
            keep_fresh_package_load(self._program_folder(item), package_load, self.env, self._load_cache, self.compiler)

    def _program_folder(self, item: batch.Item) -> str:
        job = _job(item)
        record = item.record
        root = job.artifacts or ""
        return layout.artifact_folder(
            root, record["torch_version"], job.variant, record["python"], job.mode, job.info.name, job.with_set
        )

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
        say(
            "warming up (%s, so that forked cells time their case, not first use)..."
            % (
                "one non-strict export: a strict one would initialise CUDA"
                if cuda_possible
                else "one export in each mode"
            )
        )
        problem = warm_up(self.found, cuda_possible)
        if problem:
            say("warning: the warm-up export failed (%s); timings of the first cells include warm-up" % problem)


def _job(item: batch.Item) -> CellJob:
    assert isinstance(item.job, CellJob), item.job  # the engine asks about items that have a job only
    return item.job


def needs(info: CaseInfo, options: RunOptions) -> str:
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


def cases_of(options: RunOptions) -> List[CaseInfo]:
    """The cases of --cases/--source with one of --tag, read without running them (the sessions plan with it too)."""
    try:
        infos = discover_source(options.source, list(options.cases) if options.cases else None)
    except CaseError as exc:
        raise UserError(str(exc))
    return select_cases(infos, list(options.tag) if options.tag else None)


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
    if options.artifacts or "serialize" in options.stages or AOTI in options.stages:
        from .signing import signing_key

        signing_key()  # every kept program is signed: a key that cannot be had is bad input, said once
    settings = options.settings(record_path(options, version, variant))
    cell_batch = CellBatch(options, cells, version, variant)
    with batch.dies_cleanly():  # SIGTERM too leaves no program or socket behind
        try:
            return batch.execute(cell_batch, settings, version, variant)
        finally:
            if cell_batch.scratch:
                shutil.rmtree(cell_batch.scratch, ignore_errors=True)


def main(options: RunOptions) -> int:
    sys.stderr.write(batch.summary(execute(options), STATUSES, "nothing to run") + "\n")
    return 0
