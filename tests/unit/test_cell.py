"""The stage protocol: every declared stage is a registered module, and a new one is its module and declaration."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pytest

from matrix.contract import stages as declared
from matrix.worker import stage

WORKER = Path(stage.__file__).parent
NAME = "_counted_calls"  # a module of matrix.worker made for this test only


class Counted(stage.StageRun):
    pass


def test_every_declared_stage_is_registered_from_the_module_its_declaration_names() -> None:
    runs = stage.registered()
    assert list(runs) == list(declared.KNOWN) == [s.name for s in declared.DECLARED]
    for declaration in declared.DECLARED:
        module = sys.modules["matrix.worker." + declaration.module]
        assert runs[declaration.name] is module.STAGE and issubclass(module.STAGE, stage.StageRun)


def test_a_new_module_is_registered_under_its_stage_name(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("matrix.worker." + NAME)
    module.STAGE = Counted  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    assert stage.runs_of((declared.Stage("counted", module=NAME),)) == {"counted": Counted}


def test_a_missing_module_fails_at_registration_naming_it() -> None:
    with pytest.raises(ImportError, match="no_such_stage_module"):
        stage.runs_of((declared.Stage("gone", module="no_such_stage_module"),))


def test_the_selected_stages_start_in_declared_order_whatever_order_they_are_named_in() -> None:
    context = stage.Context(None, "strict", {}, "cpu", budgets={"aoti": 9.0})  # type: ignore[arg-type]
    runs = stage.start(("aoti", "check", "serialize"), context)
    assert [run.declared.name for run in runs] == ["check", "serialize", "aoti"]
    assert [run.budget for run in runs] == [None, None, 9.0]


def _stage_words(path: Path) -> list:
    """The lines of ``path`` that test a stage's name as a string (``"aoti" in stages``, ``== "serialize"``)."""
    names = set(declared.KNOWN)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and node.left.value in names:
            found.append("%s:%d" % (path.name, node.lineno))
        for right in getattr(node, "comparators", []):
            if isinstance(right, ast.Constant) and right.value in names:
                found.append("%s:%d" % (path.name, node.lineno))
    return found


def test_no_stage_word_is_tested_outside_its_own_module_and_declaration() -> None:
    own = {"%s.py" % s.module for s in declared.DECLARED}
    paths = [p for p in sorted(WORKER.glob("*.py")) if p.name not in own]
    paths += [WORKER.parent / "contract" / name for name in ("requests.py", "commands.py", "options.py")]
    assert [line for path in paths for line in _stage_words(path)] == []
