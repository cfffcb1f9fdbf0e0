"""How a run's cells are kept in the result cache (:mod:`.reuse`) and found again.

A cell's key names everything that decides its result (:meth:`CachedCells.cache_key`); its entry keeps
the manifest of the files its process read (:mod:`.reads`) and, where the cell kept its program in
``--artifacts``, that program, which a reused cell puts back.

A run whose every cell is known is answered from the result cache without importing torch.

Importing torch takes a worker 2 to 5 seconds, and a cell's key names the torch build
(``reuse.build_fields``), so a run that reuses every result used to pay that import only to
compute its keys. Instead, the run that does import torch keeps what it learnt about its
environment (its environment record, the build's fields, the capabilities) in the result cache,
under a key made of what the environment holds on disk (:func:`.known.environment_key`):

- torch's ``version.py`` (its hash, size, time and inode: a reinstall changes them) and the
  capability file kept beside the environment (``capabilities.CACHE_NAME``);
- every installed distribution, as ``environment.packages_hash`` names them for a cell's key;
- the interpreter (``sys.version``, its executable and that file's size and time), the
  environment's folder, the machine (``os.uname``, the CPU model) and the GPUs NVML sees;
- the worker's own sources, the environment variables that steer torch, and the run's
  options that its environment record depends on (device, source, variant, dependency set,
  hidden capabilities).

A later run computes that key first. Where the cache holds it, the run's cells get their keys
from the kept build fields, and where every one of them has a result that stands (the same test
as always: ``Batch.reusable``), the run records them without importing torch. Anything else (a
key not found, one cell not known, a GPU device, the aoti stage, ``--artifacts``) means the
ordinary run, which imports torch and computes every key itself: a doubt costs seconds, never a
stale answer. ``tests/integration/test_known.py`` checks that both ways give the same records.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional

from ..contract import layout, stages
from ..contract.requests import RunRequest
from ..contract.schema import ARTIFACT_SAVED
from . import batch, exportdb, gpu, manifests, reads, reuse
from .cell_job import FRESH_LOAD, CellJob
from .environment import run_fields
from .journal import Key
from .known import ENVIRONMENT_KIND, environment_key
from .load_job import FRESH_PACKAGE_LOAD


class CachedCells(batch.Batch):
    """The result cache's side of a batch of cells (``runner.CellBatch``): the keys, entries and programs."""

    options: RunRequest
    variant: str
    env: Dict[str, Any]  # the environment record (set_up's)
    found: Dict[str, bool]  # the capabilities
    gpu: Dict[str, Any]  # with --device cuda: the GPU, as NVML names it (gpu.facts)
    stage_keys: Dict[str, Any]  # what the selected stages' results depend on besides the cell (stage.set_up)
    settings: Optional[batch.Settings]  # set_up's: the result cache where diagnoses are kept

    def __init__(self) -> None:
        self._load_cache: Optional[reuse.ResultCache] = None  # where a kept program's fresh load is kept
        # The result cache's view of each cell: the fields of its key, what its process read (manifests.Manifest;
        # None where that cannot be trusted) and why a kept result did not stand.
        self.identities: Dict[Key, Dict[str, Any]] = {}
        self.manifests: Dict[Key, Optional[manifests.Manifest]] = {}
        self.why: Dict[Key, List[str]] = {}
        self.build: Dict[str, Any] = {}  # the torch build's fields of each cell's key (reuse.build_fields)

    def _known_run(self) -> Optional[Dict[str, Any]]:
        """The options this run's environment record depends on, where a later run may take it from the result
        cache without importing torch (see the module's docstring); None where it may not: on a GPU, with a stage
        that learns part of each key as torch is imported (a compiler) or with --artifacts (a reused cell puts its
        program back)."""
        options = self.options
        if options.device != "cpu" or stages.needs_set_up(options.stages) or options.artifacts:
            return None
        return {
            "device": options.device, "source": options.source, "variant": self.variant,
            "dependency_set": options.dependency_set, "hide_capability": sorted(options.hide_capability),
        }  # fmt: skip

    def _keep_environment(self, settings: batch.Settings) -> None:
        run = self._known_run()
        if not settings.cache or run is None:
            return
        key = environment_key(run)
        if key is not None:
            extra = {"environment": self.env, "build": self.build, "found": self.found}
            reuse.ResultCache(settings.cache, ENVIRONMENT_KIND).put(key, {"kind": ENVIRONMENT_KIND}, extra)

    def known_set_up(self, settings: batch.Settings, run_id: str) -> Optional[Dict[str, Any]]:
        """``set_up`` from what an earlier run kept of this environment, without importing torch."""
        run = self._known_run()
        key = environment_key(run) if settings.cache and run is not None else None
        entry = reuse.ResultCache(settings.cache, ENVIRONMENT_KIND).get(key) if settings.cache and key else None
        if entry is None:
            return None
        extra = entry["extra"]
        kept, build, found = extra.get("environment"), extra.get("build"), extra.get("found")
        if not (isinstance(kept, dict) and isinstance(build, dict) and isinstance(found, dict)):
            return None
        self.settings = settings
        self.found, self.build = dict(found), dict(build)
        self.env = {**kept, **run_fields(run_id)}
        return self.env

    def cache_key(self, item: batch.Item) -> Optional[str]:
        job = _job(item)
        case = reuse.case_fingerprint(exportdb.source_file(job.info))  # a bundled example's file in torch
        if case is None:
            return None
        fields = {
            "kind": "cell", "format": reuse.FORMAT, "worker": reuse.worker_fingerprint(),
            "build": self.build, "variant": job.variant, "device": job.device,
            "capabilities": job.found, "case": job.info.name, "source": job.info.source, "case_hash": case,
            "mode": job.mode, "run": item.key[2], "stages": list(job.stages), "timeout": job.timeout,
            "budgets": job.budgets,
            "keeps_program": job.artifacts is not None,
            "dependency_set": job.dependency_set, "with_set": job.with_set,
            "environment": reuse.environment_fields(),  # the variables that steer torch, as the run started
        }  # fmt: skip
        if job.device != "cpu":  # a result from one GPU (model, compute capability, driver) never stands for another
            fields["gpu"] = gpu.identity(self.gpu)
        fields.update(self.stage_keys)  # e.g. the C++ compiler, where a selected stage compiles
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
        found = differences(identity, now)
        manifest = last["extra"].get("manifest")
        if manifests.valid(manifest):
            found += manifests.changed(manifest, exportdb.source_file(_job(item).info), cache.hashes)
        return found or ["the entry does not stand here (its saved program cannot be put back)"]

    def reusable(self, item: batch.Item, entry: Dict[str, Any], cache: reuse.ResultCache) -> bool:
        """A kept result stands where every file its cell read is as it was, and, where it saved a program, where
        that very program is in --artifacts, or can be put there."""
        job = _job(item)
        manifest = entry["extra"].get("manifest")
        if not manifests.valid(manifest):
            cache.warn(
                "manifest", "ignoring entries without a readable list of the files their cell read; they run again"
            )
            self.why[item.key] = ["the entry lists no files its cell read"]
            return False
        changed = manifests.changed(manifest, exportdb.source_file(job.info), cache.hashes)
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
        self.manifests[item.key] = manifest if manifests.valid(manifest) else None
        load = result.pop(FRESH_LOAD, None)
        package_load = result.pop(FRESH_PACKAGE_LOAD, None)
        cache = self.settings.cache if self.settings is not None else None
        job = item.job
        if not cache or not isinstance(job, CellJob) or job.artifacts is None:
            return
        if item.record.get("artifact") != ARTIFACT_SAVED:
            return
        from ..contract.products import PACKAGE
        from .uses import NOUN, keep_fresh_load

        if self._load_cache is None:
            self._load_cache = reuse.ResultCache(cache, NOUN)  # where `load` looks
        if isinstance(load, dict):
            keep_fresh_load(self._program_folder(item), load, self.env, self._load_cache)
        if isinstance(package_load, dict):
            folder = self._program_folder(item)
            compiler = self.stage_keys.get("compiler", "")
            keep_fresh_load(folder, package_load, self.env, self._load_cache, PACKAGE, compiler)

    def _program_folder(self, item: batch.Item) -> str:
        job, record = _job(item), item.record
        return layout.artifact_folder(job.artifacts or "", record["torch_version"], job.variant, record["python"],
                                      job.mode, job.info.name, job.with_set, job.device)  # fmt: skip


