"""ExportDB examples: discovered in the installed torch and loaded as cases."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from torch._export.db.examples import all_examples

from matrix.worker import exportdb
from matrix.worker.case import CaseError, CaseInfo

from conftest import old_style_example


def test_discover_returns_the_installed_examples_with_expectations():
    bundled = all_examples()
    infos = exportdb.discover()
    assert [info.name for info in infos] == ["torch-exportdb/" + name for name in sorted(bundled)]
    for info in infos:
        example = bundled[info.name.split("/", 1)[1]]
        want = "supported" if example.support_level.name == "SUPPORTED" else "not-supported-yet"
        assert info.expected == want, info.name
        assert info.source == "exportdb"
        assert info.description and info.description == inspect.cleandoc(example.description)
        assert set(info.tags) == set(example.tags)
        assert info.path == "torch/_export/db/examples/%s.py" % info.name.split("/", 1)[1]
        assert info.problem is None


def test_kwargs_reach_the_case():
    (info,) = [info for info in exportdb.discover() if info.name == "torch-exportdb/fn_with_kwargs"]
    case = exportdb.load(info)
    assert case.example_kwargs and all(isinstance(k, str) for k in case.example_kwargs)


def test_unknown_example_is_a_case_error():
    info = CaseInfo(name="torch-exportdb/no_such_example", path="x", description="x", source="exportdb")
    with pytest.raises(CaseError, match="no ExportDB example 'no_such_example'"):
        exportdb.load(info)


def test_constraint_era_examples_drop_their_extra_inputs(monkeypatch: pytest.MonkeyPatch):
    example = old_style_example()
    example.constraints = ["a dynamic_dim constraint the runner cannot pass"]
    monkeypatch.setattr(exportdb, "_examples", lambda: {"scaled_sum": example})
    (info,) = exportdb.discover()
    assert exportdb.load(info).extra_args == ()


def test_unreadable_examples_package_is_a_case_error(monkeypatch: pytest.MonkeyPatch):
    def broken(name: str) -> Any:
        raise RuntimeError("Error on conflict export case name.")

    monkeypatch.setattr(exportdb.importlib, "import_module", broken)
    with pytest.raises(CaseError, match="cannot be read with this torch .*use --source cases"):
        exportdb.discover()
