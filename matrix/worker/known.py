"""A run whose every cell is known, answered from the result cache without importing torch.

Importing torch takes a worker 2 to 5 seconds, and a cell's key names the torch build
(``reuse.build_fields``), so a run that reuses every result used to pay that import only to
compute its keys. Instead, the run that does import torch keeps what it learnt about its
environment (its environment record, the build's fields, the capabilities) in the result cache,
under a key made of what the environment holds on disk (:func:`environment_key`):

- torch's ``version.py`` (its hash, size, time and inode: a reinstall changes them) and the
  capability file kept beside the environment (``capabilities.CACHE_NAME``);
- every installed distribution, as ``environment.packages_hash`` names them for a cell's key;
- the interpreter (``sys.version``, its executable and that file's size and time), the
  environment's folder, the machine (``os.uname``, the CPU model) and the GPUs NVML sees;
- the worker's own sources, the environment variables that steer torch, and the run's
  options that its environment record depends on (device, source, variant, dependency set,
  hidden capabilities).

A later run computes that key first. Where the cache holds it, the run's cells get their keys
from the kept build fields, and where every one of them has a result that stands (the same test
as always: ``Batch.reusable``), the run records them without importing torch. Anything else (a
key not found, one cell not known, a GPU device, the aoti stage, ``--artifacts``) means the
ordinary run, which imports torch and computes every key itself: a doubt costs seconds, never a
stale answer. ``tests/integration/test_known.py`` checks that both ways give the same records.

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
KIND = "environment"


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
        "kind": KIND,
        "format": reuse.FORMAT,
        "worker": reuse.worker_fingerprint(),
        "disk": found,
        "run": run,
        "environment": reuse.environment_fields(),
    }
    return reuse.digest(fields)
