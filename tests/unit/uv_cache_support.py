"""A uv cache as uv lays it out: unpacked wheels, the pointers to them, environments linking them."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import write


def fake_archive(cache: Path, archive_id: str, name: str, version: str, size: int = 100, local: bool = False) -> Path:
    """``archive-v0/<id>/`` holding one distribution, and uv's pointer to it (``.rev``: a local wheel's).

    The pointer names the archive's id among other bytes, as uv's msgpack does; beside it, a
    link to the archive's folder, as uv makes on Unix.
    """
    folder = cache / "archive-v0" / archive_id
    module = name.replace("-", "_")
    write(folder / ("%s-%s.dist-info" % (module, version)) / "METADATA", "Name: %s\nVersion: %s\n" % (name, version))
    write(folder / module / "__init__.py", "#" * size)
    where = ("index", "13fc6a276e4c9afe") if local else ("pypi",)
    entry = cache.joinpath("wheels-v8", *where, name, "%s-py3-none-any" % version)
    entry.parent.mkdir(parents=True, exist_ok=True)
    suffix = ".rev" if local else ".http"
    entry.with_name(entry.name + suffix).write_bytes(b"\x95\xb0" + archive_id.encode() + b"\x91\x81\xa6Sha256")
    entry.with_name(entry.name + ".lock").write_bytes(b"")
    entry.symlink_to(os.path.relpath(folder, entry.parent))
    return folder


def link_archive(archive: Path, site: Path) -> None:
    """Install an unpacked wheel as uv does: each of its files hard-linked into ``site``."""
    for file in sorted(archive.rglob("*")):
        if file.is_file():
            target = site / file.relative_to(archive)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(file, target)
