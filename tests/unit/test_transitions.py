"""Transitions between consecutive releases, on hand-written cell tables."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

import pandas as pd
import pytest

from matrix.records import timings, transitions


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
    values = dict(graph_hash=graph, ops=list(ops), decomposed_ops=list(ops), export_s=0.2, fingerprint_version=1)
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
            up = "wrong-result" if better == "mismatch" else "fix"
            assert kinds([cell("2.1.0", worse), cell("2.2.0", better)]) == [(up, "2.1.0", "2.2.0")]


@pytest.mark.parametrize("refused", ["fail", "crash", "timeout"])
def test_a_refused_export_that_now_gives_wrong_numbers_is_a_wrong_result_not_a_fix(refused: str):
    rows = [
        cell("2.1.0", refused, error_type="torch._dynamo.exc.Unsupported", error_message="graph break"),
        cell("2.2.0", "mismatch", error_type="AssertionError", error_message="Tensor-likes are not close!"),
        passing("2.3.0"),
    ]
    found = transitions.find(pd.DataFrame(rows))
    assert list(found["kind"]) == ["wrong-result", "fix"]
    wrong = found.iloc[0]
    assert (wrong["status_before"], wrong["status_after"], wrong["detail"]) == (
        refused,
        "mismatch",
        f"{refused} → mismatch",
    )
    # Explained by what the newer release does: its wrong numbers, not the error it no longer raises.
    assert (wrong["error_type"], wrong["error_message"]) == ("AssertionError", "Tensor-likes are not close!")
    assert "wrong-result" in transitions.REGRESSIONS and "fix" not in transitions.REGRESSIONS


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
    assert drift[0]["stage"] == "exported"
    assert list(drift[0]["added"]) == ["aten.sin.default"]
    assert list(drift[0]["removed"]) == ["aten.mul.Tensor"]
    assert drift[0]["detail"] == "+aten.sin.default −aten.mul.Tensor"

    after["ops"] = list(before["ops"])
    after["decomposed_ops"] = ["aten.add.Tensor"]
    found = transitions.find(pd.DataFrame([before, after]))
    assert list(found.loc[found["kind"] == "op-drift", "stage"]) == ["decomposed"]


def test_op_drift_needs_op_lists_on_both_sides():
    # Both cells name the same hashing scheme, so that the op lists are compared: a cell whose export did not
    # get that far has no op list, which is no drift (in either direction, and at either stage).
    failing = cell("2.2.0", "fail", fingerprint_version=1)
    assert kinds([passing("2.1.0"), failing]) == [("regression", "2.1.0", "2.2.0")]
    assert kinds([dict(failing, release="2.1.0"), passing("2.2.0")]) == [("fix", "2.1.0", "2.2.0")]
    undecomposed = passing("2.2.0", decomposed_ops=None)
    assert kinds([passing("2.1.0"), undecomposed]) == []


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


# --- timings: a claim needs runs, a large change and a change larger than the spread -----------


def timed(release: str, times: Sequence[float], **extra: Any) -> Dict[str, Any]:
    return passing(release, export_s=sorted(times)[len(times) // 2], export_s_runs=sorted(times), **extra)


def test_a_single_run_per_release_claims_no_timing_change():
    # ×3 and 400 ms: the old rule's slowdown, but one run on each side is no evidence.
    assert kinds([timed("2.1.0", [0.2]), timed("2.2.0", [0.6])]) == []
    assert kinds([passing("2.1.0", export_s=0.2), passing("2.2.0", export_s=0.6)]) == []


def test_five_runs_each_with_a_real_change_claim_a_slowdown_and_say_why():
    old = [0.20, 0.21, 0.19, 0.20, 0.22]
    new = [0.60, 0.62, 0.61, 0.59, 0.63]
    found = transitions.find(pd.DataFrame([timed("2.1.0", old), timed("2.2.0", new)]))
    assert list(found["kind"]) == ["slowdown"]
    move = found.iloc[0]
    assert (move["runs_before"], move["runs_after"]) == (5, 5)
    assert move["export_s_before"] == pytest.approx(0.20) and move["export_s_after"] == pytest.approx(0.61)
    assert move["p_value"] == pytest.approx(1 / 252)  # every new run slower than every old one
    assert move["detail"].startswith("×3.05 (median 0.200 s → 0.610 s), 5 runs each, ranges disjoint")
    back = transitions.find(pd.DataFrame([timed("2.1.0", new), timed("2.2.0", old)]))
    assert list(back["kind"]) == ["speedup"]


def test_five_runs_with_overlapping_noisy_times_claim_nothing():
    # The medians differ by ×2.1 and 170 ms, but one noisy old run is slower than new ones.
    old = [0.10, 0.12, 0.15, 0.90, 1.00]
    new = [0.12, 0.30, 0.32, 0.35, 0.40]
    assert kinds([timed("2.1.0", old), timed("2.2.0", new)]) == []
    # One overlapping run is enough to leave 5 runs a side without a claim.
    assert kinds([timed("2.1.0", [0.2] * 4 + [0.61]), timed("2.2.0", [0.6] * 5)]) == []


def test_a_timing_claim_needs_enough_runs_on_both_sides_and_a_large_change():
    fast, slow = [0.20, 0.21, 0.19, 0.20, 0.22], [0.60, 0.62, 0.61, 0.59, 0.63]
    assert kinds([timed("2.1.0", fast[:4]), timed("2.2.0", slow)]) == []
    assert kinds([timed("2.1.0", fast), timed("2.2.0", slow[:4])]) == []
    # Disjoint runs, but only ×1.4, or ×5 but only 40 ms: too small to matter.
    assert kinds([timed("2.1.0", [1.0, 1.01, 1.02, 0.99, 0.98]), timed("2.2.0", [1.4, 1.41, 1.42, 1.39, 1.38])]) == []
    assert kinds([timed("2.1.0", [0.01] * 5), timed("2.2.0", [0.05] * 5)]) == []
    # Cells that did not export have no export time worth comparing.
    failing = [dict(timed(r, t), status="fail") for r, t in (("2.1.0", fast), ("2.2.0", slow))]
    assert kinds(failing) == [] and kinds([failing[0], timed("2.2.0", slow)]) == [("fix", "2.1.0", "2.2.0")]


def test_many_runs_allow_an_outlier_that_overlaps():
    old = [0.20 + i / 1000 for i in range(29)] + [0.9]  # one run on a loaded machine
    new = [0.60 + i / 1000 for i in range(30)]
    found = transitions.find(pd.DataFrame([timed("2.1.0", old), timed("2.2.0", new)]))
    assert list(found["kind"]) == ["slowdown"]
    assert "30 runs each, ranges overlap" in found.iloc[0]["detail"]


def test_per_run_times_read_back_from_parquet_as_arrays_or_text():
    # A report's cells.parquet gives arrays; older ones stored lists of numbers as text.
    old = pd.Series([0.20, 0.21, 0.19, 0.20, 0.22]).to_numpy()
    new = [str(v) for v in (0.60, 0.62, 0.61, 0.59, 0.63)]
    rows = [passing("2.1.0", export_s_runs=old), passing("2.2.0", export_s_runs=new)]
    assert kinds(rows) == [("slowdown", "2.1.0", "2.2.0")]


def test_mann_whitney_p_values():
    assert timings.mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(1 / 252)
    assert timings.mann_whitney([1, 2, 3, 4, 7], [6, 8, 9, 10, 11]) == pytest.approx(2 / 252)
    assert timings.mann_whitney([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]) == pytest.approx(1.0)
    assert timings.mann_whitney([1.0] * 5, [1.0] * 5) > 0.5  # all tied: no evidence either way
    # Above EXACT_UP_TO the normal approximation takes over; it agrees on which side of MAX_P a case lies.
    far = timings.mann_whitney(list(range(30)), [x + 100 for x in range(30)])
    near = timings.mann_whitney(list(range(30)), [x + 1 for x in range(30)])
    assert far < 1e-9 and near > timings.MAX_P
    assert 30 * 30 > timings.EXACT_UP_TO


# --- graph changes and op drift only between hashes of one scheme -------------------------------


@pytest.mark.parametrize(
    "old, new, claimed",
    [(1, 1, True), (1, 2, False), (None, 1, False), (1, None, False), (None, None, False), (2.0, 2, True)],
)
def test_graph_change_and_op_drift_need_the_same_known_fingerprint_version(old: Any, new: Any, claimed: bool):
    rows = [
        passing("2.1.0", graph="aaaa", ops=["aten.add.Tensor"], fingerprint_version=old),
        passing("2.2.0", graph="bbbb", ops=["aten.mul.Tensor"], fingerprint_version=new),
    ]
    expected = [("graph-change", "2.1.0", "2.2.0"), ("op-drift", "2.1.0", "2.2.0"), ("op-drift", "2.1.0", "2.2.0")]
    assert kinds(rows) == (expected if claimed else [])


def test_a_table_without_fingerprint_versions_claims_no_graph_change():
    rows = [passing("2.1.0", graph="aaaa"), passing("2.2.0", graph="bbbb")]
    table = pd.DataFrame(rows).drop(columns="fingerprint_version")
    assert transitions.find(table).empty
    # pandas turns a version column with a gap into floats with NaN: NaN is no version.
    rows[0]["fingerprint_version"] = math.nan
    assert kinds(rows) == []


# --- later stages: save/load and decomposition ---------------------------------------------------


def test_a_stage_that_starts_failing_under_a_pass_is_a_stage_regression():
    rows = [
        passing("2.1.0", serialize_status="ok", decompose_status="ok"),
        passing("2.2.0", serialize_status="error", serialize_error="load: RuntimeError: bad", decompose_status="ok"),
        passing("2.3.0", serialize_status="ok", decompose_status="error", decompose_error="KeyError: aten.x"),
    ]
    found = transitions.find(pd.DataFrame(rows))
    assert list(zip(found["kind"], found["stage"], found["before"], found["after"])) == [
        ("stage-regression", "serialize", "2.1.0", "2.2.0"),
        ("stage-regression", "decompose", "2.2.0", "2.3.0"),
        ("stage-fix", "serialize", "2.2.0", "2.3.0"),
    ]
    regression, later, fix = found.to_dict("records")
    assert regression["error_message"] == "load: RuntimeError: bad"
    assert regression["detail"] == "save/load ok → error"
    assert later["error_message"] == "KeyError: aten.x"
    assert fix["error_message"] == "load: RuntimeError: bad"  # the error it removed


def test_stage_changes_need_a_pass_on_both_sides_and_ok_against_error():
    broken = dict(serialize_status="error", serialize_error="save: boom")
    assert kinds([passing("2.1.0", serialize_status="ok"), dict(passing("2.2.0", **broken), status="mismatch")]) == [
        ("regression", "2.1.0", "2.2.0")
    ]
    # A stage skipped (capability missing) or not run says nothing about the next release's error.
    assert kinds([passing("2.1.0", serialize_status="skipped"), passing("2.2.0", **broken)]) == []
    assert kinds([passing("2.1.0"), passing("2.2.0", **broken)]) == []


def test_every_kind_is_listed_once_with_its_meaning():
    assert len(set(transitions.KINDS)) == len(transitions.KINDS)
    assert set(transitions.MEANING) == set(transitions.KINDS)
    assert {"stage-regression", "stage-fix"} <= set(transitions.KINDS)


# --- series across variants ----------------------------------------------------------------------


def built(release: str, variant: str, status: str = "pass", **extra: Any) -> Dict[str, Any]:
    row = passing(release, **extra) if status == "pass" else cell(release, status, **extra)
    return dict(row, variant=variant)


def compared(rows: List[Dict[str, Any]], **kwargs: Any) -> List[tuple]:
    return [(b["release"], a["release"]) for b, a in transitions.pairs(pd.DataFrame(rows), **kwargs)]


def test_a_build_of_another_variant_never_joins_pypis_series():
    rows = [
        built("2.9.1", "pypi"),
        built("2.13.0+cpu", "cpu", "fail", error_type="RuntimeError"),
        built("2.15.0", "pypi"),
    ]
    # PyPI's series skips nothing of its own; the CPU build is alone in its series and compared with nothing.
    assert compared(rows) == [("2.9.1", "2.15.0")]
    assert transitions.find(pd.DataFrame(rows)).empty


def test_each_variant_family_is_its_own_series():
    rows = [
        built("2.8.0", "pypi"),
        built("2.9.1", "pypi", "fail"),
        built("2.9.1+cpu", "cpu"),
        built("2.13.0+cpu", "cpu", "fail"),
        built("2.15.0", "pypi"),
    ]
    assert sorted(compared(rows)) == [("2.8.0", "2.9.1"), ("2.9.1", "2.15.0"), ("2.9.1+cpu", "2.13.0+cpu")]
    found = transitions.find(pd.DataFrame(rows))
    assert list(zip(found["kind"], found["before"], found["after"], found["variant"])) == [
        ("regression", "2.8.0", "2.9.1", "pypi"),
        ("regression", "2.9.1+cpu", "2.13.0+cpu", "cpu"),
        ("fix", "2.9.1", "2.15.0", "pypi"),
    ]


def test_a_release_without_cells_breaks_its_own_series_only():
    rows = [
        built("2.9.1", "pypi"),
        built("2.15.0", "pypi", "fail"),
        built("2.9.1+cpu", "cpu"),
        built("2.15.0+cpu", "cpu"),
    ]
    # PyPI's 2.13.0 has no cell (its environment failed): nothing of PyPI's is compared across it.
    releases = {"pypi": ["2.9.1", "2.13.0", "2.15.0"], "cpu": ["2.9.1+cpu", "2.15.0+cpu"]}
    assert compared(rows, releases=releases) == [("2.9.1+cpu", "2.15.0+cpu")]


def test_series_lists_each_variant_with_its_own_releases_in_version_order():
    chains = transitions.series({"pypi": ["2.15.0", "2.9.1"], "cpu": ["2.13.0+cpu", "2.9.1+cpu"]})
    assert chains["pypi"] == [("pypi", "2.9.1"), ("pypi", "2.15.0")]
    assert chains["cpu"] == [("cpu", "2.9.1+cpu"), ("cpu", "2.13.0+cpu")]


# --- steps: the release transitions the report's pages render ------------------------------------


def steps(rows: List[Dict[str, Any]]) -> List[transitions.Step]:
    table = pd.DataFrame(rows)
    compared = transitions.pairs(table)
    return transitions.steps(compared, transitions.collect(compared))


def test_steps_group_pairs_and_moves_by_release_transition_in_release_order():
    rows = [
        passing("2.10.0", case="a"),
        cell("2.9.0", "fail", case="a"),
        passing("2.8.0", case="a"),
        passing("2.8.0", case="b"),
        passing("2.9.0", case="b"),
        cell("2.10.0", "crash", case="b"),
    ]
    found = steps(rows)
    assert [(s.before, s.after) for s in found] == [("2.8.0", "2.9.0"), ("2.9.0", "2.10.0")]
    first, second = found
    assert sorted(b["case"] for b, _ in first.pairs) == ["a", "b"]
    assert [(m["kind"], m["case"]) for m in first.moves] == [("regression", "a")]
    assert (second.count("regression"), second.count("fix"), second.count("regression", "fix")) == (1, 1, 2)
    assert [m["case"] for m in second.of("fix")] == ["a"] and second.of("slowdown") == []
    # A step holds the pairs compared even where nothing changed.
    (quiet,) = steps([passing("2.1.0"), passing("2.2.0")])
    assert len(quiet.pairs) == 1 and quiet.moves == ()


def test_a_step_says_which_pairs_could_not_be_compared_and_which_could_be_timed():
    fast, slow = [0.20, 0.21, 0.19, 0.20, 0.22], [0.60, 0.62, 0.61, 0.59, 0.63]
    rows = [
        passing("2.1.0", case="same"),
        passing("2.2.0", case="same"),
        passing("2.1.0", case="rehashed", fingerprint_version=1),
        passing("2.2.0", case="rehashed", fingerprint_version=2),
        passing("2.1.0", case="unnamed", fingerprint_version=None),
        passing("2.2.0", case="unnamed", fingerprint_version=None),
        timed("2.1.0", fast, case="timed"),
        dict(timed("2.2.0", slow, case="timed"), status="mismatch"),
        timed("2.1.0", fast[:4], case="few"),
        timed("2.2.0", slow, case="few"),
        cell("2.1.0", "fail", case="broken"),
        cell("2.2.0", "fail", case="broken"),
    ]
    (step,) = steps(rows)
    assert sorted(b["case"] for b, _ in step.incomparable) == ["rehashed", "unnamed"]
    assert sorted(b["case"] for b, _ in step.exported) == ["few", "rehashed", "same", "timed", "unnamed"]
    assert [b["case"] for b, _ in step.timed] == ["timed"]
    # What the step counts is what compare judged on: the timed pair is the one with a slowdown.
    assert [m["case"] for m in step.of("slowdown")] == ["timed"]


@pytest.mark.parametrize(
    "old, new, expected", [(1, 1, 1), (2.0, 2, 2), (1, 2, None), (None, 1, None), (math.nan, math.nan, None)]
)
def test_scheme_is_the_known_fingerprint_version_both_cells_share(old: Any, new: Any, expected: Any):
    assert transitions.scheme({"fingerprint_version": old}, {"fingerprint_version": new}) == expected


@pytest.mark.parametrize(
    "runs, expected",
    [([1, 1, 1], (1, 1)), ([3, 5, 3], (3, 5)), ([None, math.nan, 2], (1, 2)), ([2.0, 4], (2, 4)), ([], (0, 0))],
)
def test_repeats_are_the_fewest_and_most_runs_a_cell_had(runs: List[Any], expected: tuple):
    assert timings.repeats(runs) == expected


def test_a_step_knows_how_many_runs_its_cells_had():
    rows = [passing("2.1.0", runs=1), passing("2.2.0", runs=3)]
    rows += [passing("2.1.0", case="d", runs=2), passing("2.2.0", case="d", runs=2)]
    (step,) = steps(rows)
    assert step.repeats == (1, 3)


def test_timeable_needs_both_cells_exported_with_enough_runs():
    runs = [0.1] * timings.MIN_RUNS
    assert timings.timeable(timed("2.1.0", runs), dict(timed("2.2.0", runs), status="mismatch"))
    assert not timings.timeable(timed("2.1.0", runs[1:]), timed("2.2.0", runs))
    assert not timings.timeable(dict(timed("2.1.0", runs), status="fail"), timed("2.2.0", runs))
    assert timings.both_exported(cell("2.1.0", "mismatch"), passing("2.2.0"))
    assert not timings.both_exported(cell("2.1.0", "crash"), passing("2.2.0"))


def test_each_with_set_is_its_own_series():
    # Compared across sets, 2.9.1 [a] → 2.10.0 [b] would be a regression; each set alone changes nothing.
    rows = [
        passing("2.9.1", with_set="packaging==23.2"),
        passing("2.10.0", with_set="packaging==23.2"),
        cell("2.9.1", "fail", with_set="packaging==24.1"),
        cell("2.10.0", "fail", with_set="packaging==24.1"),
    ]
    compared = transitions.pairs(pd.DataFrame(rows))
    assert sorted((b["with_set"], a["with_set"]) for b, a in compared) == [
        ("packaging==23.2", "packaging==23.2"),
        ("packaging==24.1", "packaging==24.1"),
    ]
    assert kinds(rows) == []


def test_a_transition_names_the_with_set_of_its_cells():
    rows = [
        passing("2.9.1", with_set="packaging==23.2"),
        cell("2.10.0", "fail", with_set="packaging==23.2"),
        passing("2.9.1"),
        cell("2.10.0", "fail"),
    ]
    found = transitions.find(pd.DataFrame(rows))
    assert list(zip(found["kind"], found["with_set"])) == [("regression", ""), ("regression", "packaging==23.2")]


def test_status_change_is_the_one_rule_for_regressions_wrong_results_and_fixes():
    assert transitions.status_change("pass", "fail") == "regression"
    assert transitions.status_change("fail", "mismatch") == "wrong-result"
    assert transitions.status_change("crash", "mismatch") == "wrong-result"
    assert transitions.status_change("mismatch", "pass") == "fix"
    assert transitions.status_change("fail", "pass") == "fix"
    assert transitions.status_change("pass", "pass") is None
    assert transitions.status_change("not-applicable", "pass") is None
    assert set(transitions.REGRESSIONS) | set(transitions.FIXES) <= set(transitions.KINDS)
    assert not set(transitions.REGRESSIONS) & set(transitions.FIXES)
