"""Environments: specs, sources per variant, Python choice, the worker's copy, env-error records."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from matrix.contract import records
from matrix.envs import env_errors, environments, install, pythons, releases, worker_copy
from matrix.envs.environments import Spec
from matrix.envs.install import Sources

from conftest import CURRENT, FailingInstaller, fake_package, write

MATRIX = releases.default_matrix()


def spec(word: str, python: str = CURRENT) -> Spec:
    return Spec(MATRIX.resolve(word), python)


def test_spec_names_match_the_worker_record_files() -> None:
    assert spec("2.4.1+cpu", "3.11").name == "torch-2.4.1+cpu_cpu_py3.11"
    assert spec("2.4.1", "3.10").name + ".jsonl" == records.env_file_name("2.4.1", "pypi", "3.10")
    assert env_errors.env_error_file(spec("2.4.1", "3.10")) == "env-error_torch-2.4.1_pypi_py3.10.jsonl"


def test_requirements_pin_the_exact_build_and_the_series_pins() -> None:
    assert spec("2.1.2", "3.11").requirements == ["torch===2.1.2", "numpy<2", "setuptools<81"]
    assert spec("2.4.1+cu121", "3.11").requirements == ["torch==2.4.1+cu121", "numpy", "setuptools"]
    assert spec("2.8.0", "3.11").requirements == ["torch===2.8.0", "numpy"]


def test_default_python_prefers_this_interpreter_then_the_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pythons.shutil, "which", lambda name: None)  # no pythonX.Y on PATH to ask
    release = releases.Release("9.9.9", "9.9", (CURRENT,))
    assert pythons.default_python(release, {}) == CURRENT
    assert pythons.default_python(release, {pythons.PYTHON_VARIABLE: "3.9"}) == "3.9"
    old = releases.Release("9.9.9", "9.9", ("2.6", "2.7"))
    assert pythons.default_python(old, {"PYENV_ROOT": "/nonexistent"}) == "2.7"  # none found: the newest


def test_find_interpreter_finds_this_one_and_rejects_a_missing_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pythons.shutil, "which", lambda name: None)  # no pythonX.Y on PATH to ask
    assert pythons.find_interpreter(CURRENT) == sys.executable
    assert pythons.find_interpreter("2.6", {"PYENV_ROOT": "/nonexistent"}) is None


def test_unsupported_python_or_variant_fails_before_installing(tmp_path: Path) -> None:
    with pytest.raises(install.BuildUnavailable, match="no wheels for Python 3.12"):
        environments.prepare(spec("2.1.2", "3.12"), tmp_path, tool=FailingInstaller())
    no_build = Spec(releases.Build(MATRIX.release("2.9.1"), MATRIX.variant("cu121")), "3.11")
    with pytest.raises(install.BuildUnavailable, match="cu121 variant has no build of torch 2.9.1"):
        environments.prepare(no_build, tmp_path, tool=FailingInstaller())
    assert not (tmp_path / no_build.name).exists()


def test_failed_install_becomes_an_env_error_record_and_the_matrix_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "out"
    tool = FailingInstaller()
    target = spec("2.5.1")
    assert env_errors.prepare_or_record(target, out, tmp_path / "envs", tool, Sources(), log=lambda _: None) is None
    assert tool.calls == ["create", "install"]
    found, warnings = records.read(str(out / env_errors.env_error_file(target)))
    assert warnings == []
    (record,) = found
    assert record["kind"] == "env-error"
    assert (record["torch_version"], record["variant"], record["python"]) == ("2.5.1", "pypi", CURRENT)
    assert record["error_type"] == "matrix.envs.install.InstallError"
    assert (
        record["error_message"] == "install failed: error: Failed to fetch: https://example/torch/ (cause: dns error)"
    )
    assert "dns error" in record["installer_output"]
    assert record["finished_at"].endswith("+00:00")
    # A second failure replaces the record instead of piling up duplicates.
    env_errors.prepare_or_record(target, out, tmp_path / "envs", tool, Sources(), log=lambda _: None)
    assert len(records.read(str(out / env_errors.env_error_file(target)))[0]) == 1


def test_the_worker_copy_holds_only_the_worker_and_follows_its_sources(tmp_path: Path) -> None:
    package = fake_package(tmp_path / "src", "RUNNER = 1\n")
    copy = worker_copy.worker_copy(tmp_path / "envs", package)
    files = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file())
    assert files == sorted(
        ["matrix/__init__.py", "matrix/contract/schema.py", "matrix/worker/__main__.py", "matrix/worker/runner.py"]
    )
    assert worker_copy.worker_copy(tmp_path / "envs", package) == copy  # made once per fingerprint
    write(package / "report" / "build.py", "import matplotlib\n")  # host edits: same worker
    assert worker_copy.worker_copy(tmp_path / "envs", package) == copy
    write(package / "worker" / "runner.py", "RUNNER = 2\n")
    changed = worker_copy.worker_copy(tmp_path / "envs", package)
    assert changed != copy and (changed / "matrix" / "worker" / "runner.py").read_text() == "RUNNER = 2\n"
    assert (copy / "matrix" / "worker" / "runner.py").read_text() == "RUNNER = 1\n"  # a running worker keeps its copy
    write(package / "contract" / "schema.py", "SCHEMA = 2\n")  # the contract travels with the worker
    assert worker_copy.worker_copy(tmp_path / "envs", package) not in (copy, changed)


def test_env_dir_follows_the_variable_then_the_cache_folder(tmp_path: Path) -> None:
    assert environments.env_dir({environments.ENV_DIR_VARIABLE: str(tmp_path)}) == tmp_path
    if sys.platform != "win32":
        assert environments.env_dir({"XDG_CACHE_HOME": "/c"}) == Path("/c/torch-export-matrix/envs")


def test_cpu_builds_never_probe_cuda(tmp_path: Path) -> None:
    environment = environments.Environment(spec("2.13.0+cpu"), tmp_path / "missing", tmp_path / "worker")
    assert environments.cuda_available(environment) is False


def test_a_builds_environments_are_its_own_and_its_sets_for_any_python(tmp_path: Path) -> None:
    build = MATRIX.resolve("2.4.1")
    own = [Spec(build, "3.11"), Spec(build, "3.11", "timm"), Spec(build, "3.9", "transformers==4.57.1")]
    for name in [s.name for s in own] + [
        spec("2.4.1+cpu", "3.11").name,  # the same release's other variant
        "torch-2.4.10_pypi_py3.11",  # a release whose version starts the same
        "torch-2.4.1_pypi_py3.11.old",
        "torch-2.4.1_pypi_py3.11_deps-notahash",
        ".worker",
    ]:
        (tmp_path / name).mkdir()
    write(tmp_path / "torch-2.4.1_pypi_py3.12", "a file, not an environment")
    elsewhere = tmp_path.parent / (tmp_path.name + "-elsewhere")
    elsewhere.mkdir()
    if sys.platform != "win32":
        (tmp_path / "torch-2.4.1_pypi_py3.13").symlink_to(elsewhere)  # never followed out of the folder
    assert environments.of_build(build, tmp_path) == sorted(tmp_path / s.name for s in own)
    assert environments.of_build(build, tmp_path / "missing") == []
