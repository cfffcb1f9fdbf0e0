"""Where a warm-up export pays for itself: runs of N cells with the warm-up and without, in one process each.

    python benchmarks/warmup.py [--cells 2 4 6 8 12] [--rounds 3]

Each run is `export-matrix run -j 1` over the first N/2 ExportDB cases in both modes, timed
end to end (torch import, capabilities from the environment's cache, cells). Rounds
interleave the two variants, and each figure is the median over rounds. The break-even
is the smallest N from which the warm-up run is faster; contract.requests.WARM_UP_FROM follows it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matrix.contract.case import discover  # noqa: E402


def timed_run(cases: List[str], warm_up: str) -> float:
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, "-m", "matrix", "run", "--cases", *cases, "--out", out, "-j", "1", "--no-cache"]
        command += ["--warm-up", warm_up, "--progress", "none"]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True)
        seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit("run failed:\n" + done.stderr.decode()[-2000:])
    return seconds


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, nargs="+", default=[2, 4, 6, 8, 12], help="cell counts (even)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; figures are medians (default 3)")
    args = parser.parse_args(argv)
    infos = [info for info in discover([str(ROOT / "cases" / "exportdb")]) if not info.problem and not info.requires]
    figures: Dict[Tuple[int, str], List[float]] = {}
    timed_run([infos[0].path], "never")  # fills the capability cache, so no run below pays for detection
    for _ in range(args.rounds):
        for cells in args.cells:
            chosen = [info.path for info in infos[: max(1, cells // 2)]]
            for warm_up in ("always", "never"):
                figures.setdefault((cells, warm_up), []).append(timed_run(chosen, warm_up))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("cells  with warm-up  without   (median of %d rounds; load average %.1f)" % (args.rounds, load))
    break_even = None
    for cells in args.cells:
        warm = statistics.median(figures[(cells, "always")])
        cold = statistics.median(figures[(cells, "never")])
        print("%5d  %10.2f s  %7.2f s" % (cells, warm, cold))
        if break_even is None and warm < cold:
            break_even = cells
    print("break-even: %s" % ("%d cells" % break_even if break_even else "not reached"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
