"""AOTInductor as each release offers it: the API that compiles a program into a package, and the one that loads it.

The API moved between releases, so it is found by what the installed torch has, not by its version:

- from 2.6, ``torch._inductor.aoti_compile_and_package(ep, package_path=...)`` writes a PT2 package
  and ``torch._inductor.aoti_load_package(path)`` loads it;
- 2.5 packages with ``torch._inductor.aot_compile(..., options={"aot_inductor.package": True,
  "aot_inductor.output_path": ...})``; its package holds the sources, which
  ``torch._inductor.package.load_package`` compiles as it loads. It archives every file in the folder
  of the output path, so the output path is a folder of its own, archived as 2.5 archives it;
- 2.3 and 2.4 compile a bare shared library and load it with ``torch._export.aot_load(path, device)``.
  The library is compiled with ``torch._inductor.aot_compile(ep.module(), ...)``, which is what
  ``torch._export.aot_compile`` calls once it has exported the model again: the program compiled is
  the one the cell exported, in its mode, not a second export (2.3's takes the example inputs flat, as
  its ``torch._export.aot_compile`` passes them; 2.4's takes args and kwargs);
- 2.1 and 2.2 compile a library but have no Python loader: the stage is not applicable there.

Compiling needs a C++ compiler: torch runs the one ``$CXX`` names, else ``g++``
(``torch._inductor.config.cpp.cxx``), and raises ``InvalidCxxCompiler`` where there is none: the
stage is not applicable on such a machine, never a failure.

Standard library and torch only (imported when called), Python 3.8 syntax: this runs in every torch environment.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import shutil
import subprocess
import sys
import warnings
import zipfile
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Tuple

# The AOTInductor package of the aoti stage in a saved-program folder (contract/layout.py), where there is one: a PT2
# package (2.5 on), or the bare shared library that 2.3 and 2.4 compile. meta.json's ``aoti`` names which, and
# nothing else is loaded.
AOTI_PACKAGE = "aoti.pt2"
AOTI_LIBRARY = "aoti.so"
AOTI_FILES = (AOTI_PACKAGE, AOTI_LIBRARY)


# The APIs, by what the record's ``aoti_api`` calls them.
PACKAGE_API = "aoti_compile_and_package"  # 2.6 on
PACKAGE_OPTION_API = "aot_compile+load_package"  # 2.5
LIBRARY_API = "aot_compile+aot_load"  # 2.3, 2.4
NO_LOADER = (
    "no Python loader for AOTInductor (torch._export.aot_load, from 2.3; torch._inductor.aoti_load_package, from 2.6)"
)
# What torch raises where it finds no C++ compiler, wrapped or not, and its qualified name.
NO_COMPILER_ERROR = "InvalidCxxCompiler"
NO_COMPILER_TYPE = "torch._inductor.exc." + NO_COMPILER_ERROR
# How no_compiler's message starts: a machine without a C++ compiler.
NEEDS_COMPILER = "needs a C++ compiler"


@dataclasses.dataclass(frozen=True)
class Api:
    """How this release compiles a program ahead of time, and the file it makes."""

    name: str  # PACKAGE_API, PACKAGE_OPTION_API or LIBRARY_API
    file: str  # the file's name in the saved-program folder: layout.AOTI_PACKAGE or layout.AOTI_LIBRARY


class NoLoader(Exception):
    """The loading release has no loader for this kind of file: the load is not applicable."""


def find_api() -> Tuple[Optional[Api], Optional[str]]:
    """This release's AOTInductor API, or None and what the release lacks."""
    import torch

    try:
        import torch._inductor as inductor
    except Exception as exc:
        return None, "torch %s cannot import torch._inductor (%s: %s)" % (torch.__version__, type(exc).__name__, exc)
    if hasattr(inductor, "aoti_compile_and_package") and hasattr(inductor, "aoti_load_package"):
        return Api(PACKAGE_API, AOTI_PACKAGE), None
    if hasattr(inductor, "aot_compile") and _package_loader() is not None and _packages_option():
        return Api(PACKAGE_OPTION_API, AOTI_PACKAGE), None
    if hasattr(inductor, "aot_compile") and _library_loader() is not None:
        return Api(LIBRARY_API, AOTI_LIBRARY), None
    return None, "torch %s has %s" % (torch.__version__, NO_LOADER)


def _package_loader() -> Optional[Callable[..., Any]]:
    try:
        import torch._inductor.package as package
    except Exception:
        return None
    return getattr(package, "load_package", None)


def _packages_option() -> bool:
    """Whether the compile can write a package (``aot_inductor.package``), as from 2.5."""
    try:
        from torch._inductor import config
    except Exception:
        return False
    return hasattr(getattr(config, "aot_inductor", None), "package")


def _library_loader() -> Optional[Callable[..., Any]]:
    try:
        import torch._export as export
    except Exception:
        return None
    return getattr(export, "aot_load", None)


