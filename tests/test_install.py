"""Installers: the sources each installer is told about, uv's resolution through pip's configuration, failures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_pipconfig import make_wheel, write

from matrix.envs import environments, install, pipconfig, releases
from matrix.envs.install import Sources

MATRIX = releases.default_matrix()


def test_variant_index_goes_before_pip_config_and_can_be_overridden() -> None:
    pip = pipconfig.PipConfig(index_url="https://mirror.example/simple", find_links=("/w",))
    build = MATRIX.resolve("2.5.1+cpu")
    official = Sources.for_build(build, {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": pip.index_url or ""})
    assert official.torch_index == "https://download.pytorch.org/whl/cpu"
    assert official.uv_args({}) == [
        "--index-strategy", "unsafe-best-match",
        "--extra-index-url", "https://download.pytorch.org/whl/cpu",
        "--index-url", "https://mirror.example/simple",
    ]  # fmt: skip
    mirrored = Sources.for_build(build, {"PIP_CONFIG_FILE": os.devnull, "EXPORT_MATRIX_INDEX_URL_CPU": "file:///m"})
    assert mirrored.torch_index == "file:///m"
    assert mirrored.pip_args() == ["--extra-index-url", "file:///m"]
    # A user who chose uv's index strategy keeps it.
    assert "--index-strategy" not in Sources(pip).uv_args({"UV_INDEX_STRATEGY": "first-index"})


def test_pypi_override_replaces_the_default_index_only() -> None:
    build = MATRIX.resolve("2.5.1")
    environ = {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": "https://mirror.example/simple"}
    assert Sources.for_build(build, environ).uv_args({})[2:] == ["--index-url", "https://mirror.example/simple"]
    environ["EXPORT_MATRIX_PYPI_INDEX_URL"] = "https://other.example/simple"
    sources = Sources.for_build(build, environ)
    assert sources.torch_index is None
    assert sources.uv_args({})[2:] == ["--index-url", "https://other.example/simple"]


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


@pytest.mark.skipif(install.find_uv() is None, reason="needs uv")
def test_uv_finds_an_exact_local_build_through_translated_pip_config(tmp_path: Path) -> None:
    """The point of the translation: uv installs what pip's find-links and extra indexes offer.

    An extra index holding only another torch version must not hide the find-links build
    (uv's first-index strategy would), and PyPI's build (===) must not pick the +cpu one.
    """
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "torch", "9.9.9+cpu")
    make_wheel(wheels, "torch", "9.9.9")
    other = tmp_path / "index" / "files"
    make_wheel(other, "torch", "9.9.8")
    page = tmp_path / "index" / "simple" / "torch" / "index.html"
    write(page, '<a href="../../files/torch-9.9.8-py3-none-any.whl">torch-9.9.8-py3-none-any.whl</a>\n')
    conf = write(
        tmp_path / "pip.conf",
        "[global]\nfind-links = %s\nextra-index-url = %s\n" % (wheels, (tmp_path / "index" / "simple").as_uri()),
    )
    config = pipconfig.load({"PIP_CONFIG_FILE": str(conf), "XDG_CONFIG_DIRS": str(tmp_path)}, home=tmp_path)
    sources = install.Sources(config)
    uv = install.find_uv()
    assert uv is not None
    subprocess.run([uv, "venv", "--quiet", "--python", sys.executable, str(tmp_path / "venv")], check=True)
    python = environments.python_in(tmp_path / "venv")

    def resolve(requirement: str) -> str:
        done = subprocess.run(
            [
                uv,
                "pip",
                "install",
                "--dry-run",
                "--offline",
                "--python",
                str(python),
                *sources.uv_args({}),
                requirement,
            ],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        return done.stderr + done.stdout

    assert "+ torch==9.9.9+cpu" in resolve("torch==9.9.9+cpu")
    plain = resolve("torch===9.9.9")
    assert "+ torch==9.9.9" in plain and "+cpu" not in plain
    assert "+ torch==9.9.8" in resolve("torch==9.9.8")


def test_an_install_shows_its_lines_as_they_come_and_keeps_them_for_the_error() -> None:
    shown: list = []
    script = (
        "import sys; print('Resolved 1 package'); print('Downloading torch (846.0MiB)', file=sys.stderr); sys.exit(1)"
    )
    done = install.run_captured([sys.executable, "-c", script], echo=shown.append)
    assert shown == ["  Resolved 1 package", "  Downloading torch (846.0MiB)"]
    assert done.returncode == 1 and "Downloading torch" in done.stdout
