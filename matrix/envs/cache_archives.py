"""uv's unpacked wheels (``<cache>/archive-v0/<id>/``): which ones no environment links any more, and pruning them.

uv unpacks a wheel once into an archive folder and installs it by hard-linking the archive's
files into each environment, so a file some environment uses has a link count above 1. An
archive none of whose files has one is used by no environment on the cache's filesystem:
removing it loses only a cached download. uv finds an archive through a pointer file
(``.http`` for a download, ``.rev`` for a local wheel) that names its id; the pointers go
first, so uv downloads or unpacks the wheel again when an install next needs it, instead of
failing on a folder that is gone.

Link counts say nothing where environments hold copies (a cache on another filesystem), and
nothing is known of a cache laid out otherwise (no ``archive-v0``): then nothing is pruned.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Collection, Iterable, Iterator, List, Optional, Tuple

from ..contract import dependencies

ARCHIVES = "archive-v0"
POINTERS = (".http", ".rev")
POINTER_SIZE = 1 << 20  # a pointer is a few hundred bytes; larger files are not read

Device = Callable[[Path], int]


@dataclass(frozen=True)
class Archive:
    """One unpacked wheel in uv's cache: its folder, its distributions (``name==version``) and their bytes."""

    path: Path
    dists: Tuple[str, ...]
    size: int


@dataclass(frozen=True)
class Pruned:
    """What ``prune`` did: the distributions whose archives left uv's cache and the bytes freed, or why not."""

    dists: Tuple[str, ...] = ()  # one ``name==version`` per archive removed, sorted
    freed: int = 0  # bytes: every file of a pruned archive had one link, so each is counted once
    skipped: str = ""  # why the cache was not scanned (it is the subject: "CACHE has no archive-v0 folder")


def device_of(path: Path) -> int:
    return os.stat(path).st_dev


def reason_to_skip(cache: Path, envs: Path, device: Device = device_of) -> Optional[str]:
    """Why the archives' link counts cannot say which are unused here; None when they can."""
    if not (cache / ARCHIVES).is_dir():
        return "%s has no %s folder (another uv layout)" % (cache, ARCHIVES)
    if device(cache) != device(envs):
        return "%s is on another filesystem than %s: environments hold copies of its files, not links" % (cache, envs)
    return None


def distributions(archive: Path) -> List[Tuple[str, str]]:
    """(normalized name, version) of each ``name-version.dist-info`` folder at the top of an archive."""
    found: List[Tuple[str, str]] = []
    for info in sorted(archive.glob("*.dist-info")):
        name, _, version = info.name[: -len(".dist-info")].partition("-")
        found.append((dependencies.name_of(name) or name.lower(), version))
    return found


def regular_files(paths: Iterable[Path]) -> Iterator[os.stat_result]:
    """``lstat`` of each regular file under ``paths`` (links not followed; a file gone meanwhile is left out)."""
    for path in paths:
        for folder, _, files in os.walk(path):
            for name in files:
                try:
                    info = os.lstat(os.path.join(folder, name))
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    yield info


def unlinked_size(archive: Path) -> Optional[int]:
    """The bytes of an archive's files when none has another link; None as soon as one has (an environment uses it)."""
    size = 0
    for info in regular_files([archive]):
        if info.st_nlink > 1:
            return None
        size += info.st_size
    return size


def unused(cache: Path, names: Iterable[str]) -> List[Archive]:
    """The archives holding a distribution named in ``names`` (normalized) whose files no environment links."""
    wanted = set(names)
    found: List[Archive] = []
    for path in sorted((cache / ARCHIVES).iterdir()):
        if path.is_symlink() or not path.is_dir():
            continue
        dists = distributions(path)
        if not any(name in wanted for name, _ in dists):
            continue
        size = unlinked_size(path)
        if size is not None:
            found.append(Archive(path, tuple("%s==%s" % dist for dist in dists), size))
    return found


def pointers(cache: Path, ids: Collection[str]) -> List[Path]:
    """uv's entries leading to the archives with these ids: pointer files naming them, and links to their folders."""
    if not ids:
        return []
    encoded = [archive_id.encode("ascii") for archive_id in ids]
    found: List[Path] = []
    for folder, dirs, files in os.walk(cache):
        if Path(folder) == cache:
            dirs[:] = [name for name in dirs if name != ARCHIVES]
        for name in (*dirs, *files):  # a link to a folder is listed with the folders, and not followed
            path = Path(folder, name)
            if path.is_symlink():
                target = Path(os.readlink(path))
                if target.parent.name == ARCHIVES and target.name in ids:
                    found.append(path)
            elif name.endswith(POINTERS) and _names_any(path, encoded):
                found.append(path)
    return sorted(found)


def _names_any(path: Path, encoded: List[bytes]) -> bool:
    try:
        if path.stat().st_size > POINTER_SIZE:
            return False
        data = path.read_bytes()
    except OSError:
        return False
    return any(archive_id in data for archive_id in encoded)


def prune(cache: Path, envs: Path, names: Iterable[str], device: Device = device_of) -> Pruned:
    """Remove the archives of ``names`` that no environment links, their pointers first; OSError when one cannot go."""
    reason = reason_to_skip(cache, envs, device)
    if reason is not None:
        return Pruned(skipped=reason)
    archives = unused(cache, names)
    for pointer in pointers(cache, {archive.path.name for archive in archives}):
        pointer.unlink()
    for archive in archives:
        shutil.rmtree(archive.path)
    return Pruned(tuple(sorted(d for archive in archives for d in archive.dists)), sum(a.size for a in archives))
