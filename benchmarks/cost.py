"""What the matrix costs, in one run: fresh loads, check against its floor, a second run, the pack's diagnoses.

    python benchmarks/cost.py [--select GLOB ...] [--source cases|exportdb] [--rounds 2]
                              [--case cases/models/einsum_bilinear.py]
                              [--pack-records reports/latest/cells.parquet] [--jobs N]

Figures, all on the installed torch, measured in this one run:
  fresh loads      `export-matrix run` of the selection (default: the case set without the real-model
                   pack) with every stage, and the same run without the ``serialize`` stage (no program
                   saved, so none loaded again in a fresh process); result cache off. Rounds interleave
                   the two, so that a slow moment of a shared machine falls on both. Target: <= 1.15.
                   ``--source exportdb`` runs cases nobody here wrote instead: the ExportDB examples
                   bundled with the installed torch (``--select`` then defaults to all of them).
  check            `export-matrix check CASE --torch current` against its floor: this interpreter
                   started, torch imported, the case loaded and exported in both modes (nothing else).
                   Target: <= 1.5.
  second run       the selection run into an empty result cache, then again into a new record folder
                   with that cache: every result reused.
  pack diagnoses   read from records (not run here: the pack needs its libraries' environments): the
                   time the pack's failing cells spend outside their recorded stages (their draft_export
                   diagnosis, mostly), as a share of the pack's time, over all the records and per
                   release (a diagnosis is reused on a later release that fails the same way, so the
                   share falls with each release run). Target: <= 10%.
Each timed figure is the median of --rounds rounds; the ratios are of the medians.
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
from typing import Any, Dict, List, Optional, Sequence, Tuple

# The least any tool can do to check a case (import torch, load the case, export it in both modes):
# benchmarks/check.py's, so that both scripts time the same floor.
from check import FLOOR

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SELECT = ["exportdb/*", "models/*", "tutorial/*", "strict_nonstrict/*"]
EVERY_STAGE = "check,decompose,serialize,diagnose"
NO_SERIALIZE = "check,decompose,diagnose"
# The stages a cell record times; what a cell takes beyond them is the engine's and its diagnosis's.
STAGE_SECONDS = ("load_s", "eager_s", "export_s", "check_s", "decompose_s", "serialize_s", "serialize_fresh_s")
PACK = "real_models/"
FAILING = ("fail", "mismatch", "crash", "timeout")


# CPU seconds (user and system, the command and every process it waited for) of each command timed, by command.
CPU: Dict[str, List[float]] = {}


def timed(command: Sequence[str], cache: Optional[str] = None, name: str = "") -> float:
    """Seconds ``command`` took, run from the project's root; the result cache is off unless ``cache``. Its CPU
    seconds go to ``CPU[name]`` where ``name`` is given."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), EXPORT_MATRIX_RESULT_CACHE=cache or "off")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(list(command), cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit("%s failed (%d):\n%s" % (" ".join(command), done.returncode, done.stderr[-3000:]))
    if name:
        used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        CPU.setdefault(name, []).append(used)
    return seconds


def matrix(*args: str) -> List[str]:
    return [sys.executable, "-m", "matrix", *args]


def cell_records(folder: Path) -> List[Dict[str, object]]:
    found = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            if record.get("kind") == "cell":
                found.append(record)
    return found


def fresh_loads(select: Sequence[str], source: str, jobs: int, rounds: int, scratch: Path) -> Dict[str, List[float]]:
    figures: Dict[str, List[float]] = {"every stage": [], "without serialize": []}
    for number in range(rounds):
        for name, stages in (("without serialize", NO_SERIALIZE), ("every stage", EVERY_STAGE)):
            out = scratch / ("stages-%d-%s" % (number, name.replace(" ", "-")))
            command = matrix("run", "--source", source, "--select", *select, "--out", str(out), "--stages", stages)
            figures[name].append(timed([*command, "--progress", "none", "--jobs", str(jobs)], name=name))
    return figures


def check_floor(case: str, rounds: int) -> Dict[str, List[float]]:
    figures: Dict[str, List[float]] = {"check current": [], "floor": []}
    timed(matrix("check", case, "--torch", "current"))  # fills the capability cache, as any first use does
    for _ in range(rounds):
        figures["floor"].append(timed([sys.executable, "-c", FLOOR, case]))
        figures["check current"].append(timed(matrix("check", case, "--torch", "current")))
    return figures


def second_run(select: Sequence[str], source: str, jobs: int, scratch: Path) -> Tuple[Dict[str, float], int, int]:
    cache = str(scratch / "result-cache")
    figures: Dict[str, float] = {}
    for name in ("first run", "second run"):
        out = scratch / name.replace(" ", "-")
        command = matrix("run", "--source", source, "--select", *select, "--out", str(out))
        command += ["--artifacts", str(out / "artifacts")]
        figures[name] = timed([*command, "--progress", "none", "--jobs", str(jobs)], cache=cache)
    second = cell_records(scratch / "second-run")
    return figures, sum(1 for r in second if r.get("reused_from")), len(second)


