"""The commit of the git checkout this package runs from, read from git's files, without a git process.

Both sides need it: the worker keeps it in each run's environment record (``tool_commit``), so that the records
of a run made by ``run`` or ``check`` say which code made them, and a report's stamp says which code built the
report. It reads ``HEAD``, the branch it names, and ``packed-refs``, in a worktree through its ``commondir``;
outside a checkout (an installed package) the commit is "". Standard library only: the worker runs it on every
Python a torch release supports.

A worker in a release's environment runs from a copy of the package made outside the checkout
(``envs/worker_copy``), so the host hands it the commit in :data:`VARIABLE`; a worker run by hand from the checkout
(``python -m matrix.worker run``) reads its own.
"""

from __future__ import annotations

import os
from typing import Optional

VARIABLE = "EXPORT_MATRIX_TOOL_COMMIT"  # set by the host for the workers it starts


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return ""


def _git_dir(start: str) -> Optional[str]:
    """The git folder of the checkout holding ``start``: ``.git``, or where a worktree's ``.git`` file points."""
    folder = os.path.abspath(start)
    while True:
        dot = os.path.join(folder, ".git")
        if os.path.isdir(dot):
            return dot
        if os.path.isfile(dot):
            line = _read(dot)
            if line.startswith("gitdir:"):
                return os.path.normpath(os.path.join(folder, line[len("gitdir:") :].strip()))
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def commit(start: str = os.path.dirname(__file__)) -> str:
    """The commit the checkout holding ``start`` (by default, this package's) has checked out, 12 hex digits; ""
    where it cannot be read."""
    git = _git_dir(start)
    if git is None:
        return ""
    head = _read(os.path.join(git, "HEAD"))
    if not head.startswith("ref:"):
        return head[:12]
    ref = head[len("ref:") :].strip()
    common = _read(os.path.join(git, "commondir"))
    roots = [git] + ([os.path.normpath(os.path.join(git, common))] if common else [])
    for root in roots:
        found = _read(os.path.join(root, *ref.split("/")))
        if found:
            return found[:12]
        for line in _read(os.path.join(root, "packed-refs")).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] == ref:
                return parts[0][:12]
    return ""


def of_this_run() -> str:
    """The commit of the code that runs this worker: the host's, where it started the worker, else its own."""
    return os.environ.get(VARIABLE) or commit()
