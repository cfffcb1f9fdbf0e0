"""Torch environments: one virtual environment per (release, variant, Python), installed once and reused.

An environment holds torch (the exact build), numpy and the release's pins, and the
worker (this project, installed without dependencies); ``install`` does the installing.
A marker file in the environment says what it holds, so a re-run installs nothing. An
environment that cannot be installed becomes an ``env-error`` record in the output
folder instead of stopping the matrix.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional

from .. import __version__
from ..worker import records
from .install import (
    OUTPUT_TAIL,
    PROJECT,
    BuildUnavailable,
    Installer,
    InstallError,
    PythonUnavailable,
    Sources,
    WrongTorch,
    installer,
    run_captured,
)
from .releases import Build, Release

ENV_DIR_VARIABLE = "EXPORT_MATRIX_ENV_DIR"
PYTHON_VARIABLE = "EXPORT_MATRIX_PYTHON"
MARKER = "export-matrix-env.json"
ROOT = Path(__file__).resolve().parent.parent.parent

Log = Callable[[str], None]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Spec:
    """What one environment must hold: a torch build for one Python version."""

    build: Build
    python: str

    @property
    def name(self) -> str:
        """``torch-2.4.1+cpu_cpu_py3.11``: the record file's name without its suffix."""
        return records.env_file_name(self.build.torch_version, self.build.variant.name, self.python)[: -len(".jsonl")]

    @property
    def torch_requirement(self) -> str:
        # PyPI's build has no local tag, and `==2.4.1` would also accept a `2.4.1+cpu` found
        # through pip's find-links; `===` accepts exactly the version string.
        if self.build.variant.local_tag is None:
            return "torch===%s" % self.build.release.version
        return "torch==%s" % self.build.torch_version

    @property
    def requirements(self) -> List[str]:
        return [self.torch_requirement, *self.build.release.requirements]


@dataclass(frozen=True)
class Environment:
    """An installed torch environment."""

    spec: Spec
    path: Path
    reused: bool = False
    seconds: float = 0.0

    @property
    def python(self) -> Path:
        return python_in(self.path)

    def worker_command(self, *args: str) -> List[str]:
        """The command that runs ``export-matrix`` with this environment's torch."""
        return [str(self.python), "-m", "matrix", *args]


def python_in(path: Path) -> Path:
    return path / "Scripts" / "python.exe" if os.name == "nt" else path / "bin" / "python"


