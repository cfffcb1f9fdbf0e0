"""The GitHub Action (action.yml) and the workflow that uses it: actionlint and shellcheck accept them, and the
action's own check command, read out of action.yml, checks the sample user folder with the installed torch."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping

import pytest
import yaml

from conftest import ROOT

ACTION = ROOT / "action.yml"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
USER_MODELS = Path("tests") / "data" / "user_models"  # as a model owner names folders: from the repository's root
BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    found = shutil.which(name, path=os.pathsep.join([str(BIN), os.environ.get("PATH", "")]))
    if not found:
        pytest.fail("%s is not installed: install the project's `test` extra (it ships the binary)" % name)
    return found


def actionlint(*paths: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    # shellcheck named outright: actionlint looks for it on PATH, where a bare virtual environment is not.
    command = [tool("actionlint"), "-no-color", "-oneline", "-shellcheck", tool("shellcheck"), *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd)


def steps() -> List[Dict[str, Any]]:
    return list(yaml.safe_load(ACTION.read_text())["runs"]["steps"])


def step(name: str) -> Dict[str, Any]:
    (found,) = [s for s in steps() if s.get("name") == name]
    return found


def step_env(found: Dict[str, Any], inputs: Mapping[str, str], runner_temp: Path) -> Dict[str, str]:
    """The step's environment as GitHub gives it: inputs as given, else their defaults; runner.temp."""
    declared = yaml.safe_load(ACTION.read_text())["inputs"]
    values = {name: inputs.get(name, str(spec.get("default", ""))) for name, spec in declared.items()}

    def value(match: re.Match[str]) -> str:
        expression = match.group(1).strip()
        if expression == "runner.temp":
            return str(runner_temp)
        assert expression.startswith("inputs."), "the test cannot evaluate ${{ %s }}" % expression
        return values[expression[len("inputs.") :]]

    return {key: re.sub(r"\$\{\{(.*?)\}\}", value, str(text)) for key, text in (found.get("env") or {}).items()}


