"""A cell's manifest: what its process read (:mod:`.reads` records it), and whether each is as it was.

A manifest is a list of entries ``[kind, name, digest]``, checked again before a kept result is reused:

- ``file``: a file read (opened, imported, mapped, loaded by a known native loader), its sha256; the name
  relative to the case's folder where the file is inside it (a moved checkout still matches), else absolute;
- ``listing``: a folder listed (``os.listdir``, ``os.scandir``, so ``glob``, ``os.walk`` and ``pathlib``), the
  sha256 of its sorted names (``__pycache__`` left out: importing writes it), ``unset`` where it could not be
  listed (absent); the name ends with ``/``;
- ``variable``: an environment variable the cell's process read, the sha256 of its value, or ``unset``
  (a hash, not the value: a token a case reads is not written into the cache);
- ``inputs``: a pattern of the case's ``inputs`` (a glob relative to its folder), the sha256 of the sorted
  files it matches (each of which is a ``file`` entry too);
- ``native``: an extension module or a library loaded through ctypes from outside the installed distributions
  and torch, by a case that declares no ``inputs``: what such code reads cannot be seen, so such an entry
  never stands.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import glob
import hashlib
import os
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from .reuse import file_hash

Manifest = List[List[str]]
FILE, LISTING, VARIABLE, INPUTS, NATIVE = "file", "listing", "variable", "inputs", "native"
KINDS = frozenset({FILE, LISTING, VARIABLE, INPUTS, NATIVE})
UNSET = "unset"
# Left out of a listing's hash: written by importing a module of the folder, not by the user.
NOT_LISTED = frozenset({"__pycache__"})
# Files a hash memo (:func:`hash_of`) never serves: changed this recently, a same-size rewrite may keep its time.
RECENT_NS = 2 * 10**9
# A hash memo: by path, the file's identity (size, times, inode) and its sha256 when it had that identity.
Hashes = Dict[str, Tuple[Tuple[int, int, int, int], Optional[str]]]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def listing_hash(folder: str) -> Optional[str]:
    """The sha256 of a folder's sorted names; None where it cannot be listed."""
    try:
        names = sorted(name for name in os.listdir(folder) if name not in NOT_LISTED)
    except OSError:
        return None
    return text_hash("\0".join(names))


def variable_hash(value: Optional[str]) -> str:
    return UNSET if value is None else text_hash(value)


def matched(pattern: str, folder: str) -> List[str]:
    """The files an ``inputs`` pattern names, relative to the case's ``folder``: a glob (``**`` reaches into
    subfolders), a folder matched standing for every file under it."""
    found: Set[str] = set()
    for path in glob.glob(os.path.join(folder, pattern), recursive=True):
        if os.path.isdir(path):
            for base, folders, names in os.walk(path):
                folders[:] = [name for name in folders if name not in NOT_LISTED]
                found.update(os.path.join(base, name) for name in names)
        elif os.path.isfile(path):
            found.add(path)
    return sorted(os.path.abspath(path) for path in found)


def inputs_hash(pattern: str, folder: str) -> str:
    return text_hash("\0".join(shown(path, folder) for path in matched(pattern, folder)))


def shown(path: str, folder: str) -> str:
    """A path as a manifest keeps it: relative to the case's folder where inside it (a moved checkout still
    matches), else absolute."""
    relative = os.path.relpath(path, folder)
    return path if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def valid(manifest: Any) -> bool:
    """Whether ``manifest`` has the shape :meth:`reads.Recording.finish` gives."""
    return isinstance(manifest, list) and all(
        isinstance(entry, list) and len(entry) == 3 and entry[0] in KINDS and all(isinstance(p, str) for p in entry)
        for entry in manifest
    )


def hash_of(path: str, memo: Optional[Hashes] = None) -> Optional[str]:
    """``path``'s sha256, None where it cannot be read; ``memo`` (one run's) serves a file hashed before only while
    its size, times and inode are those it had then and it was not changed in the last ``RECENT_NS``: a file
    edited during the run is hashed again."""
    if memo is None:
        return file_hash(path)
    try:
        status = os.stat(path)
    except OSError:
        return None
    identity = (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)
    kept = memo.get(path)
    if kept is not None and kept[0] == identity:
        return kept[1]
    digest = file_hash(path)
    if time.time_ns() - max(status.st_mtime_ns, status.st_ctime_ns) > RECENT_NS:
        memo[path] = (identity, digest)
    return digest


def changed(
    manifest: Manifest, case_file: str, hashes: Optional[Hashes] = None, environ: Optional[Mapping[str, str]] = None
) -> List[str]:
    """What of a manifest differs now, in words (``weights.safetensors changed``, ``shards/ listing changed``,
    ``MY_SCALE changed``); [] where nothing does.

    ``hashes``: this run's memo of the files hashed already (cells share their packages; :func:`hash_of`);
    ``environ``: the environment a cell would run with (default: this process's as it started, before the
    runner set anything in it).
    """
    from .reuse import started_environment

    env = started_environment() if environ is None else environ
    folder = os.path.dirname(os.path.abspath(case_file))
    found = []
    for kind, name, digest in manifest:
        if kind == VARIABLE:
            now: Optional[str] = variable_hash(env.get(name))
            if now != digest:
                found.append("%s %s" % (name, "unset" if now == UNSET else "set" if digest == UNSET else "changed"))
            continue
        if kind == NATIVE:
            found.append("%s: native code from outside the installed distributions may read files unseen; "
                         "declare the case's inputs" % name)  # fmt: skip
            continue
        path = os.path.normpath(os.path.join(folder, name))
        if kind == FILE:
            now, what = hash_of(path, hashes), name
        elif kind == LISTING:  # a folder that could not be listed (absent) is kept as UNSET
            now, what = listing_hash(path) or (UNSET if digest == UNSET else None), name + " listing"
        else:  # INPUTS
            now, what = inputs_hash(name, folder), "inputs %s: the files it matches" % name
        if now is None:
            found.append("%s is gone or unreadable" % name)
        elif now != digest:
            found.append("%s changed" % what)
    return found


def listing_entries(folders: Sequence[str], folder: str) -> Manifest:
    """The ``listing`` entries of the folders a cell listed; one that cannot be listed (absent) as ``UNSET``."""
    entries: Manifest = []
    for path in sorted(folders):
        digest = listing_hash(path) or UNSET
        name = shown(path, folder)
        entries.append([LISTING, name.rstrip(os.sep) + os.sep if name != "." else "." + os.sep, digest])
    return entries