def compiler_problem() -> Optional[str]:
    """Why this machine cannot compile (torch finds no C++ compiler where it looks), or None.

    Asked the way the compile asks, with torch's own search (2.4 on ``cpp_builder``, before
    that ``codecache``); None too where this torch has neither: the compile itself then says.
    """
    find: Optional[Callable[[], Any]] = None
    try:
        from torch._inductor import cpp_builder

        find = getattr(cpp_builder, "get_cpp_compiler", None)
    except Exception:
        pass
    if find is None:
        try:
            from torch._inductor import codecache

            find = getattr(codecache, "cpp_compiler", None)
        except Exception:
            return None
    if find is None:
        return None
    try:
        find()
    except Exception as exc:
        return no_compiler(exc)
    return None


def no_compiler(exc: BaseException) -> Optional[str]:
    """The message of a compile that found no C++ compiler (``exc`` or what it wraps), else None."""
    seen = set()
    current: Optional[BaseException] = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if type(current).__name__ == NO_COMPILER_ERROR or str(current).startswith(NO_COMPILER_ERROR):
            detail = str(current).split(": ", 1)[-1] if str(current).startswith(NO_COMPILER_ERROR) else str(current)
            return "%s (g++, or the one $CXX names), which this machine lacks: %s" % (NEEDS_COMPILER, detail)
        current = current.__cause__ or current.__context__
    return None


def compile_program(api: Api, program: Any, args: Sequence[Any], kwargs: Mapping[str, Any], path: str) -> str:
    """Compile the ExportedProgram ``program`` with ``api`` into the file ``path``; returns ``path``.

    ``args`` and ``kwargs`` are the example inputs, which the APIs before 2.6 take beside the program.
    """
    import torch
    import torch._inductor as inductor

    made: Any
    if api.name == PACKAGE_API:
        compile_and_package = inductor.aoti_compile_and_package
        names = list(inspect.signature(compile_and_package).parameters)
        if names[1:2] == ["args"]:  # builds between 2.5 and 2.6 still took the example inputs
            made = compile_and_package(program, tuple(args), dict(kwargs), package_path=path)
        else:
            made = compile_and_package(program, package_path=path)
    else:
        options: Dict[str, Any] = {"aot_inductor.output_path": path}
        built = os.path.join(os.path.dirname(path), "package")
        if api.name == PACKAGE_OPTION_API:
            # 2.5 writes its sources to the folder of the output path and archives everything in that folder, the
            # archive too where it is there: they go to a folder of their own, archived below as 2.5 archives it.
            os.mkdir(built)
            options.update({"aot_inductor.output_path": built, "aot_inductor.package": True})
        aot_compile: Callable[..., Any] = inductor.aot_compile  # declared as the installed release has it
        with torch.no_grad():  # as torch._export.aot_compile compiles
            if "kwargs" in inspect.signature(aot_compile).parameters:
                made = aot_compile(program.module(), tuple(args), dict(kwargs), options=options)
            else:  # 2.3 takes the inputs flat, as its torch._export.aot_compile flattens them
                from torch.utils import _pytree as pytree

                made = aot_compile(program.module(), pytree.arg_tree_leaves(*args, **kwargs), options=options)
        if api.name == PACKAGE_OPTION_API:
            archive(built, path)
    if not os.path.isfile(path) and isinstance(made, str) and os.path.isfile(made):
        shutil.move(made, path)  # a build that names its output itself
    if not os.path.isfile(path):
        raise RuntimeError("the compile returned %r and left no %s" % (type(made).__name__, os.path.basename(path)))
    return path


def archive(folder: str, path: str) -> None:
    """Archive what 2.5's packaging compile left in ``folder`` into the PT2 file ``path`` for 2.5's
    ``load_package`` to build and load: its own writer, each file under its AOTInductor folder, as its
    ``package_aoti`` writes a ``.pt2``, and the files of subfolders too (the constants' object file is in
    one, which ``package_aoti`` fails on; ``load_package`` finds it by its suffix)."""
    writer, inside = package_writer()
    with writer(path) as archived:
        for root, folders, names in os.walk(folder):
            folders.sort()
            for name in sorted(names):
                source = os.path.join(root, name)
                archived.write_file(inside + os.path.relpath(source, folder).replace(os.sep, "/"), source)


