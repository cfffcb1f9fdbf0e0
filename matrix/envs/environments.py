"""Torch environments: one virtual environment per (release, variant, Python), installed once and reused.

An environment holds torch (the exact build), numpy and the release's pins, and nothing
of this project: the worker runs there from a copy on PYTHONPATH (``worker_copy``).
``install`` does the installing.
A marker file in the environment says what it holds, so a re-run installs nothing. An
environment that cannot be installed becomes an ``env-error`` record in the output
folder instead of stopping the matrix. A channel's build (``nightly``) is pinned first to
the build its index offers now (``channels``): its environment is named by that version and
its channel's variant, and holds the wheel the index offers (a candidate rebuilt under its
version is installed again).
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Pattern, Tuple, Union

from ..contract import dependencies, records
from ..contract.requests import LoadRequest, RunRequest
from . import channels, companions, releases
from .builds import Build
from .install import (
    BuildUnavailable,
    Installer,
    InstallError,
    PythonUnavailable,
    Sources,
    WrongTorch,
    installer,
    run_captured,
)
from .pythons import find_interpreter
from .worker_copy import PACKAGE, worker_copy, worker_environ

ENV_DIR_VARIABLE = "EXPORT_MATRIX_ENV_DIR"
MARKER = dependencies.MARKER  # the worker reads what a set added from it

Log = Callable[[str], None]
Request = Union[RunRequest, LoadRequest]


def log_to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Spec:
    """What one environment must hold: a torch build for one Python version, and a case's dependency set.

    The one place that decides which environment a cell needs: a release's base environment
    holds torch and its pins alone; each dependency set (``dependencies.set_key``) has its
    own, with torch pinned to the same build. ``name`` is its folder and record file.
    """

    build: Build
    python: str
    dependency_set: str = ""

    @property
    def name(self) -> str:
        """``torch-2.4.1+cpu_cpu_py3.11`` (``..._deps-1a2b3c4d`` for a set): the record file's name less its suffix."""
        base = records.env_file_name(self.build.torch_version, self.build.variant.name, self.python)[: -len(".jsonl")]
        return base + dependencies.set_suffix(self.dependency_set)

    @property
    def base(self) -> Spec:
        """The release's base environment: torch and its pins alone."""
        return Spec(self.build, self.python)

    @property
    def torch_requirement(self) -> str:
        # PyPI's build has no local tag, and `==2.4.1` would also accept a `2.4.1+cpu` found
        # through pip's find-links; `===` accepts exactly the version string.
        if self.build.variant.local_tag is None:
            return "torch===%s" % self.build.release.version
        return "torch==%s" % self.build.torch_version

    @property
    def requirements(self) -> List[str]:
        """torch's exact build, the series' pins, the set, and the companions' bounds for this series."""
        found = [self.torch_requirement, *self.build.release.requirements, *self.dependencies]
        return found + list(companions.constraints(self.build, self.dependencies))

    @property
    def constraints(self) -> List[str]:
        """What a dependency set may install of the compiled companions: their builds for this torch build."""
        return list(companions.compiled_builds(self.build)) if self.dependency_set else []

    @property
    def dependencies(self) -> Tuple[str, ...]:
        return dependencies.key_requirements(self.dependency_set)


@dataclass(frozen=True)
class Environment:
    """An installed torch environment, and the copy of the worker that runs in it."""

    spec: Spec
    path: Path
    worker: Path
    reused: bool = False
    seconds: float = 0.0

    @property
    def python(self) -> Path:
        return python_in(self.path)

    def worker_command(self, *args: Union[str, Request]) -> List[str]:
        """The command that runs the worker (``run``, ``load``, ``cases``) with this environment's torch.

        A request (``matrix.contract.requests``) stands for its command word and options; a string
        passes as it is (words after a request go to the worker as they are, for it to read or refuse).
        """
        words = [word for arg in args for word in ([arg] if isinstance(arg, str) else arg.command())]
        return [str(self.python), "-m", "matrix.worker", *words]

    def worker_env(self, environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
        return worker_environ(self.worker, environ)


def current_worker() -> Tuple[List[str], Dict[str, str]]:
    """The command and environment that run the worker in this interpreter (its torch, nothing installed)."""
    return [sys.executable, "-m", "matrix.worker"], worker_environ(PACKAGE.parent)


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
        and marker.get("constraints", []) == spec.constraints
        and python_in(path).exists()
        and _torch_present(path, spec)
    )


