"""Installers at work: uv's resolution through pip's configuration, an install's lines as they come."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from matrix.envs import environments, install, pipconfig

from conftest import installers, make_wheel, write


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


@pytest.mark.parametrize("tool", installers(), ids=lambda tool: tool.name)
def test_a_library_pulled_in_indirectly_comes_in_the_constrained_build_or_fails_naming_it(
    tool: install.Installer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # fakelib needs fakevision without naming a build, as timm needs torchvision: the index offers
    # the build for another torch (0.1.0) and the variant's own (0.1.0+cpu).
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "fakevision", "0.1.0")
    make_wheel(wheels, "fakevision", "0.1.0+cpu")
    make_wheel(wheels, "fakelib", "1.0", requires=["fakevision"])
    conf = write(tmp_path / "pip.conf", "[global]\nno-index = true\nfind-links = %s\n" % wheels)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    for variable in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX"):
        monkeypatch.delenv(variable, raising=False)
    sources = install.Sources(pipconfig.current())

    def version_in(venv: Path) -> str:
        code = "import importlib.metadata as m; print(m.version('fakevision'))"
        return subprocess.run([str(environments.python_in(venv)), "-c", code], capture_output=True, text=True).stdout

    tool.create(tmp_path / "venv", sys.executable)
    tool.install(environments.python_in(tmp_path / "venv"), ["fakelib"], sources, ["fakevision==0.1.0+cpu"])
    assert version_in(tmp_path / "venv").strip() == "0.1.0+cpu"

    tool.create(tmp_path / "missing", sys.executable)
    with pytest.raises(install.InstallError) as raised:
        tool.install(environments.python_in(tmp_path / "missing"), ["fakelib"], sources, ["fakevision==0.2.0+cpu"])
    message = str(raised.value)
    assert "fakevision==0.2.0+cpu" in message and "constraints.txt" not in message  # the build, not a scratch file
