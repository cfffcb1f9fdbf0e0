"""Saved programs keep their inputs as pytree leaves (:mod:`matrix.worker.artifacts`): real exports, in process.

How inputs are flattened and rebuilt, without an export, is tested in tests/unit/test_artifacts_inputs.py.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import torch
from torch.utils import _pytree

from matrix.contract import layout, schema
from matrix.contract.case import CaseInfo
from matrix.worker import artifacts, signing
from matrix.worker.case import Case
from matrix.worker.load_job import LoadJob

TEST_KEY = "artifact-inputs-unit-test-key-0123456789"


@dataclasses.dataclass
class Batch:
    ids: torch.Tensor
    weights: torch.Tensor


class Pair:
    """A class registered with torch's pytree by hand, as a user's own container would be."""

    def __init__(self, left: Any, right: Any) -> None:
        self.left, self.right = left, right


def _flatten(pair: Pair) -> Tuple[List[Any], None]:
    return [pair.left, pair.right], None


def _unflatten(values: List[Any], context: None) -> Pair:
    return Pair(values[0], values[1])


def _flatten_with_keys(pair: Pair) -> Tuple[List[Tuple[Any, Any]], None]:
    return [(_pytree.GetAttrKey("left"), pair.left), (_pytree.GetAttrKey("right"), pair.right)], None


torch.export.register_dataclass(Batch, serialized_type_name="tests.integration.test_artifacts_inputs.Batch")
_pytree.register_pytree_node(
    Pair,
    _flatten,
    _unflatten,
    serialized_type_name="tests.integration.test_artifacts_inputs.Pair",
    flatten_with_keys_fn=_flatten_with_keys,
)


class Mixed(torch.nn.Module):
    """Takes a dataclass, a custom pytree class, an int (a constant of the program), None and a keyword argument."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)

    def forward(self, batch: Batch, pair: Pair, repeat: int, nothing: Any = None, *, shift: Any) -> Any:
        pooled = (self.embed(batch.ids) * batch.weights.unsqueeze(-1)).sum(1)
        return {"pooled": pooled * repeat + shift, "distance": (pair.left - pair.right).abs().sum(-1)}


