"""ExportDB examples exported: they match eager, and the runner reads them."""

from __future__ import annotations

import copy
import inspect
from typing import Any, Dict

import pytest
import torch

from matrix.worker import capabilities, exportdb

from conftest import by_cell, old_style_example, read_cells, run_matrix

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


def test_old_layout_function_examples_become_modules(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(exportdb, "_examples", lambda: {"scaled_sum": old_style_example()})
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
