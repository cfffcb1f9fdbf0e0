"""Keeper of a fresh-interpreter cell: ``python -m matrix.worker.child JOB_R RESULT_W NOTES_W CONTROL_R``.

The arguments are the numbers of the pipe ends the runner passed down. This process is
the cell's keeper (see :mod:`.keeper`): it forks the cell process before importing torch,
so the fork is cheap, and the cell process reads its job, runs it and reports.
"""

from __future__ import annotations

import os
import sys
from typing import List


def _cell(job_r: int, result_w: int) -> int:
    from . import framing, isolate

    job = isolate.read_job(job_r)
    if job is None:
        return 0
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    isolate.limit_memory(job.get("memory_mb"))

    from . import reads
    from .jobs import work

    reads.allow()  # this process runs this one job and ends: what its cell reads may be recorded
    framing.write(result_w, isolate.run_job(work, job))
    return 0


def main(argv: List[str]) -> int:
    from . import gpu, keeper

    gpu.prepare()  # a cell may fork (its AOTInductor compile): torch's checks ask NVML, not CUDA

    job_r, result_w, notes_w, control_r = (int(arg) for arg in argv)
    return keeper.keep(lambda: _cell(job_r, result_w), control_r, notes_w, (job_r, result_w))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