def of_build(build: Build, envs: Optional[Path] = None) -> List[Path]:
    """The environment folders of ``build`` in ``envs``: its own and its dependency sets', for any Python.

    Matched by the whole folder name (``Spec.name``), so another release's or variant's
    environment, the worker's copies and anything else in the folder never match. A channel's
    word matches every build of the channel's variant it installed (``nightly``), or of its day.
    """
    envs = env_dir() if envs is None else envs
    prefix = re.escape(records.env_file_name(build.torch_version, build.variant.name, "")[: -len(".jsonl")])
    if build.pending:
        day = "" if build.date is None else r"\.dev" + build.date.strftime("%Y%m%d")
        version = r"[^_]*%s\+%s" % (day, re.escape(build.variant.local_tag or ""))
        prefix = re.escape("torch-") + version + re.escape("_%s_py" % build.variant.name)
    return folders(envs, re.compile(prefix + r"\d+\.\d+(?:_deps-[0-9a-f]{8})?"))  # dependencies.set_suffix


def folders(envs: Path, name: Pattern[str]) -> List[Path]:
    """The folders in ``envs`` that ``name`` matches whole: never a link, a file or the worker's copies."""
    try:
        entries = sorted(envs.iterdir())
    except OSError:  # no environments folder yet
        return []
    return [path for path in entries if name.fullmatch(path.name) and path.is_dir() and not path.is_symlink()]


def is_ready(spec: Spec, envs: Optional[Path] = None) -> bool:
    """Whether the environment exists with the right torch: no install needed."""
    path = (env_dir() if envs is None else envs) / spec.name
    return _torch_ready(path, spec, _read_marker(path))


def _distributions(python: Path) -> Dict[str, str]:
    code = (
        "import importlib.metadata as m, json; "
        "print(json.dumps({d.metadata['Name'].lower(): d.version for d in m.distributions() if d.metadata['Name']}))"
    )
    done = run_captured([str(python), "-c", code])
    try:
        found = json.loads(done.stdout) if done.returncode == 0 else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def added_packages(base: Path, python: Path) -> Dict[str, str]:
    """What ``python``'s environment has beyond the base's: distributions (name: version) new or in another version."""
    before, after = _distributions(base), _distributions(python)
    return {name: version for name, version in sorted(after.items()) if before.get(name) != version}


def installed_torch(python: Path) -> str:
    done = run_captured([str(python), "-c", "import importlib.metadata as m; print(m.version('torch'))"])
    return done.stdout.strip() if done.returncode == 0 else ""


def pinned(spec: Spec, envs: Path, log: Log = log_to_stderr) -> Tuple[Spec, Optional[str]]:
    """A channel's spec as the build its index offers now, and that wheel; a spec that is a build, as it is.

    A dated nightly is what it was: an environment that holds it needs no index (which prunes it).
    Raises ``ChannelUnavailable`` naming the word and the index.
    """
    build = spec.build
    if not build.pending:
        if not (spec.dependency_set and build.variant.channel):
            return spec, None
        return spec, _wheel(_read_marker(envs / spec.base.name))  # a set holds its base's wheel
    matrix = releases.default_matrix()
    if build.date is not None:
        for path in of_build(build, envs):
            marker = _read_marker(path)
            if marker.get("python") != spec.python or marker.get("dependency_set"):
                continue
            try:
                kept = replace(spec, build=matrix.pinned(build, str(marker.get("torch"))))
            except releases.ReleaseError:
                continue
            if is_ready(kept.base, envs):
                return kept, _wheel(marker)
    offer = channels.offered(build, spec.python)
    log(
        "%s: the %s channel's index %s offers torch %s for Python %s"
        % (build.label, build.variant.channel, build.variant.index(), offer.version, spec.python)
    )
    return replace(spec, build=matrix.pinned(build, offer.version)), offer.wheel


def _wheel(marker: Mapping[str, object]) -> Optional[str]:
    found = marker.get("torch_wheel")
    return found if isinstance(found, str) else None


def prepare(
    spec: Spec,
    envs: Optional[Path] = None,
    tool: Optional[Installer] = None,
    sources: Optional[Sources] = None,
    force: bool = False,
    log: Log = log_to_stderr,
) -> Environment:
    """The environment for ``spec``: reused when its marker matches, else (re)installed. Raises InstallError.

    A channel's word (``nightly``) is pinned first: the environment's spec is the build it named.
    """
    envs = env_dir() if envs is None else envs
    spec, wheel = pinned(spec, envs, log)
    return _prepare(spec, envs, tool, sources, force, log, wheel)


