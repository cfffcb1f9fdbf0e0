"""The AOTInductor packages a load plans: each kept beside a saved program, loaded in a process of its own.

What an artifact's meta.json says of its package (the ``aoti`` key), the key of the package's load
in the journal, and its item as the parent plans it: refused where its folder is untrusted, complete
without a process where meta.json describes no package or this release has no loader for its file.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Tuple

from ..contract import layout
from ..contract.layout import Artifact, Key
from ..contract.products import PACKAGE, planned_record
from ..contract.schema import LoadStatus
from .aoti_job import AotiLoadJob
from .batch import Item
from .journal import Key as JournalKey
from .load_job import incomplete


def package_key(key: Key, dependency_set: str = "") -> JournalKey:
    """The key of the load of an artifact's AOTInductor package: never a program's (six parts, not four or five)."""
    return (json.dumps(list(key[:4]) + [dependency_set, PACKAGE.kind]), key[4], 0)


def package_of(artifact: Artifact) -> Optional[Dict[str, Any]]:
    """What an artifact's meta.json says of the AOTInductor package kept with its program (its ``aoti`` key),
    or None where its cell kept none."""
    described = (artifact.meta or {}).get("aoti")
    return described if isinstance(described, dict) else None


def listed(meta: Dict[str, Any], name: Any) -> Dict[str, Any]:
    """The entry of the file ``name`` in meta.json's list (its size and sha256), or {}."""
    entries = [e for e in meta.get("files") or [] if isinstance(e, dict) and e.get("name") == name]
    return entries[0] if entries else {}


def package_record(artifact: Artifact, env: Dict[str, Any]) -> Dict[str, Any]:
    """The record of the load of an artifact's package, as far as the parent knows it before loading."""
    meta, described = artifact.meta or {}, package_of(artifact) or {}
    name, api = described.get("file"), described.get("api")
    size = listed(meta, name).get("size")
    record = planned_record(PACKAGE, artifact, env, described.get("device") or meta.get("device"))
    record.update(
        package=name if isinstance(name, str) else None, package_bytes=size if isinstance(size, int) else None,
        aoti_api=api if isinstance(api, str) else None,
    )  # fmt: skip
    return record


def package_item(
    key: JournalKey, artifact: Artifact, env: Dict[str, Any], distrust: Optional[Dict[str, Any]],
    loaders: Dict[str, Tuple[Optional[str], Optional[str]]], trust: bool,
) -> Item:  # fmt: skip
    """The load of an artifact's package, as the parent plans it: ``distrust`` the fields of a folder it refuses
    (None: it may be read), ``loaders`` this release's loader for each package file, or what it lacks."""
    record = package_record(artifact, env)
    name = record["package"]
    label = "%s/%s" % (artifact.relative, name or "aoti")
    assert artifact.meta is not None  # only an artifact with a usable meta.json describes a package
    if distrust is not None:
        record.update(distrust)
        return Item(key, label, record)
    if name not in layout.AOTI_FILES:
        record.update(incomplete("%s describes no AOTInductor package" % layout.META))
        return Item(key, label, record)
    loader, missing = loaders.get(name, (None, "no loader was looked for"))
    if loader is None:
        record.update(status=LoadStatus.NOT_APPLICABLE.value, error_message=missing)
        return Item(key, label, record)
    job = AotiLoadJob(folder=os.path.abspath(artifact.folder), meta=artifact.meta, trust=trust)
    return Item(key, label, record, job)
