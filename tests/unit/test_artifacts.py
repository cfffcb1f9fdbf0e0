"""The load table, its heatmap, reach and load regressions, on hand-written load records."""

from __future__ import annotations

import math
from typing import Any, List

import pandas as pd
import pytest

from matrix.contract import schema
from matrix.contract.products import PROGRAM
from matrix.records import artifacts, load_regressions, product_uses, store

from conftest import make_load as load_record


def make_load(saved: str, loaded: str, case: str = "add", status: str = "pass", mode: str = "strict", **extra: Any):
    """A hand-written load record, as ``export-matrix load`` writes it; ``extra`` sets or overrides any key."""
    pypi = {"saved_variant": "pypi", "variant": "pypi"}
    if status not in ("pass", "not-applicable") and "error_type" not in extra:
        pypi.update(error_type="RuntimeError", error_message="Serialized version does not match")
    return load_record(saved, loaded, case, status, mode, **{**pypi, **extra})


def frame(records: List[dict]) -> pd.DataFrame:
    return pd.DataFrame({key: [r.get(key) for r in records] for key in schema.LOAD_KEYS}, dtype=object)


def table(*records: dict) -> pd.DataFrame:
    return artifacts.table(frame(list(records)))


def test_latest_record_of_a_load_wins_whatever_the_reading_order() -> None:
    old = make_load("2.5.1", "2.6.0", status="load-error", finished_at="2025-01-01T00:00:00+00:00")
    new = make_load("2.5.1", "2.6.0", status="pass", finished_at="2025-01-02T00:00:00+00:00")
    for order in ([old, new], [new, old]):
        rows = artifacts.table(frame(order))
        assert rows[["saved", "loaded", "case", "mode", "status"]].values.tolist() == [
            ["2.5.1", "2.6.0", "add", "strict", "pass"]
        ]
    # An offset is an instant, not text: 01:00+02:00 is before 00:00Z of the same day.
    early = make_load("2.5.1", "2.6.0", status="pass", finished_at="2025-01-01T01:00:00+02:00")
    late = make_load("2.5.1", "2.6.0", status="mismatch", finished_at="2025-01-01T00:00:00Z")
    assert table(late, early)["status"].tolist() == ["mismatch"]


def test_one_row_per_saved_loaded_case_and_mode_in_release_order() -> None:
    rows = table(
        make_load("2.10.0", "2.9.1"),
        make_load("2.9.1", "2.10.0", case="b"),
        make_load("2.9.1", "2.10.0", case="a", mode="non-strict"),
        make_load("2.9.1", "2.10.0", case="a"),
        make_load("2.9.1", "2.9.1", case="a"),
    )
    assert rows[["saved", "loaded", "case", "mode"]].values.tolist() == [
        ["2.9.1", "2.9.1", "a", "strict"],
        ["2.9.1", "2.10.0", "a", "strict"],
        ["2.9.1", "2.10.0", "a", "non-strict"],
        ["2.9.1", "2.10.0", "b", "strict"],
        ["2.10.0", "2.9.1", "add", "strict"],
    ]


def test_records_without_a_usable_identity_or_status_are_left_out() -> None:
    rows = table(
        make_load("2.5.1", "2.6.0"),
        make_load("2.5.1", "2.6.0", case="odd", status="exploded"),
        make_load("2.5.1", "2.6.0", case="odd", mode="sideways"),
        make_load("2.5.1", "2.6.0", case=None),
        make_load("2.5.1", "2.6.0", case="n", saved_python=3.11),
    )
    assert rows["case"].tolist() == ["add"]
    assert artifacts.table(frame([])).empty


def test_labels_name_the_python_and_variant_only_where_they_vary() -> None:
    rows = table(
        make_load("2.5.1", "2.6.0"),
        make_load("2.5.1", "2.6.0", python="3.12"),
        make_load("2.5.1", "2.7.0", variant="cpu"),
        make_load("2.5.1", "2.7.0", variant="pypi"),
    )
    assert rows["saved"].unique().tolist() == ["2.5.1"]
    assert sorted(rows["loaded"]) == ["2.6.0 py3.11", "2.6.0 py3.12", "2.7.0 cpu", "2.7.0 pypi"]
    assert artifacts.orders(rows) == (["2.5.1"], ["2.6.0 py3.11", "2.6.0 py3.12", "2.7.0 cpu", "2.7.0 pypi"])


