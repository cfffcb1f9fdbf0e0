"""``export-matrix load ARTIFACT_DIR... --out DIR``: programs saved on any release, loaded and run on this one.

``run --artifacts`` keeps each passing cell's program with its inputs and eager outputs
(see :mod:`matrix.worker.artifacts`). This command takes every artifact under the
folders given, whichever release saved it (this one included), and in this torch loads
it with ``torch.export.load``, runs it on the saved inputs and compares the results with
the saved outputs, with the cell check's tolerance. Each artifact is isolated as a cell
is: a load that crashes or hangs is recorded as such and the command goes on.

Loading runs code from the artifact's folder (``torch.export.load`` unpickles on some
releases; the case module is imported), so an artifact whose ``meta.json`` is not signed
with this machine's key (:mod:`.signing`) is recorded as ``untrusted`` by the parent and
never reaches a loading process, unless ``--trust`` is given for the folders of this command.
An untrusted record does not count as done: a later ``load --trust`` tries it.

The batch engine (:mod:`.batch`) runs the loads as it runs ``run``'s cells, each a load job
(:mod:`.load_job`; why a load failed is worked out in :mod:`.forensics`). One record per
artifact goes to ``DIR/load_torch-<version>_<variant>_py<X.Y>.jsonl`` (kind ``load``, keys
``schema.LOAD_KEYS``, statuses ``schema.LoadStatus``). Artifacts already recorded there (same
saving release, case, mode and set of packages beside torch) are skipped unless ``--force``; the
run journal locks the file and records an artifact that killed the command as a crash rather
than loading it again.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from ..contract import dependencies, layout, records
from ..contract.errors import UserError
from ..contract.layout import Artifact, Key
from ..contract.options import (
    from_namespace,
)
from ..contract.requests import LoadRequest, add_load_arguments
from ..contract.schema import LOAD_KEYS, LOAD_STATUSES, SCHEMA_VERSION, LoadStatus, now
from . import artifacts, batch, first_use, reuse, signing
from .environment import installed_torch_version, variant_of
from .journal import Key as JournalKey
from .load_job import LoadJob, incomplete
from .progress import say
from .signing import untrusted


def configure(parser: argparse.ArgumentParser) -> None:
    add_load_arguments(parser)  # one definition, shared with the host's requests (matrix.contract.requests)


@dataclasses.dataclass(frozen=True)
class LoadOptions(LoadRequest):
    """The options of ``export-matrix load``: a load request, validated before torch is imported."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate()
        object.__setattr__(self, "timeout", float(self.timeout))

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> LoadOptions:
        return from_namespace(cls, namespace)

    def settings(self, path: str) -> batch.Settings:
        """How the engine runs the loads that go to the record file ``path``."""
        return batch.Settings(
            out=path, timeout=self.timeout, max_memory=self.max_memory, isolation=self.isolation, jobs=self.jobs,
            force=self.force, progress=self.progress, cache=reuse.root(self.cache, self.no_cache),
        )  # fmt: skip


OPTIONS = LoadOptions


def file_name(torch_version: str, variant: str, python: str) -> str:
    """The load record file of one loading environment: ``load_torch-2.9.1_pypi_py3.11.jsonl``."""
    return "load_" + records.env_file_name(torch_version, variant, python)


def journal_key(key: Key, dependency_set: str = "") -> JournalKey:
    """One load's key in the journal and in resuming: its artifact's key and the set it was saved with."""
    # The journal keeps (case, mode, run): the saving release and any set go into the first part;
    # torch alone adds nothing, so that the keys of loads recorded before sets were told apart still match.
    return (json.dumps(list(key[:4]) + ([dependency_set] if dependency_set else [])), key[4], 0)


# --- in the parent ---------------------------------------------------------------------------


