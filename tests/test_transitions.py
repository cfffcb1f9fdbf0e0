"""Transitions between consecutive releases, on hand-written cell tables."""

from __future__ import annotations

from typing import Any, Dict, List

import pandas as pd

from matrix.records import transitions


def cell(release: str, status: str, case: str = "c", mode: str = "strict", **extra: Any) -> Dict[str, Any]:
    row: Dict[str, Any] = {
        "release": release,
        "variant": "cpu",
        "python": "3.11",
        "case": case,
        "mode": mode,
        "status": status,
        "error_type": None,
        "error_message": None,
        "graph_hash": None,
        "ops": None,
        "decomposed_ops": None,
        "export_s": None,
    }
    row.update(extra)
    return row


def passing(release: str, graph: str = "aaaa", ops: List[str] = ("aten.add.Tensor",), **extra: Any) -> Dict[str, Any]:  # type: ignore[assignment]
    values = dict(graph_hash=graph, ops=list(ops), decomposed_ops=list(ops), export_s=0.2)
    values.update(extra)
    return cell(release, "pass", **values)


def kinds(rows: List[Dict[str, Any]], **kwargs: Any) -> List[tuple]:
    found = transitions.find(pd.DataFrame(rows), **kwargs)
    return list(zip(found["kind"], found["before"], found["after"]))


def test_regression_names_the_new_error_and_fix_the_old_one():
    rows = [
        passing("2.3.0"),
        cell("2.4.0", "fail", error_type="torch._dynamo.exc.Unsupported", error_message="graph break"),
        passing("2.5.0"),
    ]
    found = transitions.find(pd.DataFrame(rows))
    assert list(found["kind"]) == ["regression", "fix"]
    regression, fix = found.to_dict("records")
    assert (regression["before"], regression["after"]) == ("2.3.0", "2.4.0")
    assert (regression["status_before"], regression["status_after"]) == ("pass", "fail")
    assert regression["error_type"] == "torch._dynamo.exc.Unsupported"
    assert fix["error_message"] == "graph break"
    assert fix["detail"] == "fail → pass"


def test_status_order_pass_mismatch_fail_crash():
    order = ["crash", "fail", "mismatch", "pass"]
    for worse_index, worse in enumerate(order):
        for better in order[worse_index + 1 :]:
            assert kinds([cell("2.1.0", better), cell("2.2.0", worse)]) == [("regression", "2.1.0", "2.2.0")]
            assert kinds([cell("2.1.0", worse), cell("2.2.0", better)]) == [("fix", "2.1.0", "2.2.0")]


def test_crash_and_timeout_are_equally_bad():
    assert kinds([cell("2.1.0", "crash"), cell("2.2.0", "timeout")]) == []
    assert kinds([cell("2.1.0", "timeout"), cell("2.2.0", "crash")]) == []


def test_not_applicable_and_case_error_yield_no_regression_or_fix():
    for neutral in ("not-applicable", "case-error"):
        rows = [
            passing("2.1.0"),
            cell("2.2.0", neutral),
            cell("2.3.0", "fail"),
            cell("2.4.0", neutral),
            passing("2.5.0"),
        ]
        assert kinds(rows) == [], neutral


def test_a_release_without_a_cell_breaks_the_series():
    rows = [passing("2.1.0"), cell("2.3.0", "fail")]
    # By default the releases in the table are consecutive...
    assert kinds(rows) == [("regression", "2.1.0", "2.3.0")]
    # ...but a release known to the matrix (an env-error) sits between them.
    assert kinds(rows, releases={"cpu": ["2.1.0", "2.2.0", "2.3.0"]}) == []


def test_releases_are_ordered_by_version_not_text():
    rows = [cell("2.10.0", "fail"), passing("2.9.1")]
    assert kinds(rows) == [("regression", "2.9.1", "2.10.0")]


