"""Installers: the sources each installer is told about, the installer's choice, failures classified."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from matrix.envs import install, pipconfig, releases
from matrix.envs.install import Sources

MATRIX = releases.default_matrix()


def test_variant_index_goes_before_pip_config_and_can_be_overridden() -> None:
    pip = pipconfig.PipConfig(index_url="https://mirror.example/simple", find_links=("/w",))
    build = MATRIX.resolve("2.5.1+cpu")
    official = Sources.for_build(build, {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": pip.index_url or ""})
    assert official.torch_index == "https://download.pytorch.org/whl/cpu"
    assert official.uv_args({}) == [
        "--index-strategy", "unsafe-best-match",
        "--index", "https://download.pytorch.org/whl/cpu",
        "--default-index", "https://mirror.example/simple",
    ]  # fmt: skip
    mirrored = Sources.for_build(build, {"PIP_CONFIG_FILE": os.devnull, "EXPORT_MATRIX_INDEX_URL_CPU": "file:///m"})
    assert mirrored.torch_index == "file:///m"
    assert mirrored.pip_args() == ["--extra-index-url", "file:///m"]
    # A user who chose uv's index strategy keeps it.
    assert "--index-strategy" not in Sources(pip).uv_args({"UV_INDEX_STRATEGY": "first-index"})


def test_pypi_override_replaces_the_default_index_only() -> None:
    build = MATRIX.resolve("2.5.1")
    environ = {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": "https://mirror.example/simple"}
    assert Sources.for_build(build, environ).uv_args({})[2:] == ["--default-index", "https://mirror.example/simple"]
    environ["EXPORT_MATRIX_PYPI_INDEX_URL"] = "https://other.example/simple"
    sources = Sources.for_build(build, environ)
    assert sources.torch_index is None
    assert sources.uv_args({})[2:] == ["--default-index", "https://other.example/simple"]


def test_installer_messages_are_classified() -> None:
    uv_output = (
        "Using Python 3.12.1 environment at: /e\n  × No solution found when resolving dependencies:\n"
        "  ╰─▶ Because torch==2.1.2 has no wheels with a matching Python version tag (e.g., `cp312`)\n"
    )
    error = install.classify(uv_output, "uv pip install torch===2.1.2")
    assert isinstance(error, install.BuildUnavailable)
    assert "No solution found" in str(error) and "cp312" in str(error)
    network = install.classify("error: Request failed after 3 retries\n  cause: dns error\n", "uv pip install x")
    assert type(network) is install.InstallError
    assert str(network) == "uv pip install x failed: error: Request failed after 3 retries (cause: dns error)"


def test_installer_choice_follows_the_variable() -> None:
    assert install.installer({install.INSTALLER_VARIABLE: "pip"}).name == "pip"
    if install.find_uv():
        assert install.installer({}).name == "uv"
    with pytest.raises(install.InstallError, match="must be uv or pip"):
        install.installer({install.INSTALLER_VARIABLE: "conda"})


def test_uv_compiles_the_bytecode_of_what_it_installs_as_pip_does(monkeypatch: pytest.MonkeyPatch) -> None:
    commands: List[List[str]] = []

    def run(command: List[str], env: Optional[Dict[str, str]] = None, echo: object = None) -> object:
        commands.append(command)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(install, "run_captured", run)
    install.UvInstaller("uv").install(Path("/e/bin/python"), ["torch==9.9.9"], Sources(), constraints=["numpy<2"])
    install.PipInstaller().install(Path("/e/bin/python"), ["torch==9.9.9"], Sources())
    uv, pip = commands
    assert uv[:3] == ["uv", "pip", "install"] and install.COMPILE_BYTECODE in uv and uv[-1] == "torch==9.9.9"
    assert install.COMPILE_BYTECODE not in pip  # pip compiles by default


def test_uv_is_found_once_however_many_threads_ask_at_the_same_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """check prepares releases in threads: each asked uv's finder, which reads sysconfig's variables while the first
    reader fills them in place, and one thread read them half filled. The finder now runs once, under a lock."""
    import sys
    import threading
    import time
    import types

    calls: List[int] = []

    def find_uv_bin() -> str:
        calls.append(1)
        time.sleep(0.05)  # long enough for every other thread to ask meanwhile
        return "/opt/uv/bin/uv"

    monkeypatch.setitem(sys.modules, "uv", types.SimpleNamespace(find_uv_bin=find_uv_bin))
    monkeypatch.setattr(install, "_FOUND", [], raising=False)
    found: List[object] = []
    threads = [threading.Thread(target=lambda: found.append(install.find_uv())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == ["/opt/uv/bin/uv"] * 8 and len(calls) == 1
