"""Merging record shards: idempotent, order-independent, and honest about partial shards."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, List

import pytest

from matrix import cli
from matrix.contract import dependencies, records, schema
from matrix.records import merge

from conftest import make_load


def environment(torch_version: str, variant: str, run_id: str, started_at: str) -> Dict[str, Any]:
    return {
        "kind": "environment",
        "schema_version": schema.SCHEMA_VERSION,
        "run_id": run_id,
        "env_id": "env-%s-%s" % (torch_version, variant),
        "torch_version": torch_version,
        "variant": variant,
        "python": "3.11",
        "started_at": started_at,
        "capabilities": {"strict_kwarg": True},
    }


def cell(torch_version: str, variant: str, case: str, mode: str, status: str, finished_at: str, **extra: Any):
    return records.empty_cell(
        torch_version=torch_version,
        variant=variant,
        python="3.11",
        case=case,
        mode=mode,
        run=0,
        cell_id=schema.cell_id(torch_version, mode, case),
        status=status,
        finished_at=finished_at,
        **extra,
    )


def write_shard(path: Path, rows: List[Dict[str, Any]], tail: str = "") -> Path:
    with records.Writer(str(path)) as writer:
        for row in rows:
            writer.write(row)
    if tail:
        with open(path, "a", encoding="utf-8") as f:
            f.write(tail)
    return path


def run_merge(*argv: str) -> int:
    return cli.main(["merge", "--quiet", *argv])


def folder_bytes(folder: Path) -> Dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def record_files(folder: Path) -> Dict[str, bytes]:
    return {name: data for name, data in folder_bytes(folder).items() if name.endswith(".jsonl")}


@pytest.fixture
def shards(tmp_path: Path) -> List[Path]:
    a = write_shard(
        tmp_path / "job-a" / records.env_file_name("2.4.1", "pypi", "3.11"),
        [
            environment("2.4.1", "pypi", "run-a", "2025-01-01T00:00:00Z"),
            cell("2.4.1", "pypi", "cond_predicate", "strict", "pass", "2025-01-01T00:00:02Z"),
            cell("2.4.1", "pypi", "cond_predicate", "non-strict", "fail", "2025-01-01T00:00:03Z"),
        ],
    )
    b = write_shard(
        tmp_path / "job-b" / records.env_file_name("2.5.0", "cpu", "3.11"),
        [
            environment("2.5.0", "cpu", "run-b", "2025-01-01T00:00:00Z"),
            cell("2.5.0", "cpu", "scalar_output", "strict", "pass", "2025-01-01T00:00:04Z"),
            cell("2.5.0", "cpu", "cond_predicate", "strict", "pass", "2025-01-01T00:00:05Z"),
        ],
    )
    return [a.parent, b.parent]


def read_all(folder: Path) -> List[Dict[str, Any]]:
    rows: List[Dict[str, Any]] = []
    for path in records.iter_files(str(folder)):
        found, warnings = records.read(path)
        assert warnings == []
        rows.extend(found)
    return rows


def test_merge_writes_one_file_per_environment_sorted(shards: List[Path], tmp_path: Path) -> None:
    assert run_merge(*map(str, shards), "--out", str(tmp_path / "out")) == 0
    out = tmp_path / "out"
    assert sorted(record_files(out)) == [
        records.env_file_name("2.4.1", "pypi", "3.11"),
        records.env_file_name("2.5.0", "cpu", "3.11"),
    ]
    rows, _ = records.read(str(out / records.env_file_name("2.5.0", "cpu", "3.11")))
    assert [r["kind"] for r in rows] == ["environment", "cell", "cell"]
    assert [r["case"] for r in rows[1:]] == ["cond_predicate", "scalar_output"]
    report = json.loads((out / merge.REPORT_NAME).read_text())
    assert report["cells"] == 4 and report["duplicates_dropped"] == 0
    assert report["flagged"] == [] and report["conflicts"] == []


def test_duplicate_shards_change_nothing(shards: List[Path], tmp_path: Path) -> None:
    assert run_merge(*map(str, shards), "--out", str(tmp_path / "once")) == 0
    assert run_merge(*map(str, shards), "--out", str(tmp_path / "again")) == 0
    assert folder_bytes(tmp_path / "once") == folder_bytes(tmp_path / "again")

    copy = tmp_path / "job-a-retry-download"
    shutil.copytree(shards[0], copy)
    assert run_merge(str(shards[1]), str(copy), str(shards[0]), "--out", str(tmp_path / "dup")) == 0
    assert record_files(tmp_path / "dup") == record_files(tmp_path / "once")
    report = json.loads((tmp_path / "dup" / merge.REPORT_NAME).read_text())
    assert report["duplicates_dropped"] == 2 and report["conflicts"] == []

    # Merging a merged folder with one of its own shards, in place, is a fixed point.
    assert run_merge(str(tmp_path / "once"), str(shards[0]), "--out", str(tmp_path / "once")) == 0
    assert record_files(tmp_path / "once") == record_files(tmp_path / "again")


def test_conflicting_duplicates_keep_the_later_record_whatever_the_order(shards: List[Path], tmp_path: Path) -> None:
    retry = write_shard(
        tmp_path / "job-a-retry" / records.env_file_name("2.4.1", "pypi", "3.11"),
        [
            environment("2.4.1", "pypi", "run-a2", "2025-01-02T00:00:00Z"),
            cell("2.4.1", "pypi", "cond_predicate", "non-strict", "pass", "2025-01-02T00:00:03Z"),
        ],
    )
    first = [str(shards[0]), str(retry.parent), str(shards[1])]
    assert run_merge(*first, "--out", str(tmp_path / "forward")) == 0
    assert run_merge(*reversed(first), "--out", str(tmp_path / "backward")) == 0
    assert record_files(tmp_path / "forward") == record_files(tmp_path / "backward")

    rows = read_all(tmp_path / "forward")
    statuses = {(r["case"], r["mode"]): r["status"] for r in rows if r["kind"] == "cell" and r["variant"] == "pypi"}
    assert statuses == {("cond_predicate", "strict"): "pass", ("cond_predicate", "non-strict"): "pass"}
    assert sorted(r["run_id"] for r in rows if r["kind"] == "environment") == ["run-a", "run-a2", "run-b"]
    report = json.loads((tmp_path / "forward" / merge.REPORT_NAME).read_text())
    assert len(report["conflicts"]) == 1
    conflict = report["conflicts"][0]
    assert conflict["identity"]["case"] == "cond_predicate" and conflict["identity"]["mode"] == "non-strict"
    assert conflict["kept_from"] == str(retry)


def test_ties_in_finished_at_are_broken_by_content_not_order(tmp_path: Path) -> None:
    when = "2025-01-01T00:00:09Z"
    one = write_shard(tmp_path / "one.jsonl", [cell("2.6.0", "cpu", "c", "strict", "pass", when, node_count=3)])
    two = write_shard(tmp_path / "two.jsonl", [cell("2.6.0", "cpu", "c", "strict", "fail", when, node_count=None)])
    assert run_merge(str(one), str(two), "--out", str(tmp_path / "x")) == 0
    assert run_merge(str(two), str(one), "--out", str(tmp_path / "y")) == 0
    assert record_files(tmp_path / "x") == record_files(tmp_path / "y")
    kept = read_all(tmp_path / "x")
    assert len(kept) == 1
    expected = max([records.read(str(one))[0][0], records.read(str(two))[0][0]], key=merge.canonical)
    assert kept[0] == expected


def test_partial_shard_is_used_and_flagged(shards: List[Path], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    cancelled = write_shard(
        tmp_path / "job-c" / records.env_file_name("2.6.0", "cpu", "3.11"),
        [
            environment("2.6.0", "cpu", "run-c", "2025-01-01T00:00:00Z"),
            cell("2.6.0", "cpu", "cond_predicate", "strict", "pass", "2025-01-01T00:00:01Z"),
        ],
        tail='{"kind": "cell", "schema_version": 1, "case": "scal',
    )
    never_started = write_shard(
        tmp_path / "job-d" / records.env_file_name("2.7.0", "cpu", "3.11"),
        [environment("2.7.0", "cpu", "run-d", "2025-01-01T00:00:00Z")],
    )
    assert (
        run_merge(*map(str, shards), str(cancelled.parent), str(never_started.parent), "--out", str(tmp_path / "o"))
        == 0
    )
    err = capsys.readouterr().err
    assert "unreadable line" in err and str(cancelled) in err
    assert "no cells" in err and str(never_started) in err

    rows = read_all(tmp_path / "o")
    assert {(r["torch_version"], r["case"]) for r in rows if r["kind"] == "cell" and r["torch_version"] == "2.6.0"} == {
        ("2.6.0", "cond_predicate")
    }
    assert any(r["kind"] == "environment" and r["torch_version"] == "2.7.0" for r in rows)
    report = json.loads((tmp_path / "o" / merge.REPORT_NAME).read_text())
    assert [entry["file"] for entry in report["flagged"]] == sorted([str(cancelled), str(never_started)])


def test_env_errors_are_kept_once_per_environment(tmp_path: Path) -> None:
    def env_error(when: str, message: str) -> Dict[str, Any]:
        return {
            "kind": "env-error",
            "schema_version": schema.SCHEMA_VERSION,
            "torch_version": "2.1.2",
            "variant": "cpu",
            "python": "3.11",
            "error_type": "InstallError",
            "error_message": message,
            "installer_output": "",
            "finished_at": when,
        }

    a = write_shard(tmp_path / "a.jsonl", [env_error("2025-01-01T00:00:00Z", "no wheel")])
    b = write_shard(tmp_path / "b.jsonl", [env_error("2025-01-02T00:00:00Z", "no wheel for cp311")])
    assert run_merge(str(a), str(b), str(a), "--out", str(tmp_path / "o")) == 0
    rows = read_all(tmp_path / "o")
    assert [r["error_message"] for r in rows] == ["no wheel for cp311"]
    assert (tmp_path / "o" / records.env_file_name("2.1.2", "cpu", "3.11")).exists()


def test_the_env_error_of_a_dated_channel_word_is_kept_under_a_safe_name(tmp_path: Path) -> None:
    word = {"kind": "env-error", "schema_version": schema.SCHEMA_VERSION, "torch_version": "nightly:2026-01-15"}
    word.update(variant="nightly-cpu", python="3.11", error_type="InstallError", error_message="not on the index")
    shard = write_shard(tmp_path / "a.jsonl", [dict(word, finished_at="2026-01-20T00:00:00Z")])
    assert run_merge(str(shard), "--out", str(tmp_path / "o")) == 0
    (written,) = [p.name for p in (tmp_path / "o").glob("*.jsonl")]
    assert written == "torch-nightly-2026-01-15_nightly-cpu_py3.11.jsonl"
    assert [r["torch_version"] for r in read_all(tmp_path / "o")] == ["nightly:2026-01-15"]
    # A cell's torch_version names an installed build: a colon there is still refused.
    bad = cell("nightly:2026-01-15", "cpu", "x", "strict", "pass", "2026-01-20T00:00:00Z")
    assert merge.identity_problem(bad) is not None


def test_an_installed_environment_clears_an_earlier_env_error(shards: List[Path], tmp_path: Path) -> None:
    failed = write_shard(
        tmp_path / "failed-try.jsonl",
        [
            {
                "kind": "env-error",
                "schema_version": schema.SCHEMA_VERSION,
                "torch_version": "2.4.1",
                "variant": "pypi",
                "python": "3.11",
                "error_type": "matrix.envs.environments.NetworkError",
                "error_message": "connection reset",
                "installer_output": "",
                "finished_at": "2024-12-31T00:00:00Z",
            }
        ],
    )
    assert run_merge(str(failed), *map(str, shards), "--out", str(tmp_path / "o")) == 0
    assert not any(r["kind"] == "env-error" for r in read_all(tmp_path / "o"))
    report = json.loads((tmp_path / "o" / merge.REPORT_NAME).read_text())
    assert report["cleared_env_errors"] == [
        {"torch_version": "2.4.1", "variant": "pypi", "python": "3.11", "dependency_set": ""}
    ]


def test_a_file_named_twice_is_read_once(shards: List[Path], tmp_path: Path) -> None:
    shard_file = next(shards[0].iterdir())
    assert run_merge(str(shards[0]), str(shard_file), str(shard_file), "--out", str(tmp_path / "o")) == 0
    report = json.loads((tmp_path / "o" / merge.REPORT_NAME).read_text())
    assert report["inputs"] == [str(shard_file)] and report["duplicates_dropped"] == 0


def test_bad_input_is_a_clear_error(shards: List[Path], tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert run_merge(str(tmp_path / "missing"), "--out", str(tmp_path / "o")) == 2
    assert "missing: no such shard file or folder" in capsys.readouterr().err

    future = tmp_path / "future.jsonl"
    future.write_text(json.dumps({"kind": "cell", "schema_version": 99}) + "\n")
    assert run_merge(str(future), "--out", str(tmp_path / "o")) == 2
    err = capsys.readouterr().err
    assert "future.jsonl:1" in err and "schema version 99" in err

    assert run_merge(str(shards[0]), "--out", str(shards[1])) == 2
    assert "already holds record files" in capsys.readouterr().err

    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_merge(str(empty), "--out", str(tmp_path / "o")) == 2
    assert "no record files" in capsys.readouterr().err


@pytest.mark.parametrize(
    "kind, field, value",
    [
        ("cell", "python", "3.11/../../x"),
        ("cell", "variant", "../cpu"),
        ("cell", "torch_version", ".hidden"),
        ("cell", "python", "3.11\0"),
        ("cell", "variant", ["cpu"]),
        ("cell", "case", ["a", "list"]),
        ("environment", "python", "3.11/../../x"),
        ("env-error", "variant", "cpu/.."),
    ],
)
def test_records_whose_identity_cannot_name_a_file_are_skipped_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture, kind: str, field: str, value: Any
) -> None:
    good = cell("2.4.1", "cpu", "kept", "strict", "pass", "2025-01-01T00:00:01Z")
    if kind == "cell":
        bad = cell("2.4.1", "cpu", "dropped", "strict", "pass", "2025-01-01T00:00:02Z")
    elif kind == "environment":
        bad = environment("2.4.1", "cpu", "run-x", "2025-01-01T00:00:00Z")
    else:
        bad = {"kind": "env-error", "schema_version": schema.SCHEMA_VERSION, "torch_version": "2.5.0"}
        bad.update(variant="cpu", python="3.11", error_type="InstallError", error_message="no wheel")
    shard = write_shard(tmp_path / "in" / "shard.jsonl", [good, dict(bad, **{field: value})])
    out = tmp_path / "nested" / "out"
    assert run_merge(str(shard), "--out", str(out)) == 0
    err = capsys.readouterr().err
    assert "%s:2: skipped a %s record" % (shard, kind) in err and field in err
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    name = records.env_file_name("2.4.1", "cpu", "3.11")
    assert written == sorted(["in/shard.jsonl", "nested/out/" + name, "nested/out/" + merge.REPORT_NAME])
    assert [r.get("case") for r in read_all(out)] == ["kept"]
    flagged = json.loads((out / merge.REPORT_NAME).read_text())["flagged"]
    assert [entry["file"] for entry in flagged] == [str(shard)]


def load_record(status: str, finished: str = "2025-01-01T00:00:00+00:00", **extra: Any) -> Dict[str, Any]:
    """A load of 2.5.1's ``add`` program on 2.9.1, as ``export-matrix load`` writes it; ``extra`` sets any key."""
    pypi = {"saved_variant": "pypi", "variant": "pypi", "finished_at": finished}
    return make_load("2.5.1", "2.9.1", "add", status, **{**pypi, **extra})


