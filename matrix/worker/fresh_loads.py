"""A run's fresh loads, kept as ``load``'s results on the build that made them.

A cell that keeps its program in --artifacts loads it again in a process that never exported, and
its aoti stage loads its package in one that never compiled: each is ``load``'s own job on the
build that saved (or compiled) it, so ``load`` on that build would run it again to the same result.
Kept under the key ``load`` computes (:meth:`.loader.LoadBatch.cache_key`), such a load is reused
there like any kept load, after the same checks (signature, files unchanged).

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

from typing import Any, Dict

from ..contract import layout
from ..contract.schema import LOAD_STATUSES, LoadStatus, now
from . import artifacts, batch, reuse
from .aoti_packages import package_of
from .loader import LoadBatch, own_keys


def keep_fresh_load(folder: str, result: Dict[str, Any], env: Dict[str, Any], cache: reuse.ResultCache) -> bool:
    """Keep a run's fresh load of a program it saved in --artifacts as this build's ``load`` of that program.

    ``env``: the run's environment record.
    """
    artifact = layout.artifact_at(folder)
    if artifact is None or artifact.problem is not None or reuse.machine_dependent(result):
        return False
    loads = LoadBatch([artifact], env["torch_version"], env["variant"], env["python"], trust=True)
    loads.env.update(run_id=env["run_id"], serializer_version=artifacts.serializer_version())
    loads.can_load = True
    item = loads.items(loads.wanted())[0]
    key = loads.cache_key(item) if item.job is not None else None
    if key is None or result.get("status") not in LOAD_STATUSES:
        return False
    record = item.record
    batch.fill(loads, record, result)
    own_keys(record)
    record["finished_at"] = now()
    cache.put(key, record)
    return True


def keep_fresh_package_load(
    folder: str, result: Dict[str, Any], env: Dict[str, Any], cache: reuse.ResultCache, compiler: str
) -> bool:
    """Keep a run's fresh load of a package it kept in --artifacts as this build's ``load`` of that package.

    ``compiler``: the C++ compiler of the run (part of the key). A load that was not tried (not-applicable)
    is not kept: ``load`` decides those without loading.
    """
    artifact = layout.artifact_at(folder)
    if artifact is None or artifact.problem is not None or package_of(artifact) is None:
        return False
    status = result.get("status")
    tried = status in LOAD_STATUSES and status not in (LoadStatus.NOT_APPLICABLE.value, LoadStatus.UNTRUSTED.value)
    if not tried or reuse.machine_dependent(result):
        return False
    loads = LoadBatch([artifact], env["torch_version"], env["variant"], env["python"], trust=True)
    loads.env.update(run_id=env["run_id"], serializer_version=artifacts.serializer_version())
    loads.compiler = compiler
    key = loads.package_cache_key(artifact)
    if key is None:
        return False
    record = loads.package_record(artifact)
    batch.fill(loads, record, result)
    own_keys(record)
    record["finished_at"] = now()
    cache.put(key, record)
    return True
