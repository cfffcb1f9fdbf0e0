"""Installers: uv or pip, the package sources they use, and their failures as errors.

uv installs when it is available and pip otherwise. ``Sources`` holds where packages
come from for one build (pip's configuration plus the variant's torch index) and says
it in each installer's terms. A failed install becomes an ``InstallError`` whose class
says whether there was no matching wheel or something else went wrong.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Protocol, Sequence, Tuple

from . import pipconfig
from .builds import Build

INSTALLER_VARIABLE = "EXPORT_MATRIX_INSTALLER"
OUTPUT_TAIL = 4000


class InstallError(Exception):
    """An environment that could not be installed; ``output`` holds the installer's tail."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


class BuildUnavailable(InstallError):
    """No torch wheel of this release and variant for this Python and platform."""


class PythonUnavailable(InstallError):
    """No interpreter for the Python version the environment needs."""


class WrongTorch(InstallError):
    """The installer put a different torch build in the environment than the one asked for."""


@dataclass(frozen=True)
class Sources:
    """Package sources for one build: pip's configuration plus the variant's torch index, or its channel's.

    A channel's index is uv's first, and uv's first-index strategy (asked for, whatever
    ``UV_INDEX_STRATEGY`` says) takes a package from the first index that has it and from no
    other: torch comes from the channel alone, never a same-numbered release from another index
    (dependency confusion in reverse), and what the channel does not mirror comes from the
    others. pip's local wheel folders are left out for a channel's build: they hold releases,
    and uv prefers their wheel to any index's of the same version. pip itself has no order of
    indexes: only uv pins a channel's torch to its index.
    """

    pip: pipconfig.PipConfig = field(default_factory=pipconfig.PipConfig)
    torch_index: Optional[str] = None  # an index holding the variant's builds, searched with the others
    default_index: Optional[str] = None  # replaces the default index (an override of PyPI's address)
    channel: Optional[Tuple[str, str]] = None  # (name, url) of the channel's index torch must come from

    @classmethod
    def for_build(cls, build: Build, environ: Optional[Mapping[str, str]] = None) -> Sources:
        environ = os.environ if environ is None else environ
        pip = pipconfig.current(environ)
        variant = build.variant
        if variant.channel is not None:
            # No local wheel folders; and a configuration without indexes still gets the channel's.
            pip = dataclasses.replace(pip, find_links=(), no_index=False)
            return cls(pip, channel=(variant.name, variant.index(environ)))
        if variant.local_tag is None:
            return cls(pip, None, variant.index(environ) if variant.overridden(environ) else None)
        return cls(pip, variant.index(environ), None)

    def uv_args(self, environ: Optional[Mapping[str, str]] = None) -> List[str]:
        environ = os.environ if environ is None else environ
        args: List[str] = []
        if self.channel:
            # A candidate is rebuilt under its version: uv asks the index again for torch's files.
            args += ["--index-strategy", "first-index", "--index", "%s=%s" % self.channel, "--refresh-package", "torch"]
        elif "UV_INDEX_STRATEGY" not in environ:
            # pip picks the best match across all indexes; uv by default stops at the first index
            # that has the package, so an extra index holding some torch versions would hide the rest.
            args += ["--index-strategy", "unsafe-best-match"]
        if self.torch_index:
            args += ["--index", self.torch_index]
        if not self.default_index:
            return args + self.pip.uv_args()
        args += ["--default-index", self.default_index]  # in place of pip's own
        return args + dataclasses.replace(self.pip, index_url=None).uv_args()

    def pip_args(self) -> List[str]:
        # pip reads its own configuration; only what this project adds goes on the command line.
        args: List[str] = []
        for index in (self.torch_index, self.channel[1] if self.channel else None):
            if index:
                args += ["--extra-index-url", index]
        if self.default_index:
            args += ["--index-url", self.default_index]
        return args


# --- installers ------------------------------------------------------------------------------------


class Installer(Protocol):
    """Creates environments and installs requirements into them."""

    name: str

    def create(self, path: Path, interpreter: str) -> None: ...

    def install(
        self, python: Path, requirements: Sequence[str], sources: Sources, constraints: Sequence[str] = ()
    ) -> str: ...


def run_captured(
    command: List[str], env: Optional[Dict[str, str]] = None, echo: Optional[Callable[[str], None]] = None
) -> subprocess.CompletedProcess:
    """Run a command with its output captured; a command that cannot start is an InstallError.

    ``echo`` also gets each line as it comes (uv's "Downloading torch (846.0MiB)" lines), so
    a long install shows what it is fetching instead of minutes of silence.
    """
    full_env = dict(os.environ)
    full_env.pop("VIRTUAL_ENV", None)  # the target is named explicitly; an active venv must not leak in
    full_env.update(env or {})
    try:
        if echo is None:
            return subprocess.run(command, capture_output=True, text=True, env=full_env)
        lines: List[str] = []
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=full_env
        ) as process:
            assert process.stdout is not None
            for line in process.stdout:
                lines.append(line)
                if line.strip():
                    echo("  " + line.rstrip())
        return subprocess.CompletedProcess(command, process.returncode, "".join(lines), "")
    except OSError as exc:
        raise InstallError("cannot run %s: %s" % (command[0], exc))


def _output(done: subprocess.CompletedProcess) -> str:
    return ((done.stdout or "") + (done.stderr or "")).strip()


COMPILE_BYTECODE = "--compile-bytecode"  # uv's flag; pip compiles by default


