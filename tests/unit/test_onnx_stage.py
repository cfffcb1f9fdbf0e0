"""The onnx stage's exporter detection and its declaration (the runs are in tests/integration/test_onnx_stage.py)."""

from __future__ import annotations

import types
from typing import Any

import torch

from matrix.contract import stages as declared
from matrix.contract.schema import Status
from matrix.worker import onnx_stage


def test_a_release_whose_exporter_has_no_dynamo_keyword_has_no_torch_export_based_exporter() -> None:
    def export(model: Any, args: Any, f: Any = None, verbose: bool = False) -> None: ...

    old = types.SimpleNamespace(onnx=types.SimpleNamespace(export=export))
    assert onnx_stage.exporter_api(old) == (
        None,
        "torch.onnx.export has no dynamo=True (no exporter built on torch.export)",
    )
    assert onnx_stage.exporter_api(types.SimpleNamespace()) == (None, "torch.onnx has no export")


def test_the_api_that_runs_is_the_one_on_the_exported_program_where_the_release_takes_it() -> None:
    def takes_program(
        model: torch.nn.Module | torch.export.ExportedProgram, args: Any = (), *, dynamo: bool = True
    ) -> None: ...

    def takes_model(model: torch.nn.Module, args: Any = (), *, dynamo: bool = False) -> None: ...

    assert (
        onnx_stage.exporter_api(types.SimpleNamespace(onnx=types.SimpleNamespace(export=takes_program)))[0]
        == onnx_stage.ON_PROGRAM
    )
    assert (
        onnx_stage.exporter_api(types.SimpleNamespace(onnx=types.SimpleNamespace(export=takes_model)))[0]
        == onnx_stage.ON_MODEL
    )


def test_the_declaration_says_what_a_report_draws_in_the_records_vocabulary() -> None:
    shown = declared.ONNX.shown
    assert shown is not None and shown.status_key in declared.ONNX.keys
    assert set(shown.outcomes) <= {status.value for status in Status}
    assert set(shown.meanings) == set(shown.outcomes) and shown.passing in shown.tried
    assert set(shown.tried) < set(shown.outcomes) and Status.NOT_APPLICABLE.value not in shown.tried
    assert set(shown.detail_keys) <= set(declared.ONNX.keys)
    assert "onnx" in declared.OPT_IN and "onnx" not in declared.DEFAULT
