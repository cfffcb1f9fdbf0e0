from __future__ import annotations

import json

import pytest

from matrix.contract import records, schema


def test_writer_appends_flushed_lines_and_reader_reads_them(tmp_path):
    path = tmp_path / "out" / "r.jsonl"
    with records.Writer(str(path)) as writer:
        writer.write(records.empty_cell(case="a", mode="strict", run=0, status="pass"))
        assert len(path.read_text().splitlines()) == 1  # flushed before close
        writer.write(records.empty_cell(case="b", mode="strict", run=0, status="fail"))
    got, warnings = records.read(str(path))
    assert [r["case"] for r in got] == ["a", "b"] and warnings == []
    assert set(got[0]) == set(schema.CELL_KEYS)


def test_truncated_line_is_reported_and_the_next_write_starts_a_new_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(records.empty_cell(case="a", mode="strict", run=0)) + "\n" + '{"schema_version": 1, "ca')
    with records.Writer(str(path)) as writer:
        writer.write(records.empty_cell(case="b", mode="strict", run=0))
    got, warnings = records.read(str(path))
    assert [r["case"] for r in got] == ["a", "b"]
    assert len(warnings) == 1 and "r.jsonl:2" in warnings[0]
    keys, _ = records.done_keys(str(path))
    assert keys == {("a", "strict", 0), ("b", "strict", 0)}


def test_unknown_schema_version_is_refused_with_advice(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"schema_version": 99, "kind": "cell"}) + "\n")
    with pytest.raises(records.RecordFileError, match="r.jsonl:1.*schema version 99.*upgrade"):
        records.read(str(path))


def test_empty_cell_rejects_unknown_keys():
    with pytest.raises(KeyError, match="bogus"):
        records.empty_cell(bogus=1)


def test_cell_id_and_file_name():
    assert schema.cell_id("2.4.1+cpu", "strict", "cond_predicate") == "torch-2.4.1+cpu/strict/cond_predicate"
    assert records.env_file_name("2.4.1", "pypi", "3.11") == "torch-2.4.1_pypi_py3.11.jsonl"
    assert records.env_file_name("2.16.0.dev20260115+cpu", "nightly-cpu", "3.12") == (
        "torch-2.16.0.dev20260115+cpu_nightly-cpu_py3.12.jsonl"
    )


def test_a_name_part_keeps_safe_text_and_replaces_what_a_file_name_cannot_hold():
    assert records.name_part("2.4.1+cu121") == "2.4.1+cu121"
    assert records.name_part("nightly:2026-01-15+cpu") == "nightly-2026-01-15+cpu"
    assert records.name_part("a/b") == "a_b"  # as record files named a slash before
    assert records.name_part('x<>"\\|?* y') == "x--------y"
    assert records.env_file_name("nightly:2026-01-15+cpu", "nightly-cpu", "3.12") == (
        "torch-nightly-2026-01-15+cpu_nightly-cpu_py3.12.jsonl"
    )


def test_a_record_file_deleted_during_a_run_is_written_again(tmp_path, capsys):
    path = tmp_path / "r.jsonl"
    with records.Writer(str(path)) as writer:
        writer.write(records.empty_cell(case="a", mode="strict", run=0, status="pass"))
        path.unlink()  # as a hostile case or a cleanup would
        writer.write(records.empty_cell(case="b", mode="strict", run=0, status="pass"))
    got, _ = records.read(str(path))
    assert [r["case"] for r in got] == ["a", "b"]
    assert "was deleted during the run" in capsys.readouterr().err


def test_cells_without_a_usable_identity_are_not_taken_as_done(tmp_path):
    path = tmp_path / "r.jsonl"
    good = records.empty_cell(case="a", mode="strict", run=0)
    bad = [dict(good, case=None), dict(good, case=["a"]), dict(good, mode=3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in [good, *bad]))
    keys, warnings = records.done_keys(str(path))
    assert keys == {("a", "strict", 0)} and len(warnings) == 3


def test_record_text_keeps_no_absolute_path():
    text = (
        "cannot import name 'Dim' from 'torch.export' (/home/someone/envs/x/site-packages/torch/export/__init__.py);"
        " see /tmp/export_root/trace_x1.log, https://pytorch.org/docs/stable/x.html and cases/a/b.py; x / 2"
    )
    assert records.without_paths(text) == (
        "cannot import name 'Dim' from 'torch.export' (__init__.py);"
        " see trace_x1.log, https://pytorch.org/docs/stable/x.html and cases/a/b.py; x / 2"
    )
    assert records.without_paths(None) is None and records.without_paths(3) == 3


def test_a_cell_run_on_another_device_is_not_done_on_this_one(tmp_path):
    path = tmp_path / "r.jsonl"
    with records.Writer(str(path)) as writer:
        writer.write(records.empty_cell(case="a", mode="strict", run=0, device="cpu"))
        writer.write(records.empty_cell(case="b", mode="strict", run=0))  # written before records named a device
        writer.write(records.empty_cell(case="c", mode="strict", run=0, device="cuda"))
    assert records.done_keys(str(path))[0] == {("a", "strict", 0), ("b", "strict", 0)}
    assert records.done_keys(str(path), "cuda")[0] == {("c", "strict", 0)}
