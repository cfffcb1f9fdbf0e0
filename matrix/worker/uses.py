"""One use object per product (:mod:`matrix.contract.products`): how a build uses what another release made.

Each product's :class:`.use.Use` (the protocol, :mod:`.use`) comes from the worker module its declaration names
(``Product.module``); a program's load is the protocol's own. The load batch (:mod:`.loader`) and a run's fresh
loads (:func:`fresh_load`, :func:`keep_fresh_load`, called by :mod:`.cell_job` and :mod:`.cell_cache`) both call
it, so the two stand side by side: a run never imports the load batch. A new product is its declaration and a
``USE`` in its module.

Standard library only (the jobs import torch when they run), Python 3.8 syntax.
"""

from __future__ import annotations

import json
import os
from importlib import import_module
from typing import Any, Dict, Optional

from ..contract import layout
from ..contract.layout import Artifact, Key
from ..contract.products import PRODUCTS, PROGRAM, Product, keys_of, planned_record
from ..contract.schema import now
from . import gpu, reuse
from .journal import Key as JournalKey
from .messages import message
from .use import Fields, Use

# What one item of ``load`` is: the result cache's kind of its kept results too.
NOUN = "artifact"
# What the parent knows better than a use's process: the identity of the use.
PARENT_KEYS = frozenset(("schema_version", "kind", "run_id", "torch_version", "variant", "python", "case", "mode"))


def _registered() -> Dict[str, Use]:
    """Each product's use, by name: its declaration's module's ``USE`` (``Product.module``), else a program's."""
    return {p.name: import_module("." + p.module, __package__).USE if p.module else Use() for p in PRODUCTS}


USES: Dict[str, Use] = _registered()
# The job kinds and merges the products' uses bring beside a program's load (the registry, .jobs, takes them).
KINDS = {job.KIND: job for use in USES.values() for job in use.kinds}
MERGES = {name: merge for use in USES.values() for name, merge in use.merges.items()}


def of(product: Product) -> Use:
    return USES[product.name]


def fresh_load(folder: str, discard: bool, product: str = PROGRAM.name) -> Dict[str, Any]:
    """The follow-up of a cell that kept a product (products.PRODUCTS, by name: its program, or what a stage made
    of it and kept with it): its use's fresh job, in a process that never exported nor compiled."""
    meta, _ = layout.read_meta(folder)
    job, merge = USES[product].fresh(folder, meta or {})
    return {"message": message(job), "merge": merge, "folder": folder, "discard": discard}


def journal_key(key: Key, dependency_set: str = "", product: Product = PROGRAM, device: str = "cpu") -> JournalKey:
    """One use's key in the journal and in resuming: its artifact's key, the set it was saved with, for a product
    other than a program's load its kind (six parts, never a program's four or five), and off the CPU its device
    (seven parts)."""
    # The journal keeps (case, mode, run): the saving release and any set go into the first part.
    more = of(product).journal_more(dependency_set)
    if device != "cpu":
        more = [dependency_set, product.kind, device]
    return (json.dumps(list(key[:4]) + more), key[4], 0)


def record(product: Product, artifact: Artifact, env: Fields, gpu_facts: Fields) -> Fields:
    """The record of a use of ``product`` made from ``artifact`` on the build of ``env``, before the use."""
    planned = planned_record(product, artifact, env, artifact.device)
    planned["gpu"] = gpu.label(gpu_facts)
    planned.update(of(product).fields(artifact, env))
    return planned


def cache_key(
    product: Product,
    artifact: Artifact,
    variant: str,
    compiler: str,
    device: str,
    gpu_facts: Fields,
    build: Optional[Fields] = None,
) -> Optional[str]:
    """The key of a use's result: the artifact's content and the loading build; for a package's load, the
    package's own sha256 too, and for it and a compile the C++ compiler here (the compile and the loaders run it,
    to compile or to check the device). ``build``: the torch build's fields where the caller knows them (a load
    answered from the cache without importing torch)."""
    meta = reuse.file_hash(os.path.join(artifact.folder, layout.META))  # it lists each file's sha256
    more = of(product).cache_fields(artifact)
    if meta is None or more is None:
        return None
    fields = {
        "kind": "load", "format": reuse.FORMAT, "worker": reuse.worker_fingerprint(),
        "build": build if build is not None else reuse.build_fields(), "environment": reuse.environment_fields(),
        "variant": variant,
        "saved": list(artifact.key),
        "dependency_set": artifact.dependency_set, "with_set": artifact.with_set, "meta_sha256": meta,
    }  # fmt: skip
    fields.update(more)
    if of(product).compiles:
        fields.update(kind=product.kind, compiler=compiler)
    if device != "cpu":  # a result from one GPU (model, compute capability, driver) never stands for another
        fields.update(device=device, gpu=gpu.identity(gpu_facts))
    return reuse.digest(fields)


def own_keys(record: Fields) -> None:
    """Drop from a use's record what its kind does not carry (a result may hold keys of another kind)."""
    keys = set(keys_of(record.get("kind")))
    for key in [k for k in record if k not in keys]:
        del record[key]


def keep_fresh_load(
    folder: str, result: Fields, env: Fields, cache: reuse.ResultCache, product: Product = PROGRAM, compiler: str = "",
) -> bool:  # fmt: skip
    """Keep a run's fresh load of a program it saved in --artifacts (or of the package its aoti stage kept with
    it) as this build's ``load`` of it: each is ``load``'s own job on the build that saved (or compiled) it, so
    ``load`` reuses it like any kept load, after the same checks (signature, files unchanged).

    ``env``: the run's environment record; ``compiler``: its C++ compiler (part of a package load's key). A
    package's load that was not tried (not-applicable) is not kept: ``load`` decides those without loading.
    """
    if env.get("device", "cpu") != "cpu":  # the GPU's identity is the run's: its loads run again in `load`
        return False
    artifact = layout.artifact_at(folder)
    if artifact is None or artifact.problem is not None or not of(product).tried(result.get("status")):
        return False
    if reuse.machine_dependent(result) or not of(product).present(artifact):
        return False
    from .artifacts import serializer_version

    loading = dict(env, serializer_version=serializer_version())
    kept = record(product, artifact, loading, {})
    digest = cache_key(product, artifact, env["variant"], compiler, "cpu", {})
    if digest is None:
        return False
    kept.update({k: v for k, v in result.items() if k in product.keys and k not in PARENT_KEYS})
    own_keys(kept)
    kept["finished_at"] = now()
    cache.put(digest, kept)
    return True
