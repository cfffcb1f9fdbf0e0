"""How long the report takes and how much memory it needs on a large synthetic record set.

    python benchmarks/report.py [--releases 15] [--cases 150] [--runs 30] [--rounds 3] [--keep DIR]

Writes a synthetic record set (one JSONL file per release, like real runs: an
environment record then one record per cell and run, both modes) to a temporary
folder. Then, each in a fresh interpreter (as a user's ``export-matrix report`` runs),
it times loading the records and computing the tables once, building the whole report
(load, tables, Parquet, charts, Markdown) from scratch in --rounds rounds, once more to
sample its memory, and re-rendering it over the same records (parse cache and charts
kept) in --rounds rounds. The figures are
judged against the targets: at most 3 s for a re-render, at most 10 s for the build (the median of the rounds, since
run-to-run noise on a shared machine reaches tens of percent) and at most 1 GiB peak
memory (the build process's peak resident size, or where larger the peak sampled over
it and the side processes it forks, which parse records and draw charts). Interpreter start-up and
the import of pandas are outside the timed build; matplotlib's import is inside it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, Iterator, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from matrix.contract import (
    records,  # noqa: E402
    schema,
)
from matrix.records import store, tables, transitions  # noqa: E402
from matrix.report import build as report  # noqa: E402

TARGET_SECONDS = 10.0
TARGET_RERENDER_SECONDS = 3.0
TARGET_PEAK_MB = 1024.0
TAGS = sorted(
    [
        "python.assert",
        "python.builtin",
        "python.closure",
        "python.control-flow",
        "python.data-structure",
        "torch.cond",
        "torch.dynamic-shape",
        "torch.escape-hatch",
        "torch.map",
        "torch.mutation",
        "torch.operator",
        "torch.pytree",
    ]
)
OPS = [
    "aten.%s.default" % name
    for name in (
        "add",
        "mul",
        "sub",
        "relu",
        "sin",
        "cos",
        "view",
        "mm",
        "sum",
        "mean",
        "cat",
        "clone",
        "exp",
        "sigmoid",
    )
]
ERRORS = [
    ("torch._dynamo.exc.Unsupported", "Dynamic control flow is not supported at the moment."),
    ("torch._dynamo.exc.UserError", "Constraints violated (batch)! See more details below."),
    ("torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode", "Could not guard on data-dependent u0"),
    ("RuntimeError", "Cannot call numel() on tensor with symbolic sizes/strides"),
]


def release_names(count: int) -> List[str]:
    return ["2.%d.0+cpu" % minor for minor in range(1, count + 1)]


def synthetic(releases: int, cases: int, runs: int, seed: int = 7) -> Iterator[Dict[str, Any]]:
    """Records release by release: a plausible history per case (born, regressed, fixed, drifting)."""
    rng = random.Random(seed)
    names = release_names(releases)
    plans = []
    for number in range(cases):
        tags = sorted(rng.sample(TAGS, rng.choice([1, 1, 1, 2])))
        plans.append(
            {
                "case": "%s_%03d" % (tags[0].split(".")[1].replace("-", "_"), number),
                "tags": tags,
                "expected": rng.choice([None, None, "supported", "not-supported-yet"]),
                "since": rng.choice([0, 0, 0, 2, 4, releases // 2]),  # first release it is applicable in
                "works": rng.randrange(0, releases + 3),  # first release where it passes
                "broken": rng.choice([None, None, None, rng.randrange(0, releases)]),  # a one-release regression
                "error": rng.choice(ERRORS),
                "ops": rng.sample(OPS, 4),
                "speed": rng.uniform(0.05, 1.5),
                "flaky": rng.random() < 0.03,
            }
        )
    for index, release in enumerate(names):
        yield {
            "kind": "environment",
            "schema_version": schema.SCHEMA_VERSION,
            "run_id": "run-%d" % index,
            "env_id": "env-%d" % index,
            "torch_version": release,
            "variant": "cpu",
            "python": "3.11",
            "machine": "x86_64",
            "cpu": "synthetic",
            "platform": "Linux",
            "device": "cpu",
            "capabilities": {"strict_kwarg": index > 0},
            "started_at": "2025-03-0%dT10:00:00Z" % (1 + index % 2),
            "source": "cases",
        }
        for plan in plans:
            drift = index // 4  # ops and graphs change every few releases
            ops = sorted(set(plan["ops"][: 3 + drift % 2]) | ({"aten.view.default"} if drift > 2 else set()))
            graph = "\n".join(
                ["graph():", "    %x : placeholder[target=x]"]
                + ["    %%n%d : call_function[target=%s](args = (%%x,))" % (i, op) for i, op in enumerate(ops)]
                + ["    return (n0,)"]
            )
            for mode in ("strict", "non-strict"):
                for run in range(runs):
                    if index < plan["since"]:
                        status = "not-applicable"
                    elif index >= plan["works"] or (mode == "non-strict" and index >= plan["works"] - 2):
                        status = "pass"
                    else:
                        status = "fail"
                    if status == "pass" and plan["broken"] == index:
                        status = "mismatch"
                    if plan["flaky"] and status == "pass" and rng.random() < 0.1:
                        status = "timeout"
                    exported = status in ("pass", "mismatch")
                    error = plan["error"] if status == "fail" else (None, None)
                    speed = plan["speed"] * (2.5 if index >= releases - 2 and plan["flaky"] else 1.0)
                    yield records.empty_cell(
                        run_id="run-%d" % index,
                        env_id="env-%d" % index,
                        cell_id=schema.cell_id(release, mode, plan["case"]),
                        torch_version=release,
                        variant="cpu",
                        python="3.11",
                        device="cpu",
                        source="cases",
                        case=plan["case"],
                        case_file="cases/%s.py" % plan["case"],
                        mode=mode,
                        run=run,
                        tags=plan["tags"],
                        requires=[],
                        expected=plan["expected"],
                        status=status,
                        failed_stage="export" if status == "fail" else None,
                        missing=["dim_auto"] if status == "not-applicable" else [],
                        error_type=error[0],
                        error_message=error[1],
                        error_traceback=(
                            "Traceback (most recent call last):\n"
                            + '  File "torch/export/_trace.py", line 1000, in _export\n' * 12
                            + "%s: %s\n" % error
                            if status == "fail"
                            else None
                        ),
                        graph_hash=hashlib.sha1(graph.encode()).hexdigest()[:16] if exported else None,
                        fingerprint_version=2 if exported else None,
                        ops=ops if exported else None,
                        node_count=len(ops) + 2 if exported else None,
                        graph_text=graph if exported else None,
                        decompose_status="ok" if exported else "skipped",
                        decomposed_ops=ops if exported else None,
                        check_status={"pass": "ok", "mismatch": "mismatch"}.get(status, "skipped"),
                        load_s=0.01,
                        eager_s=0.002,
                        export_s=speed * rng.uniform(0.9, 1.1),
                        total_s=speed * 1.3,
                        peak_rss_mb=350.0,
                        exit_code=0,
                        finished_at="2025-03-01T10:%02d:%02dZ" % (index, run % 60),
                    )


def write(folder: str, releases: int, cases: int, runs: int) -> int:
    """The synthetic records as one JSONL file per release; returns the number of records."""
    count = 0
    handle = None
    try:
        for record in synthetic(releases, cases, runs):
            if record["kind"] == "environment":
                if handle:
                    handle.close()
                name = records.env_file_name(record["torch_version"], record["variant"], record["python"])
                handle = open(os.path.join(folder, name), "w", encoding="utf-8")
            assert handle is not None
            handle.write(json.dumps(record, sort_keys=True) + "\n")
            count += 1
    finally:
        if handle:
            handle.close()
    return count


class Clock:
    """Wall and CPU time since the last lap: this process's CPU time and its ended side processes'."""

    def __init__(self) -> None:
        self._wall, self._cpu, self._side = time.perf_counter(), time.process_time(), _side_cpu()

    def lap(self) -> Dict[str, float]:
        wall, cpu, side = time.perf_counter(), time.process_time(), _side_cpu()
        lap = {"wall": wall - self._wall, "cpu": cpu - self._cpu, "side_cpu": side - self._side}
        self._wall, self._cpu, self._side = wall, cpu, side
        return lap


def speed_check() -> float:
    """Seconds for a fixed pure-Python loop: shows how fast the machine was around the figures."""
    started = time.perf_counter()
    total = 0
    for number in range(3_000_000):
        total += number * number
    return time.perf_counter() - started


def _side_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def peak_mb() -> float:
    # ru_maxrss is in KiB on Linux (bytes on macOS).
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / scale / 1024


def stages(folder: str) -> Dict[str, Any]:
    """Child process: time loading and the tables on their own."""
    clock = Clock()
    loaded = store.load([folder])
    load = clock.lap()
    cells = tables.cells(loaded.cells)
    moves = transitions.find(cells)
    tables.summary(cells), tables.mode_disagreements(cells), tables.claims(cells), tables.pivot(cells)
    return {"load": load, "tables": clock.lap(), "records": len(loaded.cells), "cells": len(cells), "moves": len(moves)}


def build(folder: str, out: str) -> Dict[str, Any]:
    """Child process: build the whole report, as ``export-matrix report`` does."""
    clock = Clock()
    built = report.build_report([folder], out)
    return {"build": clock.lap(), "pages": built.pages, "peak_mb": peak_mb()}


def child(*args: str, sample: bool = False, extra_env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Run one measurement in a fresh interpreter: each round starts from the same state, like a user's command.

    With ``sample``, the memory of its whole process tree (it and the side processes it
    forks) is sampled every 20 ms, as the sum of proportional set sizes: pages shared
    between parent and forked children count once, not once per process. Sampling takes
    CPU time from the build, so timed rounds are not sampled.
    """
    env = dict(os.environ, **(extra_env or {}))
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    tree_peak = 0.0
    while True:
        if sample:
            tree_peak = max(tree_peak, tree_pss_mb(proc.pid))
        try:
            # Waiting through communicate keeps draining the pipes, so a talkative child cannot block.
            stdout, stderr = proc.communicate(timeout=0.02 if sample else None)
            break
        except subprocess.TimeoutExpired:
            continue
    if proc.returncode != 0:
        raise SystemExit("benchmark child %s failed:\n%s" % (" ".join(args), stderr[-4000:]))
    result = json.loads(stdout.strip().splitlines()[-1])
    result["tree_peak_mb"] = tree_peak
    return result


