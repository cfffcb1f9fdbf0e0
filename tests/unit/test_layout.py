"""The architecture, checked on the sources: the worker imports no host module, the host never imports torch."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, Set, Tuple

from conftest import ROOT

PACKAGE = ROOT / "matrix"
# What the worker may import from the package besides itself: standard-library modules it shares.
SHARED = {"matrix", "matrix.schema", "matrix.errors", "matrix.options"}
HOST_PACKAGES = ("matrix.envs", "matrix.records", "matrix.report")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> Iterator[Tuple[str, int]]:
    """Every module a file imports (anywhere in it, lazy imports included), absolute."""
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else module_name(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, node.lineno
            for alias in node.names:  # `from . import records` imports matrix.worker.records
                yield target + "." + alias.name, node.lineno


def test_the_worker_imports_only_itself_the_shared_modules_the_standard_library_and_torch() -> None:
    wrong: Set[str] = set()
    for path in sorted((PACKAGE / "worker").glob("*.py")):
        for target, line in imports(path):
            top = target.split(".")[0]
            if top == "matrix":
                if not (target.startswith("matrix.worker") or target in SHARED or target.rsplit(".", 1)[0] in SHARED):
                    wrong.add("%s:%d imports %s" % (path.relative_to(ROOT), line, target))
            elif top in {"pandas", "numpy", "matplotlib", "pyarrow", "orjson", "packaging", "tabulate", "nox"}:
                wrong.add("%s:%d imports %s" % (path.relative_to(ROOT), line, target))
    assert not wrong, sorted(wrong)


def test_the_shared_modules_import_nothing_of_the_host() -> None:
    for name in ("schema", "errors", "options", "__init__"):
        path = PACKAGE / (name + ".py")
        found = [t for t, _ in imports(path) if t.split(".")[0] == "matrix" and t.startswith(HOST_PACKAGES)]
        assert found == [], (path, found)


def test_the_host_side_never_imports_torch() -> None:
    host = [p for p in PACKAGE.rglob("*.py") if "worker" not in p.relative_to(PACKAGE).parts]
    wrong = [
        "%s:%d" % (path.relative_to(ROOT), line)
        for path in host
        for target, line in imports(path)
        if target.split(".")[0] == "torch"
    ]
    assert host and not wrong, wrong
