"""Removing a build's environments, and what of uv's cache only they used, to free disk.

A build's environments (its own and its dependency sets', ``environments.of_build``) are
removed whole. With uv, their files are hard links into uv's cache, so the disk comes back
only when the cache entries go too. ``uv cache clean NAME...`` removes every cached version
of the packages that no remaining environment has installed; of the others, the unpacked
wheels that no environment links any more (the removed release's torch, say) are pruned
(``cache_archives``). So the disk comes back with other releases still installed, and those
reinstall from the cache as before.

``python -m matrix.envs.removal --keep WORD...`` is the other way round: it removes every
environment but those of the builds a selection names (a channel's word keeps its newest build),
so that a cache of environments kept between CI runs does not gather a nightly a day.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from ..contract import dependencies
from ..contract.errors import UserError, report_errors
from ..contract.options import add_variant
from . import cache_archives, environments, releases
from .builds import Build
from .install import Installer, InstallError, UvInstaller, installer, run_captured

Log = environments.Log
Clean = Callable[[List[str], Log], None]
Prune = Callable[[List[str], Path, Log], cache_archives.Pruned]


class RemovalError(UserError):
    """An environment or a cache entry that could not be removed; the message says which and why."""


# An environment's folder (``environments.Spec.name``): ``torch-VERSION_VARIANT_pyX.Y``, a set's ``_deps-`` suffix.
ENVIRONMENT = re.compile(r"torch-(?P<version>[^_]+)_[^_]+_py\d+\.\d+(?:_deps-[0-9a-f]{8})?")
# What the selection words of ``--keep`` may hold beside builds: check's word for the running interpreter.
NOT_A_BUILD = ("current",)


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
    return remove_paths(paths, envs, clean, prune, log)


def remove_paths(paths: List[Path], envs: Path, clean: Clean, prune: Prune, log: Log) -> Removal:
    """Remove these environment folders of ``envs``, then what of uv's cache only they used (see ``remove``)."""
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


# --- keeping only a selection's environments ---------------------------------------------------------


def environment_folders(envs: Path) -> List[Path]:
    """The environments in ``envs``, by their folders' names: the worker's copies and anything else stay out."""
    return environments.folders(envs, ENVIRONMENT)


def used(builds: Iterable[Build], envs: Path) -> List[Path]:
    """The environments of ``builds`` in ``envs``: each build's own and its dependency sets', for any Python; of a
    channel's word (``nightly``), those of its newest build installed, which the word named last."""
    found: List[Path] = []
    for build in builds:
        paths = environments.of_build(build, envs)
        if build.pending and paths:
            newest = max({_version(p) for p in paths}, key=releases.version_key)
            paths = [p for p in paths if _version(p) == newest]
        found += [p for p in paths if p not in found]
    return found


def _version(path: Path) -> str:
    matched = ENVIRONMENT.fullmatch(path.name)
    return matched.group("version") if matched else path.name


def keep_only(
    builds: Sequence[Build],
    envs: Optional[Path] = None,
    clean: Clean = uv_cache_clean,
    prune: Prune = uv_cache_prune,
    log: Log = environments.log_to_stderr,
) -> Removal:
    """Remove every environment in ``envs`` but those ``builds`` use (``used``), then what of uv's cache only
    the removed ones used."""
    envs = environments.env_dir() if envs is None else envs
    kept = used(builds, envs)
    paths = [p for p in environment_folders(envs) if p not in kept]
    if not paths:
        log("%d environment(s) in %s, each of the selection: nothing to remove" % (len(kept), envs))
        return Removal((), 0, (), ())
    log("keeping %s" % (", ".join(p.name for p in kept) or "no environment"))
    return remove_paths(paths, envs, clean, prune, log)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m matrix.envs.removal",
        description="remove every torch environment (EXPORT_MATRIX_ENV_DIR) but those of the builds named,"
        " and what of uv's cache only the removed ones used",
    )
    parser.add_argument(
        "--keep",
        nargs="+",
        required=True,
        metavar="RELEASE",
        help="the builds to keep, as check --torch names them: 2.6, 2.6.0, 2.6.0+cpu, latest, quick, all, nightly"
        " (its newest build here), nightly:2026-01-15, rc; current is no build and keeps nothing",
    )
    add_variant(parser, "wheel variant of the words given without a +tag, as check --variant (default pypi)")
    parser.add_argument("--dry-run", action="store_true", help="name the environments that would go, remove nothing")
    options = parser.parse_args(argv)

    def body() -> int:
        words = [word for word in options.keep if word not in NOT_A_BUILD]
        builds = releases.default_matrix().select(words, options.variant)
        if not options.dry_run:
            keep_only(builds)
            return 0
        envs = environments.env_dir()
        kept = used(builds, envs)
        for path in environment_folders(envs):
            print("%s %s" % ("keep  " if path in kept else "remove", path.name))
        return 0

    return report_errors(parser.prog, body)


if __name__ == "__main__":
    sys.exit(main())
