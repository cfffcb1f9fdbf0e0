"""What the host's side processes (matrix.parallel) cost to start, and what an error saves by dropping queued work.

Usage: python benchmarks/side_processes.py [--processes 1] [--tasks 20] [--seconds 0.2] [--rounds 3]

Measures, in one run, on this machine:
  start            a pool of --processes forked side processes, one trivial task, shut down
  wait             --tasks sleeping tasks of --seconds each, waited for to the end
  drop             the same tasks queued, then an error in the caller: the pool drops
                   the work not yet started and waits only for what is running
Each round times the three one after the other, and each figure is the median over rounds.
Target: drop <= 0.25 x wait: a drop waits at most for the tasks already handed to a side
process (none to two, as measured here), never for the twenty queued.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matrix import parallel  # noqa: E402

TARGET = 0.25


class Stop(Exception):
    """The caller's error, raised while work is queued."""


def nothing(number: int) -> int:
    return number


def sleep_and_mark(folder: str, seconds: float, number: int) -> int:
    time.sleep(seconds)
    open(os.path.join(folder, str(number)), "w").close()
    return number


def timed_start(processes: int) -> float:
    started = time.perf_counter()
    with parallel.pool(processes) as side:
        side.submit(nothing, 1)()
    return time.perf_counter() - started


def timed_wait(processes: int, tasks: int, seconds: float) -> float:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        with parallel.pool(processes) as side:
            list(side.map(nothing, range(processes)))  # the side processes are up, as in the drop below
            waits = [side.submit(sleep_and_mark, folder, seconds, n) for n in range(tasks)]
            for wait in waits:
                wait()
        return time.perf_counter() - started


def timed_drop(processes: int, tasks: int, seconds: float) -> tuple[float, int]:
    """(seconds from the first task queued to the pool's exit, tasks that ran)."""
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        try:
            with parallel.pool(processes) as side:
                list(side.map(nothing, range(processes)))
                for n in range(tasks):
                    side.submit(sleep_and_mark, folder, seconds, n)
                raise Stop()
        except Stop:
            pass
        return time.perf_counter() - started, len(os.listdir(folder))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=1, help="side processes in the pool")
    parser.add_argument("--tasks", type=int, default=20, help="tasks queued at once")
    parser.add_argument("--seconds", type=float, default=0.2, help="how long each task sleeps")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if parallel.cores() < 2 or args.processes < 1:
        print("no side processes here (they need Linux, two usable cores and --processes >= 1): nothing to measure")
        return 0

    starts, waits, drops, ran = [], [], [], []
    for round_ in range(max(1, args.rounds)):
        starts.append(timed_start(args.processes))
        waits.append(timed_wait(args.processes, args.tasks, args.seconds))
        drop, done = timed_drop(args.processes, args.tasks, args.seconds)
        drops.append(drop)
        ran.append(done)
        print(
            "round %d: start %.1f ms, wait %.2f s, drop %.3f s (%d of %d tasks ran)"
            % (round_ + 1, 1000 * starts[-1], waits[-1], drop, done, args.tasks),
            flush=True,
        )
    ratios = [d / w for d, w in zip(drops, waits)]
    ratio = statistics.median(ratios)
    print("side processes: %d; tasks: %d of %.2f s each" % (args.processes, args.tasks, args.seconds))
    print(
        "pool start and stop, one trivial task: %.1f ms (median of %d rounds)"
        % (1000 * statistics.median(starts), len(starts))
    )
    print("wait for every task: %.2f s" % statistics.median(waits))
    print("drop on an error: %.3f s, %g tasks ran" % (statistics.median(drops), statistics.median(ran)))
    print(
        "drop/wait: %.3fx median of rounds %s (target <= %.2fx: %s)"
        % (ratio, ", ".join("%.3f" % r for r in ratios), TARGET, "met" if ratio <= TARGET else "NOT met")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
