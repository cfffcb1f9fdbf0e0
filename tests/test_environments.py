"""Environments: specs, sources per variant, Python choice, real installs of fake wheels, env-error records."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import List, Sequence

import pytest
from test_pipconfig import make_wheel, write

from matrix.envs import environments, install, releases
from matrix.envs.environments import Spec
from matrix.envs.install import Sources
from matrix.worker import records

MATRIX = releases.default_matrix()
CURRENT = environments.current_python()


def spec(word: str, python: str = CURRENT) -> Spec:
    return Spec(MATRIX.resolve(word), python)


def test_spec_names_match_the_worker_record_files() -> None:
    assert spec("2.4.1+cpu", "3.11").name == "torch-2.4.1+cpu_cpu_py3.11"
    assert spec("2.4.1", "3.10").name + ".jsonl" == records.env_file_name("2.4.1", "pypi", "3.10")
    assert environments.env_error_file(spec("2.4.1", "3.10")) == "env-error_torch-2.4.1_pypi_py3.10.jsonl"


def test_requirements_pin_the_exact_build_and_the_series_pins() -> None:
    assert spec("2.1.2", "3.11").requirements == ["torch===2.1.2", "numpy<2", "setuptools<81"]
    assert spec("2.4.1+cu121", "3.11").requirements == ["torch==2.4.1+cu121", "numpy", "setuptools"]
    assert spec("2.8.0", "3.11").requirements == ["torch===2.8.0", "numpy"]


def test_default_python_prefers_this_interpreter_then_the_override() -> None:
    release = releases.Release("9.9.9", "9.9", (CURRENT,))
    assert environments.default_python(release, {}) == CURRENT
    assert environments.default_python(release, {environments.PYTHON_VARIABLE: "3.9"}) == "3.9"
    old = releases.Release("9.9.9", "9.9", ("2.6", "2.7"))
    assert environments.default_python(old, {"PYENV_ROOT": "/nonexistent"}) == "2.7"  # none found: the newest


def test_find_interpreter_finds_this_one_and_rejects_a_missing_version() -> None:
    assert environments.find_interpreter(CURRENT) == sys.executable
    assert environments.find_interpreter("2.6", {"PYENV_ROOT": "/nonexistent"}) is None


def test_unsupported_python_or_variant_fails_before_installing(tmp_path: Path) -> None:
    with pytest.raises(install.BuildUnavailable, match="no wheels for Python 3.12"):
        environments.prepare(spec("2.1.2", "3.12"), tmp_path, tool=FailingInstaller())
    no_build = Spec(releases.Build(MATRIX.release("2.9.1"), MATRIX.variant("cu121")), "3.11")
    with pytest.raises(install.BuildUnavailable, match="cu121 variant has no build of torch 2.9.1"):
        environments.prepare(no_build, tmp_path, tool=FailingInstaller())
    assert not (tmp_path / no_build.name).exists()


class FailingInstaller:
    """An installer whose downloads fail, as they do without network."""

    name = "fake"

    def __init__(self) -> None:
        self.calls: List[str] = []

    def create(self, path: Path, interpreter: str) -> None:
        self.calls.append("create")
        path.mkdir(parents=True)

    def install(self, python: Path, requirements: Sequence[str], sources: Sources) -> str:
        self.calls.append("install")
        raise install.classify("error: Failed to fetch: https://example/torch/\n  cause: dns error", "install")


def test_failed_install_becomes_an_env_error_record_and_the_matrix_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "out"
    tool = FailingInstaller()
    target = spec("2.5.1")
    assert environments.prepare_or_record(target, out, tmp_path / "envs", tool, Sources(), log=lambda _: None) is None
    assert tool.calls == ["create", "install"]
    found, warnings = records.read(str(out / environments.env_error_file(target)))
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
    environments.prepare_or_record(target, out, tmp_path / "envs", tool, Sources(), log=lambda _: None)
    assert len(records.read(str(out / environments.env_error_file(target)))[0]) == 1


FAKE_VARIANT = releases.Variant("cpu", "file:///nonexistent", "EXPORT_MATRIX_TEST_INDEX", local_tag="cpu")
FAKE_RELEASE = releases.Release("9.9.9", "9.9", (CURRENT,), numpy_pin="fakenumpy")


@pytest.fixture
def local_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pip configuration offering fake torch and numpy wheels from a folder, and no index at all."""
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "torch", "9.9.9+cpu")
    make_wheel(wheels, "torch", "9.9.9")
    make_wheel(wheels, "fakenumpy", "1.0")
    conf = write(tmp_path / "pip.conf", "[global]\nno-index = true\nfind-links = %s\n" % wheels)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    for variable in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX"):
        monkeypatch.delenv(variable, raising=False)
    return wheels