class UvInstaller:
    """Installs with uv, translating pip's configuration into uv's flags."""

    name = "uv"

    def __init__(self, uv: str) -> None:
        self.uv = uv
        self.echo: Optional[Callable[[str], None]] = None  # where the online install's lines go as they come

    def create(self, path: Path, interpreter: str) -> None:
        done = run_captured([self.uv, "venv", "--quiet", "--python", interpreter, str(path)])
        if done.returncode != 0:
            raise PythonUnavailable("uv could not create a Python %s environment" % interpreter, _output(done))

    def install(
        self, python: Path, requirements: Sequence[str], sources: Sources, constraints: Sequence[str] = ()
    ) -> str:
        # Bytecode compiled at install, as pip does: where PYTHONDONTWRITEBYTECODE is set (CI runners, container
        # images), Python keeps nothing it compiles, and every process that imports torch would compile it again.
        # Offline first: a release already in uv's cache or in local wheel folders installs
        # without a round trip to any index, and without failing when an index is unreachable.
        env = sources.pip.uv_env()
        with constraint_file(constraints) as given:
            command = [self.uv, "pip", "install", *sources.uv_args(), "--python", str(python), COMPILE_BYTECODE]
            command += [*given, *requirements]
            offline = ""
            if sources.channel is None:  # a channel's index was just asked which build it names: no cache stands in
                done = run_captured(command[:3] + ["--offline"] + command[3:], env)
                if done.returncode == 0:
                    return _output(done)
                offline = _output(done)
            done = run_captured(command, env, self.echo)
        if done.returncode != 0:
            raise classify(_output(done), "uv pip install " + described(requirements, constraints), offline)
        return _output(done)


class PipInstaller:
    """Installs with the standard library's venv and pip, which read their configuration themselves."""

    name = "pip"

    def create(self, path: Path, interpreter: str) -> None:
        done = run_captured([interpreter, "-m", "venv", str(path)])
        if done.returncode != 0:
            raise PythonUnavailable("%s could not create an environment" % interpreter, _output(done))

    def install(
        self, python: Path, requirements: Sequence[str], sources: Sources, constraints: Sequence[str] = ()
    ) -> str:
        with constraint_file(constraints) as given:
            command = [str(python), "-m", "pip", "install", "--disable-pip-version-check", *sources.pip_args()]
            done = run_captured([*command, *given, *requirements])
        if done.returncode != 0:
            raise classify(_output(done), "pip install " + described(requirements, constraints))
        return _output(done)


def described(requirements: Sequence[str], constraints: Sequence[str]) -> str:
    """An install's words for its error: the requirements, and the constraints by content, not by file."""
    text = " ".join(requirements)
    return text + (" (constrained to %s)" % ", ".join(constraints) if constraints else "")


@contextlib.contextmanager
def constraint_file(constraints: Sequence[str]) -> Iterator[List[str]]:
    """``["-c", FILE]`` for pip and uv, FILE holding ``constraints`` one a line; ``[]`` for none."""
    if not constraints:
        yield []
        return
    with tempfile.TemporaryDirectory(prefix="export-matrix-constraints-") as folder:
        path = os.path.join(folder, "constraints.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(c + "\n" for c in constraints))
        yield ["-c", path]


_FOUND: List[Optional[str]] = []  # find_uv's answer, once found
_FINDING = threading.Lock()


def find_uv() -> Optional[str]:
    """The uv executable, or None. Found once, under a lock: ``check`` prepares releases in threads side by side, and
    uv's finder reads ``sysconfig``'s variables, which the first reader fills in place while another thread may
    read them half filled (``"uv" + None``: a harness fault that ended the whole check)."""
    with _FINDING:
        if not _FOUND:
            try:
                import uv  # the uv package on PyPI ships the binary and knows where it is

                _FOUND.append(str(uv.find_uv_bin()))
            except (ImportError, FileNotFoundError):
                _FOUND.append(shutil.which("uv"))
        return _FOUND[0]


def installer(environ: Optional[Mapping[str, str]] = None) -> Installer:
    """uv when available (``EXPORT_MATRIX_INSTALLER=pip`` forces pip)."""
    environ = os.environ if environ is None else environ
    choice = (environ.get(INSTALLER_VARIABLE) or "").strip().lower()
    if choice not in ("", "uv", "pip"):
        raise InstallError("%s must be uv or pip, not %r" % (INSTALLER_VARIABLE, choice))
    uv = find_uv() if choice != "pip" else None
    if choice == "uv" and not uv:
        raise InstallError("%s=uv but no uv executable was found" % INSTALLER_VARIABLE)
    return UvInstaller(uv) if uv else PipInstaller()


_NO_BUILD = (
    "no matching distribution",
    "could not find a version that satisfies",
    "no version of torch",
    "has no wheels with a matching",
    "no wheels with a matching",
    "is not available for",
    "not found in the package registry",
    "were found, but none matched",
    "unsatisfiable",
)


def classify(output: str, what: str, earlier: str = "") -> InstallError:
    """The installer's failure as an error: no matching wheel, or anything else (network, disk)."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    first = next((line for line in lines if line.lower().startswith(("error", "×", "x "))), lines[-1] if lines else "")
    causes = [line for line in lines if line.lower().startswith(("cause:", "because", "╰─▶"))]
    message = first
    if causes:
        message += " (" + causes[-1] + ")"
    tail = (earlier + "\n--- online attempt ---\n" + output if earlier else output)[-OUTPUT_TAIL:]
    if any(marker in output.lower() for marker in _NO_BUILD):
        return BuildUnavailable("no matching wheel: %s" % (message or what), tail)
    return InstallError("%s failed: %s" % (what, message), tail)
