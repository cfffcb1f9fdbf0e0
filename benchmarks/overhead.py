"""Per-cell overhead of the runner against a bare in-process loop and a fresh interpreter per cell.

Usage: python benchmarks/overhead.py [--cases cases] [--rounds 3] [--spawn-sample 6]

Measures, in one run, the case set x both modes:
  runner/export-only    fork-isolated runner doing load + eager + export (``--stages ''``)
  bare/export-only      an in-process loop of load + eager + export over the same cells
  runner/full           fork-isolated runner with every stage (check, decompose, serialize)
  inline/full           the same stages in-process, without isolation (``--isolation inline``)
  spawn                 a fresh interpreter per cell, timed on a sample and scaled up
Cell times are summed after the warm-up, as the parent records them (fork included).
The export-only lines run in --rounds rounds, one after the other in each round, and each
round gives its own ratio: run-to-run noise on a shared machine reaches tens of percent,
and a round compares runs made under the same conditions. The ratio judged is
the median over rounds.
Target: runner/export-only <= 1.3 x bare/export-only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_runner(cases: list[str], *extra: str) -> tuple[float, float, list[dict]]:
    """(process wall seconds, sum of per-cell wall seconds, cell records)."""
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        command = [sys.executable, "-m", "matrix", "run", "--cases", *cases, "--out", out, "--progress", "none"]
        command += ["--no-cache", *extra]
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, env=env, check=True, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        cells = []
        for path in Path(out).glob("*.jsonl"):
            for line in path.read_text().splitlines():
                record = json.loads(line)
                if record["kind"] == "cell":
                    cells.append(record)
    ran = [c for c in cells if c["status"] not in ("not-applicable", "case-error")]
    return wall, sum(c["total_s"] for c in ran), cells


BARE = r"""
import json, os, sys, time
os.environ["OMP_NUM_THREADS"] = "1"
import torch
torch.set_num_threads(1)
from matrix.contract.case import discover
from matrix.worker import case as case_format
from matrix.worker.cell import warm_up
from matrix.worker.capabilities import detect
found = detect()
warm_up(found)
cells = json.loads(sys.argv[1])
infos = {i.name: i for i in discover(json.loads(sys.argv[2]))}
total = 0.0
for name, mode in cells:
    start = time.perf_counter()
    try:
        case = case_format.load(infos[name])
        case.model(*case.example_args, **case.example_kwargs)
        kwargs = {"strict": mode == "strict"}
        if case.dynamic_shapes is not None:
            kwargs["dynamic_shapes"] = case.dynamic_shapes
        if case.example_kwargs:
            kwargs["kwargs"] = case.example_kwargs
        torch.export.export(case.model, case.example_args, **kwargs)
    except Exception:
        pass
    total += time.perf_counter() - start
print(total)
"""


def run_bare(cases: list[str], cells: list[tuple[str, str]]) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", BARE, json.dumps(cells), json.dumps(cases)],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    return float(out.stdout.strip().splitlines()[-1])


def _spread(values: list[float]) -> str:
    return "%.2f (min %.2f, max %.2f)" % (statistics.median(values), min(values), max(values))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=[str(ROOT / "cases")])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the export-only comparison")
    parser.add_argument("--spawn-sample", type=int, default=6, help="cells timed with a fresh interpreter each")
    args = parser.parse_args()

    runner, bare, stages = [], [], []
    ran: list[tuple[str, str]] = []
    for round_ in range(max(1, args.rounds)):
        _, cells_export, records = run_runner(args.cases, "--stages", "")
        done = [c for c in records if c["status"] not in ("not-applicable", "case-error")]
        ran = sorted((c["case"], c["mode"]) for c in done)
        bare_export = run_bare(args.cases, ran)
        runner.append(cells_export)
        stages.append(sum((c["load_s"] or 0) + (c["eager_s"] or 0) + (c["export_s"] or 0) for c in done))
        bare.append(bare_export)
        print(
            "round %d: runner %.2f s, bare %.2f s: %.2fx"
            % (round_ + 1, cells_export, bare_export, cells_export / bare_export),
            flush=True,
        )
    wall_full, cells_full, _ = run_runner(args.cases)
    wall_inline, cells_inline, _ = run_runner(args.cases, "--isolation", "inline")
    sample = ran[:: max(1, len(ran) // max(1, args.spawn_sample))][: args.spawn_sample]
    globs = sorted({name for name, _ in sample})
    _, spawn_cells, spawn_records = run_runner(args.cases, "--isolation", "spawn", "--select", *globs, "--stages", "")
    per_spawn = spawn_cells / max(1, len(spawn_records))

    ratios = [r / b for r, b in zip(runner, bare)]
    ratio = statistics.median(ratios)
    print("cells: %d (case x mode, excluding not-applicable and case-error)" % len(ran))
    print("%-22s %s" % ("", "cells (s): median over %d rounds" % len(runner)))
    print("%-22s %s" % ("runner/export-only", _spread(runner)))
    print("%-22s %s" % ("bare/export-only", _spread(bare)))
    print("%-22s %10s %14s" % ("", "cells (s)", "process (s)"))
    print("%-22s %10.2f %14.2f" % ("runner/full", cells_full, wall_full))
    print("%-22s %10.2f %14.2f" % ("inline/full", cells_inline, wall_inline))
    print("%-22s %10.2f %14s" % ("spawn (scaled)", per_spawn * len(ran), "%d cells timed" % len(spawn_records)))
    print(
        "runner/bare (export-only): %.2fx median of rounds %s (target <= 1.3x: %s)"
        % (ratio, ", ".join("%.2f" % r for r in ratios), "met" if ratio <= 1.3 else "NOT met")
    )
    print("runner/inline (full stages): %.2fx" % (cells_full / cells_inline))
    print("spawn/runner (export-only): %.1fx" % (per_spawn * len(ran) / statistics.median(runner)))
    print(
        "runner stages (load + eager + export, timed in the child): %.2f s, %.2fx bare"
        % (statistics.median(stages), statistics.median(t / b for t, b in zip(stages, bare)))
    )
    outside = [(r - t) / max(1, len(ran)) for r, t in zip(runner, stages)]
    print("isolation per cell (fork, pipes, fingerprint, record): %.1f ms" % (1000 * statistics.median(outside)))
    per_cell = [(r - b) / max(1, len(ran)) for r, b in zip(runner, bare)]
    print("runner overhead per cell: %.1f ms (median of rounds)" % (1000 * statistics.median(per_cell)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
