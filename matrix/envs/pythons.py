"""Python interpreters: which Python an environment of a release gets, and where its interpreter is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Optional

from .builds import Release

PYTHON_VARIABLE = "EXPORT_MATRIX_PYTHON"


def current_python() -> str:
    return "%d.%d" % sys.version_info[:2]


def _reports(executable: str, python: str) -> bool:
    try:
        done = subprocess.run(
            [executable, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip() == python


def find_interpreter(python: str, environ: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """An interpreter of this Python version: the running one, ``pythonX.Y`` on PATH, or a pyenv install."""
    environ = os.environ if environ is None else environ
    if python == current_python():
        return sys.executable
    candidates = []
    on_path = shutil.which("python" + python)
    if on_path:
        candidates.append(on_path)
    pyenv = Path(environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    if pyenv.is_dir():
        installs = sorted(pyenv.glob(python + ".*"), key=lambda p: [int(x) for x in p.name.split(".") if x.isdigit()])
        candidates += [str(p / "bin" / ("python" + python)) for p in reversed(installs)]
    for candidate in candidates:
        # pyenv shims exist for every installed version but fail unless it is activated.
        if _reports(candidate, python):
            return candidate
    return None


def default_python(release: Release, environ: Optional[Mapping[str, str]] = None) -> str:
    """``EXPORT_MATRIX_PYTHON``, else this interpreter's version when the release supports it, else the newest found."""
    environ = os.environ if environ is None else environ
    if environ.get(PYTHON_VARIABLE):
        return environ[PYTHON_VARIABLE]
    if release.supports(current_python()):
        return current_python()
    for python in reversed(release.pythons):
        if find_interpreter(python, environ):
            return python
    return release.pythons[-1]