def test_heatmap_share_counts_only_what_the_loading_release_could_try() -> None:
    rows = table(
        make_load("2.5.1", "2.6.0", case="a"),
        make_load("2.5.1", "2.6.0", case="b", status="load-error"),
        make_load("2.5.1", "2.6.0", case="c", status="not-applicable"),
        make_load("2.5.1", "2.6.0", case="d", status="mismatch"),
        make_load("2.5.1", "2.0.1", case="a", status="not-applicable"),
        make_load("2.5.1", "2.6.0", case="a", mode="non-strict"),
    )
    grid = product_uses.shares(rows, PROGRAM)
    assert list(grid.columns) == [
        "mode", "saved", "loaded", "passed", "total", "not_applicable", "untrusted", "harness_error", "share",
    ]  # fmt: skip
    assert grid[["mode", "saved", "loaded", "passed", "total", "not_applicable"]].values.tolist() == [
        ["strict", "2.5.1", "2.0.1", 0, 0, 1],
        ["strict", "2.5.1", "2.6.0", 1, 3, 1],
        ["non-strict", "2.5.1", "2.6.0", 1, 1, 0],
    ]
    assert math.isnan(grid["share"][0])
    assert grid["share"][1] == pytest.approx(1 / 3)
    assert grid["share"][2] == 1.0
    assert product_uses.shares(artifacts.table(frame([])), PROGRAM).empty


def test_an_untrusted_load_was_not_tried_and_is_never_a_failed_load() -> None:
    rows = table(
        make_load("2.5.1", "2.6.0", case="a"),
        make_load("2.5.1", "2.6.0", case="b", status="untrusted", error_type="UntrustedArtifact"),
        make_load("2.5.1", "2.7.0", case="a", status="untrusted", error_type="UntrustedArtifact"),
        make_load("2.5.1", "2.7.0", case="b", status="untrusted", error_type="UntrustedArtifact"),
        make_load("2.5.1", "2.8.0", case="a", status="not-applicable"),
    )
    grid = product_uses.shares(rows, PROGRAM)
    assert grid[["loaded", "passed", "total", "not_applicable", "untrusted"]].values.tolist() == [
        ["2.6.0", 1, 1, 0, 1],
        ["2.7.0", 0, 0, 0, 2],
        ["2.8.0", 0, 0, 1, 0],
    ]
    assert grid["share"][0] == 1.0 and math.isnan(grid["share"][1])
    (found,) = artifacts.reach(rows)
    # 2.6.0 passes all it tried; 2.7.0 tried none (untrusted), 2.8.0 none (no torch.export.load): none fails.
    assert (found.passing, found.partial, found.failing) == (("2.6.0",), (), ())
    assert (found.unsigned, found.untried, found.untrusted) == (("2.7.0",), ("2.8.0",), 3)
    assert found.failing_cause is None and found.partial_cause is None
    assert artifacts.errors(rows) == []
    # Nor does an untrusted load on a newer release make a load regression.
    assert load_regressions.regressions(rows).empty and load_regressions.program_regressions(rows).empty
    assert all(artifacts.tried(s) for s in ("pass", "mismatch", "run-error", "load-error", "crash", "timeout"))
    assert not artifacts.tried("untrusted") and not artifacts.tried("not-applicable")


def test_reach_says_where_artifacts_load_and_from_where_they_fail_for_good() -> None:
    records = [make_load("2.5.1", loaded, case=case) for loaded in ("2.5.1", "2.6.0", "2.9.1") for case in "ab"]
    records += [
        make_load("2.5.1", loaded, case=case, status="load-error", error_type="RuntimeError",
                  error_message="  Serialized version (7, 3) does not match.  \nmore")
        for loaded in ("2.10.0", "2.11.0") for case in "ab"
    ]  # fmt: skip
    assert artifacts.reach(table(*records)) == [
        artifacts.Reach(
            saved="2.5.1",
            artifacts=2,
            passing=("2.5.1", "2.6.0", "2.9.1"),
            partial=(),
            failing=("2.10.0", "2.11.0"),
            untried=(),
            failing_from="2.10.0",
            failing_cause=artifacts.Failure("load-error", "RuntimeError", "Serialized version (7, 3) does not match."),
            partial_cause=None,
        )
    ]


