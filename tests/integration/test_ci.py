"""The CI job plan from nox's real session list."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from matrix.commands import ci

from conftest import ROOT

pytestmark = pytest.mark.xdist_group("test_ci")  # one worker, so that its module fixture is built once

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


def test_plan_runs_nox_itself_when_no_session_file_is_given(tmp_path: Path) -> None:
    noxfile = tmp_path / "noxfile.py"
    noxfile.write_text(FIXTURE_NOXFILE)
    done = subprocess.run(
        [sys.executable, "-m", "matrix.commands.ci", "plan", "--noxfile", str(noxfile), "--releases", "latest"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert [job["variant"] for job in json.loads(done.stdout)["include"]] == ["cpu"]
    assert "needs a GPU runner" in done.stderr