def _job(item: batch.Item) -> CellJob:
    assert isinstance(item.job, CellJob), item.job  # the engine asks about items that have a job only
    return item.job


# The fields of a cell's key that describe the torch build, for what --explain-cache says.
BUILD_FIELDS = ("torch", "git_version", "cuda", "python", "implementation", "machine")


def differences(before: Mapping[str, Any], now: Mapping[str, Any]) -> List[str]:
    """What differs between two cells' key fields, in words: "torch build differs", "TORCHDYNAMO_X set", ..."""
    found: List[str] = []
    old_build, new_build = before.get("build") or {}, now.get("build") or {}
    if any(old_build.get(name) != new_build.get(name) for name in BUILD_FIELDS):
        found.append("torch build differs")
    elif old_build.get("packages") != new_build.get("packages"):
        found.append("installed packages differ")
    old_env, new_env = before.get("environment") or {}, now.get("environment") or {}
    for name in sorted(set(old_env) | set(new_env)):
        if name not in old_env:
            found.append("%s set" % name)
        elif name not in new_env:
            found.append("%s unset" % name)
        elif old_env[name] != new_env[name]:
            found.append("%s changed" % name)
    words = {"case_hash": "the case's source changed", "worker": "the worker's code changed"}
    for name in sorted(set(before) | set(now)):
        if name in ("build", "environment") or before.get(name) == now.get(name):
            continue
        found.append(words.get(name, "%s differs" % name))
    return found
