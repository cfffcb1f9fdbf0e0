"""What a cell read, recorded in the cell's own process while it runs: the manifest its kept result is checked by.

A cell's result depends on more than its case file: the local package its model comes from, a
module it imports by name (``importlib.import_module``), a package found on ``sys.path`` as an
editable install is, a data file it opens or ``torch.load``s. As a build system keeps a depfile
and ccache its manifest, the cell's process records, while the cell runs:

- every file opened for reading, through an audit hook (``sys.addaudithook``: ``open`` events,
  raised by ``open``, ``io.open``, ``os.open`` and so by ``torch.load``, ``numpy.load`` and ``numpy.memmap``);
  a file opened to be written (``w``, ``a``, ``x``: created, truncated or write-only) is an output, and one
  opened ``r+`` is read;
- what native code reads (:mod:`.native`): the files given to known native loaders (``torch.from_file``,
  safetensors), every file mapped or open at the cell's end, and the native code loaded from outside the
  installed distributions, whose reads cannot be seen;
- every folder listed (``os.listdir`` and ``os.scandir`` events, so ``glob``, ``os.walk`` and ``pathlib``),
  except by the import system, which lists the folders of ``sys.path`` to find modules (the modules it
  found are kept);
- every environment variable read (``os.environ[...]``, ``.get``, ``os.getenv``, ``in``), with its value or
  its absence, except those the key holds, those of speed alone and the runner's
  (:func:`.reuse.case_variable`); enumerating the environment (``os.environ.copy()``, ``.items()``) reads
  no name, but ``dict(os.environ)`` reads each from C, as by name;
- the files its case declares in ``inputs``;
- every extension module imported (``import`` events name its file), and the source of every compiled
  module file opened (a ``.pyc`` stands for its ``.py``);
- the module files of what the process held when it started recording: taken in the process that
  forked it, before the fork (:class:`Inherited`), so that a cell's process does not read every module
  object again (each read writes its reference count, and a page written in a forked process is copied:
  a page fault each, for thousands of modules). Where the modules held differ from that list, or no such list
  was taken, every module file in ``sys.modules`` at the cell's end instead.

Of the files, it keeps those nothing else in the key covers: not torch's own (the build is in the
key), not an installed distribution's (the package set is in the key), not the standard library's,
not the worker's (its source is in the key), not ``/proc``, ``/dev`` or ``/sys``, not the run's
temporary folder, the result cache or ``--artifacts``, not compiled ``.pyc`` files (their sources are
kept) and not files the cell itself wrote. Editable installs and anything else on ``sys.path`` outside
those folders are kept; of the files mapped or open at the cell's end, libraries (mapped to run) and
the C library's locale data are not. Each file is kept with its sha256, each listing with a hash of its
names, each variable with a hash of its value (:mod:`.manifests`); a later lookup takes them again
(:func:`.manifests.changed`) and reuses the result only if every one matches.

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
import importlib.machinery
import os
import site
import sys
import sysconfig
import time
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Set, Tuple

from . import manifests, native
from .manifests import FILE, INPUTS, NATIVE, VARIABLE, Manifest
from .reuse import case_variable, file_hash

# The result key under which a cell's process sends its manifest to the batch parent; never a record field.
READS = "reads"
# "0": record nothing (so keep nothing); for benchmarks/reads.py alone.
SWITCH = "EXPORT_MATRIX_RECORD_READS"
# Folder names that hold installed distributions, wherever they are.
INSTALLED = ("site-packages", "dist-packages")
# Folders of the machine, not of the case.
SYSTEM = ("/proc", "/dev", "/sys")
# Files mapped into a process that are the C library's, not a case's: its locale data.
LOCALE = (os.sep + "locale" + os.sep, os.sep + "gconv" + os.sep)

_allowed = False
_installed = False
_opened: Optional[Set[str]] = None  # while a cell records: absolute paths opened for reading
_current: Optional[Recording] = None
_written: Set[str] = set()
_listed: Set[str] = set()  # folders listed
_loaded: Set[str] = set()  # native code loaded: extension modules' files, ctypes' libraries ("" for a bare name)
_variables: Dict[str, Optional[str]] = {}  # variables read: the value each had when first read, None: unset
_set_first: Set[str] = set()  # variables the cell set or removed before reading them: its own, not an input
# A file opened with one of these is written (created, truncated or write-only): an output. ``r+`` is read.
_WRITES = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
_EVENTS = frozenset({"open", "import", "os.listdir", "os.scandir", "ctypes.dlopen"})  # the events recorded
_EXTENSIONS = tuple(importlib.machinery.EXTENSION_SUFFIXES)
_inherited: Optional[Inherited] = None  # the modules held at the last fork (see Inherited)
_covered: Optional[Tuple[str, ...]] = None  # _covered_folders(), once torch is imported


def allow() -> None:
    """This process runs one cell and ends: its reads may be recorded (see the module's docstring)."""
    global _allowed
    _allowed = True


def enabled() -> bool:
    return os.environ.get(SWITCH, "1") != "0"


def _hook(event: str, args: Tuple[Any, ...], _events: FrozenSet[str] = _EVENTS) -> None:
    # Called for every audit event (``builtins.id`` most often, thousands a cell): return at once (the events
    # as a local name: one lookup less each call).
    if event not in _events or _opened is None:
        return
    try:
        if event == "import":  # an extension module's file is loaded without an ``open`` event
            if len(args) > 1 and isinstance(args[1], str):
                path = os.path.abspath(args[1])
                _opened.add(path)
                if path.endswith(_EXTENSIONS):
                    _loaded.add(path)
            return
        if event == "ctypes.dlopen":
            name = args[0] if args else None
            if isinstance(name, str) and os.sep in name:
                _loaded.add(os.path.abspath(name))
            elif not _covered_call(sys._getframe(1), name):
                _loaded.add("")  # a library by name, or the program itself: what the case calls in it is unknown
            return
        if event != "open":  # a listing: os.listdir, os.scandir
            folder = args[0] if args else None
            # The import system lists sys.path's folders to find modules: what it found is kept, not the listing.
            caller = sys._getframe(1).f_code
            finding = caller.co_name == "_fill_cache" and "importlib" in caller.co_filename
            if not isinstance(folder, int) and not finding:
                _listed.add(os.path.abspath(os.fsdecode(os.fspath(folder or "."))))
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


def _covered_call(frame: Any, name: Optional[str]) -> bool:
    """Whether a library opened by name (or the program itself, ``name`` None) was opened by code the key covers:
    ctypes' own first import (``pythonapi = PyDLL(None)``, in a cell of a release that had not imported ctypes
    before it), or torch, an installed distribution or the standard library calling ctypes (a CUDA build's
    ``torch.cuda.is_available()`` opens ``libnvidia-ml.so.1`` in every cell). What they do with it is the build's
    and the machine's, as the files they open are. The same call made by a case, or by code of its own, may read
    any file through the library: it is kept as unknown."""
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "ctypes":
        if name is None and frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "ctypes":
            return True
        frame = frame.f_back
    if frame is None:
        return False
    path = frame.f_code.co_filename
    return path.startswith(_covered_folders()) or _installed_path(path)


def _note(path: str) -> None:
    """A file a known native loader was given (:mod:`.native`)."""
    if _opened is not None:
        _opened.add(path)


def _watch_environment() -> None:
    """Note each variable this process reads by name (see the module's docstring): ``os.environ``'s class, so
    every reference to it, ``os.getenv`` and ``in`` too (they read through ``__getitem__``)."""
    environ = type(os.environ)
    get, put, remove = environ.__getitem__, environ.__setitem__, environ.__delitem__

    def getitem(self: Any, key: str) -> str:
        # Enumerating (``copy()``, ``items()``) reads every name: none is the cell's choice.
        reading = _opened is not None and isinstance(key, str) and key not in _variables and key not in _set_first
        if reading and sys._getframe(1).f_code.co_name not in ("__iter__", "copy"):
            try:
                value = get(self, key)
            except KeyError:
                _variables[key] = None
                raise
            _variables[key] = value
            return value
        return get(self, key)

    def setitem(self: Any, key: str, value: str) -> None:
        if _opened is not None and key not in _variables:
            _set_first.add(key)
        put(self, key, value)

    def delitem(self: Any, key: str) -> None:
        if _opened is not None and key not in _variables:
            _set_first.add(key)
        remove(self, key)

    environ.__getitem__, environ.__setitem__, environ.__delitem__ = getitem, setitem, delitem  # type: ignore


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
    with; None: scan ``sys.modules`` at the end. ``inputs``: the patterns the case declares (``CaseInfo.inputs``).
    """

    def __init__(self, inherited: Optional[Inherited] = None, inputs: Sequence[str] = ()) -> None:
        self.started_ns = time.time_ns()
        self.inherited = inherited
        self.inputs = tuple(inputs)
        self.held = _held()  # files open or mapped as the cell starts: its parent's (a journal), not its reads

    def finish(self, case_file: str, exclude: Sequence[Optional[str]] = ()) -> Optional[Manifest]:
        """The manifest of what the cell read, or None where it cannot be trusted (a file changed while the
        cell ran, or cannot be hashed now): such a result is not kept."""
        global _opened, _current
        opened, _opened, _current = _opened or set(), None, None
        return self.manifest(opened, case_file, exclude)

    def manifest(self, opened: Set[str], case_file: str, exclude: Sequence[Optional[str]]) -> Optional[Manifest]:
        global _opened
        paused, _opened = _opened, None  # what making the manifest reads (``tempfile``'s variables) is not the cell's
        try:
            return self._manifest(opened, case_file, exclude)
        finally:
            _opened = paused

    def _manifest(self, opened: Set[str], case_file: str, exclude: Sequence[Optional[str]]) -> Optional[Manifest]:
        inputs = self.inputs
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
        opened.update(_held() - self.held)  # what native code still holds: not what the process held before
        folder = os.path.dirname(os.path.abspath(case_file))
        declared = {path for pattern in inputs for path in manifests.matched(pattern, folder)}
        found: Manifest = []
        for path in sorted((opened - _written) | declared):
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
            found.append([FILE, manifests.shown(path, folder), digest])
        found += manifests.listing_entries([p for p in _listed if not _skipped(os.path.join(p, ""), skip)], folder)
        found += [[VARIABLE, name, manifests.variable_hash(value)] for name, value in sorted(_variables.items())
                  if case_variable(name)]  # fmt: skip
        found += [[INPUTS, pattern, manifests.inputs_hash(pattern, folder)] for pattern in sorted(set(inputs))]
        if not inputs:  # native code from outside the installed distributions: what it read is unknown
            unseen = sorted(path for path in _loaded if not path or not _skipped(path, skip))
            found += [[NATIVE, manifests.shown(path, folder) if path else "a library loaded by name", ""]
                      for path in unseen]  # fmt: skip
        return found


def _held() -> Set[str]:
    """The files this process holds, mapped or open (:func:`.native.held`), but libraries and locale data."""
    return {path for path in native.held() if not any(part in path for part in LOCALE)}


def start(inputs: Sequence[str] = ()) -> Optional[Recording]:
    """Start recording this cell's reads (its case declaring ``inputs``); None where this process may not
    (inline) or recording is off."""
    global _installed, _opened, _current
    if not _allowed or not enabled():
        return None
    if not _installed:
        sys.addaudithook(_hook)
        _watch_environment()
        native.install(_note)
        _installed = True
    _opened = set()
    for noted in (_written, _listed, _loaded, _variables, _set_first):
        noted.clear()
    _current = Recording(_inherited if _inherited is not None and _inherited.held() else None, inputs)
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
