"""Removing a build's environments with uv at work: its packages leave uv's cache, the other builds' stay."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from matrix.envs import environments, install, releases, removal
from matrix.envs.environments import Spec

from conftest import CURRENT, make_wheel

MATRIX = releases.default_matrix()


def cached(cache: Path, name: str) -> List[Path]:
    return [path for path in cache.rglob("*") if path.name.startswith(name)]


@pytest.mark.skipif(install.find_uv() is None, reason="needs uv")
def test_uv_cache_clean_drops_only_what_no_remaining_environment_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, envs, wheels = tmp_path / "uv-cache", tmp_path / "envs", tmp_path / "wheels"
    monkeypatch.setenv("UV_CACHE_DIR", str(cache))
    monkeypatch.setenv(environments.ENV_DIR_VARIABLE, str(envs))
    monkeypatch.delenv(install.INSTALLER_VARIABLE, raising=False)
    for name, version in (("alone", "1.0"), ("shared", "1.0"), ("shared", "2.0")):
        make_wheel(wheels, name, version)
    uv = install.find_uv()
    assert uv is not None
    new, old = Spec(MATRIX.resolve("2.7.1"), CURRENT), Spec(MATRIX.resolve("2.5.1"), CURRENT)
    for spec, requirements in ((new, ["alone==1.0", "shared==1.0"]), (old, ["shared==2.0"])):
        path = envs / spec.name
        subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(path)], check=True)
        subprocess.run(
            [uv, "pip", "install", "--quiet", "--python", str(environments.python_in(path)),
             "--no-index", "--find-links", str(wheels), *requirements],
            check=True,
        )  # fmt: skip
    assert cached(cache, "alone-1.0") and cached(cache, "shared-1.0") and cached(cache, "shared-2.0")

    lines: List[str] = []
    done = removal.remove(new.build, log=lines.append)

    assert done.removed == (new.name,) and done.cleaned == ("alone",) and "shared" in done.kept
    assert not (envs / new.name).exists()
    assert not cached(cache, "alone")
    assert cached(cache, "shared-2.0")  # the 2.5.1 environment reinstalls from the cache as before
    assert removal.installed(envs / old.name) == {"shared": "2.0"}