def tree_pss_mb(root: int) -> float:
    """Proportional set size of ``root`` and its descendants, in MB (0 where /proc cannot tell)."""
    parents: Dict[int, int] = {}
    for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name) as f:
                    parents[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, grew = {root}, True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    total = 0
    for pid in tree:
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                total += sum(int(line.split()[1]) for line in f if line.startswith("Pss:"))
        except (OSError, ValueError):
            continue
    return total / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=15)
    parser.add_argument("--cases", type=int, default=150)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3, help="report builds, each in a fresh process")
    parser.add_argument("--keep", metavar="DIR", help="write records and report here instead of a temporary folder")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        what, *paths = args.child
        print(json.dumps(stages(*paths) if what == "stages" else build(*paths)))
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or scratch
        folder = os.path.join(base, "records")
        os.makedirs(folder, exist_ok=True)
        started = time.perf_counter()
        count = write(folder, args.releases, args.cases, args.runs)
        size = sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder))
        print(
            "records: %d (%d releases × %d cases × 2 modes × %d runs), %.0f MB of JSONL, written in %.1f s"
            % (count, args.releases, args.cases, args.runs, size / 1e6, time.perf_counter() - started)
        )
        print(
            "machine before: load average %.1f on %d cores; a fixed pure-Python loop took %.2f s"
            % (os.getloadavg()[0], os.cpu_count() or 0, speed_check())
        )
        parts = child("--child", "stages", folder)
        print("load:   %s (%d cell records)" % (_times(parts["load"]), parts["records"]))
        print("tables: %s (%d cells, %d transitions)" % (_times(parts["tables"]), parts["cells"], parts["moves"]))
        builds = []
        # A first render: no parse cache, and a new report folder (no chart to keep).
        for number in range(1, max(1, args.rounds) + 1):
            out = os.path.join(base, "report-first-%d" % number)
            result = child("--child", "build", folder, out, extra_env={"EXPORT_MATRIX_NO_CACHE": "1"})
            builds.append(result)
            print(
                "report, round %d: %s end to end (load, tables, Parquet, charts, %d case pages); peak %.0f MB resident"
                % (number, _times(result["build"]), result["pages"], result["peak_mb"])
            )
        # A re-render: the same records into the same folder after a build that left its caches.
        again = os.path.join(base, "report")
        child("--child", "build", folder, again)
        rerenders = []
        for number in range(1, max(1, args.rounds) + 1):
            result = child("--child", "build", folder, again)
            rerenders.append(result["build"]["wall"])
            print("re-render, round %d: %s" % (number, _times(result["build"])))
        sampled = child(
            "--child", "build", folder, os.path.join(base, "report-sampled"), sample=True,
            extra_env={"EXPORT_MATRIX_NO_CACHE": "1"},
        )  # fmt: skip
        # The build's own peak counts too: the sampler may miss a short peak that the process's rusage keeps.
        print(
            "report, memory round: %.0f MB peak of the build with its side processes (sampled; %s)"
            % (max(sampled["tree_peak_mb"], sampled["peak_mb"]), _times(sampled["build"]))
        )
        print("machine after: load average %.1f; the same loop took %.2f s" % (os.getloadavg()[0], speed_check()))
        walls = [b["build"]["wall"] for b in builds]
        wall = statistics.median(walls)
        peak = max([sampled["tree_peak_mb"], sampled["peak_mb"]] + [b["peak_mb"] for b in builds])
        met_time, met_memory = wall <= TARGET_SECONDS, peak <= TARGET_PEAK_MB
        print(
            "target ≤ %.0f s for the report: %s (median wall %.2f s of %d rounds, min %.2f, max %.2f)"
            % (TARGET_SECONDS, "met" if met_time else "NOT met", wall, len(walls), min(walls), max(walls))
        )
        print(
            "target ≤ %.0f MB peak memory: %s (largest peak of a build, with its side processes: %.0f MB)"
            % (TARGET_PEAK_MB, "met" if met_memory else "NOT met", peak)
        )
        rerender = statistics.median(rerenders)
        met_rerender = rerender <= TARGET_RERENDER_SECONDS
        print(
            "target ≤ %.0f s for a re-render: %s (median wall %.2f s of %d rounds, min %.2f, max %.2f)"
            % (
                TARGET_RERENDER_SECONDS, "met" if met_rerender else "NOT met", rerender, len(rerenders),
                min(rerenders), max(rerenders),
            )
        )  # fmt: skip
    return 0 if met_time and met_memory and met_rerender else 1


def _times(lap: Dict[str, float]) -> str:
    return "%.2f s wall, %.2f s CPU + %.2f s in side processes" % (lap["wall"], lap["cpu"], lap["side_cpu"])


if __name__ == "__main__":
    sys.exit(main())
