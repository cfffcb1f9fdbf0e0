"""Removing a build's environments, and what of uv's cache only they used, to free disk.

A build's environments (its own and its dependency sets', ``environments.of_build``) are
removed whole. With uv, their files are hard links into uv's cache, so the disk comes back
only when the cache entries go too. ``uv cache clean NAME...`` removes every cached version
of the packages that no remaining environment has installed; of the others, the unpacked
wheels that no environment links any more (the removed release's torch, say) are pruned
(``cache_archives``). So the disk comes back with other releases still installed, and those
reinstall from the cache as before.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from ..contract import dependencies
from . import cache_archives, environments
from .install import Installer, InstallError, UvInstaller, installer, run_captured
from .releases import Build

Log = Callable[[str], None]
Clean = Callable[[List[str], Log], None]
Prune = Callable[[List[str], Path, Log], cache_archives.Pruned]


class RemovalError(Exception):
    """An environment or a cache entry that could not be removed; the message says which and why."""


@dataclass(frozen=True)
class Removal:
    """What ``remove`` did: the environments' names, their size on disk, and what left uv's cache."""

    removed: Tuple[str, ...]
    size: int  # bytes, each file counted once however many links it has
    cleaned: Tuple[str, ...]  # the packages given to ``uv cache clean``
    kept: Tuple[str, ...]  # the packages a remaining environment still has installed
    pruned: Tuple[str, ...] = ()  # ``name==version`` of each unpacked wheel pruned from uv's cache
    freed: int = 0  # bytes the pruned wheels held, each file counted once


def installed(path: Path) -> Dict[str, str]:
    """The distributions an environment holds (normalized name: version), read from its ``*.dist-info`` folders."""
    found: Dict[str, str] = {}
    for site in (*sorted(path.glob("lib/python*/site-packages")), path / "Lib" / "site-packages"):
        for info in sorted(site.glob("*.dist-info")):
            name, version = _name_and_version(info)
            if name:
                found[dependencies.name_of(name) or name.lower()] = version
    return found


def _name_and_version(info: Path) -> Tuple[str, str]:
    """From the METADATA file, else from the folder's name (``name-version.dist-info``)."""
    try:
        with open(info / "METADATA", encoding="utf-8", errors="replace") as f:
            headers = HeaderParser().parse(f, headersonly=True)
        if headers.get("Name"):
            return str(headers["Name"]).strip(), str(headers.get("Version") or "").strip()
    except OSError:
        pass
    name, _, version = info.name[: -len(".dist-info")].partition("-")
    return name, version


def to_clean(removed: Iterable[Mapping[str, str]], remaining: Iterable[Mapping[str, str]]) -> List[str]:
    """The packages of the removed environments that no remaining environment has installed, in any version.

    ``uv cache clean NAME`` drops every cached version of NAME, so a package another
    environment still holds stays in the cache for that environment's next install.
    """
    kept: Set[str] = {name for packages in remaining for name in packages}
    return sorted({name for packages in removed for name in packages} - kept)


@dataclass(frozen=True)
class Footprint:
    """The files under some environments: their bytes, each file counted once however many hard links it
    has, and whether one has another link (uv installed it by linking from its cache)."""

    size: int
    linked: bool