def test_graph_change_needs_two_passes_with_different_hashes():
    assert kinds([passing("2.1.0", graph="aaaa"), passing("2.2.0", graph="bbbb")]) == [
        ("graph-change", "2.1.0", "2.2.0")
    ]
    assert kinds([passing("2.1.0", graph="aaaa"), passing("2.2.0", graph="aaaa")]) == []
    mismatch = cell("2.2.0", "mismatch", graph_hash="bbbb", ops=["aten.add.Tensor"], decomposed_ops=["aten.add.Tensor"])
    assert kinds([passing("2.1.0", graph="aaaa"), mismatch]) == [("regression", "2.1.0", "2.2.0")]


def test_op_drift_before_and_after_decomposition():
    before = passing("2.1.0", ops=["aten.add.Tensor", "aten.mul.Tensor"])
    after = passing("2.2.0", ops=["aten.add.Tensor", "aten.sin.default"])
    after["decomposed_ops"] = ["aten.add.Tensor", "aten.mul.Tensor"]  # decomposition unchanged
    found = transitions.find(pd.DataFrame([before, after]))
    drift = found[found["kind"] == "op-drift"].to_dict("records")
    assert len(drift) == 1
    assert drift[0]["stage"] == "export"
    assert list(drift[0]["added"]) == ["aten.sin.default"]
    assert list(drift[0]["removed"]) == ["aten.mul.Tensor"]
    assert drift[0]["detail"] == "+aten.sin.default −aten.mul.Tensor"

    after["ops"] = list(before["ops"])
    after["decomposed_ops"] = ["aten.add.Tensor"]
    found = transitions.find(pd.DataFrame([before, after]))
    assert list(found.loc[found["kind"] == "op-drift", "stage"]) == ["decomposed"]


def test_op_drift_needs_op_lists_on_both_sides():
    assert kinds([passing("2.1.0"), cell("2.2.0", "fail")]) == [("regression", "2.1.0", "2.2.0")]


def test_slowdown_and_speedup_need_ratio_and_absolute_change():
    def times(a: float, b: float) -> List[tuple]:
        return kinds([passing("2.1.0", export_s=a), passing("2.2.0", export_s=b)])

    assert times(0.2, 0.4) == [("slowdown", "2.1.0", "2.2.0")]
    assert times(0.4, 0.2) == [("speedup", "2.1.0", "2.2.0")]
    assert times(0.01, 0.05) == []  # ×5 but only 40 ms
    assert times(1.0, 1.4) == []  # 400 ms but only ×1.4
    assert kinds([cell("2.1.0", "fail", export_s=0.1), cell("2.2.0", "fail", export_s=1.0)]) == []


def test_series_are_per_case_mode_and_variant():
    rows = [
        passing("2.1.0", case="a"),
        cell("2.2.0", "fail", case="a"),
        passing("2.1.0", case="a", mode="non-strict"),
        passing("2.2.0", case="a", mode="non-strict"),
        cell("2.1.0", "fail", case="b"),
        passing("2.2.0", case="b"),
        dict(passing("2.1.0", case="a"), variant="cu121"),
        dict(passing("2.2.0", case="a"), variant="cu121"),
    ]
    found = transitions.find(pd.DataFrame(rows))
    assert list(zip(found["case"], found["mode"], found["variant"], found["kind"])) == [
        ("a", "strict", "cpu", "regression"),
        ("b", "strict", "cpu", "fix"),
    ]


def test_newest_python_stands_for_a_release():
    rows = [
        passing("2.1.0"),
        dict(cell("2.2.0", "fail"), python="3.9"),
        dict(passing("2.2.0"), python="3.12"),
    ]
    assert kinds(rows) == []
    rows[2] = dict(cell("2.2.0", "crash"), python="3.12")
    found = transitions.find(pd.DataFrame(rows))
    assert list(found["status_after"]) == ["crash"]
    assert list(found["python_after"]) == ["3.12"]


def test_empty_table_gives_empty_frame_with_columns():
    found = transitions.find(pd.DataFrame(columns=["release", "variant", "python", "case", "mode", "status"]))
    assert found.empty
    assert list(found.columns) == transitions.COLUMNS
