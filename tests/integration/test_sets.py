"""Dependency sets: an environment per set beside a release's base, and what cannot be had, offline with fake wheels."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import List, Sequence

import pytest

from matrix.contract import records
from matrix.contract.case import CaseInfo
from matrix.contract.schema import Status
from matrix.envs import env_errors, environments, install, releases, sets
from matrix.envs.environments import Spec
from matrix.envs.install import Sources

from conftest import CURRENT, FAKE_RELEASE, FAKE_VARIANT, FailingInstaller, installers, make_wheel

BASE = Spec(releases.Build(FAKE_RELEASE, FAKE_VARIANT), CURRENT)


def with_requirement(folder: Path, name: str, version: str, requires: str) -> None:
    """A wheel like ``make_wheel``'s whose metadata requires ``requires``."""
    import zipfile

    path = make_wheel(folder, name, version)
    with zipfile.ZipFile(path) as archive:
        members = {member: archive.read(member) for member in archive.namelist()}
    meta = "%s-%s.dist-info/METADATA" % (name, version)
    members[meta] += ("Requires-Dist: %s\n" % requires).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)


def info(name: str, *needs: str) -> CaseInfo:
    return CaseInfo(name=name, path="cases/%s.py" % name, description="d", dependencies=needs)


def test_a_set_gets_its_own_environment_with_the_base_torch_and_records_what_it_added(
    local_wheels: Path, tmp_path: Path
) -> None:
    make_wheel(local_wheels, "tinydep", "1.0")
    target = dataclasses.replace(BASE, dependency_set="tinydep")
    envs, out, tool = tmp_path / "envs", tmp_path / "out", installers()[0]
    made = sets.prepare(target, out, [info("a", "tinydep")], ["strict"], envs=envs, tool=tool, log=lambda _: None)
    assert made is not None and made.path == envs / target.name != envs / BASE.name
    assert environments.installed_torch(made.python) == "9.9.9+cpu"
    marker = json.loads((made.path / environments.MARKER).read_text())
    assert marker["added"] == {"tinydep": "1.0"} and marker["dependency_set"] == "tinydep"
    base_marker = json.loads((envs / BASE.name / environments.MARKER).read_text())
    assert "added" not in base_marker and "tinydep" not in " ".join(base_marker["requirements"])
    again = sets.prepare(target, out, [], ["strict"], envs=envs, tool=FailingInstaller(), log=lambda _: None)
    assert again is not None and again.reused
    assert not list(out.glob("*.jsonl"))  # nothing to answer for: no record


def test_a_set_the_resolver_refuses_makes_its_cells_not_applicable_naming_the_package(
    local_wheels: Path, tmp_path: Path
) -> None:
    uv = install.find_uv()
    assert uv is not None, "uv is a dependency of the project"
    with_requirement(local_wheels, "needsfuture", "1.0", "torch>=99")
    target = dataclasses.replace(BASE, dependency_set="needsfuture")
    out = tmp_path / "out"
    cases = [info("a", "needsfuture"), info("b", "needsfuture")]
    made = sets.prepare(
        target, out, cases, ["strict", "non-strict"], envs=tmp_path / "envs", tool=install.UvInstaller(uv),
        log=lambda _: None,
    )  # fmt: skip
    assert made is None
    assert not list(out.glob("env-error_*"))  # an answer, not a failure
    cells, warnings = records.read(str(out / (target.name + ".jsonl")))
    assert warnings == [] and len(cells) == 4
    for cell in cells:
        assert cell["status"] == Status.NOT_APPLICABLE.value and cell["missing"] == ["needsfuture"]
        assert cell["dependency_set"] == "needsfuture" and cell["torch_version"] == "9.9.9+cpu"
        assert (
            "\n" not in cell["error_message"] and "needsfuture cannot be installed with torch" in cell["error_message"]
        )
    assert (tmp_path / "envs" / BASE.name / environments.MARKER).is_file()  # the base cases go on


class SetFails:
    """Installs the base with a real installer; the set's install fails as a download does without network."""

    name = "fake"

    def __init__(self, real: install.Installer) -> None:
        self.real = real
        self.calls: List[str] = []

    def create(self, path: Path, interpreter: str) -> None:
        self.real.create(path, interpreter)

    def install(
        self, python: Path, requirements: Sequence[str], sources: Sources, constraints: Sequence[str] = ()
    ) -> str:
        if "tinydep" in requirements:
            self.calls.append("set")
            raise install.classify("error: Failed to fetch: https://example/tinydep/\n  cause: dns error", "install")
        return self.real.install(python, requirements, sources, constraints)


def test_a_set_that_fails_to_install_is_an_env_error_of_that_set_alone(local_wheels: Path, tmp_path: Path) -> None:
    target = dataclasses.replace(BASE, dependency_set="tinydep")
    out, envs, tool = tmp_path / "out", tmp_path / "envs", SetFails(installers()[0])
    assert (
        sets.prepare(target, out, [info("a", "tinydep")], ["strict"], envs=envs, tool=tool, log=lambda _: None) is None
    )
    assert tool.calls == ["set"]
    (record,) = records.read(str(out / env_errors.env_error_file(target)))[0]
    assert record["dependency_set"] == "tinydep" and "dns error" in record["error_message"]
    assert not (out / env_errors.env_error_file(BASE)).exists()
    assert (envs / BASE.name / environments.MARKER).is_file()


def test_a_half_installed_set_is_rebuilt_never_used(local_wheels: Path, tmp_path: Path) -> None:
    make_wheel(local_wheels, "tinydep", "1.0")
    target = dataclasses.replace(BASE, dependency_set="tinydep")
    envs = tmp_path / "envs"
    half = envs / target.name
    (half / "bin").mkdir(parents=True)
    (half / "bin" / "python").write_text("an install cut short: no marker was written")
    made = sets.prepare(target, tmp_path / "out", [], [], envs=envs, tool=installers()[0], log=lambda _: None)
    assert made is not None and not made.reused
    assert environments.installed_torch(made.python) == "9.9.9+cpu"


@pytest.mark.parametrize("spelled", ["tinydep", "TinyDep "])
def test_the_set_names_its_environment_whatever_the_spelling(spelled: str) -> None:
    from matrix.contract import dependencies

    key = dependencies.set_key([spelled])
    assert dataclasses.replace(BASE, dependency_set=key).name == BASE.name + dependencies.set_suffix("tinydep")
