"""What the upgrade answer costs a report: indexing the tables, then judging every pair the site offers.

    python benchmarks/upgrade.py [REPORT_FOLDER ...] [--rounds 3]

For each published report folder (default ``reports/latest``), builds its model once (not timed), then times in
CPU seconds of this process (a shared machine's load moves wall time by tens of percent, CPU time far less):

- index: ``records.upgrade.Upgrades`` over the model's cell, load, package and compile tables;
- pairs: the site's upgrade data (``report.site.upgrade.data``), which answers every pair offered, each case and
  mode judged, with the tallies worded.

Each figure is the median of ``--rounds`` rounds.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from typing import Callable, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from matrix.records import model, store, upgrade  # noqa: E402
from matrix.report.site import upgrade as site  # noqa: E402


def cpu(step: Callable[[], object], rounds: int) -> float:
    found: List[float] = []
    for _ in range(rounds):
        start = time.process_time()
        step()
        found.append(time.process_time() - start)
    return statistics.median(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", default=["reports/latest"])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for folder in args.folders:
        built = model.build(store.load([folder], workers=0))
        released = built.upgrades
        tables = (built.cells, built.loads, built.packages.table, built.compiles.table)
        index = cpu(functools.partial(upgrade.Upgrades, *tables), args.rounds)
        pairs = cpu(functools.partial(site.data, released, {}), args.rounds)
        print(
            "%s: %d builds, %d cases, %d pairs offered: index %.2f s, pairs %.2f s (CPU, median of %d)"
            % (folder, len(released.releases), len(released.case_names), len(site.offered(released)), index, pairs,
               args.rounds)
        )  # fmt: skip


if __name__ == "__main__":
    main()