def test_load_records_are_kept_once_per_saved_and_loaded_release_case_and_mode(tmp_path: Path) -> None:
    first = tmp_path / "a" / "load_torch-2.9.1_pypi_py3.11.jsonl"
    second = tmp_path / "b" / "load_torch-2.9.1_pypi_py3.11.jsonl"
    for path, status, finished in ((first, "load-error", "2025-01-01T00:00:00+00:00"),
                                   (second, "pass", "2025-01-02T00:00:00+00:00")):  # fmt: skip
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(load_record(status, finished)) + "\n")
    merged = merge.merge([merge.read_shard(str(first)), merge.read_shard(str(second))])
    assert list(merged.files) == ["load_torch-2.9.1_pypi_py3.11.jsonl"]
    (kept,) = merged.files["load_torch-2.9.1_pypi_py3.11.jsonl"]
    assert kept["status"] == "pass" and not merged.flagged


def test_loads_of_one_case_saved_under_two_with_sets_are_both_kept(tmp_path: Path) -> None:
    bare = load_record("load-error")
    del bare["with_set"]  # written before loads had a with_set: the program saved without --with
    shards = []
    for name, records_here in (
        ("a", [bare, load_record("pass", with_set="packaging")]),
        ("b", [load_record("pass", with_set=""), load_record("mismatch", with_set="packaging>=20")]),
    ):
        path = tmp_path / name / "load_torch-2.9.1_pypi_py3.11.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in records_here))
        shards.append(merge.read_shard(str(path)))
    merged = merge.merge(shards)
    kept = merged.files["load_torch-2.9.1_pypi_py3.11.jsonl"]
    assert sorted((r.get("with_set") or "", r["status"]) for r in kept) == [
        ("", "pass"),
        ("packaging", "pass"),
        ("packaging>=20", "mismatch"),
    ]
    odd = load_record("pass", with_set=["packaging"])
    assert merge.identity_problem(odd) == "whose with_set ['packaging'] is not text"


