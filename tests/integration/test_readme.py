"""The README as a new user follows it: the install line works, the sessions it names exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import List

from conftest import ROOT

README = ROOT / "README.md"


def quick_start() -> List[str]:
    """The commands of the Quick start's first code block."""
    section = README.read_text().split("## Quick start\n", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def test_every_nox_session_the_readme_names_exists() -> None:
    named = set(re.findall(r"nox -s ([a-z_]+)\b", README.read_text()))
    listed = subprocess.run(
        [sys.executable, "-m", "nox", "--noxfile", str(ROOT / "noxfile.py"), "-l"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    sessions = {
        re.split(r"[ (]", line[2:], maxsplit=1)[0] for line in listed.stdout.splitlines() if line[:2] in ("* ", "- ")
    }
    assert named and named <= sessions, named - sessions


def test_the_install_line_puts_export_matrix_on_path_in_a_fresh_venv(tmp_path: Path) -> None:
    # A copy of what the install reads, so the checkout gets no build files.
    tree = tmp_path / "checkout"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "matrix", tree / "matrix", ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    bin_dir = venv / "bin"
    env = dict(os.environ, PATH=os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    env.pop("PYTHONPATH", None)
    install = quick_start()[1].split()
    assert install == ["pip", "install", "-e", "."]
    # --no-deps: `export-matrix --help` needs none of them. The build uses this interpreter's
    # setuptools when it can build wheels itself (no download); else pip fetches one as usual.
    building = dict(env, PYTHONPATH=sysconfig.get_paths()["purelib"])
    flags = ["--no-deps"]
    probe = "import setuptools.command.bdist_wheel"
    if subprocess.run([str(bin_dir / "python"), "-c", probe], env=building, capture_output=True).returncode == 0:
        flags.append("--no-build-isolation")
    else:
        building = env
    done = subprocess.run(
        [str(bin_dir / "python"), "-m", *install, *flags],
        cwd=tree, env=building, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    found = shutil.which("export-matrix", path=env["PATH"])
    assert found and Path(found).parent == bin_dir
    helped = subprocess.run(["export-matrix", "--help"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert helped.returncode == 0, helped.stderr
    assert "usage: export-matrix" in helped.stdout
    assert all(command in helped.stdout for command in ("run", "report", "check", "bisect"))
