"""The CI helpers: the job plan from nox's real session list, and the new-regression verdict."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import pytest

from matrix import ci, schema
from matrix.records import store, tables, transitions
from matrix.worker import records

# A noxfile shaped like the project's: one `run` session parametrized over (torch, variant), tagged.
FIXTURE_NOXFILE = '''
import nox

RELEASES = [
    ("2.4.1", "pypi", ["cpu"]),
    ("2.5.1", "cpu", ["cpu"]),
    ("2.5.1", "cu124", ["cuda"]),
    ("2.6.0", "cpu", ["cpu", "latest"]),
    ("2.6.0", "cu124", ["cuda", "latest"]),
]


@nox.session(python=False, default=False, tags=["all"])
@nox.parametrize(["torch", "variant"], [nox.param(t, v, tags=tags) for t, v, tags in RELEASES])
def run(session, torch, variant):
    """Run the cases in one torch release."""


@nox.session(python=False)
def lint(session):
    """Not a matrix session."""
'''


@pytest.fixture(scope="module")
def nox_json(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The real `nox -l --json -s run` output for the fixture noxfile."""
    noxfile = tmp_path_factory.mktemp("nox") / "noxfile.py"
    noxfile.write_text(FIXTURE_NOXFILE)
    return ci.list_sessions(str(noxfile))


def chosen(nox_json: str, releases: str = "all", variants: str = "all") -> List[Tuple[str, str]]:
    sessions = ci.select(ci.parse_sessions(nox_json), ci.tokens(releases), ci.tokens(variants))
    return sorted((s.torch, s.variant) for s in sessions)


def test_sessions_come_from_nox_with_their_parameters_and_tags(nox_json: str) -> None:
    sessions = ci.parse_sessions(nox_json)
    assert len(sessions) == 5  # lint is not a run session
    latest = [s for s in sessions if "latest" in s.tags]
    assert sorted(s.name for s in latest) == [
        "run(torch='2.6.0', variant='cpu')",
        "run(torch='2.6.0', variant='cu124')",
    ]
    assert [s.gpu for s in sorted(latest, key=lambda s: s.variant)] == [False, True]


@pytest.mark.parametrize(
    "releases, variants, expected",
    [
        ("all", "all", [("2.4.1", "pypi"), ("2.5.1", "cpu"), ("2.5.1", "cu124"), ("2.6.0", "cpu"), ("2.6.0", "cu124")]),
        ("", "", [("2.4.1", "pypi"), ("2.5.1", "cpu"), ("2.5.1", "cu124"), ("2.6.0", "cpu"), ("2.6.0", "cu124")]),
        ("latest", "all", [("2.6.0", "cpu"), ("2.6.0", "cu124")]),
        ("2.5", "all", [("2.5.1", "cpu"), ("2.5.1", "cu124")]),
        ("2.4.1, 2.6.*", "cpu", [("2.4.1", "pypi"), ("2.6.0", "cpu")]),  # the fixture tags pypi "cpu"
        ("2.4.1, 2.6.*", "cpu*", [("2.6.0", "cpu")]),
        ("2.4.1 2.6.*", "pypi,cpu", [("2.4.1", "pypi"), ("2.6.0", "cpu")]),
        ("all", "cuda", [("2.5.1", "cu124"), ("2.6.0", "cu124")]),
        ("latest", "cu12*", [("2.6.0", "cu124")]),
    ],
)
def test_filters_select_by_tag_version_and_glob(nox_json: str, releases: str, variants: str, expected) -> None:
    assert chosen(nox_json, releases, variants) == expected


@pytest.mark.parametrize("releases, variants, word", [("3.0", "all", "'3.0'"), ("all", "rocm*", "'rocm*'")])
def test_a_filter_word_that_matches_nothing_is_an_error(nox_json: str, releases: str, variants: str, word: str) -> None:
    with pytest.raises(ci.PlanError, match=re.escape(word)) as caught:
        chosen(nox_json, releases, variants)
    assert "2.4.1" in str(caught.value) or "pypi" in str(caught.value)  # names what exists


def test_cuda_jobs_go_to_the_gpu_runner_or_are_left_out(nox_json: str) -> None:
    sessions = ci.select(ci.parse_sessions(nox_json), ["latest"], [])
    jobs, skipped = ci.plan(sessions, "ubuntu-latest", "")
    assert [(j.variant, j.runner) for j in jobs] == [("cpu", "ubuntu-latest")]
    assert [s.variant for s in skipped] == ["cu124"]

    jobs, skipped = ci.plan(sessions, "ubuntu-latest", "self-hosted, gpu")
    assert skipped == []
    assert {j.variant: j.runner for j in jobs} == {"cpu": "ubuntu-latest", "cu124": ("self-hosted", "gpu")}
    assert jobs[1].to_json()["runner"] == ["self-hosted", "gpu"]
    assert {j.variant: j.artifact for j in jobs} == {
        "cpu": "records-torch-2.6.0-cpu",
        "cu124": "records-torch-2.6.0-cu124",
    }