def test_reach_fails_for_good_only_after_a_pass_and_up_to_the_newest_release() -> None:
    def failing_from(statuses: str) -> Any:
        loaded = ["2.%d.0" % minor for minor in range(len(statuses))]
        rows = [
            make_load("2.0.0", release, status="pass" if s == "p" else "load-error")
            for release, s in zip(loaded, statuses)
        ]
        return artifacts.reach(table(*rows))[0].failing_from

    assert failing_from("pff") == "2.1.0"
    assert failing_from("ppfff") == "2.2.0"
    assert failing_from("pfpff") is None  # a release that fails between two that load is no "from here on"
    assert failing_from("pf") is None  # one failing release is not a trend
    assert failing_from("ff") is None  # never loaded: nothing stopped
    assert failing_from("ffp") is None


def test_reach_counts_partial_loads_untried_releases_and_each_saving_release() -> None:
    rows = table(
        make_load("2.4.0", "2.3.0", status="not-applicable"),
        make_load("2.4.0", "2.4.0"),
        make_load("2.4.0", "2.4.0", case="b"),
        make_load("2.4.0", "2.5.0"),
        make_load("2.4.0", "2.5.0", case="b", status="run-error", error_type="TypeError", error_message="bad"),
        make_load("2.4.0", "2.5.0", case="c", status="not-applicable"),
        make_load("2.5.0", "2.4.0", status="load-error", error_type="KeyError", error_message="no version"),
        make_load("2.5.0", "2.5.0"),
    )
    first, second = artifacts.reach(rows)
    assert (first.saved, first.artifacts, first.passing, first.untried) == ("2.4.0", 3, ("2.4.0",), ("2.3.0",))
    # Only the loads it could try count: 2.5.0 tried two of the three artifacts.
    assert first.partial == (artifacts.Partial("2.5.0", passed=1, tried=2),)
    assert first.partial_cause == artifacts.Failure("run-error", "TypeError", "bad")
    assert first.failing == () and first.failing_cause is None
    assert (second.saved, second.passing, second.failing, second.failing_from) == (
        "2.5.0",
        ("2.5.0",),
        ("2.4.0",),
        None,
    )
    assert second.failing_cause == artifacts.Failure("load-error", "KeyError", "no version")
    assert artifacts.reach(artifacts.table(frame([]))) == []


def test_reach_names_the_most_common_failure_and_the_first_message_it_gave() -> None:
    rows = table(
        make_load("2.5.0", "2.6.0", case="a", status="crash", error_type="signal.SIGSEGV", error_message="killed"),
        make_load("2.5.0", "2.6.0", case="b", status="load-error", error_type="KeyError", error_message="x"),
        make_load("2.5.0", "2.6.0", case="c", status="load-error", error_type="KeyError", error_message="y"),
        make_load("2.5.0", "2.6.0", case="d", status="crash", error_type=None, error_message=None),
    )
    (found,) = artifacts.reach(rows)
    assert found.passing == () and found.failing == ("2.6.0",)
    assert found.failing_cause == artifacts.Failure("load-error", "KeyError", "x")


def test_a_loading_release_that_stops_loading_an_artifact_is_a_load_regression_of_that_program() -> None:
    rows = table(
        make_load("2.5.1", "2.5.1"),
        make_load("2.5.1", "2.9.1"),
        make_load("2.5.1", "2.10.0", status="load-error", error_type="RuntimeError", error_message="schema"),
        make_load("2.5.1", "2.11.0", status="load-error"),
    )
    moves = load_regressions.program_regressions(rows)
    assert list(moves.columns) == load_regressions.PROGRAM_COLUMNS
    assert moves[
        ["kind", "saved", "case", "mode", "before", "after", "status_before", "status_after"]
    ].values.tolist() == [["load-regression", "2.5.1", "add", "strict", "2.9.1", "2.10.0", "pass", "load-error"]]
    assert moves["error_message"].tolist() == ["schema"]