def env_dir(environ: Optional[Mapping[str, str]] = None) -> Path:
    """Where environments live: ``EXPORT_MATRIX_ENV_DIR``, else the user's cache folder.

    A cache folder next to uv's own keeps both on one file system, so uv can hardlink
    wheels from its cache instead of copying gigabytes per environment.
    """
    environ = os.environ if environ is None else environ
    if environ.get(ENV_DIR_VARIABLE):
        return Path(environ[ENV_DIR_VARIABLE]).expanduser()
    if os.name == "nt":
        base = Path(environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "torch-export-matrix" / "envs"


# --- Python interpreters ------------------------------------------------------------------------


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


# --- the project itself ------------------------------------------------------------------------------


def project_root() -> Optional[Path]:
    """The source tree this module runs from, when it is a checkout (and not an installed copy)."""
    pyproject = ROOT / "pyproject.toml"
    if pyproject.is_file() and 'name = "%s"' % PROJECT in pyproject.read_text(encoding="utf-8"):
        return ROOT
    return None


def project_fingerprint(root: Optional[Path] = None) -> str:
    """A hash of the worker's sources: the project is reinstalled in an environment when it changes."""
    root = ROOT if root is None else root
    digest = hashlib.sha256(__version__.encode())
    # Only what runs inside an environment: edits to host-side modules need no reinstall.
    package = root / "matrix"
    files = [root / "pyproject.toml", package / "__init__.py", package / "__main__.py", package / "cli.py"]
    files += sorted(p for p in (package / "worker").rglob("*.py") if "__pycache__" not in p.parts)
    for path in files:
        if path.is_file():
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


SNAPSHOT_PYPROJECT = """[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "%s"
version = "%s"

[tool.setuptools.packages.find]
include = ["matrix*"]
"""


def project_source(envs: Path, fingerprint: str) -> Path:
    """A source tree to build the project's wheel from: the checkout, or a copy of the installed package.

    An installed copy (``pip install torch-export-matrix``) has no source tree, so its
    package is copied next to a minimal pyproject.toml and built like a checkout.
    """
    root = project_root()
    if root is not None:
        return root
    folder = envs / ".project-src" / fingerprint
    if not (folder / "pyproject.toml").is_file():
        envs.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".project-src-", dir=envs))
        shutil.copytree(ROOT / "matrix", staging / "matrix", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (staging / "pyproject.toml").write_text(SNAPSHOT_PYPROJECT % (PROJECT, __version__), encoding="utf-8")
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            staging.rename(folder)
        except OSError:  # another process made the same copy first
            shutil.rmtree(staging, ignore_errors=True)
    return folder


def _project_wheel(tool: Installer, root: Path, fingerprint: str, envs: Path, sources: Sources, python: Path) -> str:
    """The project's wheel for this fingerprint, built once and shared by every environment."""
    folder = envs / ".project" / fingerprint
    wheels = sorted(folder.glob("*.whl")) if folder.is_dir() else []
    if wheels:
        return str(wheels[0])
    envs.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".project-", dir=envs))
    try:
        tool.build_wheel(root, staging, sources, python)
        folder.parent.mkdir(parents=True, exist_ok=True)
        try:
            staging.rename(folder)
        except OSError:  # another process finished the same build first
            pass
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    wheels = sorted(folder.glob("*.whl"))
    if not wheels:
        raise InstallError("building the %s wheel left no .whl in %s" % (PROJECT, folder))
    return str(wheels[0])


# --- preparing an environment ---------------------------------------------------------------------


def _read_marker(path: Path) -> Dict[str, object]:
    try:
        with open(path / MARKER, encoding="utf-8") as f:
            marker = json.load(f)
    except (OSError, ValueError):
        return {}
    return marker if isinstance(marker, dict) else {}


def _torch_present(path: Path, spec: Spec) -> bool:
    if os.name == "nt":
        site = path / "Lib" / "site-packages"
    else:
        site = path / "lib" / ("python" + spec.python) / "site-packages"
    return (site / ("torch-%s.dist-info" % spec.build.torch_version)).is_dir()


def _torch_ready(path: Path, spec: Spec, marker: Mapping[str, object]) -> bool:
    return (
        marker.get("torch") == spec.build.torch_version
        and marker.get("requirements") == spec.requirements
        and python_in(path).exists()
        and _torch_present(path, spec)
    )


def is_ready(spec: Spec, envs: Optional[Path] = None) -> bool:
    """Whether the environment exists with the right torch and the current worker: no install needed."""
    path = (env_dir() if envs is None else envs) / spec.name
    marker = _read_marker(path)
    return _torch_ready(path, spec, marker) and marker.get("project") == project_fingerprint()


def installed_torch(python: Path) -> str:
    done = run_captured([str(python), "-c", "import importlib.metadata as m; print(m.version('torch'))"])
    return done.stdout.strip() if done.returncode == 0 else ""