def footprint(paths: Iterable[Path]) -> Footprint:
    """The :class:`Footprint` of the regular files under ``paths``, in one walk."""
    seen: Set[Tuple[int, int]] = set()
    total, linked = 0, False
    for info in cache_archives.regular_files(paths):
        linked = linked or info.st_nlink > 1
        if (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            total += info.st_size
    return Footprint(total, linked)


def human_size(size: int) -> str:
    """``4.6 GB``, ``212 MB``, ``12 KB``: decimal units, as download sizes are given."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if size >= scale:
            value = size / scale
            return ("%.1f %s" if value < 10 else "%.0f %s") % (value, unit)
    return "%d bytes" % size


def uv_cache_clean(names: List[str], log: Log, tool: Optional[Installer] = None) -> None:
    """``uv cache clean NAME...`` with the uv that installs environments; nothing when environments use pip."""
    tool = installer() if tool is None else tool
    if not isinstance(tool, UvInstaller):
        log("environments are installed with %s here: uv's cache is left as it is" % tool.name)
        return
    try:
        done = run_captured([tool.uv, "cache", "clean", *names], echo=log)
    except InstallError as error:
        raise RemovalError(str(error)) from error
    if done.returncode != 0:
        raise RemovalError("uv cache clean %s failed with exit status %d" % (" ".join(names), done.returncode))


def uv_cache_dir(tool: UvInstaller) -> Path:
    """uv's cache folder, as ``uv cache dir`` says (``UV_CACHE_DIR`` and uv's settings respected)."""
    try:
        done = run_captured([tool.uv, "cache", "dir"])
    except InstallError as error:
        raise RemovalError(str(error)) from error
    lines = (done.stdout or "").strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RemovalError(
            "uv cache dir failed with exit status %d: %s" % (done.returncode, (done.stderr or "").strip())
        )
    return Path(lines[-1].strip())


def uv_cache_prune(names: List[str], envs: Path, log: Log, tool: Optional[Installer] = None) -> cache_archives.Pruned:
    """The unpacked wheels of ``names`` in uv's cache that no environment links, removed; nothing when pip installs."""
    tool = installer() if tool is None else tool
    if not isinstance(tool, UvInstaller):
        return cache_archives.Pruned(skipped="environments are installed with %s here" % tool.name)
    cache = uv_cache_dir(tool)
    try:
        return cache_archives.prune(cache, envs, names)
    except OSError as error:
        raise RemovalError("could not prune uv's cache at %s: %s" % (cache, error)) from error


def log_pruned(pruned: cache_archives.Pruned, log: Log) -> None:
    """One line: what pruning freed, or why it was skipped."""
    if pruned.skipped:
        log("not pruning uv's cache: %s" % pruned.skipped)
    elif pruned.dists:
        shown = (human_size(pruned.freed), ", ".join(pruned.dists))
        log("freed %s of uv's cache: the unpacked wheels no environment links any more (%s)" % shown)
    else:
        log("uv's cache holds no unpacked wheel of these packages that no environment links")


def remove(
    build: Build,
    envs: Optional[Path] = None,
    clean: Clean = uv_cache_clean,
    prune: Prune = uv_cache_prune,
    log: Log = environments.log_to_stderr,
) -> Removal:
    """Remove ``build``'s environments, then what of uv's cache only they used.

    ``clean`` gets the packages no remaining environment holds; ``prune`` all of the removed
    environments' packages, and runs only when their files were hard links into the cache:
    with copies or symbolic links, an archive's link count says nothing about who uses it.
    """
    envs = environments.env_dir() if envs is None else envs
    paths = environments.of_build(build, envs)
    if not paths:
        absent = (build.torch_version, build.variant.name, envs)
        log("no environment of torch %s (%s) in %s: nothing to remove" % absent)
        return Removal((), 0, (), ())
    removed = [installed(path) for path in paths]
    others = [p for p in sorted(envs.iterdir()) if p not in paths and not p.name.startswith(".") and p.is_dir()]
    remaining = [installed(path) for path in others]
    found = footprint(paths)
    for path in paths:
        try:
            shutil.rmtree(path)
        except OSError as error:
            raise RemovalError("could not remove %s: %s" % (path, error)) from error
    names = tuple(path.name for path in paths)
    log(
        "removed %s from %s (%s, files shared with uv's cache included)"
        % (", ".join(names), envs, human_size(found.size))
    )
    cleaned = to_clean(removed, remaining)
    held = sorted({name for packages in removed for name in packages})
    kept = sorted(set(held) - set(cleaned))
    if kept:
        log("kept in uv's cache, as another environment has them installed: %s" % ", ".join(kept))
    if cleaned:
        log("removing from uv's cache: %s" % ", ".join(cleaned))
        clean(cleaned, log)
    if found.linked:
        pruned = prune(held, envs, log)
    else:
        pruned = cache_archives.Pruned(skipped="the removed environments' files were not hard links into it")
    log_pruned(pruned, log)
    return Removal(names, found.size, tuple(cleaned), tuple(kept), pruned.dists, pruned.freed)
