"""Where the report writes: only inside its folder, and it removes only files it wrote itself.

Every path the report writes is checked, after resolving links, to lie inside the report
folder (``--out``). Each build lists what it wrote in the folder's manifest,
:data:`MANIFEST`; the next build removes the files of that list it did not write again
(e.g. the page of a case that is gone). Files the report did not write, such as notes
or images someone added to the folder, are never listed and so never removed; nor is
anything in a folder written before manifests existed.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
from typing import Any, Callable, Iterable, Optional, Set

import pandas as pd

from matrix.contract.errors import UserError

MANIFEST = ".export-matrix-report.json"
# What a build writes, and so all a manifest entry may name for removal: (folder, suffixes).
_REMOVABLE = {"": (".md", ".parquet"), "baseline": (".parquet", ".json"), "cases": (".md",), "charts": (".png", ".svg")}
# Folders of the build's own that go once the last of their files is removed (the kept baseline, kept_baseline).
_GONE_WHEN_EMPTY = ("baseline",)
# The suffix of a case page's folder of repro scripts (``cases/NAME.repro/FILE.py``): its .py files
# are the build's too, and the folder goes once the last of them is removed.
SCRIPTS = ".repro"
# The suffix of a case page's folder of graph diffs (``cases/NAME.diffs/DIGEST.diff``, :mod:`.diff_files`):
# removed alike.
DIFFS = ".diffs"
# A case page's folders of files, by their suffix, and the suffix of the files the build writes in each.
_CASE_FOLDERS = {SCRIPTS: ".py", DIFFS: ".diff"}
# How the report writes its Parquet tables: zstd at level 9 writes a 63,000-row load table in about 0.3 s and
# a fifth smaller than the default level; pyarrow reads it whatever the level.
PARQUET = {"compression": "zstd", "compression_level": 9}


class OutsideError(UserError):
    """A path the report was about to write lies outside its folder."""


def target(out: str, relative: str) -> str:
    """The path of ``relative`` inside the report folder ``out``, refused unless it resolves to inside it."""
    path = _inside(out, relative)
    if path is None:
        raise OutsideError("--out %s: refusing to write %r, which is not a path inside the folder" % (out, relative))
    return path


def _inside(out: str, relative: str) -> Optional[str]:
    """``relative`` resolved (links followed) under ``out``, or None when that is not strictly inside ``out``."""
    if "\0" in relative or os.path.isabs(relative):
        return None
    root = os.path.realpath(out)
    path = os.path.realpath(os.path.join(root, relative))
    if path == root or os.path.commonpath([root, path]) != root:
        return None
    return path


def write_text(out: str, relative: str, text: str) -> None:
    write_bytes(out, relative, text.encode("utf-8"))


def write_bytes(out: str, relative: str, data: bytes) -> None:
    path = target(out, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def write_parquet(out: str, relative: str, frame: pd.DataFrame) -> None:
    """A table as Parquet, written as the report writes every table (:data:`PARQUET`)."""
    path = target(out, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    frame.to_parquet(path, index=False, **PARQUET)


def read_json(path: str) -> Any:
    """A JSON file's value; None where it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def previous(out: str) -> Set[str]:
    """The files an earlier build listed in the manifest; none when there is no readable manifest."""
    stored = read_json(os.path.join(out, MANIFEST))
    listed = stored.get("files") if isinstance(stored, dict) else None
    if not isinstance(listed, list):
        return set()
    return {entry for entry in listed if isinstance(entry, str)}


def write_manifest(out: str, written: Iterable[str]) -> None:
    files = sorted({_posix(path) for path in written})
    write_text(out, MANIFEST, json.dumps({"files": files}, indent=2) + "\n")


def remove_stale(
    out: str,
    listed: Iterable[str],
    written: Iterable[str],
    removable: Optional[Callable[[str], bool]] = None,
    emptied: Optional[Callable[[str], bool]] = None,
) -> None:
    """Remove the files of an earlier build's list that this build did not write, those ``removable`` accepts (by
    default the report's own), and the folder of each whose folder ``emptied`` says goes once empty."""
    kept = {_posix(path) for path in written}
    for entry in sorted(set(listed) - kept):
        if not (removable or _removable)(entry):
            continue
        path = os.path.join(out, *entry.split("/"))
        # A link or folder there now was put by someone else: the report writes plain files.
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        resolved = _inside(out, entry)
        if resolved is not None:
            os.remove(resolved)
            if (emptied or _emptied)(entry):
                # Something left in the folder (a file of this build, or one the report did not write) keeps it.
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.dirname(resolved))


def _emptied(entry: str) -> bool:
    return _script(entry) or posixpath.dirname(entry) in _GONE_WHEN_EMPTY


def _removable(entry: str) -> bool:
    if "\0" in entry or "\\" in entry or posixpath.normpath(entry) != entry or entry.startswith(("/", "..")):
        return False
    folder, name = posixpath.split(entry)
    if name.startswith("."):
        return False
    return _script(entry) or (folder in _REMOVABLE and name.endswith(_REMOVABLE[folder]))


def _script(entry: str) -> bool:
    """Whether a manifest entry names a file in a case page's folder: a repro script (``cases/NAME.repro/FILE.py``)
    or a graph diff (``cases/NAME.diffs/DIGEST.diff``)."""
    parts = entry.split("/")
    if len(parts) != 3 or parts[0] != "cases" or parts[1].startswith("."):
        return False
    return any(parts[1].endswith(folder) and parts[2].endswith(kind) for folder, kind in _CASE_FOLDERS.items())


def _posix(path: str) -> str:
    return path.replace(os.sep, "/")
