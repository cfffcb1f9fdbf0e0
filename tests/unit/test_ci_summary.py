"""The run's summary in CI: the new-regression verdict on hand-written tables, and the summary command."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.commands import ci, ci_summary

from conftest import BASELINE, grid, write_report


def test_without_baseline_nothing_is_new(tmp_path: Path) -> None:
    report = write_report(tmp_path / "site", BASELINE)
    found = ci_summary.verdict(str(report), None)
    assert found.has_baseline is False and found.new_regressions == 0
    assert "No baseline report" in ci_summary.markdown(found)


def test_the_baseline_itself_has_no_new_regressions(tmp_path: Path) -> None:
    base = write_report(tmp_path / "base", BASELINE)
    site = write_report(tmp_path / "site", BASELINE)
    found = ci_summary.verdict(str(site), str(base))
    assert found.has_baseline and found.new_regressions == 0
    assert "**No new regressions**" in ci_summary.markdown(found)


def test_a_new_release_that_breaks_a_case_is_a_new_regression(tmp_path: Path) -> None:
    base = write_report(tmp_path / "base", BASELINE)
    current = dict(BASELINE)
    current.update(
        grid(
            [
                ("2.6.0", "cond_predicate", "strict", "crash"),  # new: 2.5.1 pass -> 2.6.0 crash
                ("2.6.0", "list_unpack", "strict", "fail"),  # still failing: nothing new
                ("2.4.1", "scalar_output", "strict", "pass"),  # a new case that works
                ("2.5.1", "scalar_output", "strict", "pass"),
            ]
        )
    )
    site = write_report(tmp_path / "site", current)
    found = ci_summary.verdict(str(site), str(base))
    assert found.new_regressions == 1
    move = found.new_transitions.iloc[0]
    assert (move["case"], move["before"], move["after"], move["status_after"]) == (
        "cond_predicate",
        "2.5.1",
        "2.6.0",
        "crash",
    )
    assert found.worse_cells.empty
    text = ci_summary.markdown(found, report_url="https://example.invalid/run/1")
    assert "### 1 new regression since the baseline" in text
    assert "| cond_predicate | strict | cpu | 2.5.1 → 2.6.0 | pass → crash |" in text
    assert "Full report: https://example.invalid/run/1" in text


def test_transitions_written_without_a_stage_column_are_summarised(tmp_path: Path) -> None:
    """A report whose transitions table predates the stage column (an older publication) still gets its summary."""
    import pandas as pd

    base = write_report(tmp_path / "base", BASELINE)
    current = dict(BASELINE)
    current.update(grid([("2.6.0", "cond_predicate", "strict", "crash")]))
    site = write_report(tmp_path / "site", current)
    moves = pd.read_parquet(site / "transitions.parquet")
    assert "stage" in moves.columns
    moves.drop(columns=["stage"]).to_parquet(site / "transitions.parquet")
    text = ci_summary.markdown(ci_summary.verdict(str(site), str(base)))
    assert "| cond_predicate | strict | cpu | 2.5.1 → 2.6.0 | pass → crash |" in text


def test_a_cell_worse_than_in_the_baseline_is_a_new_regression(tmp_path: Path) -> None:
    base = write_report(tmp_path / "base", BASELINE)
    current = dict(BASELINE)
    current[("2.5.1", "cond_predicate", "strict")] = "mismatch"
    site = write_report(tmp_path / "site", current)
    found = ci_summary.verdict(str(site), str(base))
    worse = found.worse_cells
    assert list(zip(worse["release"], worse["case"], worse["status_baseline"], worse["status"])) == [
        ("2.5.1", "cond_predicate", "pass", "mismatch")
    ]
    # The same change also shows as a new regression between 2.4.1 and 2.5.1.
    assert found.new_regressions == 2


def test_a_new_release_whose_programs_stop_loading_is_a_new_regression(tmp_path: Path) -> None:
    base = write_report(tmp_path / "base", BASELINE)
    current = dict(BASELINE)
    current[("2.6.0", "cond_predicate", "strict")] = "pass-unsaved"
    current[("2.6.0", "list_unpack", "strict")] = "fail"
    found = ci_summary.verdict(str(write_report(tmp_path / "site", current)), str(base))
    assert found.new_regressions == 1
    move = found.new_transitions.iloc[0]
    assert (move["kind"], move["case"], move["stage"]) == ("stage-regression", "cond_predicate", "serialize")
    assert "pass → pass, but serialize stopped working" in ci_summary.markdown(found)


def test_a_fix_is_not_a_regression(tmp_path: Path) -> None:
    base = write_report(tmp_path / "base", BASELINE)
    current = dict(BASELINE)
    current[("2.5.1", "list_unpack", "strict")] = "pass"
    site = write_report(tmp_path / "site", current)
    assert ci_summary.verdict(str(site), str(base)).new_regressions == 0


@pytest.mark.parametrize("policy, code", [("fail", 1), ("issue", 0), ("ignore", 0)])
def test_summary_command_applies_the_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture, policy: str, code: int
) -> None:
    base = write_report(tmp_path / "base", BASELINE)
    current = dict(BASELINE)
    current[("2.6.0", "cond_predicate", "strict")] = "fail"
    site = write_report(tmp_path / "site", current)
    issue, output = tmp_path / "issue.md", tmp_path / "github_output"
    argv = ["summary", str(site), "--baseline", str(base), "--on-regression", policy]
    assert ci.main(argv + ["--issue-body", str(issue), "--github-output", str(output)]) == code
    out = capsys.readouterr().out
    assert "### 1 new regression since the baseline" in out
    assert issue.read_text() == out
    assert "new-regressions=1\nbaseline=true\n" == output.read_text()

    # The same report against itself: nothing new, success whatever the policy, no issue body.
    issue.unlink()
    assert (
        ci.main(["summary", str(site), "--baseline", str(site), "--on-regression", policy, "--issue-body", str(issue)])
        == 0
    )
    assert not issue.exists()


def test_summary_rejects_a_folder_without_tables(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert ci.main(["summary", str(tmp_path)]) == 2
    assert "no cells.parquet" in capsys.readouterr().err
    site = write_report(tmp_path / "site", BASELINE)
    assert ci.main(["summary", str(site), "--baseline", str(tmp_path / "nowhere")]) == 2
    assert "nowhere: no cells.parquet" in capsys.readouterr().err