def test_one_case_saved_under_two_with_sets_is_two_programs_each_its_own_series() -> None:
    rows = table(
        make_load("2.9.1", "2.9.1"),
        make_load("2.9.1", "2.10.0"),
        make_load("2.9.1", "2.11.0", status="load-error"),
        # The same case saved with --with packaging: it fails on 2.10.0, and only that program passes on 2.11.0.
        make_load("2.9.1", "2.9.1", with_set="packaging"),
        make_load("2.9.1", "2.10.0", with_set="packaging", status="run-error"),
        make_load("2.9.1", "2.11.0", with_set="packaging"),
    )
    assert len(rows) == 6
    assert rows[rows["loaded"] == "2.11.0"][["with_set", "status"]].values.tolist() == [
        ["", "load-error"],
        ["packaging", "pass"],
    ]
    # Each program's regression is against its own load on the release before, never the other set's.
    moves = load_regressions.program_regressions(rows)
    assert moves[["with_set", "before", "after", "status_before", "status_after"]].values.tolist() == [
        ["", "2.10.0", "2.11.0", "pass", "load-error"],
        ["packaging", "2.9.1", "2.10.0", "pass", "run-error"],
    ]
    assert artifacts.program_rows(rows.to_dict("records"), ["2.9.1"]) == ["2.9.1", "2.9.1 [packaging]"]
    # A record written before loads had a with_set is the program without one.
    older = dict(make_load("2.9.1", "2.11.0", status="pass", finished_at="2026-01-01T00:00:00Z"))
    del older["with_set"]
    again = artifacts.table(frame([make_load("2.9.1", "2.11.0", status="load-error", with_set=""), older]))
    assert again[["with_set", "status"]].values.tolist() == [["", "pass"]]


def format_break(saved: str, programs: int, loaded: List[str], breaks_at: str, **failure: Any) -> List[dict]:
    """Loads of ``programs`` artifacts saved on ``saved``, each passing on every loading release before ``breaks_at``
    and failing (``failure``: status, error) from it on."""
    found = []
    for number in range(programs):
        for release in loaded:
            broken = store.release_key(release) >= store.release_key(breaks_at)
            extra = dict(status="load-error", **failure) if broken else {}
            found.append(make_load(saved, release, case="case%03d" % number, **extra))
    return found


def test_a_format_break_is_one_load_regression_per_saving_release_however_many_programs_it_saved() -> None:
    loaded = ["2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1"]
    archive = dict(error_type="KeyError", error_message="There is no item named 'version' in the archive")
    rows = table(
        *format_break("2.5.1", 40, loaded, "2.8.0", **archive),
        *format_break("2.6.0", 25, loaded, "2.8.0", **archive),
        *format_break("2.7.1", 3, loaded, "2.9.1", error_type="RuntimeError", error_message="schema (8, 20)"),
    )
    assert len(load_regressions.program_regressions(rows)) == 68
    breaks = load_regressions.regressions(rows)
    assert list(breaks.columns) == load_regressions.REGRESSION_COLUMNS
    assert breaks[["kind", "saved", "before", "after", "programs", "loaded_before", "sharing"]].values.tolist() == [
        ["load-regression", "2.5.1", "2.7.1", "2.8.0", 40, 40, 40],
        ["load-regression", "2.6.0", "2.7.1", "2.8.0", 25, 25, 25],
        ["load-regression", "2.7.1", "2.8.0", "2.9.1", 3, 3, 3],
    ]
    assert breaks[["status", "error_type", "error_message"]].values.tolist()[0] == ["load-error", *archive.values()]
    assert breaks.iloc[0][["torch_version_before", "torch_version_after"]].tolist() == ["2.7.1", "2.8.0"]


def test_a_load_regression_counts_the_programs_it_affects_of_those_the_release_before_loaded() -> None:
    rows = table(
        # Of the five programs 2.6.0 loads, 2.7.0 does worse with three, two of them for the same reason.
        *[make_load("2.5.1", "2.6.0", case=c) for c in "abcd"],
        make_load("2.5.1", "2.6.0", case="e", status="run-error"),
        make_load("2.5.1", "2.6.0", case="f", status="load-error"),  # loaded by neither: not counted
        make_load("2.5.1", "2.7.0", case="a", status="load-error", error_type="KeyError", error_message="u1"),
        make_load("2.5.1", "2.7.0", case="b", status="load-error", error_type="KeyError", error_message="u2"),
        make_load("2.5.1", "2.7.0", case="c", status="mismatch", error_type="AssertionError", error_message="close"),
        make_load("2.5.1", "2.7.0", case="d"),
        make_load("2.5.1", "2.7.0", case="e", status="run-error"),
        make_load("2.5.1", "2.7.0", case="f", status="load-error"),
    )
    (found,) = load_regressions.regressions(rows).to_dict("records")
    assert (found["programs"], found["loaded_before"], found["sharing"]) == (3, 5, 2)
    assert (found["status"], found["error_type"], found["error_message"]) == ("load-error", "KeyError", "u1")


