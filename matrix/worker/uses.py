"""One use object per product (:mod:`matrix.contract.products`): how a build uses what another release made.

A :class:`Use` knows, for its product, the record of one use (beyond the fields every use has), what refuses a
use before any process starts (a damaged folder, a release or machine that lacks what it needs), the job that
does it, the fields of its result-cache key, its label in the progress lines and its journal key. The load batch
(:mod:`.loader`) and a run's fresh loads (:func:`keep_fresh_load`, called by :mod:`.cell_cache`) both call it, so
the two stand side by side: a run never imports the load batch. A new product is its declaration and a use here.

Standard library only (the jobs import torch when they run), Python 3.8 syntax.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Tuple

from ..contract import layout
from ..contract.layout import Artifact, Key
from ..contract.products import COMPILE, PACKAGE, PROGRAM, Product, keys_of, planned_record
from ..contract.schema import LOAD_STATUSES, STAGE_SKIPPED, LoadStatus, now
from . import aoti, gpu, reuse
from .journal import Key as JournalKey
from .load_job import AotiCompileJob, AotiLoadJob, LoadJob, incomplete

Fields = Dict[str, Any]
# What one item of ``load`` is: the result cache's kind of its kept results too.
NOUN = "artifact"
# What the parent knows better than a use's process: the identity of the use.
PARENT_KEYS = frozenset(("schema_version", "kind", "run_id", "torch_version", "variant", "python", "case", "mode"))
# A use's availability on this build: (what does it, or None) and what is missing where nothing does.
Found = Tuple[Any, Optional[str]]


def package_of(artifact: Artifact) -> Optional[Dict[str, Any]]:
    """What an artifact's meta.json says of the AOTInductor package kept with its program (its ``aoti`` key),
    or None where its cell kept none."""
    described = (artifact.meta or {}).get("aoti")
    return described if isinstance(described, dict) else None


def listed(meta: Dict[str, Any], name: Any) -> Dict[str, Any]:
    """The entry of the file ``name`` in meta.json's list (its size and sha256), or {}."""
    entries = [e for e in meta.get("files") or [] if isinstance(e, dict) and e.get("name") == name]
    return entries[0] if entries else {}


class Use:
    """A program's load with torch.export.load (products.PROGRAM); the others refine it."""

    product: Product = PROGRAM
    # Whether a damaged folder is refused by the parent (else the use's own process finds it), and what it says.
    refuses_damaged = True
    # Whether the loading release's C++ compiler decides its result (part of its key).
    compiles = False

    def journal_more(self, dependency_set: str) -> list:
        """What a use adds to its artifact's key in the journal (see ``loader.journal_key``)."""
        # Torch alone adds nothing, so that the keys of loads recorded before sets were told apart still match.
        return [dependency_set] if dependency_set else []

    def fields(self, artifact: Artifact, env: Fields) -> Fields:
        """The fields of its record beyond those every use has (``products.planned_record``)."""
        meta = artifact.meta or {}
        return {
            "saved_serializer_version": meta.get("serializer_version"),
            "serializer_version": env.get("serializer_version"),
            "format_version": meta.get("format_version"),
        }

    def present(self, artifact: Artifact) -> bool:
        """Whether ``artifact``'s folder holds what this use uses."""
        return True

    def label(self, artifact: Artifact, record: Fields) -> str:
        return artifact.relative

    def damaged(self, problem: str) -> Optional[Fields]:
        return incomplete(problem)

    def described(self, record: Fields) -> Optional[Fields]:
        """A use refused for what its meta.json says (after trust is settled), or None."""
        return None

    def available(self, loads: Any, record: Fields) -> Found:
        """What does the use on the batch ``loads``' build, or None and what is missing."""
        return (
            (True, None) if loads.can_load else (None, "torch %s has no torch.export.load" % loads.env["torch_version"])
        )

    def job(self, loads: Any, folder: str, meta: Fields, record: Fields) -> Tuple[Any, float]:
        """The job, and the seconds it may take on top of --timeout."""
        return LoadJob(folder=folder, meta=meta), 0.0

    def cache_fields(self, artifact: Artifact) -> Optional[Fields]:
        """What its key adds to a load's; None where the use cannot be keyed."""
        return {}

    def tried(self, status: Any) -> bool:
        """Whether a result says something of torch (a result that did not try is never kept for ``load``)."""
        return status in LOAD_STATUSES