def test_plan_command_prints_the_matrix_and_writes_github_output(
    nox_json: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    sessions = tmp_path / "sessions.json"
    sessions.write_text(nox_json)
    output = tmp_path / "github_output"
    code = ci.main(
        ["plan", "--sessions", str(sessions), "--releases", "2.5.1", "--gpu-runner", "gpu-l4"]
        + ["--github-output", str(output)]
    )
    assert code == 0
    printed = json.loads(capsys.readouterr().out)
    assert [(job["session"], job["runner"], job["gpu"]) for job in printed["include"]] == [
        ("run(torch='2.5.1', variant='cpu')", "ubuntu-latest", False),
        ("run(torch='2.5.1', variant='cu124')", "gpu-l4", True),
    ]
    lines = dict(line.split("=", 1) for line in output.read_text().splitlines())
    assert json.loads(lines["matrix"]) == printed and lines["count"] == "2"


def test_plan_command_rejects_bad_input_clearly(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    broken = tmp_path / "sessions.json"
    broken.write_text("nox > Error while collecting sessions.")
    assert ci.main(["plan", "--sessions", str(broken)]) == 2
    assert "sessions.json: not JSON" in capsys.readouterr().err
    broken.write_text(json.dumps([{"session": "lint", "name": "lint", "call_spec": {}}]))
    assert ci.main(["plan", "--sessions", str(broken)]) == 2
    assert "lists no 'run' session" in capsys.readouterr().err


def test_plan_runs_nox_itself_when_no_session_file_is_given(tmp_path: Path) -> None:
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(FIXTURE_NOXFILE)
    done = subprocess.run(
        [sys.executable, "-m", "matrix.ci", "plan", "--noxfile", str(noxfile), "--releases", "latest"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 0, done.stderr
    assert [job["variant"] for job in json.loads(done.stdout)["include"]] == ["cpu"]
    assert "needs a GPU runner" in done.stderr


# --- the summary and the new-regression decision -------------------------------------------------

Statuses = Dict[Tuple[str, str, str], str]  # (release, case, mode) -> status


def write_report(folder: Path, statuses: Statuses) -> Path:
    """A report folder's tables (cells.parquet, transitions.parquet) made from hand-written cells."""
    shard = folder / "records.jsonl"
    folder.mkdir(parents=True)
    with records.Writer(str(shard)) as writer:
        for (release, case, mode), given in sorted(statuses.items()):
            # "pass-unsaved": exported and checked, but the saved program does not load.
            status, saved = ("pass", "error") if given == "pass-unsaved" else (given, "ok")
            error = None if status == "pass" else "torch._dynamo.exc.Unsupported"
            writer.write(
                records.empty_cell(
                    torch_version=release,
                    variant="cpu",
                    python="3.11",
                    case=case,
                    mode=mode,
                    run=0,
                    cell_id=schema.cell_id(release, mode, case),
                    status=status,
                    error_type=error,
                    error_message=None if error is None else "cannot trace %s" % case,
                    serialize_status=saved if status == "pass" else None,
                    finished_at="2025-01-01T00:00:00+00:00",
                )  # fmt: skip
            )
    table = tables.cells(store.load([str(shard)]).cells)
    tables.parquet_frame(table).to_parquet(folder / "cells.parquet")
    transitions.find(table).to_parquet(folder / "transitions.parquet")
    shard.unlink()
    return folder


def grid(rows: Sequence[Tuple[str, str, str, str]]) -> Statuses:
    return {(release, case, mode): status for release, case, mode, status in rows}


BASELINE = grid(
    [
        ("2.4.1", "cond_predicate", "strict", "pass"),
        ("2.5.1", "cond_predicate", "strict", "pass"),
        ("2.4.1", "list_unpack", "strict", "pass"),
        ("2.5.1", "list_unpack", "strict", "fail"),  # a known regression: not new
    ]
)


def test_without_baseline_nothing_is_new(tmp_path: Path) -> None:
    report = write_report(tmp_path / "site", BASELINE)
    found = ci.verdict(str(report), None)
    assert found.has_baseline is False and found.new_regressions == 0
    assert "No baseline report" in ci.markdown(found)


def test_the_baseline_itself_has_no_new_regressions(tmp_path: Path) -> None:
    base = write_report(tmp_path / "base", BASELINE)
    site = write_report(tmp_path / "site", BASELINE)
    found = ci.verdict(str(site), str(base))
    assert found.has_baseline and found.new_regressions == 0
    assert "**No new regressions**" in ci.markdown(found)


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
    found = ci.verdict(str(site), str(base))
    assert found.new_regressions == 1
    move = found.new_transitions.iloc[0]
    assert (move["case"], move["before"], move["after"], move["status_after"]) == (
        "cond_predicate",
        "2.5.1",
        "2.6.0",
        "crash",
    )
    assert found.worse_cells.empty
    text = ci.markdown(found, report_url="https://example.invalid/run/1")
    assert "### 1 new regression since the baseline" in text
    assert "| cond_predicate | strict | cpu | 2.5.1 → 2.6.0 | pass → crash |" in text
    assert "Full report: https://example.invalid/run/1" in text


def test_a_cell_worse_than_in_the_baseline_is_a_new_regression(tmp_path: Path) -> None:
    base = write_report(tmp_path / "base", BASELINE)
    current = dict(BASELINE)
    current[("2.5.1", "cond_predicate", "strict")] = "mismatch"
    site = write_report(tmp_path / "site", current)
    found = ci.verdict(str(site), str(base))
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
    found = ci.verdict(str(write_report(tmp_path / "site", current)), str(base))
    assert found.new_regressions == 1
    move = found.new_transitions.iloc[0]
    assert (move["kind"], move["case"], move["stage"]) == ("stage-regression", "cond_predicate", "serialize")
    assert "pass → pass, but serialize stopped working" in ci.markdown(found)


def test_a_fix_is_not_a_regression(tmp_path: Path) -> None:
    base = write_report(tmp_path / "base", BASELINE)
    current = dict(BASELINE)
    current[("2.5.1", "list_unpack", "strict")] = "pass"
    site = write_report(tmp_path / "site", current)
    assert ci.verdict(str(site), str(base)).new_regressions == 0


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