def pack_cells(sources: Sequence[str]) -> Any:
    """The pack's timed cells in record folders or cells tables, or None where there are none."""
    import pandas as pd

    frames = []
    for source in sources:
        path = Path(source)
        if path.suffix == ".parquet":
            frames.append(pd.read_parquet(path))
        elif path.is_dir():
            frames.append(pd.DataFrame(cell_records(path)))
    if not frames:
        return None
    cells = pd.concat(frames, ignore_index=True)
    pack = cells[cells["case"].astype(str).str.startswith(PACK) & cells["total_s"].notna()]
    if pack.empty:
        return None
    if "release" not in pack.columns:  # records name the build by torch_version, tables by release
        pack = pack.assign(release=pack["torch_version"] if "torch_version" in pack.columns else "unnamed")
    return pack


def pack_share(pack: Any) -> Tuple[float, float, float, int]:
    """(outside stages in failing pack cells, pack total, share, pack cells) of ``pack`` (see pack_cells)."""
    stages = [c for c in STAGE_SECONDS if c in pack.columns]
    outside = (pack["total_s"] - pack[stages].fillna(0.0).sum(axis=1)).clip(lower=0.0)
    failing = pack["status"].isin(FAILING)
    spent, total = float(outside[failing].sum()), float(pack["total_s"].sum())
    return spent, total, spent / total, len(pack)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--select", nargs="+", metavar="GLOB", help="cases run (default: the case set, or all)")
    parser.add_argument(
        "--source",
        choices=("cases", "exportdb"),
        default="cases",
        help="our case files, or the ExportDB examples bundled with the installed torch (cases nobody here wrote)",
    )
    parser.add_argument("--case", default="cases/models/einsum_bilinear.py", help="the case `check` checks")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of each timed figure (default 2)")
    parser.add_argument("--jobs", type=int, default=0, help="cells at once (default: as the runner chooses)")
    parser.add_argument(
        "--pack-records",
        nargs="*",
        default=[str(ROOT / "reports" / "latest" / "cells.parquet")],
        metavar="PATH",
        help="record folders or a cells.parquet to read the pack's diagnosis share from (default: the published"
        " report's); none to leave it out",
    )
    args = parser.parse_args(argv)
    select = args.select or (DEFAULT_SELECT if args.source == "cases" else ["*"])
    with tempfile.TemporaryDirectory(prefix="bench-cost-") as folder:
        scratch = Path(folder)
        stages = fresh_loads(select, args.source, args.jobs, args.rounds, scratch)
        check = check_floor(args.case, args.rounds)
        runs, reused, cells = second_run(select, args.source, args.jobs, scratch)
    median = {name: statistics.median(values) for name, values in {**stages, **check}.items()}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("selection: %s (%s); %d rounds; load average %.1f at the end"
          % (" ".join(select), args.source, args.rounds, load))  # fmt: skip
    for name, values in {**stages, **check}.items():
        cpu = " CPU %.1f s" % statistics.median(CPU[name]) if name in CPU else ""
        print("  %-18s %7.1f s   (%s)%s" % (name, median[name], ", ".join("%.1f" % v for v in values), cpu))
    for name, seconds in runs.items():
        print("  %-18s %7.1f s" % (name, seconds))
    print("fresh loads: every stage / without serialize   %.2f   target <= 1.15"
          % (median["every stage"] / median["without serialize"]))  # fmt: skip
    every, without = statistics.median(CPU["every stage"]), statistics.median(CPU["without serialize"])
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    busy = without / (median["without serialize"] * cores)
    print("  in CPU seconds                                %.2f   (without serialize the run keeps the %d cores %.0f%%"
          " busy: what fresh loads cost in CPU, no overlap hides where that is near 100%%)"
          % (every / without, cores, 100 * busy))  # fmt: skip
    print("check current / its floor                       %.2f   target <= 1.5"
          % (median["check current"] / median["floor"]))  # fmt: skip
    print("second run / first run                          %.2f   (%d of %d cells reused)"
          % (runs["second run"] / runs["first run"], reused, cells))  # fmt: skip
    pack = pack_cells(args.pack_records)
    if pack is None:
        print("pack diagnoses: no pack cells in %s" % (" ".join(args.pack_records) or "no records"))
        return 0
    spent, total, ratio, count = pack_share(pack)
    print("pack diagnoses: failing cells outside their stages %.0f s of the pack's %.0f s (%d cells, from %s)"
          % (spent, total, count, " ".join(args.pack_records)))  # fmt: skip
    print("  share                                         %.1f%%  target <= 10%%" % (100 * ratio))
    for release, cells_of in pack.groupby("release", sort=False):
        spent, total, ratio, count = pack_share(cells_of)
        print("    %-16s %5.0f s of %5.0f s  %5.1f%%  (%d cells)" % (release, spent, total, 100 * ratio, count))
    return 0


if __name__ == "__main__":
    sys.exit(main())
