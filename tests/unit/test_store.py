"""Loading record folders into tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from matrix.contract import schema
from matrix.records import merge, store

from conftest import DATA, environment_record, make_cell, write_records

cell = make_cell


def test_loads_cells_environments_and_env_errors(tmp_path: Path):
    write_records(
        tmp_path / "a.jsonl", [environment_record("2.4.1+cpu"), cell("2.4.1+cpu", "x"), cell("2.4.1+cpu", "y", "fail")]
    )
    env_error = {
        "kind": "env-error",
        "schema_version": schema.SCHEMA_VERSION,
        "torch_version": "2.3.0",
        "variant": "cpu",
        "python": "3.11",
        "error_type": "InstallError",
        "error_message": "no wheel",
        "installer_output": "…",
        "finished_at": "2025-01-01T00:00:00+00:00",
    }
    write_records(tmp_path / "b.jsonl", [env_error])
    loaded = store.load([str(tmp_path)])
    assert list(loaded.cells["case"]) == ["x", "y"]
    assert list(loaded.cells["status"]) == ["pass", "fail"]
    assert set(schema.CELL_KEYS) <= set(loaded.cells.columns)
    assert list(loaded.environments["torch_version"]) == ["2.4.1+cpu"]
    assert loaded.environments["capabilities"].iloc[0] == {"cond": True}
    assert list(loaded.env_errors["error_message"]) == ["no wheel"]
    assert loaded.warnings == ()
    assert len(loaded.files) == 2


def test_a_re_run_replaces_the_earlier_record(tmp_path: Path):
    first = cell("2.4.1", "x", "fail", finished_at="2025-01-01T00:00:00+00:00")
    again = cell("2.4.1", "x", "pass", finished_at="2025-01-02T00:00:00+00:00")
    other_run = cell("2.4.1", "x", "fail", run=1)
    write_records(tmp_path / "a.jsonl", [first, again, other_run])
    loaded = store.load([str(tmp_path)])
    assert list(zip(loaded.cells["run"], loaded.cells["status"])) == [(0, "pass"), (1, "fail")]
    assert loaded.superseded == 1


def test_the_record_that_finished_last_wins_across_folders(tmp_path: Path):
    newer = cell("2.4.1", "x", "pass", finished_at="2025-01-02T00:00:00+00:00")
    older = cell("2.4.1", "x", "fail", finished_at="2025-01-01T00:00:00+00:00")
    write_records(tmp_path / "one" / "a.jsonl", [newer])
    write_records(tmp_path / "two" / "a.jsonl", [older])
    assert list(store.load([str(tmp_path / "one"), str(tmp_path / "two")]).cells["status"]) == ["pass"]
    # Offsets are instants, not text: 01:00+02:00 is 23:00 UTC the day before, so it loses.
    write_records(tmp_path / "two" / "a.jsonl", [dict(older, finished_at="2025-01-02T01:00:00+02:00")])
    assert list(store.load([str(tmp_path / "one"), str(tmp_path / "two")]).cells["status"]) == ["pass"]
    # Same finishing time: one total order decides, whatever the reading order, and merge agrees.
    write_records(tmp_path / "two" / "a.jsonl", [dict(older, finished_at=newer["finished_at"])])
    forward = store.load([str(tmp_path / "one"), str(tmp_path / "two")]).cells["status"].tolist()
    backward = store.load([str(tmp_path / "two"), str(tmp_path / "one")]).cells["status"].tolist()
    assert forward == backward and len(forward) == 1
    merged = merge.merge([merge.read_shard(str(p)) for p in sorted(tmp_path.glob("*/a.jsonl"))])
    assert (
        merged.files and [c["status"] for f in merged.files.values() for c in f if c.get("kind") == "cell"] == forward
    )


def test_truncated_line_is_a_warning_not_an_error(tmp_path: Path):
    path = write_records(tmp_path / "a.jsonl", [cell("2.4.1", "x")], tail='{"kind": "cell", "case": "y", "sta')
    loaded = store.load([str(tmp_path)])
    assert list(loaded.cells["case"]) == ["x"]
    assert len(loaded.warnings) == 1 and str(path) in loaded.warnings[0]


def test_non_finite_numbers_the_worker_can_write_are_read(tmp_path: Path):
    # json.dumps writes NaN and Infinity, which strict JSON parsers refuse.
    write_records(
        tmp_path / "a.jsonl", [cell("2.4.1", "x", export_s=float("nan")), cell("2.4.1", "y", export_s=float("inf"))]
    )
    loaded = store.load([str(tmp_path)])
    assert loaded.warnings == ()
    times = dict(zip(loaded.cells["case"], loaded.cells["export_s"]))
    assert times["x"] != times["x"] and times["y"] == float("inf")


def test_a_line_with_bad_utf8_is_a_warning_and_the_rest_is_kept(tmp_path: Path):
    path = write_records(tmp_path / "a.jsonl", [cell("2.4.1", "x")])
    with open(path, "ab") as f:
        f.write(b'{"kind": "cell", "case": "' + bytes([0xFF, 0xFE]) + b'"}\n')
    loaded = store.load([str(tmp_path)])
    assert list(loaded.cells["case"]) == ["x"]
    assert len(loaded.warnings) == 1 and str(path) in loaded.warnings[0]


def test_repeated_texts_share_one_object_and_odd_values_keep_their_type(tmp_path: Path):
    text = "RuntimeError: the same long message in every run"
    rows = [cell("2.4.1", "x", "fail", run=r, error_message=text) for r in range(3)]
    # A hand-edited record with numbers in a text column: 1, 1.0 and True are equal but must stay apart.
    rows += [cell("2.4.1", "y", run=0, expected=1), cell("2.4.1", "y", run=1, expected=1.0)]
    rows += [cell("2.4.1", "y", run=2, expected=True)]
    write_records(tmp_path / "a.jsonl", rows)
    loaded = store.load([str(tmp_path)])
    messages = [m for m in loaded.cells["error_message"] if m is not None]
    assert messages == [text] * 3 and len({id(m) for m in messages}) == 1
    expected = list(loaded.cells.loc[loaded.cells["case"] == "y", "expected"])
    assert [type(v) for v in expected] == [int, float, bool]


def test_unknown_kind_and_invalid_cells_are_skipped_with_warnings(tmp_path: Path):
    odd = {"kind": "comment", "schema_version": schema.SCHEMA_VERSION}
    no_status = cell("2.4.1", "y", status="exploded")
    write_records(tmp_path / "a.jsonl", [cell("2.4.1", "x"), odd, no_status])
    loaded = store.load([str(tmp_path)])
    assert list(loaded.cells["case"]) == ["x"]
    assert any("unknown kind 'comment'" in w for w in loaded.warnings)
    assert any("without a known status" in w for w in loaded.warnings)


def test_unknown_schema_version_is_refused_naming_the_file(tmp_path: Path):
    path = write_records(tmp_path / "a.jsonl", [dict(cell("2.4.1", "x"), schema_version=99)])
    with pytest.raises(store.StoreError, match="schema version 99") as info:
        store.load([str(tmp_path)])
    assert str(path) in str(info.value)


def test_missing_or_empty_folders_are_clear_errors(tmp_path: Path):
    with pytest.raises(store.StoreError, match="no such record folder"):
        store.load([str(tmp_path / "nope")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(store.StoreError, match="no \\*.jsonl record files"):
        store.load([str(tmp_path / "empty")])
    with pytest.raises(store.StoreError, match="no record folder"):
        store.load([])


def test_single_files_can_be_given(tmp_path: Path):
    path = write_records(tmp_path / "a.jsonl", [cell("2.4.1", "x")])
    assert list(store.load([str(path)]).cells["case"]) == ["x"]


def test_cells_are_sorted_by_release_version_then_case_and_mode(tmp_path: Path):
    rows = [
        cell("2.10.0", "b", mode="non-strict"),
        cell("2.10.0", "a"),
        cell("2.9.1", "b"),
        cell("2.10.0", "b"),
    ]
    write_records(tmp_path / "a.jsonl", rows)
    loaded = store.load([str(tmp_path)])
    assert list(zip(loaded.cells["torch_version"], loaded.cells["case"], loaded.cells["mode"])) == [
        ("2.9.1", "b", "strict"),
        ("2.10.0", "a", "strict"),
        ("2.10.0", "b", "strict"),
        ("2.10.0", "b", "non-strict"),
    ]


def test_release_order_uses_versions_and_keeps_local_tags_with_their_release():
    versions = ["2.10.0", "2.9.1+cpu", "2.9.1", "2.4.0.dev20240601+cpu", "2.4.0", "nightly"]
    assert store.ordered(versions) == ["2.4.0.dev20240601+cpu", "2.4.0", "2.9.1", "2.9.1+cpu", "2.10.0", "nightly"]
    assert store.ordered(["3.9", "3.11", "3.10"]) == ["3.9", "3.10", "3.11"]


def test_large_record_sets_are_parsed_by_every_usable_core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    files = [str(write_records(tmp_path / ("%d.jsonl" % n), [cell("2.4.1", "x%d" % n)])) for n in range(3)]
    assert store.workers_for(files) == 0  # a few hundred bytes: not worth a process
    monkeypatch.setattr(store, "PARALLEL_FROM_BYTES", 1)
    monkeypatch.setattr(store.parallel, "cores", lambda: 2)
    assert store.workers_for(files) == 2
    assert store.workers_for(files[:1]) == 0  # one file: nothing to share out
    monkeypatch.setattr(store.parallel, "cores", lambda: 1)
    assert store.workers_for(files) == 0
    assert store.workers_for(files, workers=5) == 3


def test_cells_whose_identity_is_not_text_are_skipped_naming_file_and_line(tmp_path: Path):
    no_case = cell("2.4.1", "gone")
    del no_case["case"]
    rows = [cell("2.4.1", "x"), no_case, cell("2.4.1", ["a", "list"]), dict(cell("2.4.1", "y"), variant={"v": 1})]
    path = write_records(tmp_path / "a.jsonl", rows[:1])
    with open(path, "a", encoding="utf-8") as f:
        # A blank line: line numbers count every line, not every record.
        f.write("\n" + "".join(json.dumps(r) + "\n" for r in rows[1:]))
    loaded = store.load([str(tmp_path)], workers=0)
    assert list(loaded.cells["case"]) == ["x"]
    assert loaded.warnings == (
        "%s:3: skipped a cell record whose identity is not text (case missing)" % path,
        "%s:4: skipped a cell record whose identity is not text (case is a list)" % path,
        "%s:5: skipped a cell record whose identity is not text (variant is a dict)" % path,
    )
    # Side processes skip them alike: tests/integration/test_store.py.


def test_records_written_before_the_schema_module_still_load():
    """A record file written by an earlier version (schema 1, no stage or fingerprint keys) loads unchanged."""
    folder = DATA / "records"
    loaded = store.load([str(folder)])
    assert loaded.warnings == ()
    assert sorted(zip(loaded.cells["case"], loaded.cells["mode"], loaded.cells["status"])) == [
        ("add_one", "non-strict", "pass"),
        ("add_one", "strict", "pass"),
        ("graph_break", "non-strict", "pass"),
        ("graph_break", "strict", "fail"),
    ]
    assert set(schema.CELL_KEYS) <= set(loaded.cells.columns)
    assert loaded.cells["graph_hash"].notna().sum() == 3


def test_paths_of_the_machine_that_ran_a_record_are_cut_on_loading(tmp_path: Path):
    old = cell("2.4.1", "x", "fail", error_message="cannot import (/home/someone/envs/t/torch/export/__init__.py)")
    write_records(tmp_path / "a.jsonl", [old])
    assert list(store.load([str(tmp_path)]).cells["error_message"]) == ["cannot import (__init__.py)"]


def test_each_with_set_is_a_cell_of_its_own_and_a_record_without_one_ran_without(tmp_path: Path):
    def ran(status: str, with_set: str, when: str) -> dict:
        return cell("2.9.1", "m", status, dependency_set=with_set, with_set=with_set, finished_at=when)

    old = cell("2.9.1", "m", "fail", finished_at="2025-01-01T00:00:00+00:00")
    del old["with_set"]  # written before the key existed
    bare = ran("pass", "", "2025-01-03T00:00:00+00:00")
    write_records(
        tmp_path / "a.jsonl",
        [
            old,
            ran("pass", "packaging==23.2", "2025-01-02T00:00:00+00:00"),
            ran("fail", "packaging==24.1", "2025-01-02T00:00:00+00:00"),
            bare,
        ],
    )
    loaded = store.load([str(tmp_path)])
    assert list(zip(loaded.cells["with_set"], loaded.cells["status"])) == [
        ("", "pass"),
        ("packaging==23.2", "pass"),
        ("packaging==24.1", "fail"),
    ]
    assert loaded.superseded == 1 and loaded.warnings == ()


def test_a_with_set_that_is_not_text_is_skipped_naming_the_line(tmp_path: Path):
    path = write_records(tmp_path / "a.jsonl", [cell("2.9.1", "m"), cell("2.9.1", "n", with_set=["packaging"])])
    loaded = store.load([str(tmp_path)])
    assert list(loaded.cells["case"]) == ["m"]
    assert loaded.warnings == ("%s:2: skipped a cell record whose identity is not text (with_set is a list)" % path,)


def test_each_cell_carries_the_packages_its_runs_environment_added(tmp_path: Path):
    environment = dict(
        environment_record("2.9.1"), run_id="r1", dependency_set="timm", added_packages={"timm": "1.0.31"}
    )
    write_records(
        tmp_path / "a.jsonl",
        [
            environment,
            cell("2.9.1", "real", run_id="r1", dependency_set="timm"),
            # Recorded without running (the set did not resolve): no environment record speaks for it.
            cell("2.9.1", "refused", run_id="r2", dependency_set="timm", status="not-applicable"),
        ],
    )
    cells = store.load([str(tmp_path)]).cells
    assert dict(zip(cells["case"], cells["added_packages"])) == {"real": {"timm": "1.0.31"}, "refused": None}
