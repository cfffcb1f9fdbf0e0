"""Measure what recording a cell's reads costs: a first run of the selection with recording and without.

    python benchmarks/reads.py [--select GLOB ...] [--jobs N] [--rounds N]

Each cell's process records what it read (matrix/worker/reads.py: an audit hook on ``open`` while the
cell runs, then the module files in ``sys.modules`` and a SHA-256 of each file kept) so that its result
is reused only while those files are unchanged. ``EXPORT_MATRIX_RECORD_READS=0`` turns recording off
(and with it keeping results); it exists for this benchmark alone.

Figures, all on the installed torch, rounds alternating so that both see the same machine:
  recording     `export-matrix run` of the selection into an empty result cache (the default)
  off           the same with EXPORT_MATRIX_RECORD_READS=0, into another empty cache
  cost          recording / off - 1, of the medians: the issue's goal is at most 3%
  cpu, faults   the same for the CPU seconds (user and system) and the minor page faults of the run and
                every process it waited for: figures a machine shared with other work disturbs less than
                its wall clock
  second run    the same run again with the cache the last recording round left: every cell reused,
                each entry's files hashed again; and how many entries the rounds without recording kept (none)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Tuple

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SELECT = ["exportdb/*", "models/*", "tutorial/*", "strict_nonstrict/*"]
VARIABLE = "EXPORT_MATRIX_RECORD_READS"  # matrix/worker/reads.py


class Cost(NamedTuple):
    """What one command took: wall seconds; CPU seconds and minor page faults of it and every process it waited for;
    the load average when it started; its cells' ``total_s`` summed and the slowest cell, from its records (so
    that a round unlike the others can be explained: a busy machine, or one cell that took long)."""

    seconds: float
    cpu: float
    faults: int
    load: float = 0.0
    cells_s: float = 0.0
    slowest: str = ""


def timed(args: List[str], record: bool) -> Cost:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env[VARIABLE] = "1" if record else "0"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "matrix", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit("export-matrix %s failed:\n%s" % (" ".join(args), done.stderr[-3000:]))
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    out = Path(args[args.index("--out") + 1])
    times = sorted((record.get("total_s") or 0.0, "%s %s" % (record["case"], record["mode"])) for record in cells(out))
    slowest = "%s %.1f s" % (times[-1][1], times[-1][0]) if times else ""
    return Cost(seconds, cpu, after.ru_minflt - before.ru_minflt, load, sum(t for t, _ in times), slowest)


def median(costs: List[Cost], field: str) -> float:
    return statistics.median(getattr(cost, field) for cost in costs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", nargs="+", default=DEFAULT_SELECT, metavar="GLOB")
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    figures: Dict[str, List[Cost]] = {"recording": [], "off": []}
    with tempfile.TemporaryDirectory(prefix="bench-reads-") as scratch:
        base = Path(scratch)
        common = ["--select", *args.select, "--dependency-set", "", "--progress", "none", "--jobs", str(args.jobs)]
        cache = ""
        for number in range(args.rounds):
            for name in ("recording", "off") if number % 2 == 0 else ("off", "recording"):
                folder = base / ("%s-%d" % (name, number))
                cache = str(folder / "cache") if name == "recording" else cache
                run = ["run", "--out", str(folder / "records"), "--cache", str(folder / "cache"), *common]
                figures[name].append(timed(run, name == "recording"))
        again = timed(["run", "--out", str(base / "again"), "--cache", cache, *common], True)
        cells, reused = counted(base / "again")
        unrecorded = len(list(base.glob("off-*/cache/cell/*/*.json")))  # without recording nothing is kept
    print("selection: %s, %d rounds" % (" ".join(args.select), args.rounds))
    for name, costs in figures.items():
        seconds = " ".join("%.1f s" % cost.seconds for cost in costs)
        print("%-10s %s (median %.1f s)" % (name, seconds, median(costs, "seconds")))
        for cost in costs:
            print("    %.1f s: load %.1f at start, cells %.1f s in all, slowest %s" % (
                cost.seconds, cost.load, cost.cells_s, cost.slowest))  # fmt: skip
    recording, off = figures["recording"], figures["off"]
    print("cost of recording: %+.1f%% of a first run" % share(recording, off, "seconds"))
    print("cpu: recording %.1f s, off %.1f s (medians): %+.1f%%" % (
        median(recording, "cpu"), median(off, "cpu"), share(recording, off, "cpu")))  # fmt: skip
    print("page faults: recording %d, off %d (medians): %+.1f%%" % (
        median(recording, "faults"), median(off, "faults"), share(recording, off, "faults")))  # fmt: skip
    print("second run: %.1f s (%d of %d cells reused)" % (again.seconds, reused, cells))
    print("second run cpu: %.2f s" % again.cpu)
    print("entries kept without recording: %d" % unrecorded)


def share(recording: List[Cost], off: List[Cost], field: str) -> float:
    """recording / off - 1 of the medians of ``field``, in percent."""
    return 100.0 * (median(recording, field) / median(off, field) - 1.0)


def cells(folder: Path) -> Iterator[dict]:
    """The cell records of a record folder that ran or were reused (not-applicable ones are decided without running)."""
    for path in folder.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line) if line.strip() else {}
            if record.get("kind") == "cell" and record.get("status") != "not-applicable":
                yield record


def counted(folder: Path) -> Tuple[int, int]:
    """(cells that ran or were reused, of which reused) in a record folder."""
    records = list(cells(folder))
    return len(records), sum(bool(record.get("reused_from")) for record in records)


if __name__ == "__main__":
    main()
