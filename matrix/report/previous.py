"""The previous publication of a committed report, read from git history: what ``nox -s publish`` compares with.

A published report folder (``reports/latest``) is committed each time it is published, so its history is
the list of publications. The previous one is the newest commit whose cell table differs from the tables
the new report is built from: publishing new records compares with the report committed now, and
re-rendering the committed report from its own tables compares with the publication before it, never
with itself. Its tables are copied out of git into a folder named ``NAME@COMMIT``, which ``--baseline``
takes (the report names its baseline by that folder's name).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from typing import List, Optional, Sequence

from matrix.records.figures import FILE as FIGURES
from matrix.records.published import CELLS

# What a comparison with a baseline reads: its tables, its figures, and its front page for older figures.
FILES = (CELLS, "transitions.parquet", FIGURES, "index.md")


@dataclass(frozen=True)
class Publication:
    """One commit of a published report folder."""

    commit: str
    date: str  # the commit's date, YYYY-MM-DD


def _git(root: str, *args: str) -> Optional[bytes]:
    try:
        done = subprocess.run(["git", "-C", root, *args], capture_output=True, check=False)
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None


def _top(folder: str) -> Optional[str]:
    found = _git(folder if os.path.isdir(folder) else os.path.dirname(folder) or ".", "rev-parse", "--show-toplevel")
    return found.decode().strip() if found else None


def _blob(path: str) -> Optional[str]:
    """The git object id of a file's contents, as ``git hash-object`` gives it; None where there is no file."""
    if not os.path.isfile(path):
        return None
    found = _git(os.path.dirname(os.path.abspath(path)), "hash-object", os.path.abspath(path))
    return found.decode().strip() if found else None


def find(folder: str, built_from: Sequence[str]) -> Optional[Publication]:
    """The newest commit of ``folder``'s cell table whose contents are not those of a folder in ``built_from``."""
    root = _top(folder)
    if root is None:
        return None
    relative = os.path.relpath(os.path.abspath(os.path.join(folder, CELLS)), root).replace(os.sep, "/")
    own = {blob for blob in (_blob(os.path.join(f, CELLS)) for f in built_from) if blob}
    log = _git(root, "log", "--format=%H %cs", "--", relative)
    if not log:
        return None
    for line in log.decode().splitlines():
        commit, date = line.split()
        blob = _git(root, "rev-parse", "%s:%s" % (commit, relative))
        if blob is None:  # the commit removed the file
            continue
        if blob.decode().strip() not in own:
            return Publication(commit, date)
    return None


def extract(folder: str, publication: Publication, into: str) -> str:
    """Copy the publication's tables, figures and front page into ``into/NAME@COMMIT``; that folder's path."""
    root = _top(folder)
    if root is None:
        raise FileNotFoundError("%s is not in a git checkout" % folder)
    relative = os.path.relpath(os.path.abspath(folder), root).replace(os.sep, "/")
    name = "%s@%s" % (os.path.basename(os.path.normpath(folder)), publication.commit[:7])
    out = os.path.join(into, name)
    os.makedirs(out, exist_ok=True)
    copied: List[str] = []
    for file in FILES:
        data = _git(root, "show", "%s:%s/%s" % (publication.commit, relative, file))
        if data is not None:
            with open(os.path.join(out, file), "wb") as f:
                f.write(data)
            copied.append(file)
    if CELLS not in copied:
        raise FileNotFoundError("%s at %s holds no %s" % (folder, publication.commit[:7], CELLS))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m matrix.report.previous FOLDER INTO [BUILT_FROM...]``: print the baseline folder (its name says
    the commit), or nothing where git history holds no earlier publication."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        print(main.__doc__, file=sys.stderr)
        return 2
    folder, into, built_from = args[0], args[1], args[2:]
    found = find(folder, built_from)
    if found is not None:
        print(extract(folder, found, into))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
