"""The load table, its heatmap, summary and load regressions, on hand-written load records."""

from __future__ import annotations

import math
from typing import Any, List

import pandas as pd
import pytest

from matrix import schema
from matrix.records import artifacts


def make_load(saved: str, loaded: str, case: str = "add", status: str = "pass", mode: str = "strict", **extra: Any):
    """A hand-written load record, as ``export-matrix load`` writes it; ``extra`` sets or overrides any key."""
    record = {key: None for key in schema.LOAD_KEYS}
    record.update(
        schema_version=schema.SCHEMA_VERSION,
        kind="load",
        saved_torch_version=saved,
        saved_variant="pypi",
        saved_python="3.11",
        torch_version=loaded,
        variant="pypi",
        python="3.11",
        case=case,
        mode=mode,
        status=status,
        finished_at="2025-01-01T00:00:00+00:00",
    )
    if status not in ("pass", "not-applicable") and "error_type" not in extra:
        record.update(error_type="RuntimeError", error_message="Serialized version does not match")
    record.update(extra)
    return record


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
    grid = artifacts.heatmap(rows)
    assert list(grid.columns) == artifacts.HEATMAP_COLUMNS
    assert grid[["mode", "saved", "loaded", "passed", "total", "not_applicable"]].values.tolist() == [
        ["strict", "2.5.1", "2.0.1", 0, 0, 1],
        ["strict", "2.5.1", "2.6.0", 1, 3, 1],
        ["non-strict", "2.5.1", "2.6.0", 1, 1, 0],
    ]
    assert math.isnan(grid["share"][0])
    assert grid["share"][1] == pytest.approx(1 / 3)
    assert grid["share"][2] == 1.0
    assert artifacts.heatmap(artifacts.table(frame([]))).empty


def test_summary_says_where_artifacts_load_and_from_where_they_fail() -> None:
    records = [make_load("2.5.1", loaded, case=case) for loaded in ("2.5.1", "2.6.0", "2.9.1") for case in "ab"]
    records += [
        make_load("2.5.1", loaded, case=case, status="load-error", error_type="RuntimeError",
                  error_message="Serialized version (7, 3) does not match our current schema version (8, 1).\nmore")
        for loaded in ("2.10.0", "2.11.0") for case in "ab"
    ]  # fmt: skip
    text = artifacts.summary(table(*records))
    assert text == (
        "Artifacts saved on 2.5.1 (2): all load and match on 2.5.1–2.9.1; from 2.10.0 on, none loads and matches"
        " (load-error: RuntimeError: Serialized version (7, 3) does not match our current schema version (8, 1).)."
    )


def test_summary_names_partial_loads_untried_releases_and_each_saving_release() -> None:
    rows = table(
        make_load("2.4.0", "2.3.0", status="not-applicable"),
        make_load("2.4.0", "2.4.0"),
        make_load("2.4.0", "2.4.0", case="b"),
        make_load("2.4.0", "2.5.0"),
        make_load("2.4.0", "2.5.0", case="b", status="run-error", error_type="TypeError", error_message="bad"),
        make_load("2.5.0", "2.4.0", status="load-error", error_type="KeyError", error_message="no version"),
        make_load("2.5.0", "2.5.0"),
    )
    assert artifacts.summary(rows) == (
        "Artifacts saved on 2.4.0 (2): all load and match on 2.4.0; only 1 of 2 on 2.5.0 load and match (the others"
        " most often run-error: TypeError: bad); 2.3.0 cannot load programs (no torch.export.load)."
        " Artifacts saved on 2.5.0 (1): all load and match on 2.5.0; on 2.4.0 none loads and matches"
        " (load-error: KeyError: no version)."
    )
    assert artifacts.summary(artifacts.table(frame([]))) == ""


def test_summary_picks_the_most_common_failure() -> None:
    rows = table(
        make_load("2.5.0", "2.6.0", case="a", status="crash", error_type="signal.SIGSEGV", error_message="killed"),
        make_load("2.5.0", "2.6.0", case="b", status="load-error", error_type="KeyError", error_message="x"),
        make_load("2.5.0", "2.6.0", case="c", status="load-error", error_type="KeyError", error_message="y"),
    )
    # No release loads them all: the sentence starts with what fails.
    assert (
        artifacts.summary(rows)
        == "Artifacts saved on 2.5.0 (3): on 2.6.0 none loads and matches (load-error: KeyError: x)."
    )


def test_a_loading_release_that_stops_loading_an_artifact_is_a_load_regression() -> None:
    rows = table(
        make_load("2.5.1", "2.5.1"),
        make_load("2.5.1", "2.9.1"),
        make_load("2.5.1", "2.10.0", status="load-error", error_type="RuntimeError", error_message="schema"),
        make_load("2.5.1", "2.11.0", status="load-error"),
    )
    moves = artifacts.regressions(rows)
    assert list(moves.columns) == artifacts.REGRESSION_COLUMNS
    assert moves[
        ["kind", "saved", "case", "mode", "before", "after", "status_before", "status_after"]
    ].values.tolist() == [["load-regression", "2.5.1", "add", "strict", "2.9.1", "2.10.0", "pass", "load-error"]]
    assert moves["error_message"].tolist() == ["schema"]


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
    moves = artifacts.regressions(
        table(make_load("2.5.1", "2.6.0", status=before), make_load("2.5.1", "2.7.0", status=after))
    )
    assert len(moves) == (1 if regression else 0)


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
    assert artifacts.regressions(rows).empty
    assert artifacts.regressions(artifacts.table(frame([]))).empty


def test_errors_group_failures_by_what_they_say() -> None:
    rows = table(
        make_load("2.5.1", "2.6.0", status="load-error", error_type="KeyError", error_message="no 'version'"),
        make_load("2.4.0", "2.6.0", status="load-error", error_type="KeyError", error_message="no 'version'"),
        make_load("2.4.0", "2.5.1", status="run-error", error_type="TypeError", error_message="bad\nsecond line"),
        make_load("2.4.0", "2.4.0"),
    )
    assert artifacts.errors(rows) == [
        ("run-error: TypeError: bad", [("2.4.0", "2.5.1")]),
        ("load-error: KeyError: no 'version'", [("2.4.0", "2.6.0"), ("2.5.1", "2.6.0")]),
    ]


def test_load_statuses_are_one_vocabulary() -> None:
    assert schema.LOAD_STATUSES == ("pass", "mismatch", "run-error", "load-error", "crash", "timeout", "not-applicable")
    for status in schema.LoadStatus:
        assert status.symbol and status.colour.startswith("#") and status.meaning
        assert (status.rank is None) == (status.value == "not-applicable")
        assert schema.load_rank(status.value) == status.rank
    assert set(schema.LOAD_IDENTITY) <= set(schema.LOAD_KEYS)