def run_step(found: Dict[str, Any], env: Mapping[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    """The step's script as a composite action's `shell: bash` runs it, from the repository's root."""
    github = {"GITHUB_OUTPUT": str(tmp_path / "output"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary")}
    full = dict(os.environ, PATH=os.pathsep.join([str(BIN), os.environ["PATH"]]), **github, **env)
    command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", found["run"]]
    return subprocess.run(command, capture_output=True, text=True, env=full, cwd=ROOT)


def outputs(tmp_path: Path) -> Dict[str, str]:
    return dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines())


def test_actionlint_accepts_the_workflows_and_through_them_the_action() -> None:
    # The workflow's candidate job runs `uses: ./`, so actionlint checks action.yml's metadata and the inputs given.
    assert any("uses: ./\n" in path.read_text() for path in WORKFLOWS)
    done = actionlint(*WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_would_catch_a_broken_action(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()  # actionlint finds `./` from the repository's root
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    for path in WORKFLOWS:
        shutil.copy(path, tmp_path / ".github" / "workflows" / path.name)
    (tmp_path / "action.yml").write_text(ACTION.read_text().replace("  fail-on:\n", "  fail_on:\n", 1))
    done = actionlint(*(tmp_path / ".github" / "workflows").glob("*.yml"), cwd=tmp_path)
    assert done.returncode == 1 and 'input "fail-on" is not defined in action' in done.stdout


def test_shellcheck_accepts_the_actions_scripts(tmp_path: Path) -> None:
    # actionlint runs shellcheck on a workflow's scripts, not on those of an action it reads.
    for found in steps():
        if "run" in found:
            done = subprocess.run(
                [tool("shellcheck"), "-s", "bash", "-"], input=found["run"], capture_output=True, text=True
            )
            assert done.returncode == 0, "%s: %s" % (found["name"], done.stdout)


def test_the_actions_check_passes_the_sample_models_and_writes_the_summary_and_outputs(tmp_path: Path) -> None:
    report = tmp_path / "report"
    inputs = {"cases": str(USER_MODELS / "models"), "torch": "current", "fail-on": "failing", "report-dir": str(report)}
    done = run_step(step("Check the cases"), step_env(step("Check the cases"), inputs, tmp_path), tmp_path)
    assert done.returncode == 0, done.stderr
    found = outputs(tmp_path)
    assert found == {
        "verdict": "ok", "exit-code": "0", "report-dir": str(report), "table": str(report / "check.md")
    }  # fmt: skip
    table = (report / "check.md").read_text()
    assert "### pooled_conv" in table and "### tiny_mlp" in table and "_blocks" not in table
    rows = [line for line in table.splitlines() if line.startswith("| 2.")]
    assert len(rows) == 4 and all("| pass " in row for row in rows)  # two cases, both modes
    assert "2 cases: 2 pass on every release checked" in table
    summary = (tmp_path / "summary").read_text()
    assert summary.startswith("## torch.export check: ok\n") and table in summary
    assert sorted(p.name for p in report.iterdir()) == ["check.md", "current"]  # the records beside the table
    assert (tmp_path / "torch-export-matrix" / "results").is_dir()  # the results the next run reuses


def test_the_actions_check_fails_on_a_failing_sample_case(tmp_path: Path) -> None:
    report = tmp_path / "report"
    cases = "%s\n%s" % (USER_MODELS / "broken", USER_MODELS / "models" / "pooled_conv.py")  # a folder, then a file
    inputs = {"cases": cases, "torch": "current", "fail-on": "failing", "report-dir": str(report)}
    done = run_step(step("Check the cases"), step_env(step("Check the cases"), inputs, tmp_path), tmp_path)
    assert done.returncode == 1
    assert "--fail-on failing: 2 failing cell(s)" in done.stderr
    assert outputs(tmp_path)["verdict"] == "failing" and outputs(tmp_path)["exit-code"] == "1"
    table = (report / "check.md").read_text()
    assert "### positive_sum" in table and "| fail " in table and "if x.sum() > 0:" in table
    assert "2 cases: 1 pass on every release checked; 1 does not: positive_sum" in table
    assert (tmp_path / "summary").read_text().startswith("## torch.export check: failing\n")


def test_a_bad_case_path_is_an_error_verdict(tmp_path: Path) -> None:
    inputs = {"cases": "no/such/models", "torch": "current", "report-dir": str(tmp_path / "report")}
    done = run_step(step("Check the cases"), step_env(step("Check the cases"), inputs, tmp_path), tmp_path)
    assert done.returncode == 2 and "no/such/models: no such case file" in done.stderr
    assert outputs(tmp_path)["verdict"] == "error"


def test_the_environments_name_changes_only_with_the_environments(tmp_path: Path) -> None:
    found = step("Name the installed environments")
    envs = tmp_path / "torch-export-matrix" / "envs"
    hashes = []
    for name in ("torch-2.6.0+cpu_cpu_py3.11", "torch-2.6.0+cpu_cpu_py3.11", "torch-2.7.1+cpu_cpu_py3.11"):
        (envs / name).mkdir(parents=True, exist_ok=True)
        (tmp_path / "output").unlink(missing_ok=True)
        done = run_step(found, step_env(found, {}, tmp_path), tmp_path)
        assert done.returncode == 0, done.stderr
        hashes.append(outputs(tmp_path)["hash"])
    assert hashes[0] == hashes[1] != hashes[2] and re.fullmatch(r"[0-9a-f]{16}", hashes[0])


def test_the_candidate_jobs_issue_step_opens_one_issue_then_comments_on_it(tmp_path: Path) -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "compat-matrix.yml").read_text())
    (found,) = [
        s for s in workflow["jobs"]["candidate"]["steps"] if s.get("name") == "Open or update the candidate issue"
    ]
    table = tmp_path / "check.md"
    table.write_text(
        "### m\n\n| torch |\n\ncandidate 2.16.0.dev20260115+cpu vs 2.15.0: regresses (strict: pass → fail)\n"
    )
    fake = tmp_path / "bin"
    fake.mkdir()
    # A stand-in gh: `issue list` answers the number kept in a file, `create` and `comment` append their arguments.
    (fake / "gh").write_text(
        '#!/bin/sh\ncd "%s"\nif [ "$2" = list ]; then cat number 2>/dev/null; exit 0; fi\n'
        'echo "$*" >> calls\ncp "$(eval echo \\${$#})" body.md\necho 7 > number\n' % tmp_path
    )
    (fake / "gh").chmod(0o755)
    env = {"PATH": "%s:%s" % (fake, os.environ["PATH"]), "TABLE": str(table), "RUN_URL": "https://example.invalid/7"}
    for _ in range(2):
        done = subprocess.run(["bash", "-e", "-c", found["run"]], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[0].startswith("issue create --title compat-matrix: the torch candidate regresses --body-file")
    assert calls[1].startswith("issue comment 7 --body-file")
    body = (tmp_path / "body.md").read_text()
    assert (
        "https://example.invalid/7" in body and body.count("candidate 2.16.0.dev20260115+cpu vs 2.15.0: regresses") == 2
    )


def test_the_actions_cleanup_keeps_the_selections_environments_alone(tmp_path: Path) -> None:
    from matrix.envs import releases
    from matrix.envs.environments import Spec

    matrix = releases.default_matrix()
    nightly = matrix.resolve("nightly", "cpu")
    python = "%d.%d" % sys.version_info[:2]
    envs = tmp_path / "torch-export-matrix" / "envs"
    latest, older, newer = (
        Spec(matrix.resolve("latest", "cpu"), python),
        Spec(matrix.pinned(nightly, "9.9.0.dev20260114+cpu"), python),
        Spec(matrix.pinned(nightly, "9.9.0.dev20260115+cpu"), python),
    )
    gone = Spec(matrix.resolve(matrix.releases[0].version), python)  # a release the selection no longer names
    for spec in (latest, older, newer, gone):
        (envs / spec.name / "bin").mkdir(parents=True)
    (envs / ".worker").mkdir()
    found = step("Remove the environments the selection does not use")
    done = run_step(found, step_env(found, {"torch": "latest nightly", "variant": "cpu"}, tmp_path), tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in envs.iterdir()) == sorted([".worker", latest.name, newer.name])
    assert older.name in done.stderr and gone.name in done.stderr  # what it removed, in the job's log


def test_the_actions_result_cache_follows_an_edit_to_the_model_owners_package(tmp_path: Path) -> None:
    # The network lives in the owner's package beside the case (`_net`, which case discovery skips), not in the
    # case file: with the result cache kept between workflow runs, an edit that breaks export must be seen.
    models = tmp_path / "models"
    (models / "_net").mkdir(parents=True)
    (models / "_net" / "__init__.py").write_text("")
    layers = "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        %s\n"
    (models / "_net" / "layers.py").write_text(layers % "return torch.relu(x).mean(dim=1)")
    (models / "pooled.py").write_text(
        '"""A model owner\'s case whose network is in their package."""\n\nimport torch\nfrom _net.layers import Net'
        "\n\nmodel = Net()\nexample_args = (torch.randn(2, 3),)\n"
    )
    found = step("Check the cases")
    runs = []
    for name in ("first", "second"):
        inputs = {"cases": str(models), "torch": "current", "fail-on": "failing", "report-dir": str(tmp_path / name)}
        runs.append(run_step(found, step_env(found, inputs, tmp_path), tmp_path))
        (models / "_net" / "layers.py").write_text(layers % "return x if x.sum() > 0 else -x")  # data-dependent
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[1].returncode == 1 and "--fail-on failing" in runs[1].stderr, runs[1].stderr
    assert "| pass " not in (tmp_path / "second" / "check.md").read_text()


def test_the_bisect_step_runs_the_first_search_the_checks_summary_offers(tmp_path: Path) -> None:
    table = tmp_path / "check.md"
    env = {"TABLE": str(table), "EXPORT_MATRIX_ENV_DIR": str(tmp_path / "envs")}
    table.write_text("| torch | mode | status |\n")  # no search offered: a stage that stopped working, say
    done = run_step(step("Find the nightly that broke the first cell"), env, tmp_path)
    assert done.returncode == 0 and "no cell the nightly broke has a search" in done.stdout
    # The first command offered runs (here it stops on a day that is no date: one line, exit 2, nothing installed).
    first = "export-matrix bisect '%s' --good 2.15.0 --bad nightly:2026-13-01 --mode strict --variant cpu" % (
        USER_MODELS / "models" / "pooled conv.py"
    )
    (tmp_path / "models").mkdir()
    table.write_text("```sh\n%s\nexport-matrix bisect other.py --good 2.15.0 --bad nightly\n```\n" % first)
    done = run_step(step("Find the nightly that broke the first cell"), env, tmp_path)
    assert done.returncode == 2, done.stderr
    summary = (tmp_path / "summary").read_text()
    assert summary.startswith("### The nightly that broke it\n") and "pooled conv.py: no such case file" in summary
    answer = outputs(tmp_path)["answer"]
    assert answer.startswith("export-matrix bisect: error: ") and "other.py" not in summary
    assert not (tmp_path / "envs").exists()