def test_the_record_kinds_merged_are_the_schemas(tmp_path: Path) -> None:
    known = cell("2.4.1", "cpu", "kept", "strict", "pass", "2025-01-01T00:00:01Z")
    odd = dict(known, kind="benchmark")
    shard = merge.read_shard(str(write_shard(tmp_path / "shard.jsonl", [known, odd])))
    assert shard.records == (known,)
    assert shard.problems == ("%s:2: skipped a record of unknown kind 'benchmark'" % (tmp_path / "shard.jsonl"),)
    for kind in schema.RECORD_KINDS:
        assert "unknown kind" not in (merge.identity_problem({"kind": kind}) or "")


def test_two_with_sets_of_one_cell_stay_two_cells_each_in_its_set_file(tmp_path: Path) -> None:
    def ran_with(version: str, status: str) -> Dict[str, Any]:
        key = "packaging==%s" % version
        return cell("2.9.1", "pypi", "m", "strict", status, "2025-01-01T00:00:00Z", dependency_set=key, with_set=key)

    old = write_shard(tmp_path / "old.jsonl", [ran_with("23.2", "pass")])
    new = write_shard(tmp_path / "new.jsonl", [ran_with("24.1", "fail")])
    assert run_merge(str(old), str(new), "--out", str(tmp_path / "o")) == 0
    rows = read_all(tmp_path / "o")
    assert sorted((r["with_set"], r["status"]) for r in rows) == [
        ("packaging==23.2", "pass"),
        ("packaging==24.1", "fail"),
    ]
    base = records.env_file_name("2.9.1", "pypi", "3.11")[: -len(".jsonl")]
    assert sorted(record_files(tmp_path / "o")) == sorted(
        base + dependencies.set_suffix("packaging==%s" % v) + ".jsonl" for v in ("23.2", "24.1")
    )
    # A record from before with_set existed is the cell that ran without --with.
    bare = cell("2.9.1", "pypi", "m", "strict", "pass", "2025-01-01T00:00:00Z")
    del bare["with_set"]
    merged = merge.merge([merge.read_shard(str(write_shard(tmp_path / "bare.jsonl", [bare])))])
    assert merged.cells == 1 and schema.identity(bare)[3] == ""


