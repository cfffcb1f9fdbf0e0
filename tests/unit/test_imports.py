"""The architecture, checked on the sources: one contract between host and worker, imports one way, no circle.

- the contract (matrix/contract) imports the standard library and itself only;
- the worker (matrix/worker) imports the contract, itself, the standard library and torch;
- the host (everything else, and noxfile.py) imports the contract, never the worker, except the
  modules in HOST_WORKER_DOORS, and never torch;
- the host's layers (contract, envs, records, report, the commands) import downwards only;
- no import circle anywhere in matrix/.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

from conftest import ROOT

PACKAGE = ROOT / "matrix"
# The only host modules that reach the worker: the command line runs the worker's commands in this
# interpreter (`export-matrix run`), and environments ship a copy of the worker and start it there.
HOST_WORKER_DOORS = {"matrix.commands", "matrix.envs.environments"}  # the command table, the environments
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> Dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


MODULES = project_modules()


def imports(path: Path) -> Iterator[Tuple[str, int]]:
    """Every module a file imports (anywhere in it, lazy imports included), absolute.

    ``from PACKAGE import name`` imports the submodule PACKAGE.name where there is one, else PACKAGE;
    in a host module, a string naming a project module (``importlib.import_module("matrix.worker.runner")``,
    ``-m matrix.worker``) counts as importing it.
    """
    name = module_name(path) if path.is_relative_to(PACKAGE) else path.stem
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
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
            submodules = [target + "." + alias.name for alias in node.names if target + "." + alias.name in MODULES]
            yield from ((module, node.lineno) for module in submodules)
            if len(submodules) < len(node.names):
                yield target, node.lineno
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and side(name) == "host":
            if node.value in MODULES:
                yield node.value, node.lineno


def side(module: str) -> str:
    if module == "matrix" or module.startswith("matrix.contract"):
        return "contract"
    if module.startswith("matrix.worker"):
        return "worker"
    return "host"


def violations(module: str, path: Path) -> List[str]:
    """Why ``module`` breaks the rule, one line per import."""
    wrong = []
    here = side(module)
    for target, line in imports(path):
        top = target.split(".")[0]
        where = "%s:%d imports %s" % (path.relative_to(ROOT), line, target)
        if top == "matrix":
            there = side(target)
            if here == "contract" and there != "contract":
                wrong.append(where + " (the contract imports only the standard library and itself)")
            elif here == "worker" and there == "host":
                wrong.append(where + " (the worker imports only the contract, itself, the standard library and torch)")
            elif here == "host" and there == "worker" and module not in HOST_WORKER_DOORS:
                wrong.append(where + " (the host reaches the worker through matrix.contract only)")
        elif here == "contract" and top not in STDLIB:
            wrong.append(where + " (the contract is standard library only)")
        elif here == "worker" and top not in STDLIB | {"torch"}:
            wrong.append(where + " (the worker runs where only torch is installed)")
        elif here == "host" and top == "torch":
            wrong.append(where + " (the host never imports torch)")
    return wrong


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_keeps_to_its_side(module: str) -> None:
    assert violations(module, MODULES[module]) == []


def test_the_noxfile_builds_requests_and_never_imports_the_worker() -> None:
    wrong = [target for target, _ in imports(ROOT / "noxfile.py") if side(target) == "worker"]
    assert wrong == []


def test_at_most_two_host_modules_reach_the_worker() -> None:
    reaching = {
        module
        for module, path in MODULES.items()
        if side(module) == "host" and any(side(target) == "worker" for target, _ in imports(path))
    }
    assert reaching <= HOST_WORKER_DOORS and len(reaching) <= 2, sorted(reaching)


# The host's layers, lowest first: a module imports from its own layer and those below, never from one above; the
# commands (matrix.commands.check, matrix.commands.probe, matrix.commands.companion_probe, ...) are the top layer.
# matrix.parallel, a process pool, is a tool of every layer. The worker's side is checked above.
LAYERS = ("matrix.contract", "matrix.envs", "matrix.records", "matrix.report")
TOOLS = {"matrix", "matrix.parallel"}


def layer(module: str) -> int:
    return next((i for i, name in enumerate(LAYERS) if module == name or module.startswith(name + ".")), len(LAYERS))


def test_no_host_module_imports_from_a_layer_above_its_own() -> None:
    wrong = [
        "%s:%d imports %s" % (MODULES[module].relative_to(ROOT), line, target)
        for module in MODULES
        if side(module) != "worker"
        for target, line in imports(MODULES[module])
        if target in MODULES and side(target) != "worker" and target not in TOOLS and layer(target) > layer(module)
    ]
    assert wrong == []


def graph() -> Dict[str, Set[str]]:
    edges: Dict[str, Set[str]] = {}
    for module, path in MODULES.items():
        edges[module] = {target for target, _ in imports(path) if target in MODULES and target != module}
    return edges


def circles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(edges) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_the_package() -> None:
    assert circles(graph()) == []


def test_the_rule_catches_a_host_module_that_imports_the_worker(tmp_path: Path) -> None:
    assert side("matrix.records.store") == "host" and side("matrix.contract.schema") == "contract"
    assert side("matrix.worker.batch") == "worker"
    path = PACKAGE / "records" / "store.py"
    text = path.read_text(encoding="utf-8")
    assert not violations("matrix.records.store", path)
    # The same rule on a copy that reaches into the worker: named, with its line.
    copy = ROOT / "matrix" / "records" / ".store_check.py"
    try:
        copy.write_text(text + "\nfrom matrix.worker import batch\n", encoding="utf-8")
        found = violations("matrix.records.store", copy)
    finally:
        copy.unlink()
    assert len(found) == 1 and "imports matrix.worker.batch" in found[0]
