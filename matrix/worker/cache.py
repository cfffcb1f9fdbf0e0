"""``export-matrix cache stats|prune``: what the result cache holds, and trimming it by age or size.

The cache (:mod:`.reuse`) is a folder of small files: entries under ``<kind>/<2 hex>/<key>.json``,
saved programs under ``programs/<2 hex>/<sha256>/``, each cell's latest key under ``index/``, and
each run's hits and misses under ``stats/``. ``stats`` sums them; ``prune`` removes entries (and
program folders) no run used for ``--older-than`` days, then the least recently used ones until the
cache holds at most ``--max-size`` megabytes. A run reading the cache while it is pruned only misses
what was removed: an entry is one file, a program folder is checked before it is put back.

Standard library only, Python 3.8 syntax: it reads what the worker wrote, wherever that is.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import time
from typing import Dict, List, Optional, Tuple

from ..contract.errors import UserError
from . import reuse

DAY_S = 86400.0
MB = 1024 * 1024


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("stats", "prune"), help="stats: size, entries, hit rate; prune: trim")
    parser.add_argument(
        "--cache",
        metavar="DIR",
        default=None,
        help="the result cache (default: EXPORT_MATRIX_RESULT_CACHE, else the user's cache folder)",
    )
    parser.add_argument(
        "--older-than",
        type=float,
        default=None,
        metavar="DAYS",
        help="prune: remove what no run used for DAYS days",
    )
    parser.add_argument(
        "--max-size",
        type=float,
        default=None,
        metavar="MB",
        help="prune: then remove the least recently used until the cache holds at most MB megabytes",
    )


@dataclasses.dataclass(frozen=True)
class CacheOptions:
    action: str
    cache: Optional[str] = None
    older_than: Optional[float] = None
    max_size: Optional[float] = None

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> CacheOptions:
        options = cls(namespace.action, namespace.cache, namespace.older_than, namespace.max_size)
        if options.action == "prune" and options.older_than is None and options.max_size is None:
            raise UserError("cache prune: give --older-than DAYS, --max-size MB or both")
        for name, value in (("--older-than", options.older_than), ("--max-size", options.max_size)):
            if value is not None and value < 0:
                raise UserError("%s %s: give a number of 0 or more" % (name, value))
        return options


OPTIONS = CacheOptions


@dataclasses.dataclass(frozen=True)
class Unit:
    """What prune removes whole: an entry file or a program folder; its kind, last use and size."""

    path: str
    kind: str
    used: float
    size: int


def _size(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for folder, _, names in os.walk(path):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(folder, name))
            except OSError:
                pass
    return total


def units(root: str) -> List[Unit]:
    """Every entry and program folder of the cache (not the index or the stats, which are small)."""
    found = []
    for kind in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        if kind in (reuse.INDEX, reuse.STATS) or not os.path.isdir(os.path.join(root, kind)):
            continue
        for shard in sorted(os.listdir(os.path.join(root, kind))):
            folder = os.path.join(root, kind, shard)
            if shard.startswith(".") or not os.path.isdir(folder):
                continue
            for name in sorted(os.listdir(folder)):
                path = os.path.join(folder, name)
                if name.startswith(".tmp-") or (kind != "programs" and not name.endswith(".json")):
                    continue
                try:
                    used = os.stat(path).st_mtime
                except OSError:
                    continue
                found.append(Unit(path, kind, used, _size(path)))
    return found


def hit_rate(root: str) -> Tuple[int, int]:
    """The hits and misses every run noted (reuse.ResultCache.note_run)."""
    hits = misses = 0
    folder = os.path.join(root, reuse.STATS)
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        try:
            with open(os.path.join(folder, name), "rb") as f:
                noted = json.loads(f.read().decode("utf-8"))
            hits += int(noted.get("hits", 0))
            misses += int(noted.get("misses", 0))
        except (OSError, ValueError, TypeError, AttributeError):
            continue
    return hits, misses


def stats(root: str) -> str:
    found = units(root)
    kinds: Dict[str, int] = {}
    for unit in found:
        kinds[unit.kind] = kinds.get(unit.kind, 0) + 1
    size = sum(unit.size for unit in found)
    hits, misses = hit_rate(root)
    rate = "%.0f%% (%d hits, %d misses)" % (100.0 * hits / (hits + misses), hits, misses) if hits + misses else "none"
    lines = [
        "cache: %s" % root,
        "size: %.1f MB" % (size / MB),
        "entries: %s" % (", ".join("%s %d" % item for item in sorted(kinds.items())) or "none"),
        "hit rate: %s" % rate,
    ]
    return "\n".join(lines)


def prune(root: str, older_than: Optional[float], max_size: Optional[float], now: Optional[float] = None) -> str:
    """Remove old entries, then the least recently used until the cache fits; says what it removed."""
    now = time.time() if now is None else now
    found = sorted(units(root), key=lambda unit: unit.used)
    removed: List[Unit] = []
    if older_than is not None:
        removed = [unit for unit in found if unit.used < now - older_than * DAY_S]
    left = [unit for unit in found if unit not in removed]
    if max_size is not None:
        total = sum(unit.size for unit in left)
        while left and total > max_size * MB:
            unit = left.pop(0)
            removed.append(unit)
            total -= unit.size
    for unit in removed:
        if os.path.isdir(unit.path):
            shutil.rmtree(unit.path, ignore_errors=True)
        else:
            try:
                os.unlink(unit.path)
            except OSError:
                pass
    if older_than is not None:  # stats and index notes of that age say nothing any more
        for folder in (reuse.INDEX, reuse.STATS):
            for base, _, names in os.walk(os.path.join(root, folder)):
                for name in names:
                    path = os.path.join(base, name)
                    try:
                        if os.stat(path).st_mtime < now - older_than * DAY_S:
                            os.unlink(path)
                    except OSError:
                        pass
    size = sum(unit.size for unit in left)
    return "removed %d entries (%.1f MB); the cache holds %d (%.1f MB)" % (
        len(removed),
        sum(unit.size for unit in removed) / MB,
        len(left),
        size / MB,
    )


def main(options: CacheOptions) -> int:
    root = reuse.root(options.cache, False)
    if root is None:
        raise UserError("the result cache is off (%s=off); name one with --cache DIR" % reuse.VARIABLE)
    if options.action == "stats":
        sys.stdout.write(stats(root) + "\n")
    else:
        sys.stdout.write(prune(root, options.older_than, options.max_size) + "\n")
    return 0