def test_a_working_base_environment_does_not_clear_a_sets_env_error(shards: List[Path], tmp_path: Path) -> None:
    failed = {
        "kind": "env-error",
        "schema_version": schema.SCHEMA_VERSION,
        "torch_version": "2.4.1",
        "variant": "pypi",
        "python": "3.11",
        "dependency_set": "timm",
        "error_type": "matrix.envs.install.InstallError",
        "error_message": "connection reset",
        "installer_output": "",
        "finished_at": "2024-12-31T00:00:00Z",
    }
    path = write_shard(tmp_path / "set.jsonl", [failed])
    assert run_merge(str(path), *map(str, shards), "--out", str(tmp_path / "o")) == 0
    kept = [r for r in read_all(tmp_path / "o") if r["kind"] == "env-error"]
    assert [(r["dependency_set"], r["error_message"]) for r in kept] == [("timm", "connection reset")]


def test_a_programs_load_and_its_packages_load_are_both_kept(tmp_path: Path) -> None:
    shards = []
    for name, status in (("a", "load-error"), ("b", "pass")):
        path = tmp_path / name / "load_torch-2.9.1_pypi_py3.11.jsonl"
        path.parent.mkdir(parents=True)
        finished = "2025-01-0%dT00:00:00+00:00" % (1 if name == "a" else 2)
        package = dict(load_record(status, finished), kind="aoti-load")
        path.write_text(json.dumps(load_record("pass", finished)) + "\n" + json.dumps(package) + "\n")
        shards.append(merge.read_shard(str(path)))
    merged = merge.merge(shards)
    assert not merged.flagged
    kept = merged.files["load_torch-2.9.1_pypi_py3.11.jsonl"]
    assert sorted((r["kind"], r["status"]) for r in kept) == [("aoti-load", "pass"), ("load", "pass")]
