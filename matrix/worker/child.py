"""Entry point of a fresh-interpreter cell: ``python -m matrix.worker.child JOB.json RESULT.json``."""

from __future__ import annotations

import json
import os
import sys


def main(job_path: str, result_path: str) -> int:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from . import isolate, runner
    from .capabilities import detect

    with open(job_path) as f:
        job = json.load(f)
    isolate.limit_memory(job.get("memory_mb"))
    runner._STATE["found"] = detect()
    try:
        result = runner.work(job)
    except MemoryError:
        result = {"status": "crash", "error_type": "MemoryError", "error_message": "the cell ran out of memory"}
    result["peak_rss_mb"] = isolate.peak_rss_mb()
    with open(result_path, "w") as f:
        json.dump(result, f, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
