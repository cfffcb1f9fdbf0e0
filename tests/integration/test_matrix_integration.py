"""Two real torch releases installed side by side and the same cases run in both (`nox -s release_tests`).

The local CPU build 2.13.0+cpu (through pip's configuration where it provides one) and
PyPI's 2.1.2, the oldest release in the matrix, which needs numpy<2 and setuptools<81
and has no ``strict`` keyword: its non-strict cells must come out not-applicable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from matrix.contract import records
from matrix.envs import env_errors, environments, pythons, releases

from conftest import FIXTURES, ROOT, read_cells

pytestmark = pytest.mark.releases

BUILDS = ("2.13.0+cpu", "2.1.2")


@pytest.fixture(autouse=True)
def only_when_asked(request: pytest.FixtureRequest) -> None:
    # Installing releases takes minutes and gigabytes: run only when the marker is selected.
    if "releases" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("installs torch releases; run with `pytest -m releases` or `nox -s release_tests`")


@pytest.fixture(scope="module")
def env_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """EXPORT_MATRIX_ENV_DIR when set (reuse across runs), else a fresh folder: real installs."""
    given = os.environ.get(environments.ENV_DIR_VARIABLE)
    return Path(given) if given else tmp_path_factory.mktemp("envs")


@pytest.fixture(scope="module")
def installed(env_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Dict[str, environments.Environment]:
    out = tmp_path_factory.mktemp("install-records")
    matrix = releases.default_matrix()
    found = {}
    for word in BUILDS:
        build = matrix.resolve(word)
        spec = environments.Spec(build, pythons.default_python(build.release))
        environment = env_errors.prepare_or_record(spec, out, env_dir)
        if environment is None:
            (record,) = records.read(str(out / env_errors.env_error_file(spec)))[0]
            pytest.fail("%s did not install: %s\n%s" % (word, record["error_message"], record["installer_output"]))
        found[word] = environment
    return found


@pytest.fixture(scope="module")
def cells(
    installed: Dict[str, environments.Environment], tmp_path_factory: pytest.TempPathFactory
) -> Dict[Tuple[str, str, str], dict]:
    out = tmp_path_factory.mktemp("records")
    for environment in installed.values():
        command = environment.worker_command(
            "run", "--cases", str(FIXTURES / "basic"), "--select", "add_one", "data_branch", "needs_cond",
            "--out", str(out), "--variant", environment.spec.build.variant.name, "--progress", "none",
        )  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=1200, env=environment.worker_env())
        assert done.returncode == 0, done.stderr[-3000:]
    return {(c["variant"], c["case"], c["mode"]): c for c in read_cells(out)}


def test_each_environment_holds_its_exact_build_and_pins(installed: Dict[str, environments.Environment]) -> None:
    new, old = installed["2.13.0+cpu"], installed["2.1.2"]
    assert environments.installed_torch(new.python) == "2.13.0+cpu"
    assert environments.installed_torch(old.python) == "2.1.2"
    probe = "import numpy, setuptools; print(numpy.__version__, setuptools.__version__)"
    numpy_version, setuptools_version = subprocess.run(
        [str(old.python), "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert numpy_version.startswith("1.") and int(setuptools_version.split(".")[0]) < 81


def test_second_prepare_reuses_both_without_installing(
    installed: Dict[str, environments.Environment], env_dir: Path
) -> None:
    for environment in installed.values():
        again = environments.prepare(environment.spec, env_dir, log=lambda _: None)
        assert again.reused and again.path == environment.path


def test_same_cases_in_both_releases_and_modes(cells: Dict[Tuple[str, str, str], dict]) -> None:
    new = {(case, mode): c for (variant, case, mode), c in cells.items() if variant == "cpu"}
    old = {(case, mode): c for (variant, case, mode), c in cells.items() if variant == "pypi"}
    assert len(new) == len(old) == 6
    assert {c["torch_version"] for c in new.values()} == {"2.13.0+cpu"}
    assert {c["torch_version"].split("+")[0] for c in old.values()} == {"2.1.2"}
    assert new["add_one", "strict"]["status"] == new["add_one", "non-strict"]["status"] == "pass"
    assert old["add_one", "strict"]["status"] == "pass"
    # torch 2.1 has no `strict` keyword: non-strict is not applicable there, which is not a failure.
    assert old["add_one", "non-strict"]["status"] == "not-applicable"
    assert "export.strict" in old["add_one", "non-strict"]["missing"]
    assert old["add_one", "strict"]["graph_hash"] and new["add_one", "strict"]["graph_hash"]
    for release in (new, old):
        assert release["data_branch", "strict"]["status"] == "fail"


def test_check_and_the_nox_session_reuse_the_environments(
    installed: Dict[str, environments.Environment], env_dir: Path, tmp_path: Path
) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{environments.ENV_DIR_VARIABLE: str(env_dir)})
    case = str(FIXTURES / "basic" / "add_one.py")
    done = subprocess.run(
        [sys.executable, "-m", "matrix", "check", case, "--torch", *BUILDS, "--format", "json"],
        capture_output=True, text=True, env=env, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "installing" not in done.stderr
    rows = json.loads(done.stdout)
    # PyPI's 2.1.2 reports itself as 2.1.2+cu121; the row still names the variant it came from.
    assert [(r["torch"].split("+")[0], r["variant"], r["mode"], r["status"]) for r in rows] == [
        ("2.13.0", "cpu", "strict", "pass"), ("2.13.0", "cpu", "non-strict", "pass"),
        ("2.1.2", "pypi", "strict", "pass"), ("2.1.2", "pypi", "non-strict", "not-applicable"),
    ]  # fmt: skip

    env["EXPORT_MATRIX_OUT"] = str(tmp_path / "nox-out")
    session = "run(torch='2.13.0', variant='cpu')"
    done = subprocess.run(
        [sys.executable, "-m", "nox", "--noxfile", str(ROOT / "noxfile.py"), "-s", session, "--",
         "--cases", str(FIXTURES / "basic"), "--select", "add_one", "--mode", "strict", "--progress", "none"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found: List[dict] = read_cells(tmp_path / "nox-out")
    assert [(c["case"], c["mode"], c["status"], c["variant"]) for c in found] == [("add_one", "strict", "pass", "cpu")]
