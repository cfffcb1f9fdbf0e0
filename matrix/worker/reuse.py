"""Results reused by content: a cell or a load already recorded with everything that decides it is not run again.

A result is kept under a key: a hash of everything that determines it (for a cell: the case's source and the local
modules it imports, the torch build, every installed package, the worker's own source, the mode, the stages, the
options that change an outcome and the environment variables that steer torch (``KEY_VARIABLES``,
``KEY_PREFIXES``); for a load: the saved program's content and the same for the loading build). A cell's entry also
keeps the manifest of every other file its process read (:mod:`.reads`), and stands only while each still hashes the
same. When a later run meets the same key, the record is written again from the kept one, with ``reused_from``
naming the run that measured it. Outcomes that depend on the machine (a timeout, a crash, a diagnosis that ran out of
time) are never kept: they run again.

The cache is a folder of small JSON files, ``<root>/<kind>/<2 hex>/<key>.json``, one a result (beside them
``index/``, each cell's latest key, for ``run --explain-cache``, and ``stats/``, each run's hits and misses). A folder
suits it better than a database: each entry is written to a temporary file and renamed into place, so two runs
sharing a cache never see half an entry and need no lock; a CI job can restore and save it as it is; pruning it is
deleting old files. An entry that cannot be read, is not JSON, or names another key is ignored with one warning, and
its cell runs. A cache folder that cannot be written (read-only, full) makes the run go on without keeping results,
with one warning.

Standard library only, Python 3.8 syntax: this runs inside every torch environment.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from typing import Any, Dict, List, Mapping, Optional, Set

from ..contract.case import imported_modules
from ..contract.schema import Status
from .gpu import NVML_CHECK
from .scratch import SET_INSIDE

# The variable that moves the cache (a folder) or turns it off (``off``); ``--cache`` and ``--no-cache`` win.
VARIABLE = "EXPORT_MATRIX_RESULT_CACHE"
OFF = "off"
# Bumped when what an entry holds, or what a key covers, changes: older entries are then never found.
# 2: a cell's entry holds the manifest of what it read (matrix/worker/reads.py); its key names the environment.
# 3: a manifest's entries name their kind (matrix/worker/manifests.py): files, listings, variables, inputs.
FORMAT = 3
# Record fields that say how one run went, not what the result is: a reused record gets them anew.
RUN_FIELDS = ("run_id", "env_id", "finished_at", "reused_from")
# Beside the kinds' folders: each item's latest key (for --explain-cache), and each run's hits and misses.
INDEX, STATS = "index", "stats"
# Outcomes that say more about the machine than about torch.
MACHINE_OUTCOMES = frozenset({Status.TIMEOUT.value, Status.CRASH.value, Status.HARNESS_ERROR.value})


# Environment variables that change what torch does, and so join a cell's key: these names, and every name
# with one of these prefixes. Inductor's, dynamo's and export's switches (TORCHINDUCTOR_*, TORCHDYNAMO_*,
# TORCH_*, PYTORCH_*) change graphs, decompositions, checks and error messages; CUDA_VISIBLE_DEVICES and
# CUBLAS_WORKSPACE_CONFIG change what runs where and how it rounds.
KEY_VARIABLES = ("CUDA_VISIBLE_DEVICES", "CUBLAS_WORKSPACE_CONFIG")
KEY_PREFIXES = ("TORCH_", "TORCHDYNAMO_", "TORCHINDUCTOR_", "PYTORCH_")
# ... except these, which change only speed, logging or where caches and downloads go (what a cell reads
# from there is in its manifest): a result measured with or without them is the same result. Variables with
# none of the prefixes (OMP_NUM_THREADS, MKL_NUM_THREADS) stay out too.
SPEED_ONLY = frozenset({
    "TORCH_LOGS", "TORCH_LOGS_OUT", "TORCH_LOGS_FORMAT", "TORCH_TRACE", "TORCH_HOME",
    "TORCHINDUCTOR_CACHE_DIR", "TORCHINDUCTOR_COMPILE_THREADS", "TORCHINDUCTOR_FX_GRAPH_CACHE",
    "TORCHINDUCTOR_AUTOGRAD_CACHE", "TORCHINDUCTOR_WORKER_START", "TORCHINDUCTOR_WORKER_SUPPRESS_LOGGING",
})  # fmt: skip
# Variables the runner sets in its own processes (matrix/worker/batch.py, scratch.py): never the user's choice.
SET_BY_THE_RUNNER = frozenset({"OMP_NUM_THREADS", "TMPDIR", "TORCH_DTRACE", NVML_CHECK, *SET_INSIDE})
# The environment as this process started, before the runner set anything in it.
_STARTED: Dict[str, str] = dict(os.environ)


def started_environment() -> Mapping[str, str]:
    """This process's environment as it started, before the runner set anything in it."""
    return _STARTED


