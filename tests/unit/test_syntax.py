"""The worker's sources parse as Python 3.8, the oldest Python a torch environment of the matrix runs.

Ruff and mypy check the project for newer Pythons, so nothing else would notice a 3.9+
construct in the worker until an old environment failed to import it. Which modules the
worker reaches is read from its own import statements, so a new import is checked too.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from matrix.envs import worker_copy

from conftest import ROOT

OLDEST_PYTHON = (3, 8)


def _module_file(base: Path, dotted: str) -> Optional[Path]:
    """The file of module ``dotted`` under ``base`` (a package's ``__init__.py`` for a package)."""
    target = base.joinpath(*dotted.split(".")) if dotted else base
    if target.with_suffix(".py").is_file():
        return target.with_suffix(".py")
    if (target / "__init__.py").is_file():
        return target / "__init__.py"
    return None


def _imported(path: Path, tree: ast.AST, root: Path) -> List[Path]:
    """The project's files that ``path`` imports, at any depth of its code (lazy imports count)."""
    found: List[Optional[Path]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [_module_file(root, alias.name) for alias in node.names if alias.name.split(".")[0] == "matrix"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = path.parents[node.level - 1]
            elif (node.module or "").split(".")[0] == "matrix":
                base = root
            else:
                continue  # the standard library or torch
            module = _module_file(base, node.module or "")
            found.append(module)
            # `from .. import schema` imports a module, not a name of the package.
            prefix = (node.module + ".") if node.module else ""
            found += [_module_file(base, prefix + alias.name) for alias in node.names if alias.name != "*"]
    return [file for file in found if file is not None]


def worker_sources(root: Path = ROOT) -> Dict[Path, str]:
    """Every module under matrix/worker, the project's modules they import, and the packages holding them."""
    package = root / "matrix"
    pending = sorted((package / "worker").rglob("*.py"))
    sources: Dict[Path, str] = {}
    while pending:
        path = pending.pop()
        if path in sources:
            continue
        sources[path] = path.read_text(encoding="utf-8")
        pending += _imported(path, ast.parse(sources[path], filename=str(path)), root)
        # Importing a module runs its packages' __init__.py first.
        pending += [parent / "__init__.py" for parent in path.parents if package in (parent, *parent.parents)]
    return sources


SOURCES = worker_sources()


def test_the_worker_reaches_the_shared_modules_it_imports() -> None:
    reached = {path.relative_to(ROOT).as_posix() for path in SOURCES}
    assert {"matrix/__init__.py", "matrix/worker/__init__.py", "matrix/worker/__main__.py"} <= reached
    assert {"matrix/contract/schema.py", "matrix/contract/errors.py", "matrix/contract/options.py"} <= reached
    assert not any(name.startswith(("matrix/report/", "matrix/records/")) for name in reached)


def test_environments_get_a_copy_of_every_module_the_worker_imports() -> None:
    copied = set(worker_copy.worker_files(ROOT / "matrix"))
    assert set(SOURCES) <= copied, sorted(str(path) for path in set(SOURCES) - copied)


@pytest.mark.parametrize("path", sorted(SOURCES), ids=lambda path: path.relative_to(ROOT).as_posix())
def test_the_worker_parses_as_the_oldest_python(path: Path) -> None:
    ast.parse(SOURCES[path], filename=str(path), feature_version=OLDEST_PYTHON)
