from __future__ import annotations

import copy
import inspect
from types import SimpleNamespace
from typing import Any, Dict

import pytest
import torch
from torch._export.db.examples import all_examples

from matrix.worker import capabilities, exportdb
from matrix.worker.case import CaseError, CaseInfo

from conftest import by_cell, read_cells, run_matrix

FOUND = capabilities.detect()


def _export(case: Any, strict: bool) -> Any:
    kwargs: Dict[str, Any] = {}
    if FOUND["export.strict"]:
        kwargs["strict"] = strict
    if case.dynamic_shapes is not None:
        kwargs["dynamic_shapes"] = case.dynamic_shapes
    return torch.export.export(
        case.model, copy.deepcopy(case.example_args), copy.deepcopy(case.example_kwargs), **kwargs
    )


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


@pytest.mark.parametrize("name", ["static_if", "fn_with_kwargs", "cond_operands"])
def test_loaded_examples_export_and_match_eager(name: str):
    (info,) = [info for info in exportdb.discover() if info.name == "torch-exportdb/" + name]
    case = exportdb.load(info)
    assert case.info is info
    assert isinstance(case.model, torch.nn.Module)
    expected = copy.deepcopy(case.model)(*copy.deepcopy(case.example_args), **copy.deepcopy(case.example_kwargs))
    for strict in (True, False) if FOUND["export.strict"] else (True,):
        ep = _export(case, strict)
        actual = ep.module()(*copy.deepcopy(case.example_args), **copy.deepcopy(case.example_kwargs))
        torch.testing.assert_close(actual, expected)


def test_kwargs_reach_the_case():
    (info,) = [info for info in exportdb.discover() if info.name == "torch-exportdb/fn_with_kwargs"]
    case = exportdb.load(info)
    assert case.example_kwargs and all(isinstance(k, str) for k in case.example_kwargs)


def test_unknown_example_is_a_case_error():
    info = CaseInfo(name="torch-exportdb/no_such_example", path="x", description="x", source="exportdb")
    with pytest.raises(CaseError, match="no ExportDB example 'no_such_example'"):
        exportdb.load(info)


class _Level:
    def __init__(self, name: str) -> None:
        self.name = name


def _old_style_example() -> SimpleNamespace:
    """An example shaped as releases up to 2.4 registered them: a function with ExportArgs inputs."""

    def scaled_sum(x, y, *, scale):
        """Adds two tensors and scales the sum."""
        return (x + y) * scale

    inputs = SimpleNamespace(args=(torch.ones(2, 3), torch.ones(2, 3)), kwargs={"scale": torch.tensor(2.0)})
    return SimpleNamespace(
        model=scaled_sum,
        description="    Adds two tensors\n    and scales the sum.\n",
        tags={"python.data-structure"},
        support_level=_Level("NOT_SUPPORTED_YET"),
        example_inputs=inputs,
        extra_inputs=(torch.zeros(4, 3), torch.zeros(4, 3)),
        constraints=[],
    )


def test_old_layout_function_examples_become_modules(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(exportdb, "_examples", lambda: {"scaled_sum": _old_style_example()})
    (info,) = exportdb.discover()
    assert info.name == "torch-exportdb/scaled_sum"
    assert info.expected == "not-supported-yet"
    assert info.description == "Adds two tensors\nand scales the sum."
    case = exportdb.load(info)
    assert isinstance(case.model, torch.nn.Module)
    assert list(inspect.signature(case.model.forward).parameters) == ["x", "y", "scale"]
    assert case.example_kwargs == {"scale": torch.tensor(2.0)}
    assert len(case.extra_args) == 1 and case.extra_args[0][0].shape == (4, 3)
    ep = _export(case, strict=False)
    out = ep.module()(*case.example_args, **case.example_kwargs)
    torch.testing.assert_close(out, torch.full((2, 3), 4.0))


def test_constraint_era_examples_drop_their_extra_inputs(monkeypatch: pytest.MonkeyPatch):
    example = _old_style_example()
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


@pytest.mark.integration
def test_runner_reads_the_bundled_examples(tmp_path):
    run_matrix(
        "run", "--source", "exportdb", "--select", "torch-exportdb/static_if", "torch-exportdb/dictionary",
        "--stages", "check", "--progress", "none", "--out", str(tmp_path),
    )  # fmt: skip
    cells = by_cell(read_cells(tmp_path))
    assert set(cells) == {(case, mode) for case in ("torch-exportdb/static_if", "torch-exportdb/dictionary")
                          for mode in ("strict", "non-strict")}  # fmt: skip
    for cell in cells.values():
        assert cell["status"] == "pass", cell
        assert cell["source"] == "exportdb" and cell["expected"] == "supported"
        assert cell["check_status"] == "ok"
