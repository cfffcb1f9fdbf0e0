"""Removing a build's environments with uv at work: what only they used leaves uv's cache, the other builds' stays."""

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


def imported(python: Path, module: str) -> str:
    """The ``VERSION`` of ``module`` as the environment's interpreter imports it."""
    code = "import %s; print(%s.VERSION)" % (module, module)
    return subprocess.run([str(python), "-c", code], check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.skipif(install.find_uv() is None, reason="needs uv")
def test_uv_cache_keeps_only_what_a_remaining_environment_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache, envs, wheels = tmp_path / "uv-cache", tmp_path / "envs", tmp_path / "wheels"
    monkeypatch.setenv("UV_CACHE_DIR", str(cache))
    monkeypatch.setenv(environments.ENV_DIR_VARIABLE, str(envs))
    monkeypatch.delenv(install.INSTALLER_VARIABLE, raising=False)
    for name, version in (("alone", "1.0"), ("shared", "1.0"), ("shared", "2.0")):
        make_wheel(wheels, name, version)
    uv = install.find_uv()
    assert uv is not None
    new, old = Spec(MATRIX.resolve("2.7.1"), CURRENT), Spec(MATRIX.resolve("2.5.1"), CURRENT)

    def install_into(path: Path, *requirements: str) -> None:
        subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(path)], check=True)
        subprocess.run(
            [uv, "pip", "install", "--quiet", "--offline", "--python", str(environments.python_in(path)),
             "--no-index", "--find-links", str(wheels), *requirements],
            check=True,
        )  # fmt: skip

    install_into(envs / new.name, "alone==1.0", "shared==1.0")
    install_into(envs / old.name, "shared==2.0")
    assert cached(cache, "alone-1.0") and cached(cache, "shared-1.0") and cached(cache, "shared-2.0")

    lines: List[str] = []
    done = removal.remove(new.build, log=lines.append)

    assert done.removed == (new.name,) and done.cleaned == ("alone",) and "shared" in done.kept
    assert not (envs / new.name).exists()
    assert not cached(cache, "alone")
    # The 2.5.1 environment holds shared 2.0, so `uv cache clean` leaves the name alone; the 1.0
    # wheel it unpacked for 2.7.1 alone is pruned, and the one 2.5.1 links stays.
    assert done.pruned == ("shared==1.0",) and done.freed > 0
    assert not cached(cache, "shared-1.0")
    assert cached(cache, "shared-2.0")  # the 2.5.1 environment reinstalls from the cache as before
    assert removal.installed(envs / old.name) == {"shared": "2.0"}
    assert imported(environments.python_in(envs / old.name), "shared") == "2.0"
    assert any(line.startswith("freed ") and "shared==1.0" in line for line in lines)
    # uv's pointer to the pruned wheel went with it: the next install unpacks the wheel again.
    install_into(tmp_path / "again", "shared==1.0")
    assert imported(environments.python_in(tmp_path / "again"), "shared") == "1.0"
