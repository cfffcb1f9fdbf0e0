"""The environment a worker runs in: the installed torch build, read without importing it, and its record."""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import sys
from typing import Any, Dict, List

from ..contract import checkout
from ..contract.errors import UserError
from ..contract.schema import SCHEMA_VERSION, now

RUNNER_VERSION = "1"


def torch_folders() -> List[str]:
    """The folders of the torch package this interpreter would import, found without importing it; [] for none."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    return list(spec.submodule_search_locations or []) if spec is not None else []


def installed_torch_version() -> str:
    """torch's ``__version__`` without importing torch (seconds saved when there is nothing to run).

    Read from torch's own ``version.py``, not from its package metadata: PyPI's builds of
    older releases call themselves ``2.1.2+cu121`` at run time but ``2.1.2`` in metadata.
    """
    import re

    folders = torch_folders()
    if not folders:
        raise UserError(
            "torch is not installed in this interpreter (%s); run the matrix with `nox -s run`, which installs"
            " each release, or install torch here" % sys.executable
        )
    for folder in folders:
        try:
            with open(os.path.join(folder, "version.py"), encoding="utf-8") as f:
                found = re.search(r"^__version__(?:\s*:\s*str)?\s*=\s*['\"]([^'\"]+)['\"]", f.read(), re.M)
        except OSError:
            continue
        if found:
            return found.group(1)
    import torch

    return str(torch.__version__)


def variant_of(torch_version: str) -> str:
    return torch_version.split("+", 1)[1] if "+" in torch_version else "pypi"


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.lru_cache(maxsize=None)  # the environment record and each result's key ask for it: scan once
def packages_hash() -> str:
    """A hash of every distribution installed in this environment's site-packages: name and version.

    Read from the site-packages folders, not from ``sys.path``: importing some packages adds
    folders to ``sys.path`` (setuptools puts its vendored packages there), which would make the
    hash depend on what this process imported before, and a run and a load in one environment
    disagree on it.
    """
    try:
        import sysconfig
        from importlib import metadata

        paths = sorted({sysconfig.get_paths()[name] for name in ("purelib", "platlib")})
        names = sorted("%s==%s" % (d.metadata["Name"], d.version) for d in metadata.distributions(path=paths))
    except Exception:
        names = []
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]


def run_fields(run_id: str) -> Dict[str, Any]:
    """What an environment record says of this run rather than of the environment: an environment kept by the result
    cache opens a later run with these made anew (``cell_cache.known_set_up``)."""
    # The commit of the code that made the run: what a report joining these records cites.
    return {"run_id": run_id, "started_at": now(), "tool_commit": checkout.of_this_run()}


def environment_record(
    torch: Any, found: Dict[str, bool], device: str, source: str, run_id: str, variant: str
) -> Dict[str, Any]:
    """The record that opens a run: torch build, Python, machine, capabilities."""
    from . import gpu
    from .capabilities import strict_default

    version = str(torch.__version__)
    python = "%d.%d" % sys.version_info[:2]
    seen = gpu.facts()  # through NVML: torch.cuda.is_available() would initialise CUDA in a process that forks
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "environment",
        "env_id": "torch-%s_%s_py%s" % (version, variant, python),
        "torch_version": version,
        "torch_git_version": getattr(getattr(torch, "version", None), "git_version", None),
        "variant": variant,
        "python": python,
        "python_full": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "cuda_version": getattr(getattr(torch, "version", None), "cuda", None),
        "cuda_available": gpu.available(torch, seen),
        **({key: seen[key] for key in gpu.FIELDS if key in seen} if gpu.available(torch, seen) else {}),
        "device": device,
        "runner_version": RUNNER_VERSION,
        "capabilities": found,
        "strict_default": strict_default(),
        "packages_hash": packages_hash(),
        "source": source,
        **run_fields(run_id),
    }
