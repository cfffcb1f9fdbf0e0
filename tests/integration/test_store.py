"""Loading record folders into tables in side processes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from matrix.records import store

from conftest import environment_record, make_cell, write_records

cell = make_cell


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_side_processes_give_the_same_tables_as_one_process(tmp_path: Path, workers: int):
    # Re-runs across files (the tie goes to the file read last), a truncated line, an unknown kind.
    write_records(tmp_path / "a.jsonl", [environment_record("2.4.1"), cell("2.4.1", "x", "fail"), cell("2.4.1", "y")])
    write_records(tmp_path / "b.jsonl", [cell("2.4.1", "x", "pass"), {"kind": "note", "schema_version": 1}])
    write_records(tmp_path / "c.jsonl", [environment_record("2.5.0"), cell("2.5.0", "x")], tail='{"kind": "ce')
    one = store.load([str(tmp_path)], workers=0)
    several = store.load([str(tmp_path)], workers=workers)
    pd.testing.assert_frame_equal(one.cells, several.cells)
    pd.testing.assert_frame_equal(one.environments, several.environments)
    assert (one.warnings, one.superseded, one.files) == (several.warnings, several.superseded, several.files)
    assert list(several.cells["status"]) == ["pass", "pass", "pass"] and several.superseded == 1
    assert len(several.warnings) == 2


def test_an_error_in_a_side_process_names_the_file(tmp_path: Path):
    write_records(tmp_path / "a.jsonl", [cell("2.4.1", "x")])
    path = write_records(tmp_path / "b.jsonl", [dict(cell("2.4.1", "y"), schema_version=99)])
    with pytest.raises(store.StoreError, match="schema version 99") as info:
        store.load([str(tmp_path)], workers=2)
    assert str(path) in str(info.value)


def test_cells_whose_identity_is_not_text_are_skipped_in_side_processes_too(tmp_path: Path):
    write_records(tmp_path / "a.jsonl", [cell("2.4.1", "x")])
    path = write_records(tmp_path / "b.jsonl", [dict(cell("2.4.1", "z"), mode=["strict"], python=3.11)])
    loaded = store.load([str(tmp_path)], workers=2)
    assert list(loaded.cells["case"]) == ["x"]
    assert loaded.warnings == (
        "%s:1: skipped a cell record whose identity is not text (python is a float, mode is a list)" % path,
    )