# The prefix of this project's own settings: the runner's choice, never a case's input.
OWN_PREFIX = "EXPORT_MATRIX_"


def case_variable(name: str) -> bool:
    """Whether a variable a cell's process read joins its manifest: not one the key holds already
    (:func:`environment_fields`), nor one of speed alone, nor one the runner sets or reads for itself."""
    keyed = name in KEY_VARIABLES or name.startswith(KEY_PREFIXES)
    return not keyed and name not in SPEED_ONLY and name not in SET_BY_THE_RUNNER and not name.startswith(OWN_PREFIX)


def environment_fields(environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The variables of ``environ`` (default: this process's as it started) that join a cell's key."""
    env = _STARTED if environ is None else environ
    return {
        name: value
        for name, value in sorted(env.items())
        if (name in KEY_VARIABLES or name.startswith(KEY_PREFIXES))
        and name not in SPEED_ONLY
        and name not in SET_BY_THE_RUNNER
    }


def default_root(environ: Optional[Mapping[str, str]] = None) -> str:
    """The cache folder when no option names one: in the user's cache folder."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "torch-export-matrix", "results")


def root(option: Optional[str], disabled: bool, environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The cache folder a command uses, or None where the cache is off."""
    env = os.environ if environ is None else environ
    if disabled:
        return None
    if option:
        return option
    chosen = env.get(VARIABLE)
    if chosen is not None and chosen.strip().lower() in (OFF, ""):
        return None
    return chosen or default_root(env)


def digest(fields: Mapping[str, Any]) -> str:
    """The key of a result: a hash of what determines it, as canonical JSON."""
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_hash(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


@functools.lru_cache(maxsize=None)
def worker_fingerprint() -> str:
    """A hash of the worker's and the contract's sources: any change to the code that produces a result."""
    return sources_hash(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sources_hash(package: str) -> str:
    """A hash of the ``.py`` files of ``package``'s ``contract`` and ``worker`` folders, names and contents."""
    hasher = hashlib.sha256()
    for folder in ("contract", "worker"):
        here = os.path.join(package, folder)
        for name in sorted(os.listdir(here)):
            if name.endswith(".py"):
                hasher.update(("%s/%s\0" % (folder, name)).encode())
                with open(os.path.join(here, name), "rb") as f:
                    hasher.update(f.read() + b"\0")
    return hasher.hexdigest()


def case_fingerprint(path: str) -> Optional[str]:
    """A hash of a case file and of the modules beside it that it imports, and those they import.

    A case runs with its own folder first on ``sys.path``, so ``import helper`` finds ``helper.py``
    (or ``helper/__init__.py``) there; those sources decide its result as much as its own. None
    where the file cannot be read.
    """
    folder = os.path.dirname(os.path.abspath(path))
    seen: Set[str] = set()
    pending: List[str] = [os.path.abspath(path)]
    hasher = hashlib.sha256()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(current, "rb") as f:
                source = f.read()
        except OSError:
            if current == os.path.abspath(path):
                return None
            continue
        hasher.update(os.path.relpath(current, folder).encode("utf-8", "surrogatepass") + b"\0" + source + b"\0")
        pending.extend(_local_imports(source, folder))
    return hasher.hexdigest()


def _local_imports(source: bytes, folder: str) -> List[str]:
    """The files in ``folder`` that a module's absolute imports name (its first dotted part)."""
    found = []
    for name in sorted(imported_modules(source)):
        for candidate in (os.path.join(folder, name + ".py"), os.path.join(folder, name, "__init__.py")):
            if os.path.isfile(candidate):
                found.append(os.path.abspath(candidate))
    return found


def build_fields() -> Dict[str, Any]:
    """What identifies the torch build and the environment around it, for a result's key (torch imported)."""
    import platform

    import torch

    from .environment import packages_hash

    version = getattr(torch, "version", None)
    return {
        "torch": str(torch.__version__),
        "git_version": getattr(version, "git_version", None),
        "cuda": getattr(version, "cuda", None),
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "machine": platform.machine(),
        "packages": packages_hash(),  # every installed distribution (scanned once): the dependency set's versions too
    }


def machine_dependent(record: Mapping[str, Any]) -> bool:
    """Whether a record's outcome may come from the machine rather than torch: such results run again."""
    if record.get("status") in MACHINE_OUTCOMES or record.get("reason"):
        return True
    return any(
        key.endswith("_status") and value in MACHINE_OUTCOMES for key, value in record.items() if isinstance(key, str)
    )


class ResultCache:
    """The results of one kind (``cell``, ``load``) kept under ``root``; see the module's docstring."""

    def __init__(self, root: str, kind: str) -> None:
        self.root = root
        self.kind = kind
        self.folder = os.path.join(root, kind)
        self.programs = ProgramStore(root)
        self.writable = True
        self.warned: Set[str] = set()
        self.quiet = False  # a lookup whose misses the run will meet again (matrix/worker/cell_cache.py) says nothing
        self.hits = 0
        self.misses = 0  # items with a key that ran again
        # Files of manifests hashed in this run (cells share packages): reads.Hashes, by path.
        self.hashes: Dict[str, Any] = {}

    def _index_path(self, index: str) -> str:
        return os.path.join(self.root, INDEX, self.kind, index[:2], index + ".json")

    def _path(self, key: str) -> str:
        return os.path.join(self.folder, key[:2], key + ".json")

    def warn(self, what: str, message: str) -> None:
        if what not in self.warned and not self.quiet:
            self.warned.add(what)
            sys.stderr.write("warning: result cache %s: %s\n" % (self.folder, message))

    def get(self, key: str) -> Optional[Dict[str, Any]]:
        """The entry kept under ``key`` (``{"record": ..., "extra": ...}``), or None."""
        path = self._path(key)
        try:
            with open(path, "rb") as f:
                entry = json.loads(f.read().decode("utf-8"))
        except (FileNotFoundError, NotADirectoryError):  # never kept, or no cache folder can be here
            return None
        except (OSError, ValueError) as exc:
            name = os.path.basename(path)
            self.warn("damaged", "ignoring an entry that cannot be read (%s: %s); it runs again" % (name, exc))
            return None
        valid = (
            isinstance(entry, dict)
            and entry.get("format") == FORMAT
            and entry.get("key") == key
            and isinstance(entry.get("record"), dict)
            and isinstance(entry.get("extra"), dict)
        )
        if not valid:
            name = os.path.basename(path)
            self.warn("foreign", "ignoring an entry of another format or key (%s); it runs again" % name)
            return None
        return entry

    def touch(self, key: str) -> None:
        """Note that an entry was used now: ``cache prune --older-than`` removes what no run used for long."""
        try:
            os.utime(self._path(key))
        except OSError:
            pass

    def latest(self, index: str) -> Optional[Dict[str, Any]]:
        """The entry last kept for the item ``index`` names (the same cell, whatever its key), or None."""
        try:
            with open(self._index_path(index), "rb") as f:
                key = json.loads(f.read().decode("utf-8")).get("key")
        except (OSError, ValueError, AttributeError):
            return None
        return self.get(key) if isinstance(key, str) and len(key) == 64 else None

    def note_run(self, run_id: str) -> None:
        """Keep this run's hits and misses, for ``cache stats``; one small file a run, so runs need no lock."""
        if not (self.hits or self.misses) or not self.writable:
            return
        fields = {"kind": self.kind, "hits": self.hits, "misses": self.misses, "at": time.time()}
        try:
            _write_json(os.path.join(self.root, STATS, "%s-%s.json" % (self.kind, run_id)), fields)
        except (OSError, ValueError) as exc:
            self.writable = False
            self.warn("write", "cannot keep results here (%s); the run goes on without keeping them" % exc)

    def put(
        self, key: str, record: Mapping[str, Any], extra: Optional[Mapping[str, Any]] = None, index: str = ""
    ) -> None:
        """Keep a result (and, under ``index``, that it is the item's latest); a folder that cannot be written
        turns keeping off for the rest of the run."""
        if not self.writable:
            return
        kept = {k: v for k, v in record.items() if k not in RUN_FIELDS}
        kept["reused_from"] = record.get("reused_from") or record.get("run_id")
        entry = {"format": FORMAT, "key": key, "record": kept, "extra": dict(extra or {})}
        try:
            _write_json(self._path(key), entry)
            if index:
                _write_json(self._index_path(index), {"key": key})
        except (OSError, TypeError, ValueError) as exc:
            self.writable = False
            self.warn("write", "cannot keep results here (%s); the run goes on without keeping them" % exc)


def _write_json(path: str, value: Any) -> None:
    """Write ``value`` to ``path`` whole or not at all: a reader never sees half a file."""
    temp = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=os.path.dirname(path))
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(value, f, sort_keys=True, default=str)
        os.replace(temp, path)
        temp = None
    finally:
        if temp is not None:
            try:
                os.unlink(temp)
            except OSError:
                pass


class ProgramStore:
    """Saved-program folders kept beside the results that made them, by the sha256 of their meta.json.

    A reused cell that kept its program must leave that program in ``--artifacts`` as a run would:
    a fresh machine with a restored cache has none. Files are hard links where the file system
    allows (no second copy), else copies; a folder appears whole or not at all.
    """

    def __init__(self, root: str) -> None:
        self.folder = os.path.join(root, "programs")

    def _path(self, meta_sha256: str) -> str:
        return os.path.join(self.folder, meta_sha256[:2], meta_sha256)

    def keep(self, meta_sha256: str, folder: str) -> bool:
        """Keep the program folder ``folder``, whose meta.json hashes to ``meta_sha256``."""
        final = self._path(meta_sha256)
        if os.path.isdir(final):
            return True
        return _place(folder, final)

    def restore(self, meta_sha256: str, target: str) -> bool:
        """Put the kept folder at ``target`` (which must not exist); False where none is kept."""
        kept = self._path(meta_sha256)
        if not os.path.isdir(kept) or file_hash(os.path.join(kept, "meta.json")) != meta_sha256:
            return False
        return _place(kept, target)


def _place(source: str, final: str) -> bool:
    """Hard-link (or copy) the files of ``source`` into a new folder ``final``, whole or not at all."""
    temp = None
    try:
        os.makedirs(os.path.dirname(final), exist_ok=True)
        temp = tempfile.mkdtemp(prefix=".tmp-", dir=os.path.dirname(final))
        for name in sorted(os.listdir(source)):
            path = os.path.join(source, name)
            if not os.path.isfile(path):
                continue
            try:
                os.link(path, os.path.join(temp, name))
            except OSError:  # another file system, or links not allowed
                shutil.copy2(path, os.path.join(temp, name))
        os.rename(temp, final)
        temp = None
        return True
    except OSError:
        return os.path.isdir(final)  # another run placed it first, or the folder cannot be written
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)


def reused(entry: Mapping[str, Any], fresh: Mapping[str, Any]) -> Dict[str, Any]:
    """The record of a reused result: what this run's parent set (identity, the case's metadata, the run),
    and the kept outcome for the rest, with ``reused_from`` naming the run that measured it."""
    record = dict(fresh)
    for key, value in entry["record"].items():
        if key in fresh and fresh[key] is None and key not in RUN_FIELDS:
            record[key] = value
    record["reused_from"] = entry["record"].get("reused_from")
    return record
