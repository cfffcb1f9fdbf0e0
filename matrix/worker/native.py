"""What native code reads, where a cell's audit hook cannot see it (:mod:`.reads` calls these while it records).

Code in C, C++ or Rust opens and maps files without Python's ``open`` event. Three ways bring what it read
into the manifest:

- **Known loaders, wrapped.** ``torch.from_file`` and ``torch.UntypedStorage.from_file`` (through which
  safetensors maps a file for torch) and safetensors' ``safe_open`` (behind ``safetensors.torch.load_file``,
  ``load_model`` and its numpy loaders) are replaced, in the cell's process alone, by wrappers that note the
  file they are given. safetensors is wrapped when it is imported (:class:`Wrapper`, first on
  ``sys.meta_path``), or at once where it was imported before.
- **What native code still holds.** At the cell's end, every file mapped into the process
  (``/proc/self/maps``) or open in it (``/proc/self/fd``): a loader nobody wrapped that keeps its file mapped
  (a tensor over an ``mmap``) or open is seen there.
- **What cannot be seen.** An extension module or a ctypes library from outside the installed distributions
  and torch may read anything; the caller (:mod:`.reads`) names it in the manifest as an entry that never
  stands, unless the case declares its ``inputs``.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Set

# Modules whose attribute of this name is a loader taking a file's path first: (module, attribute).
LOADERS = (("safetensors", "safe_open"),)


def wrap(function: Callable[..., Any], note: Callable[[str], None]) -> Callable[..., Any]:
    """``function``, noting the path it is given first (positional or ``filename``/``path``) before calling it."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        path = args[0] if args else kwargs.get("filename", kwargs.get("path"))
        if isinstance(path, (str, bytes, os.PathLike)):
            try:
                note(os.path.abspath(os.fsdecode(os.fspath(path))))
            except (TypeError, ValueError):
                pass
        return function(*args, **kwargs)

    wrapper.__matrix_wrapped__ = True  # type: ignore[attr-defined]
    return wrapper


def _wrap_attribute(owner: Any, name: str, note: Callable[[str], None]) -> None:
    current = getattr(owner, name, None)
    if current is not None and not getattr(current, "__matrix_wrapped__", False):
        try:
            setattr(owner, name, wrap(current, note))
        except (AttributeError, TypeError):  # a type that takes no new attribute: not seen, as before
            pass


class Wrapper(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path`` while a cell records: a module of :data:`LOADERS` is wrapped once it has run."""

    def __init__(self, note: Callable[[str], None]) -> None:
        self.note = note
        self.names = {module for module, _ in LOADERS}

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Optional[importlib.machinery.ModuleSpec]:
        if name not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None) if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return None  # the ordinary finders find it; it is not wrapped
        run = loader.exec_module

        def exec_module(module: Any) -> None:
            run(module)
            wrap_module(module, self.note)

        loader.exec_module = exec_module
        return spec


def wrap_module(module: Any, note: Callable[[str], None]) -> None:
    for name, attribute in LOADERS:
        if getattr(module, "__name__", None) == name:
            _wrap_attribute(module, attribute, note)


def install(note: Callable[[str], None]) -> None:
    """Wrap the known loaders in this process (see the module's docstring)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        _wrap_attribute(torch, "from_file", note)
        _wrap_attribute(getattr(torch, "UntypedStorage", None), "from_file", note)
    for name, _ in LOADERS:
        module = sys.modules.get(name)
        if module is not None:
            wrap_module(module, note)
    sys.meta_path.insert(0, Wrapper(note))


def held() -> Set[str]:
    """The files mapped into this process or open for reading in it now (Linux's ``/proc/self``; nothing
    elsewhere): not libraries (a file mapped to run anywhere) nor files open to be written (logs)."""
    mapped: Dict[str, bool] = {}
    try:
        with open("/proc/self/maps", "rb") as f:
            for line in f.read().decode("utf-8", "surrogateescape").splitlines():
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/") and not parts[5].endswith(" (deleted)"):
                    mapped[parts[5]] = mapped.get(parts[5], False) or "x" in parts[1]
    except OSError:
        pass
    found = {path for path, runs in mapped.items() if not runs}
    try:
        descriptors: List[str] = os.listdir("/proc/self/fd")
    except OSError:
        descriptors = []
    for number in descriptors:
        try:
            target = os.readlink(os.path.join("/proc/self/fd", number))
            with open(os.path.join("/proc/self/fdinfo", number), "rb") as f:
                flags = int(f.read().split(b"flags:", 1)[1].split()[0], 8)
        except (OSError, IndexError, ValueError):
            continue
        written = flags & os.O_ACCMODE == os.O_WRONLY or flags & os.O_APPEND  # a log, a journal: an output
        if target.startswith("/") and not target.endswith(" (deleted)") and not written:
            if not mapped.get(target, False):
                found.add(target)
    return found
