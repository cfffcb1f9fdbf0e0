"""Run one case file in one torch environment and read back its records: what check and bisect share."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .errors import UserError
from .worker import records
from .worker.case import read_info


class CaseFileError(UserError):
    """A case file that check or bisect cannot use; the message names it."""


def validate_case(path: str) -> str:
    """The case's name, or CaseFileError naming the file and what is wrong with it."""
    file = Path(path)
    if not file.is_file():
        raise CaseFileError("%s: no such case file" % path)
    if file.suffix != ".py":
        raise CaseFileError("%s: a case file is a Python module (.py)" % path)
    info = read_info(file, file.stem)
    if info.problem:
        raise CaseFileError(info.problem)
    return info.name


def run_case(
    command: List[str],
    env: Mapping[str, str],
    case: str,
    modes: Sequence[str],
    out: Path,
    timeout: float,
    verbose: bool = False,
    variant: Optional[str] = None,
    jobs: int = 0,
) -> Optional[str]:
    """Run the worker on one case; None when it ran, else what went wrong (its last output line).

    ``env`` is the worker's environment (its PYTHONPATH names the worker's copy).
    ``variant`` is recorded as given: PyPI's builds of older releases report a local tag
    (``2.1.2+cu121``) that the worker would otherwise take for the variant. ``jobs``: cells
    at once in the worker (0: its default), so that releases checked side by side share the cores.
    """
    mode = modes[0] if len(modes) == 1 else "both"
    args = ["run", "--cases", case, "--mode", mode, "--out", str(out), "--force", "--timeout", str(timeout)]
    args += ["--progress", "lines" if verbose else "none"]
    if variant:
        args += ["--variant", variant]
    if jobs:
        args += ["--jobs", str(jobs)]
    try:
        done = subprocess.run(
            command + args, capture_output=not verbose, text=True, env=dict(env), timeout=timeout * len(modes) + 600
        )
    except subprocess.TimeoutExpired:
        return "the worker did not finish in time"
    if done.returncode == 0:
        return None
    lines = [line for line in ((done.stderr or "") + (done.stdout or "")).splitlines() if line.strip()]
    return "export-matrix run exited with %d%s" % (done.returncode, (": " + lines[-1]) if lines else "")


def read_folder(folder: Path) -> List[Dict[str, Any]]:
    """Every record in a folder's record files."""
    found: List[Dict[str, Any]] = []
    if folder.is_dir():
        for path in records.iter_files(str(folder)):
            found.extend(records.read(path)[0])
    return found
