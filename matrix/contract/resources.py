"""How much of the machine a run may use: usable cores, and memory available for more processes.

Standard library only: the runner sizes its parallel cells with it inside each torch
environment, and the host sizes parallel releases with it.
"""

from __future__ import annotations

import os
from typing import Optional


def usable_cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def available_memory_mb() -> Optional[int]:
    """Memory the system can give new processes without swapping (Linux's MemAvailable), or None."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def jobs(requested: Optional[int], per_job_mb: int) -> int:
    """Processes to run at once: as requested, else the usable cores, never more than memory holds.

    ``per_job_mb`` is what one process may take; with a memory figure at hand, the count
    is capped so that all of them together fit in the available memory.
    """
    count = requested if requested else usable_cores()
    memory = available_memory_mb()
    if memory is not None and per_job_mb > 0:
        count = min(count, max(1, memory // per_job_mb))
    return max(1, count)
