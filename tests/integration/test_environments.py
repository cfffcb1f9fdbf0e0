"""Environments installed from fake wheels by the real installers, and the worker's copy imported alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from matrix.contract import records
from matrix.envs import env_errors, environments, install, releases, worker_copy
from matrix.envs.environments import Spec
from matrix.envs.install import Sources

from conftest import CURRENT, FAKE_RELEASE, FAKE_VARIANT, FailingInstaller, fake_package, installers


@pytest.mark.parametrize("tool", installers(), ids=lambda t: t.name)
def test_prepare_installs_the_exact_build_then_reuses_it(
    tool: install.Installer, local_wheels: Path, tmp_path: Path
) -> None:
    envs = tmp_path / "envs"
    target = Spec(releases.Build(FAKE_RELEASE, FAKE_VARIANT), CURRENT)
    first = environments.prepare(target, envs, tool=tool, log=lambda _: None)
    assert not first.reused
    assert environments.installed_torch(first.python) == "9.9.9+cpu"
    marker = json.loads((first.path / environments.MARKER).read_text())
    assert marker["requirements"] == ["torch==9.9.9+cpu", "fakenumpy"]
    assert marker["installer"] == tool.name
    assert environments.is_ready(target, envs)

    again = environments.prepare(target, envs, tool=FailingInstaller(), log=lambda _: None)
    assert again.reused and again.path == first.path
    assert again.worker == first.worker and (again.worker / "matrix" / "worker" / "__main__.py").is_file()


def test_pypi_build_pins_the_exact_version_never_a_local_build(local_wheels: Path, tmp_path: Path) -> None:
    # PyPI's build of a release: exactly 9.9.9, never the +cpu wheel beside it.
    pypi = releases.Variant("pypi", "file:///nonexistent", "EXPORT_MATRIX_TEST_PYPI", cuda=True)
    target = Spec(releases.Build(FAKE_RELEASE, pypi), CURRENT)
    plain = environments.prepare(target, tmp_path / "envs", tool=installers()[0], log=lambda _: None)
    assert environments.installed_torch(plain.python) == "9.9.9"


def test_prepare_reports_a_missing_build_with_the_installer_message(local_wheels: Path, tmp_path: Path) -> None:
    uv = install.find_uv()
    if uv is None:
        pytest.skip("needs uv")
    missing = Spec(releases.Build(releases.Release("9.9.7", "9.9", (CURRENT,), "fakenumpy"), FAKE_VARIANT), CURRENT)
    out = tmp_path / "out"
    tool = install.UvInstaller(uv)
    assert env_errors.prepare_or_record(missing, out, tmp_path / "envs", tool, log=lambda _: None) is None
    (record,) = records.read(str(out / env_errors.env_error_file(missing)))[0]
    assert record["error_type"] == "matrix.envs.install.BuildUnavailable"
    assert "9.9.7" in record["error_message"]
    assert "torch==9.9.7+cpu" in record["installer_output"]


def test_a_later_success_removes_the_stale_env_error_record(local_wheels: Path, tmp_path: Path) -> None:
    target = Spec(releases.Build(FAKE_RELEASE, FAKE_VARIANT), CURRENT)
    out, envs = tmp_path / "out", tmp_path / "envs"
    env_errors.prepare_or_record(target, out, envs, FailingInstaller(), Sources(), log=lambda _: None)
    assert (out / env_errors.env_error_file(target)).exists()
    assert env_errors.prepare_or_record(target, out, envs, installers()[0], log=lambda _: None) is not None
    assert not (out / env_errors.env_error_file(target)).exists()


def test_a_changed_worker_needs_no_reinstall(
    local_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    envs = tmp_path / "envs"
    target = Spec(releases.Build(FAKE_RELEASE, FAKE_VARIANT), CURRENT)
    first = environments.prepare(target, envs, tool=installers()[0], log=lambda _: None)
    monkeypatch.setattr(worker_copy, "PACKAGE", fake_package(tmp_path / "src", "RUNNER = 3\n"))
    again = environments.prepare(target, envs, tool=FailingInstaller(), log=lambda _: None)
    assert again.reused and again.worker != first.worker
    assert again.worker_env({"PYTHONPATH": "/host/site"})["PYTHONPATH"] == str(again.worker)


def test_the_worker_runs_from_its_copy_without_the_host_side(tmp_path: Path) -> None:
    """The copy imports with no site-packages at all: the worker needs nothing but the standard library there."""
    copy = worker_copy.worker_copy(tmp_path / "envs")
    modules = sorted("matrix.worker." + p.stem for p in (copy / "matrix" / "worker").glob("*.py"))
    modules.remove("matrix.worker.__main__")
    code = "import %s; import sys; print(sorted(m for m in sys.modules if m.startswith('matrix')))" % ", ".join(modules)
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], env=worker_copy.worker_environ(copy, {}), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (
        "matrix.report" not in done.stdout and "matrix.records" not in done.stdout and "matrix.envs" not in done.stdout
    )
