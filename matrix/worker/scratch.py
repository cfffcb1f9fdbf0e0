"""Where a run's temporary files go: one folder of the run's own, removed when the run ends.

Every process of a ``run`` or ``load`` (cells, fresh loads, compiles, the compilers they start)
makes its temporary files (a compile's build folder, draft_export's trace, a package copied to
be loaded) under the folder :func:`run_folder` makes: it is the temporary folder of every
process forked or started inside it (``tempfile.tempdir`` and ``TMPDIR``). A process killed at
its time limit cannot remove its own files; the run removes the whole folder when it ends. A
run killed outright (SIGKILL, a CI job's limit) leaves its folder behind: the next run on the
same machine removes each such folder whose run is gone. The folder's name says whose it is
(``export-matrix-run-<host>-<process id>-…``): a folder of another host sharing the temporary
folder, or of a process still alive, is never touched. A run ended by SIGTERM unwinds first
(:func:`dies_cleanly`), so that it removes its folder, and what else it made, too.

Standard library only, Python 3.8 syntax: this runs inside every torch environment.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import stat
import tempfile
from typing import Any, Iterator, List, Optional

PREFIX = "export-matrix-run-"
# Variables torch sets to a folder inside the temporary folder on first use (Inductor's compile cache, whose
# default is there): put back as they were, so that nothing after the run points into its removed folder.
SET_INSIDE = ("TORCHINDUCTOR_CACHE_DIR",)


def _host() -> str:
    """This machine's name as a folder name may hold it (no dash: the name's fields are split at dashes)."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname())[:40] or "host"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def stale(base: str) -> List[str]:
    """The folders under ``base`` that runs of this host and user left behind when they were killed."""
    try:
        names = os.listdir(base)
    except OSError:
        return []
    mine = "%s%s-" % (PREFIX, _host())
    found = []
    for name in sorted(names):
        pid = name[len(mine) :].split("-", 1)[0] if name.startswith(mine) else ""
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        path = os.path.join(base, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            found.append(path)
    return found


@contextlib.contextmanager
def run_folder(base: Optional[str] = None) -> Iterator[str]:
    """A new private folder, the temporary folder of this process and of those it starts until the block ends;
    removed then, with everything in it. Folders that killed runs left under ``base`` are removed first."""
    base = base or tempfile.gettempdir()
    for path in stale(base):
        shutil.rmtree(path, ignore_errors=True)
    folder = tempfile.mkdtemp(prefix="%s%s-%d-" % (PREFIX, _host(), os.getpid()), dir=base)
    saved = tempfile.tempdir
    variables = {name: os.environ.get(name) for name in ("TMPDIR",) + SET_INSIDE}
    tempfile.tempdir = folder
    os.environ["TMPDIR"] = folder
    try:
        yield folder
    finally:
        tempfile.tempdir = saved
        for name, value in variables.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(folder, ignore_errors=True)


class Terminated(BaseException):
    """SIGTERM reached the runner: raised where it was, so that cleanup runs as the stack unwinds."""


@contextlib.contextmanager
def dies_cleanly() -> Iterator[None]:
    """Within this block, SIGTERM unwinds the runner (its ``finally`` blocks remove what it made), then ends it
    by SIGTERM still, as its parent expects. Processes forked inside keep the default: they die at once."""
    owner = os.getpid()

    def terminated(signum: int, frame: Any) -> None:
        if os.getpid() != owner:  # a forked child that inherited this handler
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, terminated)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    except Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
