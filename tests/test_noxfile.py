"""The noxfile's sessions as nox lists them: names, parameters and tags usable as a CI job matrix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Dict, List, Optional

from matrix import ci
from matrix.envs import releases

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
        "run(torch='2.5.1', variant='pypi')",
        "run(torch='2.9.1', variant='pypi')",
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