class PackageUse(Use):
    """The AOTInductor package a cell's aoti stage kept with its program, loaded (products.PACKAGE)."""

    product = PACKAGE
    refuses_damaged = False  # a package's load finds a damaged folder in its own process
    compiles = True

    def journal_more(self, dependency_set: str) -> list:
        return [dependency_set, self.product.kind]

    def fields(self, artifact: Artifact, env: Fields) -> Fields:
        described = package_of(artifact) or {}
        name, api = described.get("file"), described.get("api")
        size = listed(artifact.meta or {}, name).get("size")
        return {"package": name if isinstance(name, str) else None, "package_bytes": size if isinstance(size, int)
                else None, "aoti_api": api if isinstance(api, str) else None}  # fmt: skip

    def present(self, artifact: Artifact) -> bool:
        return package_of(artifact) is not None

    def label(self, artifact: Artifact, record: Fields) -> str:
        return "%s/%s" % (artifact.relative, record["package"] or "aoti")

    def described(self, record: Fields) -> Optional[Fields]:
        if record["package"] not in aoti.AOTI_FILES:
            return incomplete("%s describes no AOTInductor package" % layout.META)
        return None

    def available(self, loads: Any, record: Fields) -> Found:
        return loads.loaders.get(record["package"], (None, "no loader was looked for"))  # type: ignore[no-any-return]

    def job(self, loads: Any, folder: str, meta: Fields, record: Fields) -> Tuple[Any, float]:
        return AotiLoadJob(folder=folder, meta=meta, trust=loads.trust), 0.0

    def cache_fields(self, artifact: Artifact) -> Optional[Fields]:
        name = (package_of(artifact) or {}).get("file")
        sha256 = listed(artifact.meta or {}, name).get("sha256")
        return {"package": name, "package_sha256": sha256} if isinstance(sha256, str) else None

    def tried(self, status: Any) -> bool:
        return status in LOAD_STATUSES and status not in (LoadStatus.NOT_APPLICABLE.value, LoadStatus.UNTRUSTED.value)


class CompileUse(PackageUse):
    """A program saved on an older release, compiled here with AOTInductor (products.COMPILE, ``load --aoti``)."""

    product = COMPILE
    refuses_damaged = True

    def fields(self, artifact: Artifact, env: Fields) -> Fields:
        return {}

    def present(self, artifact: Artifact) -> bool:
        return True

    def label(self, artifact: Artifact, record: Fields) -> str:
        return "%s (compiled here)" % artifact.relative

    def damaged(self, problem: str) -> Optional[Fields]:
        return {"status": STAGE_SKIPPED, "error_type": "IncompleteArtifact",
                "error_message": "not compiled: incomplete artifact: %s" % problem}  # fmt: skip

    def described(self, record: Fields) -> Optional[Fields]:
        return None

    def available(self, loads: Any, record: Fields) -> Found:
        if not loads.can_load:
            return Use.available(self, loads, record)
        return loads.compile_api  # type: ignore[no-any-return]

    def job(self, loads: Any, folder: str, meta: Fields, record: Fields) -> Tuple[Any, float]:
        record["aoti_api"] = loads.compile_api[0].name  # else refused
        return AotiCompileJob(folder=folder, meta=meta, timeout_s=loads.aoti_timeout), loads.aoti_timeout

    def cache_fields(self, artifact: Artifact) -> Optional[Fields]:
        return {}


USES: Dict[str, Use] = {use.product.name: use for use in (Use(), PackageUse(), CompileUse())}


def of(product: Product) -> Use:
    return USES[product.name]


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
