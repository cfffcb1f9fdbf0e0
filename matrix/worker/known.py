"""The key of what a run learnt of its environment: made of what the environment holds on disk, read without torch.

A run or a load that imports torch keeps its environment's facts under this key (:mod:`.cell_cache`,
:mod:`.load_cache`); a later one computes it first, without importing torch, and finds them.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import os
import platform
import sys
from typing import Any, Dict, Optional

from . import gpu, reuse
from .capabilities import cache_path
from .environment import cpu_name, packages_hash, torch_folders

# The result cache's kind for what a run learnt about its environment (beside "cell" and "load").
ENVIRONMENT_KIND = "environment"


def _stat(path: str) -> Optional[Dict[str, Any]]:
    """A file's content hash and what a rewrite changes (size, time, inode); None where it cannot be read."""
    digest = reuse.file_hash(path)
    if digest is None:
        return None
    status = os.stat(path)
    return {"sha256": digest, "size": status.st_size, "mtime_ns": status.st_mtime_ns, "inode": status.st_ino}


def disk() -> Optional[Dict[str, Any]]:
    """What this interpreter's environment holds on disk, read without importing torch; None where torch's
    files cannot be found or read (then nothing is answered from the cache)."""
    folders = torch_folders()
    if len(folders) != 1:
        return None
    version = _stat(os.path.join(folders[0], "version.py"))
    if version is None:
        return None
    executable = os.path.realpath(sys.executable)
    try:
        interpreter = os.stat(executable)
    except OSError:
        return None
    seen = gpu.facts()
    return {
        "torch": os.path.realpath(folders[0]),
        "version.py": version,
        "capabilities": _stat(cache_path()),  # None until a run detected them: that run imports torch anyway
        "packages": packages_hash(),
        "prefix": os.path.realpath(sys.prefix),
        "python": sys.version,
        "executable": [executable, interpreter.st_size, interpreter.st_mtime_ns],
        "uname": list(os.uname()),
        "machine": platform.machine(),
        "cpu": cpu_name(),
        "gpus": [int(seen.get("gpu_count") or 0), gpu.identity(seen)],
    }


def environment_key(run: Dict[str, Any]) -> Optional[str]:
    """The key of this environment's kept facts for a run with ``run``'s options; None where it cannot be had."""
    found = disk()
    if found is None:
        return None
    fields = {
        "kind": ENVIRONMENT_KIND,
        "format": reuse.FORMAT,
        "worker": reuse.worker_fingerprint(),
        "disk": found,
        "run": run,
        "environment": reuse.environment_fields(),
    }
    return reuse.digest(fields)