class LoadBatch(batch.Batch):
    """The artifacts of one load: every saved program selected, loaded in the installed torch."""

    noun, verb, doing = "artifact", "load", "loading"
    statuses = LOAD_STATUSES
    record_keys = LOAD_KEYS
    # What the parent knows better than the child: the identity of the load.
    parent_keys = frozenset(("schema_version", "kind", "run_id", "torch_version", "variant", "python", "case", "mode"))

    def __init__(
        self,
        found: List[Artifact],
        version: str,
        variant: str,
        python: str,
        signing_key: Optional[bytes] = None,
        trust: bool = False,
    ) -> None:
        """``signing_key`` verifies each artifact's signature, unless ``trust``; None: there is no key."""
        self.artifacts = {journal_key(artifact.key, artifact.dependency_set): artifact for artifact in found}
        self.env: Dict[str, Any] = {"torch_version": version, "variant": variant, "python": python}
        self.can_load = False
        self.signing_key = signing_key
        self.trust = trust

    def wanted(self) -> List[JournalKey]:
        return list(self.artifacts)

    def done(self, path: str) -> Tuple[Set[JournalKey], List[str]]:
        """The artifacts already recorded in a load record file, for resuming."""
        if not os.path.exists(path):
            return set(), []
        found, warnings = records.read(path)
        keys: Set[JournalKey] = set()
        for record in found:
            # An untrusted one was never tried: a later `load --trust` (or with the right key) tries it.
            if record.get("kind") != "load" or record.get("status") == LoadStatus.UNTRUSTED.value:
                continue
            key = tuple(record.get(k) for k in ("saved_torch_version", "saved_variant", "saved_python", "case", "mode"))
            saved_set = record.get("dependency_set") or ""
            if all(isinstance(part, str) for part in (*key, saved_set)):
                keys.add(journal_key(key, saved_set))  # type: ignore[arg-type]
            else:
                warnings.append("%s: skipped a load record without a usable saving release, case and mode" % path)
        return keys, warnings

    def set_up(self, settings: batch.Settings, run_id: str) -> Optional[Dict[str, Any]]:
        try:
            import torch.export

            self.can_load = hasattr(torch.export, "load")
        except Exception:
            self.can_load = False
        self.env.update(run_id=run_id, serializer_version=artifacts.serializer_version())
        if self.can_load:
            self.preimport(settings)
        return None

    def libraries(self) -> List[str]:
        # The packages the programs were saved with: each load imports its case module, and with it them.
        sets = {saved_with(artifact) for artifact in self.artifacts.values()}
        return sorted({r for key in sets for r in dependencies.key_requirements(key)})

    def items(self, keys: Sequence[JournalKey]) -> List[batch.Item]:
        return [self._item(key) for key in keys]

    def _item(self, key: JournalKey) -> batch.Item:
        artifact, env = self.artifacts[key], self.env
        record: Dict[str, Any] = {name: None for name in LOAD_KEYS}
        meta = artifact.meta or {}
        record.update(
            schema_version=SCHEMA_VERSION, kind="load", run_id=env["run_id"],
            saved_torch_version=artifact.saved_torch_version, saved_variant=artifact.saved_variant,
            saved_python=artifact.saved_python, torch_version=env["torch_version"], variant=env["variant"],
            python=env["python"], device=meta.get("device"), case=artifact.case, mode=artifact.mode,
            artifact=artifact.relative, saved_serializer_version=meta.get("serializer_version"),
            dependency_set=saved_with(artifact), with_set=artifact.with_set,
            serializer_version=env["serializer_version"], format_version=meta.get("format_version"),
        )  # fmt: skip
        if artifact.problem is not None:
            record.update(incomplete(artifact.problem))
            return batch.Item(key, artifact.relative, record)
        assert artifact.meta is not None  # an artifact without a usable meta.json has a problem
        distrust = None if self.trust else untrusted(artifact.folder, artifact.meta, self.signing_key)
        if distrust is not None:
            # Decided here, in the parent: no process is started for it, nothing of it is unpickled or imported.
            record.update(
                status=LoadStatus.UNTRUSTED.value,
                error_type="UntrustedArtifact",
                error_message="untrusted artifact: %s; pass --trust to load folders you made or trust" % distrust,
            )
            return batch.Item(key, artifact.relative, record)
        if not self.can_load:
            record.update(
                status=LoadStatus.NOT_APPLICABLE.value,
                error_message="torch %s has no torch.export.load" % env["torch_version"],
            )
            return batch.Item(key, artifact.relative, record)
        job = LoadJob(folder=os.path.abspath(artifact.folder), meta=artifact.meta)
        return batch.Item(key, artifact.relative, record, job)

    def cache_key(self, item: batch.Item) -> Optional[str]:
        artifact = self.artifacts[item.key]
        meta = reuse.file_hash(os.path.join(artifact.folder, layout.META))  # it lists each file's sha256
        if meta is None:
            return None
        return reuse.digest(
            {
                "kind": "load", "format": reuse.FORMAT, "worker": reuse.worker_fingerprint(),
                "build": reuse.build_fields(), "variant": self.env["variant"], "saved": list(artifact.key),
                "dependency_set": artifact.dependency_set, "with_set": artifact.with_set, "meta_sha256": meta,
            }
        )  # fmt: skip

    def reusable(self, item: batch.Item, entry: Dict[str, Any], cache: reuse.ResultCache) -> bool:
        """The files must still be what meta.json lists: a damaged program is loaded, and found damaged."""
        artifact = self.artifacts[item.key]
        return artifact.meta is not None and layout.verify(artifact.folder, artifact.meta) is None

    def died(self, item: batch.Item) -> None:
        item.record.update(
            status=LoadStatus.CRASH.value,
            error_type="matrix.worker.loader.LoaderDied",
            error_message="the load command died while this artifact loaded (killed by it or from"
            " outside); recorded as a crash and not loaded again without --force",
        )

    def warm_up(self) -> None:
        if self.can_load:
            first_use.load()  # imports only: loads are forked from a process that never exported


