"""Env-error records: an environment that cannot be installed becomes a record in the output folder.

The matrix goes on without it, and its reports say which build could not be had and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional

from ..contract import records
from ..contract.schema import SCHEMA_VERSION, first_line
from . import environments
from .environments import Log, Spec, log_to_stderr, now
from .install import OUTPUT_TAIL, Installer, InstallError, Sources


def env_error_file(spec: Spec) -> str:
    return "env-error_%s.jsonl" % spec.name


def env_error_record(spec: Spec, error: InstallError) -> Dict[str, object]:
    cls = type(error)
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "env-error",
        "torch_version": spec.build.torch_version,
        "variant": spec.build.variant.name,
        "python": spec.python,
        "dependency_set": spec.dependency_set or None,
        "error_type": "%s.%s" % (cls.__module__, cls.__qualname__),
        "error_message": first_line(str(error), limit=None) or cls.__name__,
        "installer_output": error.output[-OUTPUT_TAIL:] if error.output else None,
        "finished_at": now(),
    }


def prepare_or_record(
    spec: Spec,
    out: Path,
    envs: Optional[Path] = None,
    tool: Optional[Installer] = None,
    sources: Optional[Sources] = None,
    force: bool = False,
    log: Log = log_to_stderr,
) -> Optional[environments.Environment]:
    """``prepare``, but a failure becomes an env-error record in ``out`` (and None) instead of an exception.

    A successful install removes the record an earlier failure left, so reports do not
    show an environment as both broken and working.
    """
    try:
        environment = environments.prepare(spec, envs, tool, sources, force, log)
    except InstallError as error:
        record_env_error(spec, out, error, log)
        return None
    (Path(out) / env_error_file(spec)).unlink(missing_ok=True)
    return environment


def record_env_error(spec: Spec, out: Path, error: InstallError, log: Log = log_to_stderr) -> None:
    """Write the env-error record of ``spec`` in ``out``, in place of an earlier one."""
    record_path = Path(out) / env_error_file(spec)
    Path(out).mkdir(parents=True, exist_ok=True)
    record_path.unlink(missing_ok=True)
    with records.Writer(str(record_path)) as writer:
        writer.write(env_error_record(spec, error))
    log("could not install %s: %s (recorded in %s)" % (spec.name, error, record_path))
