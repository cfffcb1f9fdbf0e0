"""The noxfile's sessions: as nox lists them (a CI job matrix), where reports go, the run session's log."""

from __future__ import annotations

import importlib.metadata
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from matrix.commands import ci
from matrix.envs import environments, logs, pythons, releases

from conftest import ROOT


def nox_list(*args: str, torch: Optional[str] = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "EXPORT_MATRIX_TORCH"}
    if torch is not None:
        env["EXPORT_MATRIX_TORCH"] = torch
    return subprocess.run(
        [sys.executable, "-m", "nox", "--noxfile", str(ROOT / "noxfile.py"), "-l", "--json", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def listed(*args: str, torch: Optional[str] = None) -> List[Dict[str, Any]]:
    done = nox_list(*args, torch=torch)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_default_sessions_are_the_tests_and_lint() -> None:
    assert [s["session"] for s in listed()] == ["tests", "lint"]


def test_run_lists_the_quick_selection_with_readable_ids_and_tags() -> None:
    sessions = listed("-s", "run")
    assert [s["session"] for s in sessions] == [
        "run(torch='2.1.2', variant='pypi')",
        "run(torch='2.6.0', variant='pypi')",
        "run(torch='2.15.0', variant='pypi')",
        "run(torch='2.13.0', variant='cpu')",
    ]
    assert sessions[0]["call_spec"] == {"torch": "2.1.2", "variant": "pypi"}
    tags = {s["session"]: set(s["tags"]) for s in sessions}
    assert tags["run(torch='2.15.0', variant='pypi')"] == {"all", "pypi", "latest", "quick"}
    assert tags["run(torch='2.13.0', variant='cpu')"] == {"all", "cpu", "latest", "quick"}
    assert tags["run(torch='2.1.2', variant='pypi')"] == {"all", "pypi", "quick"}
    assert all(s["description"] for s in sessions)


def test_the_full_matrix_and_any_versions_come_from_the_variable() -> None:
    full = listed("-s", "run", torch="all")
    expected = releases.default_matrix().select(["all"])
    assert [(s["call_spec"]["torch"], s["call_spec"]["variant"]) for s in full] == [
        (b.release.version, b.variant.name) for b in expected
    ]
    pypi = [b for b in expected if b.variant.name == releases.DEFAULT_VARIANT]
    assert len(pypi) == len({b.release.minor for b in pypi}) and len(full) > len(pypi)  # a default patch per series
    chosen = listed("-s", "run", torch="2.4, 2.5.1+cpu")
    assert [s["session"] for s in chosen] == ["run(torch='2.4.1', variant='pypi')", "run(torch='2.5.1', variant='cpu')"]


def test_tags_select_groups() -> None:
    cpu = listed("-t", "cpu", torch="all")
    assert {s["call_spec"]["variant"] for s in cpu} == {"cpu"}
    latest = listed("-t", "latest", torch="all")
    assert {(s["call_spec"]["torch"], s["call_spec"]["variant"]) for s in latest} >= {
        ("2.15.0", "pypi"),
        ("2.15.0", "cpu"),
    }


def test_the_ci_planner_reads_the_list_and_sends_only_cuda_builds_to_gpu_runners() -> None:
    done = nox_list("-s", "run", torch="all")
    sessions = ci.parse_sessions(done.stdout)
    gpu = {s.variant for s in sessions if s.gpu}
    assert gpu == {b.variant.name for b in releases.default_matrix().select(["all"]) if b.variant.family == "cuda"}
    assert "pypi" not in gpu and "cpu" not in gpu  # PyPI's build runs on CPU runners too


def test_a_bad_selection_is_a_clear_error() -> None:
    done = nox_list("-s", "run", torch="2.99")
    assert done.returncode != 0
    assert "EXPORT_MATRIX_TORCH=2.99: unknown torch minor series 2.99" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_sessions_the_readme_names_exist_and_only_tests_and_lint_run_by_default() -> None:
    names = ("unit", "tests", "slow_tests", "release_tests", "lint", "report", "publish")
    sessions = {s["session"]: s for s in listed("-s", *names)}
    assert set(sessions) == set(names)
    assert all(s["description"] for s in sessions.values())
    assert "reports/local" in sessions["report"]["description"]
    assert "reports/latest" in sessions["publish"]["description"]


# --- where the report sessions write ------------------------------------------------------------


def nox_in(tree: Path, *args: str) -> subprocess.CompletedProcess:
    # --no-venv: the sessions run in this interpreter, which has the report's dependencies already.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "nox", "--no-venv", *args],
        capture_output=True,
        text=True,
        cwd=tree,
        env=dict(os.environ, PATH=path),
        timeout=300,
    )


def git(tree: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=tree, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git repository holding what the report sessions use, with records under results/, all committed."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    tree = tmp_path / "checkout"
    tree.mkdir()
    for name in ("noxfile.py", ".gitignore", "pyproject.toml"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "matrix", tree / "matrix", ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "reports" / "latest").mkdir(parents=True)
    (tree / "reports" / "latest" / "index.md").write_text("the published report\n")
    git(tree, "init", "--quiet")
    git(tree, "add", "--all")
    git(tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "start")
    (tree / "results" / "latest").mkdir(parents=True)
    shutil.copy(next((ROOT / "tests" / "data" / "records").glob("*.jsonl")), tree / "results" / "latest")
    return tree


def test_report_writes_an_ignored_folder_and_leaves_the_published_report_alone(checkout: Path) -> None:
    done = nox_in(checkout, "-s", "report")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (checkout / "reports" / "local" / "index.md").is_file()
    assert "the report is in reports/local/index.md" in done.stderr
    assert (checkout / "reports" / "latest" / "index.md").read_text() == "the published report\n"
    assert git(checkout, "status", "--porcelain") == ""


def test_publish_rebuilds_the_committed_report_from_the_folders_given(checkout: Path) -> None:
    refused = nox_in(checkout, "-s", "publish")
    assert refused.returncode != 0 and "name the record folders to publish" in refused.stderr
    done = nox_in(checkout, "-s", "publish", "--", "results/latest")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the report is in reports/latest/index.md" in done.stderr
    changed = {line[3:] for line in git(checkout, "status", "--porcelain", "--untracked-files=all").splitlines()}
    assert changed and all(path.startswith("reports/latest/") for path in changed)
    assert "reports/latest/index.md" in changed


def test_report_without_records_says_what_to_run_first(checkout: Path) -> None:
    shutil.rmtree(checkout / "results")
    done = nox_in(checkout, "-s", "report")
    assert done.returncode != 0
    assert "no records in results/ yet: run `nox -s run` first" in done.stderr


# --- the worker's output: the runner's lines on the terminal, the rest in a log ---------------------

NOISY_WORKER = r"""
import atexit, os, sys, warnings

warnings.warn("torch.foo is deprecated and will be removed", FutureWarning)
warnings.warn("pkg_resources is deprecated as an API", UserWarning)
print("stdout chatter from a library")
sys.stderr.write("torch 2.5.1 (pypi): 2 cells, 0 already recorded, 2 to run -> out/torch-2.5.1_pypi_py3.11.jsonl\n")
sys.stderr.write("[W1120 12:00:00.000000 1 c10/util/Logging.cpp:1] a C++ warning\n")
sys.stderr.write("[1/2] pass             0.10s torch-2.5.1/strict/a\n")
sys.stderr.write("[2/2] fail             0.20s torch-2.5.1/strict/b\n")
sys.stderr.write("done: pass 1, fail 1\n")
atexit.register(lambda: os.write(2, b"nanobind: leaked 2 instances!\n"))
sys.exit(int(sys.argv[1]))
"""


def run_noisy(tmp_path: Path, code: int = 0) -> Tuple[logs.Tee, str, str]:
    script = tmp_path / "worker.py"
    script.write_text(NOISY_WORKER)
    terminal = io.StringIO()
    log = logs.log_path(tmp_path / "out", "torch-2.5.1_pypi_py3.11")
    command = [sys.executable, str(script), str(code)]
    with logs.Tee(log, command, terminal=terminal) as tee:
        env = dict(os.environ, PYTHONWARNINGS="default")
        subprocess.run(command, stdout=tee.fd, stderr=subprocess.STDOUT, env=env, timeout=60)
    return tee, terminal.getvalue(), log.read_text()


def test_the_terminal_gets_the_runners_lines_and_the_log_everything(tmp_path: Path) -> None:
    tee, terminal, log = run_noisy(tmp_path)
    assert terminal.splitlines() == [
        "torch 2.5.1 (pypi): 2 cells, 0 already recorded, 2 to run -> out/torch-2.5.1_pypi_py3.11.jsonl",
        "[1/2] pass             0.10s torch-2.5.1/strict/a",
        "[2/2] fail             0.20s torch-2.5.1/strict/b",
        "done: pass 1, fail 1",
    ]
    for noise in ("FutureWarning: torch.foo", "pkg_resources is deprecated", "stdout chatter", "a C++ warning"):
        assert noise in log
    assert log.rstrip().endswith("nanobind: leaked 2 instances!")
    assert log.startswith("=== ") and "worker.py" in log.splitlines()[0]
    assert "nanobind: leaked 2 instances!" in tee.last_lines()
    assert tmp_path.joinpath("out", "logs", "torch-2.5.1_pypi_py3.11.log").is_file()


def test_each_run_appends_to_the_log_so_a_resume_keeps_what_the_dead_run_printed(tmp_path: Path) -> None:
    run_noisy(tmp_path, code=1)
    _, _, log = run_noisy(tmp_path)
    assert log.count("\n=== ") + log.startswith("=== ") == 2
    assert log.count("nanobind: leaked") == 2


def test_a_real_run_puts_only_runner_lines_on_the_terminal(tmp_path: Path) -> None:
    command, env = environments.current_worker()
    out = tmp_path / "out"
    command += ["run", "--select", "exportdb/cond_predicate", "--mode", "strict"]
    command += ["--out", str(out)]
    terminal = io.StringIO()
    with logs.Tee(logs.log_path(out, "current"), command, terminal=terminal) as tee:
        done = subprocess.run(command, stdout=tee.fd, stderr=subprocess.STDOUT, env=env, cwd=ROOT, timeout=600)
    log = (out / "logs" / "current.log").read_text()
    assert done.returncode == 0, log[-3000:]
    shown = terminal.getvalue().splitlines()
    assert shown[0].startswith("torch ") and " 1 cells, 0 already recorded, 1 to run" in shown[0]
    assert any(line.startswith("[1/1] pass ") for line in shown) and shown[-1] == "done: pass 1"
    # Whatever this torch printed besides the runner's lines is in the log only; the runner's are in both.
    assert all(line in log for line in shown)
    assert tee.last_lines() == [line for line in log.splitlines()[1:] if line.strip() and line not in shown]


@pytest.mark.slow
def test_the_run_session_logs_the_workers_output_and_names_the_log(tmp_path: Path) -> None:
    given = os.environ.get(environments.ENV_DIR_VARIABLE)
    out = tmp_path / "records"
    # The session for the torch build this interpreter has, so that a reused environment is at hand.
    installed = importlib.metadata.version("torch")
    build = releases.default_matrix().resolve(installed)
    env = dict(os.environ, EXPORT_MATRIX_TORCH=installed, EXPORT_MATRIX_OUT=str(out))
    env[environments.ENV_DIR_VARIABLE] = given or str(tmp_path / "envs")
    env.pop(pythons.PYTHON_VARIABLE, None)  # the session runs this interpreter's Python
    session = "run(torch='%s', variant='%s')" % (build.release.version, build.variant.name)

    def nox_run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "nox", "--noxfile", str(ROOT / "noxfile.py"), "-s", session, "--", *args],
            capture_output=True, text=True, env=env, cwd=ROOT, timeout=1200,
        )  # fmt: skip

    done = nox_run("--select", "exportdb/cond_predicate", "--mode", "strict")
    assert done.returncode == 0, done.stderr[-3000:]
    log = out / "logs" / ("torch-%s_%s_py%d.%d.log" % (installed, build.variant.name, *sys.version_info[:2]))
    assert log.is_file() and "done: pass 1" in log.read_text()
    output = done.stdout + done.stderr
    assert "done: pass 1" in output
    assert output.count(str(log)) == 1, output

    failed = nox_run("--mode", "sideways")
    assert failed.returncode != 0
    assert "export-matrix run: error: argument --mode: invalid choice: 'sideways'" in failed.stderr
    assert "the worker's last other output:" in failed.stderr and "usage: export-matrix run" in failed.stderr
    assert failed.stderr.count(str(log)) == 1