@pytest.mark.parametrize(
    ("before", "after", "regression"),
    [
        ("pass", "mismatch", True),
        ("mismatch", "run-error", True),
        ("run-error", "load-error", True),
        ("pass", "crash", True),
        ("pass", "timeout", True),
        ("load-error", "crash", False),  # equally bad
        ("load-error", "pass", False),  # a fix, not a regression
        ("pass", "not-applicable", False),  # the release cannot try: says nothing
        ("not-applicable", "load-error", False),
    ],
)
def test_load_regression_ranks_statuses(before: str, after: str, regression: bool) -> None:
    rows = table(make_load("2.5.1", "2.6.0", status=before), make_load("2.5.1", "2.7.0", status=after))
    assert len(load_regressions.program_regressions(rows)) == len(load_regressions.regressions(rows)) == int(regression)


def test_load_regressions_compare_consecutive_releases_of_the_same_artifact_only() -> None:
    rows = table(
        # Another saving release, case or mode is another series.
        make_load("2.5.1", "2.6.0", case="a"),
        make_load("2.5.1", "2.7.0", case="b", status="load-error"),
        make_load("2.4.0", "2.7.0", case="a", status="load-error"),
        make_load("2.5.1", "2.7.0", case="a", mode="non-strict", status="load-error"),
        # Builds of one release are not compared with each other.
        make_load("2.5.1", "2.8.0", case="c"),
        make_load("2.5.1", "2.8.0+cpu", case="c", variant="cpu", status="load-error"),
        # The newest Python stands for a loading build.
        make_load("2.5.1", "2.6.0", case="d", python="3.9", status="load-error"),
        make_load("2.5.1", "2.6.0", case="d", python="3.12"),
        make_load("2.5.1", "2.7.0", case="d"),
    )
    assert load_regressions.program_regressions(rows).empty and load_regressions.regressions(rows).empty
    assert load_regressions.regressions(artifacts.table(frame([]))).empty
    assert list(load_regressions.regressions(artifacts.table(frame([]))).columns) == load_regressions.REGRESSION_COLUMNS


def test_errors_group_failures_by_what_they_say() -> None:
    rows = table(
        make_load("2.5.1", "2.6.0", status="load-error", error_type="KeyError", error_message="no 'version'"),
        make_load("2.4.0", "2.6.0", status="load-error", error_type="KeyError", error_message="no 'version'"),
        make_load("2.4.0", "2.5.1", status="run-error", error_type="TypeError", error_message="bad\nsecond line"),
        make_load("2.4.0", "2.4.0"),
    )
    assert artifacts.errors(rows) == [
        (artifacts.Failure("run-error", "TypeError", "bad"), [("2.4.0", "2.5.1")]),
        (artifacts.Failure("load-error", "KeyError", "no 'version'"), [("2.4.0", "2.6.0"), ("2.5.1", "2.6.0")]),
    ]


def test_errors_that_differ_only_in_numbers_are_one_group_of_one_class() -> None:
    def said(saved: str, loaded: str) -> str:
        return "Serialized version ['%s'] does not match our current schema version (%s)." % (saved, loaded)

    rows = table(
        make_load("2.4.0", "2.6.0", status="load-error", error_type="RuntimeError", error_message=said("5", "8, 2")),
        make_load("2.5.1", "2.6.0", status="load-error", error_type="RuntimeError", error_message=said("7", "8, 2")),
        make_load("2.5.1", "2.7.0", status="load-error", error_type="RuntimeError", error_message=said("7", "8, 7")),
        make_load("2.4.0", "2.7.0", status="load-error", error_type="ValueError", error_message=said("5", "8, 7")),
    )
    assert artifacts.errors(rows) == [
        (
            artifacts.Failure("load-error", "RuntimeError", said("…", "8, …")),
            [("2.4.0", "2.6.0"), ("2.5.1", "2.6.0"), ("2.5.1", "2.7.0")],
        ),
        (artifacts.Failure("load-error", "ValueError", said("5", "8, 7")), [("2.4.0", "2.7.0")]),
    ]


def test_load_statuses_are_one_vocabulary() -> None:
    assert schema.LOAD_STATUSES == (
        "pass", "mismatch", "run-error", "load-error", "crash", "timeout", "not-applicable", "untrusted",
        "harness-error",
    )  # fmt: skip
    for status in schema.LoadStatus:
        assert status.symbol and status.colour.startswith("#") and status.meaning
        # Not compared: the loading release could not try, was not let try, or the runner failed it.
        assert (status.rank is None) == (status.value in ("not-applicable", "untrusted", "harness-error"))
        assert schema.load_rank(status.value) == status.rank
    assert set(schema.LOAD_IDENTITY) <= set(schema.LOAD_KEYS)
