"""One use object per product: the load batch and a run's fresh loads both call it, side by side."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Set

from matrix.contract import products
from matrix.worker import uses

WORKER = Path(uses.__file__).parent


def _imports(module: str) -> Set[str]:
    """The worker modules ``module`` imports, at its top or inside a function."""
    tree = ast.parse((WORKER / (module + ".py")).read_text(encoding="utf-8"))
    found: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
    return {name for name in found if (WORKER / (name + ".py")).exists()}


def _reached(start: str) -> Set[str]:
    seen, todo = set(), [start]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += sorted(_imports(module))
    return seen


def test_the_run_never_imports_the_load_batch() -> None:
    assert "loader" not in _reached("runner")
    assert "uses" in _reached("cell_cache") and "uses" in _reached("loader")  # both call the uses


def test_every_product_has_its_use_and_no_worker_module_asks_which_product_it_has() -> None:
    assert [uses.of(product).product for product in products.PRODUCTS] == list(products.PRODUCTS)
    asking = []
    for path in sorted(WORKER.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                names = [n.id for n in (node.left, *node.comparators) if isinstance(n, ast.Name)]
                if {"PROGRAM", "PACKAGE", "COMPILE"} & set(names):
                    asking.append("%s:%d" % (path.name, node.lineno))
    assert asking == []


def test_each_use_keeps_its_own_journal_key_and_label() -> None:
    key = ("2.5.1", "cpu", "3.11", "lin", "strict")
    program, package, compiled = (uses.journal_key(key, "", product) for product in products.PRODUCTS)
    assert program == ('["2.5.1", "cpu", "3.11", "lin"]', "strict", 0)  # as loads were keyed before products
    assert package != compiled and products.PACKAGE.kind in package[0] and products.COMPILE.kind in compiled[0]
    assert uses.journal_key(key, "", products.PROGRAM, "cuda") != program