def installers() -> List[install.Installer]:
    found: List[install.Installer] = [install.PipInstaller()]
    uv = install.find_uv()
    if uv:
        found.insert(0, install.UvInstaller(uv))
    return found


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
    assert environments.prepare_or_record(missing, out, tmp_path / "envs", tool, log=lambda _: None) is None
    (record,) = records.read(str(out / environments.env_error_file(missing)))[0]
    assert record["error_type"] == "matrix.envs.install.BuildUnavailable"
    assert "9.9.7" in record["error_message"]
    assert "torch==9.9.7+cpu" in record["installer_output"]


def test_a_later_success_removes_the_stale_env_error_record(local_wheels: Path, tmp_path: Path) -> None:
    target = Spec(releases.Build(FAKE_RELEASE, FAKE_VARIANT), CURRENT)
    out, envs = tmp_path / "out", tmp_path / "envs"
    environments.prepare_or_record(target, out, envs, FailingInstaller(), Sources(), log=lambda _: None)
    assert (out / environments.env_error_file(target)).exists()
    assert environments.prepare_or_record(target, out, envs, installers()[0], log=lambda _: None) is not None
    assert not (out / environments.env_error_file(target)).exists()


def fake_package(root: Path, runner: str) -> Path:
    """A package laid out like ``matrix``: the worker's modules, a host module, and a byte-code cache."""
    package = root / "matrix"
    for name in environments.WORKER_MODULES:
        write(package / name, "# %s\n" % name)
    write(package / "worker" / "__main__.py", "MAIN = 1\n")
    write(package / "worker" / "runner.py", runner)
    write(package / "worker" / "__pycache__" / "runner.cpython-311.pyc", "")
    write(package / "report" / "build.py", "import pandas\n")
    return package


def test_the_worker_copy_holds_only_the_worker_and_follows_its_sources(tmp_path: Path) -> None:
    package = fake_package(tmp_path / "src", "RUNNER = 1\n")
    copy = environments.worker_copy(tmp_path / "envs", package)
    files = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file())
    assert files == sorted(
        ["matrix/%s" % name for name in environments.WORKER_MODULES]
        + ["matrix/worker/__main__.py", "matrix/worker/runner.py"]
    )
    assert environments.worker_copy(tmp_path / "envs", package) == copy  # made once per fingerprint
    write(package / "report" / "build.py", "import matplotlib\n")  # host edits: same worker
    assert environments.worker_copy(tmp_path / "envs", package) == copy
    write(package / "worker" / "runner.py", "RUNNER = 2\n")
    changed = environments.worker_copy(tmp_path / "envs", package)
    assert changed != copy and (changed / "matrix" / "worker" / "runner.py").read_text() == "RUNNER = 2\n"
    assert (copy / "matrix" / "worker" / "runner.py").read_text() == "RUNNER = 1\n"  # a running worker keeps its copy


def test_a_changed_worker_needs_no_reinstall(
    local_wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    envs = tmp_path / "envs"
    target = Spec(releases.Build(FAKE_RELEASE, FAKE_VARIANT), CURRENT)
    first = environments.prepare(target, envs, tool=installers()[0], log=lambda _: None)
    monkeypatch.setattr(environments, "PACKAGE", fake_package(tmp_path / "src", "RUNNER = 3\n"))
    again = environments.prepare(target, envs, tool=FailingInstaller(), log=lambda _: None)
    assert again.reused and again.worker != first.worker
    assert again.worker_env({"PYTHONPATH": "/host/site"})["PYTHONPATH"] == str(again.worker)


def test_the_worker_runs_from_its_copy_without_the_host_side(tmp_path: Path) -> None:
    """The copy imports with no site-packages at all: the worker needs nothing but the standard library there."""
    copy = environments.worker_copy(tmp_path / "envs")
    modules = sorted("matrix.worker." + p.stem for p in (copy / "matrix" / "worker").glob("*.py"))
    modules.remove("matrix.worker.__main__")
    code = "import %s; import sys; print(sorted(m for m in sys.modules if m.startswith('matrix')))" % ", ".join(modules)
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], env=environments.worker_environ(copy, {}), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (
        "matrix.report" not in done.stdout and "matrix.records" not in done.stdout and "matrix.envs" not in done.stdout
    )


def test_env_dir_follows_the_variable_then_the_cache_folder(tmp_path: Path) -> None:
    assert environments.env_dir({environments.ENV_DIR_VARIABLE: str(tmp_path)}) == tmp_path
    if sys.platform != "win32":
        assert environments.env_dir({"XDG_CACHE_HOME": "/c"}) == Path("/c/torch-export-matrix/envs")


def test_cpu_builds_never_probe_cuda(tmp_path: Path) -> None:
    environment = environments.Environment(spec("2.13.0+cpu"), tmp_path / "missing", tmp_path / "worker")
    assert environments.cuda_available(environment) is False