@pytest.fixture(autouse=True)
def test_key(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    monkeypatch.setenv(signing.KEY_VARIABLE, TEST_KEY)  # signing must not make a key in the user's cache
    # torch.export.load unpickles the example inputs torch.export.save kept (here, a Batch) after a
    # weights_only attempt, and logs that with a malformed format string, which pytest's log capture
    # raises on. The warning says nothing these tests check.
    caplog.set_level(logging.ERROR, logger="torch._export.serde.serialize")
    yield


def mixed_case() -> Case:
    torch.manual_seed(0)
    batch = Batch(ids=torch.tensor([[1, 2, 3], [4, 5, 6]]), weights=torch.rand(2, 3))
    pair = Pair(torch.randn(2, 4), torch.randn(2, 4))
    info = CaseInfo(name="unit/mixed_inputs", path="mixed_inputs.py", description="mixed inputs", source="unit")
    extra = ((Batch(ids=torch.tensor([[0, 9, 8], [7, 1, 1]]), weights=torch.rand(2, 3)), pair, 2, None),)
    return Case(info, Mixed(), (batch, pair, 2, None), {"shift": torch.ones(4)}, extra_args=extra)


def kept(tmp_path: Path) -> Tuple[Path, Dict[str, Any], Case]:
    """The mixed case exported and kept as a passing cell keeps it: the folder and the cell's record."""
    case = mixed_case()
    program = torch.export.export(case.model, case.example_args, case.example_kwargs)
    expected = case.model(*case.example_args, **case.example_kwargs)
    expected_extra = [case.model(*args, **case.example_kwargs) for args in case.extra_args]
    record: Dict[str, Any] = {"status": "pass", "check_status": schema.STAGE_OK}
    target = layout.Target(str(tmp_path), "cpu")
    folder = artifacts.keep(target, record, case.info, "strict", program, None, case, expected, expected_extra)
    assert folder is not None, record
    return Path(folder), record, case


def test_pytree_inputs_are_kept_as_plain_leaves(tmp_path: Path) -> None:
    folder, record, _ = kept(tmp_path)
    assert (record["artifact"], record["artifact_error"]) == (schema.ARTIFACT_SAVED, None)
    meta, problem = layout.read_meta(str(folder))
    assert problem is None and meta is not None
    assert (meta["format_version"], meta["inputs_form"], meta["calls"]) == (2, artifacts.ARGS_KWARGS, 2)
    # Read as every release reads it: weights_only, so no class of the case is unpickled.
    calls = torch.load(str(folder / layout.INPUTS), weights_only=True)["calls"]
    assert [len(leaves) for leaves in calls] == [7, 7]  # ids, weights, left, right, 2, None, shift
    assert all(leaf is None or isinstance(leaf, (torch.Tensor, int)) for leaves in calls for leaf in leaves)
    assert calls[0][4:6] == calls[1][4:6] == [2, None]


def test_a_fresh_load_rebuilds_the_inputs_with_the_programs_own_in_spec(tmp_path: Path) -> None:
    folder, _, case = kept(tmp_path)
    meta, _ = layout.read_meta(str(folder))
    assert meta is not None
    program = torch.export.load(str(folder / layout.PROGRAM))
    calls = artifacts.read_inputs(str(folder), meta, artifacts.in_spec(program))
    (args, kwargs), (extra_args, _) = calls
    assert isinstance(args[0], Batch) and isinstance(args[1], Pair) and args[2:] == (2, None)
    assert torch.equal(args[0].ids, case.example_args[0].ids) and set(kwargs) == {"shift"}
    assert isinstance(extra_args[0], Batch) and torch.equal(extra_args[0].ids, case.extra_args[0][0].ids)
    # The loader's own job: loads, runs both calls and matches eager's saved outputs.
    fields = LoadJob(folder=str(folder), meta=meta).run()
    assert (fields["status"], fields.get("checked_inputs"), fields.get("check_status")) == ("pass", 2, "ok"), fields


def test_a_program_that_cannot_be_kept_is_recorded_as_not_saved(tmp_path: Path) -> None:
    case = mixed_case()
    program = torch.export.export(case.model, case.example_args, case.example_kwargs)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the artifact folder should go")
    record: Dict[str, Any] = {"status": "pass", "check_status": schema.STAGE_OK}
    target = layout.Target(str(blocked), "cpu")
    expected = case.model(*case.example_args, **case.example_kwargs)
    assert artifacts.keep(target, record, case.info, "strict", program, None, case, expected, []) is None
    assert record["artifact"] == schema.ARTIFACT_NOT_SAVED and record["status"] == "pass"
    reason = record["artifact_error"]
    assert reason.startswith(("NotADirectoryError: ", "FileExistsError: ")) and "\n" not in reason
    assert str(tmp_path) not in reason  # records name no folder of the machine


def test_format_1_folders_are_still_read(tmp_path: Path) -> None:
    """A folder as format 1 wrote it: inputs.pt holds [args, kwargs] as they were."""
    x = torch.arange(4.0)
    model = torch.nn.Softplus()
    target = layout.Target(str(tmp_path), "cpu")
    folder = Path(artifacts.save(target, "unit/softplus", "strict", torch.export.export(model, (x,)),
                                 [((x,), {})], [model(x)]))  # fmt: skip
    torch.save({"calls": [[[x], {}]]}, str(folder / layout.INPUTS), pickle_protocol=2)
    meta = json.loads((folder / layout.META).read_text())
    meta["format_version"] = 1
    del meta["inputs_form"]
    for entry in meta["files"]:
        data = (folder / entry["name"]).read_bytes()
        entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    (folder / layout.META).write_text(json.dumps(meta))
    signing.sign(str(folder / layout.META), signing.signing_key())
    read, problem = layout.read_meta(str(folder))
    assert problem is None and read is not None and read["format_version"] == 1
    fields = LoadJob(folder=str(folder), meta=read).run()
    assert (fields["status"], fields["checked_inputs"]) == ("pass", 1), fields
    meta["format_version"] = 3
    (folder / layout.META).write_text(json.dumps(meta))
    assert layout.read_meta(str(folder))[1] == "meta.json has format version 3; this loader reads 1 and 2"
