"""The worker's copy: the modules that run inside an environment, copied once per hash of their sources.

Environments run the worker from this copy on ``PYTHONPATH``: nothing of the project is installed
into them, so editing the host side needs no reinstall, and a run in progress is not disturbed by
edits to the checkout.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Dict, List, Mapping, Optional

from .. import __version__
from ..contract import checkout

PACKAGE = Path(__file__).resolve().parent.parent

# What runs inside an environment: the package's top module, the contract between host and worker
# (standard library only) and the worker itself. tests/unit/test_syntax.py checks that the copy holds
# every module the worker imports, and pyproject.toml holds these folders to Python 3.8's syntax.
SHIPPED_PACKAGES = ("contract", "worker")


def worker_files(package: Path) -> List[Path]:
    files = [package / "__init__.py"]
    for folder in SHIPPED_PACKAGES:
        files += sorted(p for p in (package / folder).glob("*.py"))
    return files


def worker_fingerprint(package: Path) -> str:
    """A hash of the worker's sources: a new copy of the worker is made when they change."""
    digest = hashlib.sha256(__version__.encode())
    for path in worker_files(package):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def worker_copy(envs: Path, package: Optional[Path] = None) -> Path:
    """A folder to put on PYTHONPATH that holds this version of the worker, made once per fingerprint."""
    package = PACKAGE if package is None else package
    folder = envs / ".worker" / worker_fingerprint(package)
    if (folder / "matrix" / "worker" / "__main__.py").is_file():
        return folder
    envs.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".worker-", dir=envs))
    try:
        for path in worker_files(package):
            target = staging / "matrix" / path.relative_to(package)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            staging.rename(folder)
        except OSError:  # another process made the same copy first
            pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def worker_environ(path: Path, environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The process environment of a worker run from ``path``: an inherited PYTHONPATH would leak host packages."""
    env = dict(os.environ if environ is None else environ)
    env["PYTHONPATH"] = str(path)
    env[checkout.VARIABLE] = checkout.commit()  # the copy lies outside the checkout: the run's records cite this
    env.setdefault("PYTHONWARNINGS", "ignore")
    return env