def unpack(path: str) -> str:
    """The folder beside ``path`` that holds the files :func:`archive` put in the package ``path``, as 2.5's
    packaging compile left them; a name that would leave that folder is refused."""
    inside = package_writer()[1]
    folder = os.path.splitext(path)[0] + "-unpacked"
    with zipfile.ZipFile(path) as archived:
        for name in archived.namelist():
            if not name.startswith(inside) or name.endswith("/"):
                continue
            parts = name[len(inside) :].split("/")
            if any(part in ("", ".", "..") for part in parts):
                raise ValueError("%s: the package names a file outside its folder: %r" % (path, name))
            target = os.path.join(folder, *parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with archived.open(name) as source, open(target, "wb") as copy:
                shutil.copyfileobj(source, copy)
    if not os.path.isdir(folder):  # a package of another release's layout (2.6 on: under a folder per model)
        raise RuntimeError("the package holds no file under %s, where 2.5 keeps a package's files" % inside)
    return folder


def package_writer() -> Tuple[Any, str]:
    """2.5's PT2 archive writer and the folder in the archive that holds AOTInductor's files."""
    from torch._inductor.package.package import PT2ArchiveWriter  # type: ignore[attr-defined]  # 2.5 only
    from torch._inductor.package.pt2_archive_constants import AOTINDUCTOR_DIR  # type: ignore[import-not-found]

    return PT2ArchiveWriter, AOTINDUCTOR_DIR


# The loaders, by what a package load's record (``aoti_loader``) calls them.
PACKAGE_LOADER = "aoti_load_package"  # 2.6 on
PACKAGE_OPTION_LOADER = "load_package"  # 2.5's torch._inductor.package.load_package
LIBRARY_LOADER = "aot_load"  # torch._export.aot_load, from 2.3


def loader_for(kind: str) -> Tuple[Optional[str], Optional[str]]:
    """The loader this release has for a file of ``kind`` (``aoti.pt2`` or ``aoti.so``), or None and what it lacks.

    Found by what torch has, as :func:`load` finds it; nothing is loaded.
    """
    import torch

    if kind == AOTI_PACKAGE:
        try:
            import torch._inductor as inductor
        except Exception as exc:
            why = "%s: %s" % (type(exc).__name__, exc)
            return None, "torch %s cannot import torch._inductor (%s)" % (torch.__version__, why)
        if hasattr(inductor, "aoti_load_package"):
            return PACKAGE_LOADER, None
        if _package_loader() is not None:
            return PACKAGE_OPTION_LOADER, None
        return None, "torch %s has %s packages" % (torch.__version__, NO_LOADER)
    if kind == AOTI_LIBRARY:
        if _library_loader() is not None:
            return LIBRARY_LOADER, None
        return None, "torch %s has %s libraries" % (torch.__version__, NO_LOADER)
    return None, "%r is no AOTInductor file this loader knows (%s, %s)" % (kind, AOTI_PACKAGE, AOTI_LIBRARY)


def load(path: str, kind: str, device: str) -> Callable[..., Any]:
    """The compiled program in the file ``path``, whose kind is its name in the saved-program folder
    (``aoti.pt2`` or ``aoti.so``), loaded with this release's own loader. Raises NoLoader where there is none."""
    found, missing = loader_for(kind)
    if found == PACKAGE_LOADER:
        import torch._inductor as inductor

        return inductor.aoti_load_package(path)  # type: ignore[no-any-return]
    if found == PACKAGE_OPTION_LOADER:
        load_package = _package_loader()
        assert load_package is not None
        if "device" in inspect.signature(load_package).parameters:  # 2.5 takes the device
            # and builds the package as it loads: from a folder (from a .pt2 it links into a folder it never makes)
            return load_package(unpack(path), device)  # type: ignore[no-any-return]
        return load_package(path)  # type: ignore[no-any-return]
    if found == LIBRARY_LOADER:
        aot_load = _library_loader()
        assert aot_load is not None
        return aot_load(path, device)  # type: ignore[no-any-return]
    if kind not in (AOTI_PACKAGE, AOTI_LIBRARY):
        raise ValueError(missing)
    raise NoLoader(missing)


def spec_text(program: Any) -> str:
    """The pytree spec of an ExportedProgram's ``(args, kwargs)`` as text (AOTInductor keeps the same text)."""
    from torch.utils import _pytree

    with warnings.catch_warnings():  # newer releases warn about the spec classes they serialize
        warnings.simplefilter("ignore")
        return str(_pytree.treespec_dumps(program.call_spec.in_spec))


def spec_of(text: str) -> Any:
    """The pytree spec that :func:`spec_text` wrote."""
    from torch.utils import _pytree

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _pytree.treespec_loads(text)


def compiler_identity(environ: Optional[Mapping[str, str]] = None) -> str:
    """Which C++ compiler torch would run here, and its version: part of an aoti result's key (no torch import)."""
    env = os.environ if environ is None else environ
    name = env.get("CXX") or ("clang++" if sys.platform == "darwin" else "g++")
    found = shutil.which(name, path=env.get("PATH"))
    if found is None:
        return "%s: absent" % name
    try:
        done = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30)
        version = (done.stdout or "").strip().splitlines()[:1]
    except (OSError, subprocess.SubprocessError):
        version = []
    return "%s %s" % (os.path.realpath(found), version[0] if version else "unknown")