def _prepare(
    spec: Spec,
    envs: Path,
    tool: Optional[Installer],
    sources: Optional[Sources],
    force: bool,
    log: Log,
    wheel: Optional[str],
) -> Environment:
    path = envs / spec.name
    worker = worker_copy(envs)
    marker = {} if force else _read_marker(path)
    if _torch_ready(path, spec, marker) and (wheel is None or marker.get("torch_wheel") == wheel):
        return Environment(spec, path, worker, reused=True)
    base: Optional[Environment] = None
    if spec.dependency_set:
        # A set's environment takes torch from the same cache; its record lists what the set added to the base.
        base = _prepare(spec.base, envs, tool, sources, False, log, wheel)

    started = time.perf_counter()
    build = spec.build
    if not build.variant.builds(build.release):
        raise BuildUnavailable("the %s variant has no build of torch %s" % (build.variant.name, build.release.version))
    if not build.release.supports(spec.python):
        raise BuildUnavailable(
            "torch %s has no wheels for Python %s (it supports %s)"
            % (build.release.version, spec.python, ", ".join(build.release.pythons))
        )
    refused = companions.unavailable(spec.requirements)
    if refused:
        raise BuildUnavailable(
            "no version of %s is known to work with torch %s (matrix/envs/companions.toml)"
            % (", ".join(refused), build.release.minor)
        )
    tool = installer() if tool is None else tool
    sources = Sources.for_build(build) if sources is None else sources
    interpreter = find_interpreter(spec.python)
    if interpreter is None and tool.name != "uv":  # uv finds (or fetches) interpreters itself
        raise PythonUnavailable("no Python %s interpreter found for %s" % (spec.python, spec.name))
    what = "%s beside torch" % spec.dependency_set if spec.dependency_set else "torch"
    size = "" if spec.dependency_set else " (%s)" % _expected_size(build)
    told = (what, build.torch_version, build.variant.name, spec.python, tool.name, path, size)
    log("installing %s %s (%s) for Python %s with %s into %s%s" % told)
    if hasattr(tool, "echo"):
        tool.echo = log
    if path.exists():  # a half-installed environment has no marker: it is removed, never used
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tool.create(path, interpreter or spec.python)
    try:
        tool.install(python_in(path), spec.requirements, sources, spec.constraints)
    except InstallError as error:
        if build.variant.channel is None:
            raise
        where = "the %s channel's index %s" % (build.variant.channel, build.variant.index())
        raise type(error)("torch %s from %s: %s" % (build.torch_version, where, error), error.output) from error
    found = installed_torch(python_in(path))
    if found != build.torch_version:
        raise WrongTorch("asked for torch %s but the environment has %s" % (build.torch_version, found or "none"))
    seconds = time.perf_counter() - started
    record = dict(
        torch=build.torch_version, variant=build.variant.name, python=spec.python, requirements=spec.requirements,
        constraints=spec.constraints, installer=tool.name, installed_at=now(), seconds=round(seconds, 2),
    )  # fmt: skip
    if build.variant.channel is not None:  # which index, and which of its wheels of that version
        record.update(channel=build.variant.channel, index=build.variant.index(), torch_wheel=wheel)
    if base is not None:
        record["dependency_set"] = spec.dependency_set
        record["added"] = added_packages(base.python, python_in(path))
    with open(path / MARKER, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, sort_keys=True)
    return Environment(spec, path, worker, reused=False, seconds=seconds)


def _expected_size(build: Build) -> str:
    if build.variant.cuda:
        return "a CUDA build: about 2.5-3.5 GB to download when uv's cache does not hold it yet"
    return "a CPU build: about 200 MB to download when uv's cache does not hold it yet"


def now() -> str:
    """The time an environment was installed, or failed to be: UTC, whole seconds."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def driver_visible() -> bool:
    """Whether an NVIDIA driver is present: only then is asking torch about CUDA worth an import."""
    return os.path.exists("/proc/driver/nvidia/version") or shutil.which("nvidia-smi") is not None


def cuda_available(environment: Environment) -> bool:
    """Whether the environment's torch can use a GPU (False for CPU builds, without a driver, or on error)."""
    if not environment.spec.build.variant.cuda or not driver_visible():
        return False
    done = run_captured([str(environment.python), "-c", "import torch; print(torch.cuda.is_available())"])
    return done.returncode == 0 and done.stdout.strip().endswith("True")
