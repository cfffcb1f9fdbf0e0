"""The report's tables: runs summarised per cell, pivots, disagreements, claims, baseline comparison."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd
import pytest

from matrix.records import baseline, store, tables, transitions

from conftest import make_cell


def cell(release: str, case: str, status: str = "pass", mode: str = "strict", run: int = 0, **extra: Any):
    defaults = {"tags": ["torch.cond"], "finished_at": "2025-01-01T00:00:%02d+00:00" % run}
    return make_cell(release, case, status, mode, run, **{**defaults, **extra})


def load(tmp_path: Path, rows: List[Dict[str, Any]], name: str = "records") -> pd.DataFrame:
    folder = tmp_path / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return tables.cells(store.load([str(folder)]).cells)


def test_runs_are_summarised_by_most_common_status_and_median_times(tmp_path: Path):
    rows = [
        cell("2.4.1", "x", "pass", run=0, export_s=1.0, graph_hash="a" * 16),
        cell("2.4.1", "x", "timeout", run=1, export_s=30.0),
        cell("2.4.1", "x", "pass", run=2, export_s=3.0, graph_hash="b" * 16),
        cell("2.4.1", "x", "pass", run=3, export_s=2.0, graph_hash="c" * 16),
    ]
    table = load(tmp_path, rows)
    assert len(table) == 1
    row = table.iloc[0]
    assert row["status"] == "pass"
    assert row["runs"] == 4
    assert bool(row["flaky"]) is True
    assert row["statuses"] == "pass×3 timeout×1"
    assert row["export_s"] == 2.0  # median of the passing runs only
    assert row["graph_hash"] == "a" * 16  # from the first run with the chosen status


def test_a_tie_between_statuses_goes_to_the_worse(tmp_path: Path):
    rows = [cell("2.4.1", "x", "pass", run=0), cell("2.4.1", "x", "crash", run=1)]
    assert list(load(tmp_path, rows)["status"]) == ["crash"]


def test_a_single_run_is_not_flaky(tmp_path: Path):
    table = load(tmp_path, [cell("2.4.1", "x", "fail", error_type="RuntimeError", error_message="boom")])
    row = table.iloc[0]
    assert (row["status"], row["runs"], bool(row["flaky"]), row["error_type"]) == ("fail", 1, False, "RuntimeError")
    assert list(table.columns) == tables.CELL_COLUMNS + tables.TEXT_COLUMNS


def test_pivot_is_case_by_release_and_mode_in_version_order(tmp_path: Path):
    rows = [
        cell("2.10.0", "x", "fail"),
        cell("2.9.1", "x"),
        cell("2.9.1", "x", mode="non-strict"),
        cell("2.9.1", "y", "not-applicable"),
    ]
    grid = tables.pivot(load(tmp_path, rows))
    assert list(grid.columns) == ["2.9.1/strict", "2.9.1/non-strict", "2.10.0/strict"]
    assert list(grid.index) == ["x", "y"]
    assert grid.at["x", "2.10.0/strict"] == "fail"
    assert pd.isna(grid.at["y", "2.10.0/strict"])


def test_mode_disagreements_leave_out_not_applicable(tmp_path: Path):
    rows = [
        cell("2.4.1", "x", "fail", error_type="torch._dynamo.exc.Unsupported", error_message="graph break"),
        cell("2.4.1", "x", "pass", mode="non-strict"),
        cell("2.4.1", "y", "pass"),
        cell("2.4.1", "y", "not-applicable", mode="non-strict"),
        cell("2.4.1", "z", "fail"),
        cell("2.4.1", "z", "fail", mode="non-strict"),
    ]
    found = tables.mode_disagreements(load(tmp_path, rows))
    assert list(found["case"]) == ["x"]
    assert found.iloc[0]["strict_error"] == "torch._dynamo.exc.Unsupported: graph break"


def test_mode_counts_say_per_environment_which_mode_alone_passes(tmp_path: Path):
    rows = [
        cell("2.10.0", "x", "fail"),
        cell("2.10.0", "x", "pass", mode="non-strict"),
        cell("2.9.1", "x", "pass"),
        cell("2.9.1", "x", "mismatch", mode="non-strict"),
        cell("2.9.1", "y", "crash"),
        cell("2.9.1", "y", "fail", mode="non-strict"),
        cell("2.9.1", "z", "pass"),
        cell("2.9.1", "z", "pass", mode="non-strict"),
        # Not in both modes, or not applicable in one: counted nowhere.
        cell("2.9.1", "w", "pass"),
        cell("2.9.1", "v", "pass"),
        cell("2.9.1", "v", "not-applicable", mode="non-strict"),
        cell("2.8.0", "u", "pass"),
    ]
    table = load(tmp_path, rows)
    found = tables.mode_counts(table)
    assert list(found.columns) == tables.MODE_COUNT_COLUMNS
    assert found.drop(columns=["variant", "python", "with_set"]).values.tolist() == [
        ["2.9.1", 3, 2, 1, 0, 1],
        ["2.10.0", 1, 1, 0, 1, 0],
    ]
    assert tables.mode_counts(table, tables.mode_disagreements(table)).equals(found)
    assert tables.mode_counts(table[table["release"] == "2.8.0"]).empty


@pytest.mark.parametrize(
    "expected, mode, status, holds",
    [
        ("supported", "strict", "pass", True),
        ("supported", "non-strict", "fail", False),
        ("supported", "strict", "mismatch", False),
        ("not-supported-yet", "strict", "fail", True),
        ("not-supported-yet", "non-strict", "pass", False),
        ("fails", "strict", "crash", True),
        ("strict-only", "strict", "pass", True),
        ("strict-only", "non-strict", "pass", False),
        ("non-strict-only", "strict", "fail", True),
        ("non-strict-only", "non-strict", "pass", True),
        ("supported", "strict", "not-applicable", None),
        ("supported", "strict", "case-error", None),
        ("something-new", "strict", "pass", None),
    ],
)
def test_claim_holds(expected: str, mode: str, status: str, holds: Any):
    assert tables.claim_holds(expected, mode, status) is holds


def test_claims_lists_contradicted_cells(tmp_path: Path):
    rows = [
        cell("2.4.1", "x", "pass", expected="not-supported-yet"),
        cell("2.4.1", "y", "pass", expected="supported"),
        cell("2.4.1", "z", "fail", expected="supported", error_type="RuntimeError", error_message="boom"),
        cell("2.4.1", "w", "fail"),
    ]
    found = tables.claims(load(tmp_path, rows))
    assert list(zip(found["case"], found["expected"], found["status"])) == [
        ("x", "not-supported-yet", "pass"),
        ("z", "supported", "fail"),
    ]
    assert found.iloc[1]["error"] == "RuntimeError: boom"


def test_an_exportdb_case_is_judged_against_each_releases_own_exportdb_claim(tmp_path: Path):
    # The case file carries one release's support level; each release's records carry what its own ExportDB says.
    ours = dict(case_file="cases/exportdb/optional_input.py", source="cases", expected="not-supported-yet")
    rows = [
        cell("2.1.2", "exportdb/optional_input", "fail", **ours),  # no such example in 2.1: the case file stands in
        cell("2.9.1", "exportdb/optional_input", "pass", exportdb_claim="not-supported-yet", **ours),
        cell("2.13.0", "exportdb/optional_input", "pass", exportdb_claim="supported", **ours),
        cell("2.13.0", "exportdb/optional_input", "fail", mode="non-strict", exportdb_claim="supported", **ours),
        cell("2.13.0", "tutorial/cond", "pass", case_file="cases/tutorial/cond.py", expected="fails"),
        cell("2.13.0", "torch-exportdb/list_contains", "fail", source="exportdb", expected="supported"),
    ]
    table = load(tmp_path, rows)
    claimed = table.join(tables.documented_claims(table))
    assert sorted(
        zip(claimed["release"], claimed["case"], claimed["mode"], claimed["claim"], claimed["claimed_by"])
    ) == [
        ("2.1.2", "exportdb/optional_input", "strict", "not-supported-yet", tables.BY_CASE_FOR_RELEASE),
        ("2.13.0", "exportdb/optional_input", "non-strict", "supported", tables.BY_RELEASE),
        ("2.13.0", "exportdb/optional_input", "strict", "supported", tables.BY_RELEASE),
        ("2.13.0", "torch-exportdb/list_contains", "strict", "supported", tables.BY_CASE_FOR_RELEASE),
        ("2.13.0", "tutorial/cond", "strict", "fails", tables.BY_CASE),
        ("2.9.1", "exportdb/optional_input", "strict", "not-supported-yet", tables.BY_RELEASE),
    ]
    found = tables.claims(table)
    # 2.9.1 documents no support and it passes: contradicted; 2.13.0 documents support: only its failing mode is.
    assert sorted(zip(found["release"], found["case"], found["mode"], found["claim"], found["claimed_by"])) == [
        ("2.13.0", "exportdb/optional_input", "non-strict", "supported", tables.BY_RELEASE),
        ("2.13.0", "torch-exportdb/list_contains", "strict", "supported", tables.BY_CASE_FOR_RELEASE),
        ("2.13.0", "tutorial/cond", "strict", "fails", tables.BY_CASE),
        ("2.9.1", "exportdb/optional_input", "strict", "not-supported-yet", tables.BY_RELEASE),
    ]
    assert set(found["expected"]) == {"not-supported-yet", "fails", "supported"}


def test_summary_counts_and_pass_rate_leave_out_not_applicable(tmp_path: Path):
    rows = [
        cell("2.4.1", "a", "pass"),
        cell("2.4.1", "b", "fail"),
        cell("2.4.1", "c", "not-applicable"),
        cell("2.4.1", "d", "case-error"),
    ]
    summary = tables.summary(load(tmp_path, rows))
    row = summary.iloc[0]
    assert (row["pass"], row["fail"], row["not-applicable"], row["case-error"], row["cells"]) == (1, 1, 1, 1, 4)
    assert row["pass_rate"] == 0.5


def test_parquet_round_trip_keeps_lists_and_drops_bulky_texts(tmp_path: Path):
    table = load(
        tmp_path,
        [cell("2.4.1", "x", ops=["aten.add.Tensor"], graph_text="graph", error_traceback="tb", checked_inputs=3)],
    )
    path = tmp_path / "cells.parquet"
    tables.parquet_frame(table).to_parquet(path, index=False)
    back = pd.read_parquet(path)
    assert "graph_text" not in back.columns and "error_traceback" not in back.columns
    assert list(back.iloc[0]["ops"]) == ["aten.add.Tensor"]
    assert list(back.iloc[0]["tags"]) == ["torch.cond"]


def write_baseline(tmp_path: Path, rows: List[Dict[str, Any]]) -> Path:
    table = load(tmp_path, rows, name="baseline-records")
    folder = tmp_path / "baseline"
    folder.mkdir()
    tables.parquet_frame(table).to_parquet(folder / "cells.parquet", index=False)
    tables.storable(transitions.find(table)).to_parquet(folder / "transitions.parquet", index=False)
    return folder


def test_baseline_comparison(tmp_path: Path):
    folder = write_baseline(
        tmp_path,
        [
            cell("2.4.1", "same"),
            cell("2.4.1", "worse"),
            cell("2.4.1", "better", "fail"),
            cell("2.4.1", "silent", "fail"),
            cell("2.4.1", "odd", "pass"),
            cell("2.4.1", "gone"),
            cell("2.5.0", "same"),
            cell("2.5.0", "silent", "fail"),
        ],
    )
    current = load(
        tmp_path,
        [
            cell("2.4.1", "same"),
            cell("2.4.1", "worse", "crash"),
            cell("2.4.1", "better", "pass"),
            cell("2.4.1", "silent", "fail"),
            cell("2.4.1", "odd", "not-applicable"),
            cell("2.4.1", "new"),
            cell("2.5.0", "same"),
            # A refused export that now gives wrong numbers: a wrong result, as between two releases.
            cell("2.5.0", "silent", "mismatch"),
            cell("2.6.0", "same", "fail"),
        ],
    )
    base, base_moves = baseline.read_baseline(str(folder))
    moves = transitions.find(current)
    comparison = baseline.compare(current, moves, base, base_moves)
    assert list(zip(comparison.changed["release"], comparison.changed["case"], comparison.changed["kind"])) == [
        ("2.4.1", "better", "fix"),
        ("2.4.1", "odd", "change"),
        ("2.4.1", "worse", "regression"),
        ("2.5.0", "silent", "wrong-result"),
    ]
    assert list(zip(comparison.new_cells["release"], comparison.new_cells["case"])) == [
        ("2.4.1", "new"),
        ("2.6.0", "same"),
    ]
    assert list(comparison.vanished_cells["case"]) == ["gone"]
    assert list(zip(comparison.new_transitions["kind"], comparison.new_transitions["after"])) == [
        ("wrong-result", "2.5.0"),
        ("regression", "2.6.0"),
    ]
    assert comparison.gone_transitions.empty


def test_baseline_folder_must_hold_a_report(tmp_path: Path):
    with pytest.raises(baseline.BaselineError, match="no cells.parquet"):
        baseline.read_baseline(str(tmp_path))
    pd.DataFrame({"case": ["x"]}).to_parquet(tmp_path / "cells.parquet")
    with pytest.raises(baseline.BaselineError, match="lacks the columns"):
        baseline.read_baseline(str(tmp_path))


def test_per_run_export_times_are_kept_for_the_runs_behind_the_status(tmp_path: Path):
    rows = [
        cell("2.4.1", "x", "pass", run=0, export_s=0.3),
        cell("2.4.1", "x", "timeout", run=1, export_s=30.0),
        cell("2.4.1", "x", "pass", run=2, export_s=0.1),
        cell("2.4.1", "x", "pass", run=3, export_s=None),
        cell("2.4.1", "x", "pass", run=4, export_s=0.2),
    ]
    table = load(tmp_path, rows)
    assert list(table.iloc[0]["export_s_runs"]) == [0.1, 0.2, 0.3]  # sorted; the timeout and the untimed run left out
    assert table.iloc[0]["export_s"] == 0.2
    path = tmp_path / "cells.parquet"
    tables.parquet_frame(table).to_parquet(path, index=False)
    back = pd.read_parquet(path)
    assert [float(v) for v in back.iloc[0]["export_s_runs"]] == [0.1, 0.2, 0.3]  # numbers, not text


def test_stage_outcomes_are_derived_for_exported_cells_only(tmp_path: Path):
    rows = [
        cell("2.4.1", "saved", serialize_status="ok", decompose_status="ok", fingerprint_version=2),
        cell("2.4.1", "unloadable", serialize_status="error", serialize_error="load: RuntimeError: no"),
        cell("2.4.1", "odd", "mismatch", decompose_status="error", decompose_error="KeyError: op"),
        # A failed export never reached the later stages, whatever the record says.
        cell("2.4.1", "broken", "fail", serialize_status="error", decompose_status="error"),
    ]
    table = load(tmp_path, rows).set_index("case")
    assert table.loc["saved", "serialize_outcome"] == "ok" and table.loc["saved", "decompose_outcome"] == "ok"
    assert table.loc["saved", "fingerprint_version"] == 2
    assert table.loc["unloadable", "serialize_outcome"] == "error"
    assert table.loc["unloadable", "decompose_outcome"] is None
    assert table.loc["odd", "decompose_outcome"] == "error"
    assert table.loc["broken", "serialize_outcome"] is None and table.loc["broken", "decompose_outcome"] is None

    failures = tables.stage_failures(load(tmp_path, rows, name="again"))
    # Only passes count: a mismatch is not a clean pass to begin with.
    assert list(zip(failures["case"], failures["stage"], failures["error"])) == [
        ("unloadable", "serialize", "load: RuntimeError: no")
    ]


def test_failure_signatures_group_by_error_class_and_first_line(tmp_path: Path):
    boom: Dict[str, Any] = {"error_type": "RuntimeError", "error_message": "boom\ndetails that vary 1"}
    rows = [
        cell("2.4.1", "a", "fail", **boom),
        cell("2.5.0", "a", "fail", **{**boom, "error_message": "boom\nother details"}),
        cell("2.5.0", "b", "mismatch", mode="non-strict", **boom),
        cell("2.5.0", "c", "fail", error_type="ValueError", error_message="bad"),
        cell("2.5.0", "d", "crash"),
        cell("2.5.0", "e", "not-applicable", error_type="ValueError", error_message="bad"),
        cell("2.5.0", "f", "pass"),
    ]
    found = tables.signatures(load(tmp_path, rows))
    assert list(zip(found["error_type"], found["first_line"], found["cells"], found["cases"])) == [
        ("RuntimeError", "boom", 3, 2),
        ("", "", 1, 1),
        ("ValueError", "bad", 1, 1),
    ]
    first = found.iloc[0]
    assert (first["statuses"], first["modes"], first["releases"]) == (
        ["mismatch", "fail"],
        ["strict", "non-strict"],
        ["2.4.1", "2.5.0"],
    )
    assert found.iloc[1]["statuses"] == ["crash"]


def test_two_with_sets_of_one_release_are_two_cells_side_by_side(tmp_path: Path):
    def ran(status: str, with_set: str, mode: str = "strict") -> Dict[str, Any]:
        return cell("2.9.1", "m", status, mode=mode, dependency_set=with_set, with_set=with_set)

    old, new = "transformers==4.57.1", "transformers==5.2.0"
    rows = [ran("pass", old), ran("pass", old, "non-strict"), ran("fail", new), ran("pass", new, "non-strict")]
    table = load(tmp_path, rows + [cell("2.9.1", "m"), cell("2.10.0", "m", with_set=old)])
    assert list(tables.environment_labels(table)) == [
        "2.9.1",
        "2.9.1 [transformers==4.57.1]",
        "2.9.1 [transformers==4.57.1]",
        "2.9.1 [transformers==5.2.0]",
        "2.9.1 [transformers==5.2.0]",
        "2.10.0 [transformers==4.57.1]",
    ]
    grid = tables.pivot(table)
    assert grid.loc["m"].to_dict() == {
        "2.9.1/strict": "pass",
        "2.9.1 [transformers==4.57.1]/strict": "pass",
        "2.9.1 [transformers==4.57.1]/non-strict": "pass",
        "2.9.1 [transformers==5.2.0]/strict": "fail",
        "2.9.1 [transformers==5.2.0]/non-strict": "pass",
        "2.10.0 [transformers==4.57.1]/strict": "pass",
    }
    rates = tables.summary(table)
    assert list(zip(rates["with_set"], rates["mode"], rates["pass_rate"]))[:5] == [
        ("", "strict", 1.0),
        (old, "strict", 1.0),
        (old, "non-strict", 1.0),
        (new, "strict", 0.0),
        (new, "non-strict", 1.0),
    ]
    counts = tables.mode_counts(table)
    assert list(zip(counts["with_set"], counts["both_modes"], counts["non_strict_only"])) == [(old, 1, 0), (new, 1, 1)]
    assert list(tables.mode_disagreements(table)["with_set"]) == [new]


def test_a_baseline_from_before_with_sets_compares_as_cells_without_one(tmp_path: Path):
    folder = write_baseline(tmp_path, [cell("2.4.1", "x")])
    pd.read_parquet(folder / "cells.parquet").drop(columns="with_set").to_parquet(folder / "cells.parquet")
    base, _ = baseline.read_baseline(str(folder))
    current = load(tmp_path, [cell("2.4.1", "x", "fail"), cell("2.4.1", "x", with_set="packaging==24.1")])
    comparison = baseline.compare(current, transitions.find(current), base, None)
    assert list(zip(comparison.changed["with_set"], comparison.changed["kind"])) == [("", "regression")]
    assert list(comparison.new_cells["with_set"]) == ["packaging==24.1"]