def execute(options: LoadOptions) -> Dict[str, int]:
    """Load the selected artifacts; returns counts per status of the loads recorded now."""
    found = [a for a in layout.discover(options.artifacts) if layout.selected(a, options.select)]
    if options.dependency_set is not None:
        found = [a for a in found if saved_with(a) == options.dependency_set]
        if not found:
            say(
                "nothing under %s was saved with %s"
                % (", ".join(options.artifacts), options.dependency_set or "torch alone")
            )
            return {}
    if not found:
        raise UserError("nothing selected: no artifact under %s matches --select %s"
                        % (", ".join(options.artifacts), " ".join(options.select or ["*"])))  # fmt: skip
    key = None if options.trust else signing.verifying_key()
    version = installed_torch_version()
    variant = options.variant or variant_of(version)
    python = artifacts.python_version()
    name = file_name(version, variant, python)[: -len(".jsonl")] + dependencies.set_suffix(options.dependency_set or "")
    settings = options.settings(os.path.join(options.out, name + ".jsonl"))
    loads = LoadBatch(found, version, variant, python, key, options.trust)
    return batch.execute(loads, settings, version, variant)


def keep_fresh_load(folder: str, result: Dict[str, Any], env: Dict[str, Any], cache: reuse.ResultCache) -> bool:
    """Keep a run's fresh load of a program it saved in --artifacts as this build's ``load`` of that program.

    The fresh load is ``load``'s own job, in a process that never exported, on the build that saved
    the program: ``load`` on that build would run it again to the same result. Kept under the key
    ``load`` computes (:meth:`LoadBatch.cache_key`), it is reused there like any kept load, after
    the same checks (signature, files unchanged). ``env``: the run's environment record.
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
    record["finished_at"] = now()
    cache.put(key, record)
    return True


def saved_with(artifact: Artifact) -> str:
    """The set of packages beside torch that an artifact was saved with ("" for torch alone)."""
    return artifact.dependency_set


def main(options: LoadOptions) -> int:
    counts = execute(options)
    sys.stderr.write(batch.summary(counts, LOAD_STATUSES, "nothing to load") + "\n")
    if counts.get(LoadStatus.UNTRUSTED.value):
        sys.stderr.write(
            "warning: %d saved program(s) not loaded: not signed with this machine's signing key (their records"
            " say why); `load --trust` loads folders you made or trust, %s gives the key that signed them\n"
            % (counts[LoadStatus.UNTRUSTED.value], signing.KEY_VARIABLE)
        )
    return 0
