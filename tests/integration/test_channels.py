"""A channel's build installed by uv from a local index standing in for PyTorch's nightly index."""

from __future__ import annotations

import dataclasses
import datetime
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Sequence

import pytest

from matrix.contract import dependencies
from matrix.envs import env_errors, environments, install, releases, sets

from conftest import CURRENT, ROOT, FailingInstaller, make_wheel, write


def simple_index(root: Path, wheels: Dict[str, Sequence[str]]) -> str:
    """A PEP 503 index in a folder (``simple/<name>/index.html`` beside the wheels), as a ``file://`` URL."""
    for name, versions in wheels.items():
        names = [make_wheel(root / "files", name, version).name for version in versions]
        write(
            root / "simple" / name / "index.html", "".join('<a href="../../files/%s">%s</a>\n' % (n, n) for n in names)
        )
    return (root / "simple").as_uri()


def requires(environment: environments.Environment) -> object:
    site = next(environment.path.glob("lib/python*/site-packages"))
    (torch,) = [d for d in importlib.metadata.distributions(path=[str(site)]) if d.metadata["Name"] == "torch"]
    return torch.requires


@pytest.mark.skipif(install.find_uv() is None, reason="needs uv")
def test_the_nightly_channel_installs_from_its_index_never_a_local_wheel_of_the_same_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nightlies = ["9.9.10.dev20260115+cpu", "9.9.10.dev20260116+cpu"]
    # The index mirrors what torch needs (fakenumpy) and a library a case may name (fakelib), as PyTorch's does.
    index = simple_index(tmp_path / "nightly", {"torch": nightlies, "fakenumpy": ["1.0"], "fakelib": ["1.0"]})
    # pip's wheel folder holds a build of the same number that needs something else: uv would prefer it.
    make_wheel(tmp_path / "wheels", "torch", "9.9.10.dev20260116+cpu", requires=["fakenumpy"])
    monkeypatch.setenv(
        "PIP_CONFIG_FILE", str(write(tmp_path / "pip.conf", "[global]\nfind-links = %s\n" % (tmp_path / "wheels")))
    )
    for variable in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX", "UV_INDEX"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("EXPORT_MATRIX_TEST_NIGHTLY", index)  # the channel's variable replaces its (unreachable) index
    variant = releases.Variant(
        "nightly-cpu",
        "https://download.pytorch.org/whl/nightly/cpu",
        "EXPORT_MATRIX_TEST_NIGHTLY",
        "cpu",
        channel="nightly",
    )
    nightly = releases.Build(releases.Release("nightly", "9.9", (CURRENT,), "fakenumpy"), variant)
    envs, out = tmp_path / "envs", tmp_path / "out"
    tool = install.UvInstaller(str(install.find_uv()))
    lines: list = []

    newest = env_errors.prepare_or_record(environments.Spec(nightly, CURRENT), out, envs, tool, log=lines.append)
    assert newest is not None, list((out).glob("*"))
    assert newest.spec.build.torch_version == "9.9.10.dev20260116+cpu" and newest.spec.build.variant == variant
    assert newest.path.name == "torch-9.9.10.dev20260116+cpu_nightly-cpu_py%s" % CURRENT
    assert environments.installed_torch(newest.python) == "9.9.10.dev20260116+cpu"
    assert not requires(newest)  # the channel's wheel, not the wheel folder's
    marker = json.loads((newest.path / environments.MARKER).read_text())
    assert (marker["channel"], marker["index"]) == ("nightly", index)
    assert marker["torch_wheel"] == "torch-9.9.10.dev20260116+cpu-py3-none-any.whl"
    assert any("offers torch 9.9.10.dev20260116+cpu" in line for line in lines)

    # Asked again, the index names the same wheel: the environment is reused, nothing installed.
    again = environments.prepare(environments.Spec(nightly, CURRENT), envs, FailingInstaller(), log=lambda _: None)
    assert again.reused and again.path == newest.path

    # A dated nightly is that day's build, in an environment of its own, reused without the index.
    day = releases.Release(releases.channel_word("nightly", datetime.date(2026, 1, 15)), "9.9", (CURRENT,), "fakenumpy")
    dated = environments.Spec(releases.Build(day, variant), CURRENT)
    first = environments.prepare(dated, envs, tool, log=lambda _: None)
    assert environments.installed_torch(first.python) == "9.9.10.dev20260115+cpu" and first.path != newest.path
    # A case's dependency set beside it: torch as the base pinned it, the set's package from the index.
    with_lib = dataclasses.replace(dated, dependency_set=dependencies.set_key(["fakelib"]))
    lib = sets.prepare(with_lib, out, [], ("strict",), envs=envs, tool=tool, log=lambda _: None)
    assert lib is not None and lib.spec.build == first.spec.build and not lib.reused
    monkeypatch.setenv("EXPORT_MATRIX_TEST_NIGHTLY", (tmp_path / "pruned").as_uri())  # the index dropped that day
    kept = environments.prepare(dated, envs, FailingInstaller(), log=lambda _: None)
    assert kept.reused and kept.path == first.path
    again = sets.prepare(with_lib, out, [], ("strict",), envs=envs, tool=FailingInstaller(), log=lambda _: None)
    assert again is not None and again.reused and again.path == lib.path


def nox_list(torch: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, EXPORT_MATRIX_TORCH=torch)
    command = [sys.executable, "-m", "nox", "--noxfile", str(ROOT / "noxfile.py"), "-l", "--json", "-s", "run"]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


def test_nox_lists_a_run_session_per_channel_word_and_refuses_an_unknown_word_in_one_line() -> None:
    done = nox_list("nightly nightly:2026-01-15 rc")
    assert done.returncode == 0, done.stderr
    assert [(s["call_spec"]["torch"], s["call_spec"]["variant"]) for s in json.loads(done.stdout)] == [
        ("nightly", "nightly-cpu"),
        ("nightly:2026-01-15", "nightly-cpu"),
        ("test", "test-cpu"),
    ]
    bad = nox_list("2.6 nighty")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    (line,) = [line for line in bad.stderr.splitlines() if "nighty" in line]
    assert "unknown torch selection word 'nighty'; known words: quick, aoti, all, latest, nightly" in line
