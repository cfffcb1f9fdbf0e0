"""Measure what reusing results saves: a run and a load with an empty result cache, then again with it.

    python benchmarks/reuse.py [--select GLOB ...] [--jobs N]

Figures, all in one run on the installed torch:
  first run      `export-matrix run` of the selection (default: the case set without the real-model
                 pack) with --artifacts, into an empty result cache
  second run     the same run into a new record folder and a new artifacts folder: every result
                 reused, every kept program put back from the cache
  first load     `export-matrix load` of the programs the first run saved
  second load    the same load into a new record folder: every load reused
  ratios         second / first for each; and what was reused, read from the records
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SELECT = ["exportdb/*", "models/*", "tutorial/*", "strict_nonstrict/*"]


def timed(args: List[str]) -> Tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "matrix", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit("export-matrix %s failed:\n%s" % (" ".join(args), done.stderr[-3000:]))
    return seconds, done.stderr


def reused(folder: Path, kind: str) -> Tuple[int, int]:
    """(records of ``kind``, of which reused) in a record folder."""
    total = hit = 0
    for path in folder.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line) if line.strip() else {}
            if record.get("kind") == kind:
                total += 1
                hit += bool(record.get("reused_from"))
    return total, hit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", nargs="+", default=DEFAULT_SELECT, metavar="GLOB")
    parser.add_argument("--jobs", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-reuse-") as scratch:
        base = Path(scratch)
        cache = str(base / "cache")
        common = ["--select", *args.select, "--dependency-set", "", "--progress", "none", "--cache", cache]
        common += ["--jobs", str(args.jobs)]
        figures: Dict[str, float] = {}
        for name in ("first", "second"):
            out = base / name
            run = ["run", "--out", str(out), "--artifacts", str(out / "artifacts"), *common]
            figures[name + " run"], _ = timed(run)
        for name in ("first", "second"):
            load = ["load", str(base / "first" / "artifacts"), "--out", str(base / (name + "-load")), "--cache", cache]
            figures[name + " load"], _ = timed([*load, "--progress", "none", "--jobs", str(args.jobs)])
        cells, cells_reused = reused(base / "second", "cell")
        loads, loads_reused = reused(base / "second-load", "load")
        print("selection: %s (%d cells, %d loads)" % (" ".join(args.select), cells, loads))
        for name, seconds in figures.items():
            print("%-12s %7.1f s" % (name, seconds))
        print("second run / first run:   %.2f (%d of %d cells reused)" % (
            figures["second run"] / figures["first run"], cells_reused, cells))  # fmt: skip
        print("second load / first load: %.2f (%d of %d loads reused)" % (
            figures["second load"] / figures["first load"], loads_reused, loads))  # fmt: skip


if __name__ == "__main__":
    main()
