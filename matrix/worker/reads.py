"""What a cell read, recorded in the cell's own process while it runs: the manifest its kept result is checked by.

A cell's result depends on more than its case file: the local package its model comes from, a
module it imports by name (``importlib.import_module``), a package found on ``sys.path`` as an
editable install is, a data file it opens or ``torch.load``s. As a build system keeps a depfile
and ccache its manifest, the cell's process records, while the cell runs:

- every file opened for reading, through an audit hook (``sys.addaudithook``: ``open`` events,
  raised by ``open``, ``io.open``, ``os.open`` and so by ``torch.load``);
- every extension module imported (``import`` events name its file), and the source of every compiled
  module file opened (a ``.pyc`` stands for its ``.py``);
- the module files of what the process held when it started recording: taken in the process that
  forked it, before the fork (:class:`Inherited`), so that a cell's process does not read every module
  object again (each read writes its reference count, and a page written in a forked process is copied:
  a page fault each, for thousands of modules). Where the modules held differ from that list, or no such list
  was taken, every module file in ``sys.modules`` at the cell's end instead.

Of those, it keeps the files nothing else in the key covers: not torch's own (the build is in the
key), not an installed distribution's (the package set is in the key), not the standard library's,
not the worker's (its source is in the key), not ``/proc``, ``/dev`` or ``/sys``, not the run's
temporary folder, the result cache or ``--artifacts``, not compiled ``.pyc`` files (their sources are
kept) and not files the cell itself wrote. Editable installs and anything else on ``sys.path`` outside
those folders are kept. Each file is kept with its sha256; a later lookup hashes them again
(:func:`changed`) and reuses the result only if every one matches.

An audit hook cannot be removed, so it is installed only in a cell's own process, forked or
spawned for that cell alone (:func:`allow`, called by :mod:`.isolate`). Without isolation
(``--isolation inline``) nothing is recorded, and a result without a manifest is never kept:
modules an earlier cell imported into the same process would hide what a later cell reads.

``EXPORT_MATRIX_RECORD_READS=0`` turns recording off (and with it keeping results): for
``benchmarks/reads.py``, which measures what recording costs, alone.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
import os
import site
import sys
import sysconfig
import time
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from .reuse import file_hash

# The result key under which a cell's process sends its manifest to the batch parent; never a record field.
READS = "reads"
# "0": record nothing (so keep nothing); for benchmarks/reads.py alone.
VARIABLE = "EXPORT_MATRIX_RECORD_READS"
# Folder names that hold installed distributions, wherever they are.
INSTALLED = ("site-packages", "dist-packages")
# Folders of the machine, not of the case.
SYSTEM = ("/proc", "/dev", "/sys")
# A manifest: [[path, sha256], ...]; a path relative to the case's folder where the file is inside it.
Manifest = List[List[str]]

_allowed = False
_installed = False
_opened: Optional[Set[str]] = None  # while a cell records: absolute paths opened for reading
_current: Optional[Recording] = None
_written: Set[str] = set()
_WRITES = os.O_WRONLY | os.O_RDWR
_inherited: Optional[Inherited] = None  # the modules held at the last fork (see Inherited)
_covered: Optional[Tuple[str, ...]] = None  # _covered_folders(), once torch is imported
# Files a hash memo (:func:`hash_of`) never serves: changed this recently, a same-size rewrite may keep its time.
RECENT_NS = 2 * 10**9


def allow() -> None:
    """This process runs one cell and ends: its reads may be recorded (see the module's docstring)."""
    global _allowed
    _allowed = True


def enabled() -> bool:
    return os.environ.get(VARIABLE, "1") != "0"


def _hook(event: str, args: Tuple[Any, ...]) -> None:
    # Called for every audit event (``builtins.id`` most often, thousands a cell): return at once.
    if event != "open" and event != "import" or _opened is None:
        return
    try:
        if event == "import":  # an extension module's file is loaded without an ``open`` event
            if len(args) > 1 and isinstance(args[1], str):
                _opened.add(os.path.abspath(args[1]))
            return
        path, flags = args[0], args[2]
        if isinstance(path, int):  # a file descriptor: opened already, by path, where it was seen
            return
        path = os.path.abspath(os.fsdecode(os.fspath(path)))
        if isinstance(flags, int) and flags & _WRITES:
            _written.add(path)
        else:
            _opened.add(path)
    except Exception:  # a hook that raises would fail the cell's open: record less, never break the cell
        pass


@dataclasses.dataclass(frozen=True)
class Inherited:
    """The modules a process held when it forked: each name with its module's ``id``, and the files of those a
    cell's manifest may keep (the rest are torch's, installed or the standard library's)."""

    modules: Mapping[str, int]
    files: Tuple[str, ...]

    def held(self, same_objects: bool = False) -> bool:
        """Whether this process holds modules of exactly these names; ``same_objects``: and these very modules
        (which reads each module: in a cell's process, names only)."""
        modules = sys.modules
        if len(modules) != len(self.modules):
            return False
        if same_objects:
            return all(id(modules.get(name)) == number for name, number in self.modules.items())
        return all(name in modules for name in self.modules)


def _note_modules() -> None:
    """Before each fork: what the child inherits (:class:`Inherited`), taken again where the modules changed."""
    global _inherited
    if _opened is not None:  # a cell that forks: its process goes on recording
        return
    try:
        if _inherited is not None and _inherited.held(same_objects=True):
            return
        skip = _covered_folders()
        names: Dict[str, int] = {}
        files: Set[str] = set()
        for name, module in list(sys.modules.items()):
            # A copy of the name: the child reads these strings, not sys.modules' own keys (see the docstring).
            names[name.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")] = id(module)
            path = getattr(module, "__file__", None)
            if isinstance(path, str) and not path.startswith(skip) and not _installed_path(path):
                files.add(os.path.abspath(path))
        _inherited = Inherited(names, tuple(sorted(files)))
    except Exception:  # the child scans sys.modules itself
        _inherited = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_note_modules)


class Recording:
    """The reads of one cell, from :func:`start` to :meth:`finish`.

    ``inherited``: the modules this process held when recording started, where they are those it was forked
    with; None: scan ``sys.modules`` at the end.
    """

    def __init__(self, inherited: Optional[Inherited] = None) -> None:
        self.started_ns = time.time_ns()
        self.inherited = inherited

    def finish(self, case_file: str, exclude: Sequence[Optional[str]] = ()) -> Optional[Manifest]:
        """The manifest of what the cell read, or None where it cannot be trusted (a file changed while the
        cell ran, or cannot be hashed now): such a result is not kept."""
        global _opened, _current
        opened, _opened, _current = _opened or set(), None, None
        return self.manifest(opened, case_file, exclude)

    def manifest(self, opened: Set[str], case_file: str, exclude: Sequence[Optional[str]]) -> Optional[Manifest]:
        skip = _excluded(exclude)
        if self.inherited is not None:
            opened.update(self.inherited.files)
        else:
            for module in list(sys.modules.values()):
                path = getattr(module, "__file__", None)
                # Most of them are torch's or the standard library's: dropped here, before any path is worked out.
                if isinstance(path, str) and not path.startswith(skip) and not _installed_path(path):
                    opened.add(os.path.abspath(path))
        opened.update(_sources(opened, skip))
        folder = os.path.dirname(os.path.abspath(case_file))
        manifest: Manifest = []
        for path in sorted(opened - _written):
            if _skipped(path, skip) or not os.path.isfile(path):
                continue
            try:
                if os.stat(path).st_mtime_ns > self.started_ns:
                    return None  # changed while the cell ran: which content it read is unknown
            except OSError:
                return None
            digest = file_hash(path)
            if digest is None:
                return None
            manifest.append([shown(path, folder), digest])
        return manifest


def start() -> Optional[Recording]:
    """Start recording this cell's reads; None where this process may not (inline) or recording is off."""
    global _installed, _opened, _current
    if not _allowed or not enabled():
        return None
    if not _installed:
        sys.addaudithook(_hook)
        _installed = True
    _opened = set()
    _written.clear()
    _current = Recording(_inherited if _inherited is not None and _inherited.held() else None)
    return _current


def so_far(case_file: str, exclude: Sequence[Optional[str]] = ()) -> Optional[Manifest]:
    """The manifest of what this cell has read until now, for a result it keeps before it ends (a diagnosis);
    None where nothing is recorded, or it cannot be trusted: then nothing is kept."""
    if _current is None or _opened is None:
        return None
    return _current.manifest(set(_opened), case_file, exclude)


def _excluded(extra: Sequence[Optional[str]]) -> Tuple[str, ...]:
    """The folders whose files the key covers otherwise, or that are the run's own (see the module's docstring)."""
    import tempfile

    found = [tempfile.gettempdir()]  # a run's own folder (matrix/worker/scratch.py) in a cell's process
    found += [path for path in extra if path]
    return tuple(sorted(set(_covered_folders()) | {os.path.join(os.path.realpath(p), "") for p in found}))


def _covered_folders() -> Tuple[str, ...]:
    """The folders whose files the key covers: the system's, the standard library, installed distributions,
    torch and the worker; worked out once torch is imported (a forked cell inherits them)."""
    global _covered
    if _covered is not None:
        return _covered
    found: List[str] = list(SYSTEM)
    paths = sysconfig.get_paths()
    found += [paths.get(name, "") for name in ("stdlib", "platstdlib", "purelib", "platlib")]
    try:
        found += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # an old virtualenv's site module
        pass
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        found.append(os.path.dirname(str(torch.__file__)))
    found.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the worker and the contract
    covered = tuple(sorted({os.path.join(os.path.realpath(p), "") for p in found if p} | {p + "/" for p in SYSTEM}))
    if torch is not None:
        _covered = covered
    return covered


def _sources(opened: Set[str], skip: Tuple[str, ...]) -> List[str]:
    """The source files of the compiled module files in ``opened`` (a module imported while the cell ran is read
    from its ``.pyc`` where that is up to date): the manifest keeps sources."""
    from importlib.util import source_from_cache

    found = []
    for path in opened:
        if path.endswith(".pyc") and not path.startswith(skip) and not _installed_path(path):
            try:
                source = source_from_cache(path)
            except ValueError:  # not in a __pycache__ folder: a module without its source
                continue
            if os.path.isfile(source):
                found.append(os.path.abspath(source))
    return found


def _installed_path(path: str) -> bool:
    return any(os.sep + name + os.sep in path for name in INSTALLED)


def _skipped(path: str, excluded: Tuple[str, ...]) -> bool:
    if os.sep + "__pycache__" + os.sep in path or path.endswith((".pyc", ".pyo")) or _installed_path(path):
        return True
    if path.startswith(excluded):
        return True
    return os.path.realpath(path).startswith(excluded)  # a folder reached through a link


def shown(path: str, folder: str) -> str:
    """A path as a manifest keeps it: relative to the case's folder where inside it (a moved checkout still
    matches), else absolute."""
    relative = os.path.relpath(path, folder)
    return path if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def valid(manifest: Any) -> bool:
    """Whether ``manifest`` has the shape :meth:`Recording.finish` gives."""
    return isinstance(manifest, list) and all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair) for pair in manifest
    )


# A hash memo: by path, the file's identity (size, times, inode) and its sha256 when it had that identity.
Hashes = Dict[str, Tuple[Tuple[int, int, int, int], Optional[str]]]


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


def changed(manifest: Manifest, case_file: str, hashes: Optional[Hashes] = None) -> List[str]:
    """What of a manifest differs now: ``"<path> changed"`` or ``"<path> is gone or unreadable"``; [] where none.

    ``hashes``: this run's memo of the files hashed already (cells share their packages; :func:`hash_of`).
    """
    folder = os.path.dirname(os.path.abspath(case_file))
    found = []
    for path, digest in manifest:
        now = hash_of(os.path.normpath(os.path.join(folder, path)), hashes)
        if now is None:
            found.append("%s is gone or unreadable" % path)
        elif now != digest:
            found.append("%s changed" % path)
    return found
