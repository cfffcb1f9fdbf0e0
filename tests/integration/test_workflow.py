"""The scheduled CI workflow: actionlint accepts it, and its shell steps do what they claim."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from conftest import BASELINE, ROOT, write_report

WORKFLOW = ROOT / ".github" / "workflows" / "compat-matrix.yml"
BIN = Path(sys.executable).parent


def actionlint() -> str:
    found = shutil.which("actionlint", path=os.pathsep.join([str(BIN), os.environ.get("PATH", "")]))
    if not found:
        pytest.fail("actionlint is not installed: install the project's `test` extra (it ships the binary)")
    return found


def lint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([actionlint(), "-no-color", str(path)], capture_output=True, text=True, cwd=ROOT)


def step_script(key: str, value: str) -> str:
    """The `run:` block of the step whose ``key`` (id or name) is ``value``, as bash would get it."""
    lines = WORKFLOW.read_text().splitlines()
    start = next(
        i for i, line in enumerate(lines) if re.fullmatch(r"(- )?%s: %s" % (key, re.escape(value)), line.strip())
    )
    run = next(i for i in range(start, len(lines)) if lines[i].strip() == "run: |")
    indent = len(lines[run]) - len(lines[run].lstrip()) + 2
    body: List[str] = []
    for line in lines[run + 1 :]:
        if line.strip() and len(line) - len(line.lstrip()) < indent:
            break
        body.append(line[indent:])
    return "\n".join(body).strip() + "\n"


def workflow_env() -> Dict[str, str]:
    """The workflow-level `env:` values that are plain text (no expressions)."""
    lines = WORKFLOW.read_text().splitlines()
    found: Dict[str, str] = {}
    for line in lines[lines.index("env:") + 1 :]:
        if line and not line.startswith(" "):
            break
        match = re.fullmatch(r"  ([A-Z_]+): (.*)", line)
        if match and "${{" not in match.group(2):
            found[match.group(1)] = match.group(2).strip('"')
    return found


def run_bash(script: str, env: Dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    # GitHub runs `run:` steps with `bash -e {0}` (plus pipefail with `shell: bash`).
    path = os.pathsep.join([str(BIN), os.environ.get("PATH", "")])
    full = dict(os.environ, PATH=path, PYTHONPATH=str(ROOT), **workflow_env(), **env)
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script], capture_output=True, text=True, env=full, cwd=cwd
    )


def test_actionlint_accepts_the_workflow() -> None:
    done = lint(WORKFLOW)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_would_catch_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("needs: plan\n", "needs: plann\n", 1))
    done = lint(broken)
    assert done.returncode != 0 and "plann" in done.stdout


def test_the_plan_step_lists_the_repository_noxfile_and_writes_the_matrix(tmp_path: Path) -> None:
    if not (ROOT / "noxfile.py").exists():
        pytest.fail("the repository has no noxfile.py for the plan step to list")
    output = tmp_path / "github_output"
    env = {
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(output),
        "RELEASES": "all",
        "VARIANTS": "all",
        "CPU_RUNNER": "ubuntu-latest",
        "GPU_RUNNER": "",
    }
    done = run_bash(step_script("id", "plan"), env, ROOT)
    assert done.returncode == 0, done.stderr
    values = dict(line.split("=", 1) for line in output.read_text().splitlines())
    matrix = json.loads(values["matrix"])["include"]
    assert int(values["count"]) == len(matrix) > 0
    sessions = json.loads((tmp_path / "sessions.json").read_text())
    listed = {entry["session"] for entry in sessions}
    # The full release list, not just the noxfile's quick selection; CUDA builds need a GPU runner.
    assert any("quick" not in entry["tags"] for entry in sessions)
    assert len(matrix) == sum("cuda" not in entry["tags"] for entry in sessions)
    for job in matrix:
        assert job["session"] in listed
        assert job["runner"] == "ubuntu-latest" and job["gpu"] is False  # no GPU runner: CUDA left out
        assert job["session"] == "run(torch=%r, variant=%r)" % (job["torch"], job["variant"])


SESSION = "run(torch='2.6.0', variant='cpu')"


@pytest.mark.parametrize(
    "cases, expected",
    [
        ("", []),
        ("cond_* *scalar*", ["--select", "cond_*", "*scalar*"]),
        ("  torch-*/strict/*  ", ["--select", "torch-*/strict/*"]),
    ],
)
def test_the_run_step_passes_the_case_filter_to_nox_unexpanded(tmp_path: Path, cases: str, expected: List[str]) -> None:
    # A stand-in nox records its arguments; files named like the globs must not leak into them.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nox").write_text('#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done > "%s"\n' % (tmp_path / "args"))
    (fake / "nox").chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "cond_predicate").write_text("")
    (work / "my_scalar_case").write_text("")
    env = {"SESSION": SESSION, "CASES": cases}
    script = "export PATH=%s:$PATH\n%s" % (fake, step_script("name", "Run the cases"))
    done = run_bash(script, env, work)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "args").read_text().splitlines() == ["--sessions", SESSION, "--", *expected]


@pytest.mark.parametrize("policy, code", [("fail", 1), ("issue", 0)])
def test_the_summary_step_writes_the_step_summary_and_applies_the_policy(
    tmp_path: Path, policy: str, code: int
) -> None:
    write_report(tmp_path / "baseline", BASELINE)
    current = dict(BASELINE)
    current[("2.6.0", "cond_predicate", "strict")] = "timeout"
    write_report(tmp_path / "site", current)
    output, step_summary = tmp_path / "github_output", tmp_path / "step_summary"
    env = {
        "HAS_BASELINE": "true",
        "RUN_URL": "https://example.invalid/runs/7",
        "ON_DEFAULT_BRANCH": "false",
        "PUBLISH": "branch",
        "POLICY": policy,
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(step_summary),
    }
    done = run_bash(step_script("id", "summary"), env, tmp_path)
    assert done.returncode == code, done.stderr
    text = step_summary.read_text()
    assert "### 1 new regression since the baseline" in text and "pass → timeout" in text
    assert "Full report: https://example.invalid/runs/7" in text
    assert "new-regressions=1" in output.read_text().splitlines()
    assert (tmp_path / "issue.md").read_text() == text