def prepare(
    spec: Spec,
    envs: Optional[Path] = None,
    tool: Optional[Installer] = None,
    sources: Optional[Sources] = None,
    force: bool = False,
    log: Log = _stderr,
) -> Environment:
    """The environment for ``spec``: reused when its marker matches, else (re)installed. Raises InstallError."""
    envs = env_dir() if envs is None else envs
    path = envs / spec.name
    fingerprint = project_fingerprint()
    marker = {} if force else _read_marker(path)
    torch_ok = _torch_ready(path, spec, marker)
    if torch_ok and marker.get("project") == fingerprint:
        return Environment(spec, path, reused=True)

    started = time.perf_counter()
    build = spec.build
    if not build.variant.builds(build.release):
        raise BuildUnavailable("the %s variant has no build of torch %s" % (build.variant.name, build.release.version))
    if not build.release.supports(spec.python):
        raise BuildUnavailable(
            "torch %s has no wheels for Python %s (it supports %s)"
            % (build.release.version, spec.python, ", ".join(build.release.pythons))
        )
    tool = installer() if tool is None else tool
    sources = Sources.for_build(build) if sources is None else sources
    if marker.get("installer") != tool.name:
        torch_ok = False  # uv makes environments without pip: another installer starts afresh
    if not torch_ok:
        interpreter = find_interpreter(spec.python)
        if interpreter is None and tool.name != "uv":  # uv finds (or fetches) interpreters itself
            raise PythonUnavailable("no Python %s interpreter found for %s" % (spec.python, spec.name))
        log(
            "installing torch %s (%s) for Python %s with %s into %s"
            % (build.torch_version, build.variant.name, spec.python, tool.name, path)
        )
        if path.exists():
            shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tool.create(path, interpreter or spec.python)
        tool.install(python_in(path), spec.requirements, sources)
        found = installed_torch(python_in(path))
        if found != build.torch_version:
            raise WrongTorch("asked for torch %s but the environment has %s" % (build.torch_version, found or "none"))
    wheel = _project_wheel(tool, project_source(envs, fingerprint), fingerprint, envs, sources, python_in(path))
    tool.install_wheel(python_in(path), wheel, sources)
    seconds = time.perf_counter() - started
    record = {
        "torch": build.torch_version,
        "variant": build.variant.name,
        "python": spec.python,
        "requirements": spec.requirements,
        "project": fingerprint,
        "installer": tool.name,
        "installed_at": _now(),
        "seconds": round(seconds, 2),
    }
    with open(path / MARKER, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, sort_keys=True)
    return Environment(spec, path, reused=False, seconds=seconds)


# --- env-error records ------------------------------------------------------------------------------


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def env_error_file(spec: Spec) -> str:
    return "env-error_" + records.env_file_name(spec.build.torch_version, spec.build.variant.name, spec.python)


def env_error_record(spec: Spec, error: InstallError) -> Dict[str, object]:
    cls = type(error)
    message = str(error).strip().splitlines()
    return {
        "schema_version": records.SCHEMA_VERSION,
        "kind": "env-error",
        "torch_version": spec.build.torch_version,
        "variant": spec.build.variant.name,
        "python": spec.python,
        "error_type": "%s.%s" % (cls.__module__, cls.__qualname__),
        "error_message": message[0] if message else cls.__name__,
        "installer_output": error.output[-OUTPUT_TAIL:] if error.output else None,
        "finished_at": _now(),
    }


def prepare_or_record(
    spec: Spec,
    out: Path,
    envs: Optional[Path] = None,
    tool: Optional[Installer] = None,
    sources: Optional[Sources] = None,
    force: bool = False,
    log: Log = _stderr,
) -> Optional[Environment]:
    """``prepare``, but a failure becomes an env-error record in ``out`` (and None) instead of an exception.

    A successful install removes the record an earlier failure left, so reports do not
    show an environment as both broken and working.
    """
    record_path = Path(out) / env_error_file(spec)
    try:
        environment = prepare(spec, envs, tool, sources, force, log)
    except InstallError as error:
        Path(out).mkdir(parents=True, exist_ok=True)
        record_path.unlink(missing_ok=True)
        with records.Writer(str(record_path)) as writer:
            writer.write(env_error_record(spec, error))
        log("could not install %s: %s (recorded in %s)" % (spec.name, error, record_path))
        return None
    record_path.unlink(missing_ok=True)
    return environment


# --- after installing ---------------------------------------------------------------------------------


def driver_visible() -> bool:
    """Whether an NVIDIA driver is present: only then is asking torch about CUDA worth an import."""
    return os.path.exists("/proc/driver/nvidia/version") or shutil.which("nvidia-smi") is not None


def cuda_available(environment: Environment) -> bool:
    """Whether the environment's torch can use a GPU (False for CPU builds, without a driver, or on error)."""
    if not environment.spec.build.variant.cuda or not driver_visible():
        return False
    done = run_captured([str(environment.python), "-c", "import torch; print(torch.cuda.is_available())"])
    return done.returncode == 0 and done.stdout.strip().endswith("True")
