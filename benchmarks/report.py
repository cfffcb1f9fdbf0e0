"""How long the report takes and how much memory it needs on a large synthetic record set.

    python benchmarks/report.py [--releases 15] [--cases 150] [--runs 30] [--keep DIR]

Writes a synthetic record set (one JSONL file per release, like real runs: an
environment record then one record per cell and run, both modes) to a temporary
folder, then times loading it, computing the tables, and building the whole report
(Parquet, charts, Markdown), and prints the figures with the targets: at most 10 s for
the whole build and at most 1 GiB peak memory (the process's peak resident size).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import sys
import tempfile
import time
from typing import Any, Dict, Iterator, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from matrix import report, store, tables, transitions  # noqa: E402
from matrix.worker import records  # noqa: E402

TARGET_SECONDS = 10.0
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
            "schema_version": records.SCHEMA_VERSION,
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
                        cell_id=records.cell_id(release, mode, plan["case"]),
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
    """Wall and CPU time since the last lap; CPU time shows the cost when other work shares the machine."""

    def __init__(self) -> None:
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        self.wall = self.cpu = 0.0

    def lap(self) -> str:
        wall, cpu = time.perf_counter(), time.process_time()
        self.wall, self.cpu = wall - self._wall, cpu - self._cpu
        self._wall, self._cpu = wall, cpu
        return "%.2f s wall, %.2f s CPU" % (self.wall, self.cpu)


def peak_mb() -> float:
    # ru_maxrss is in KiB on Linux (bytes on macOS).
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / scale / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=15)
    parser.add_argument("--cases", type=int, default=150)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--keep", metavar="DIR", help="write records and report here instead of a temporary folder")
    args = parser.parse_args()
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
        print("peak memory after writing: %.0f MB" % peak_mb())

        print("machine load average before: %.1f (on %d cores)" % (os.getloadavg()[0], os.cpu_count() or 0))
        clock = Clock()
        loaded = store.load([folder])
        load_s = clock.lap()
        cells = tables.cells(loaded.cells)
        moves = transitions.find(cells)
        tables.summary(cells), tables.mode_disagreements(cells), tables.claims(cells), tables.pivot(cells)
        tables_s = clock.lap()
        print("load:   %s (%d cell records)" % (load_s, len(loaded.cells)))
        print("tables: %s (%d cells, %d transitions)" % (tables_s, len(cells), len(moves)))
        del loaded, cells, moves

        clock = Clock()
        built = report.build_report([folder], os.path.join(base, "report"))
        build_s = clock.lap()
        peak = peak_mb()
        print("report: %s end to end (load, tables, Parquet, charts, %d case pages)" % (build_s, built.pages))
        print("peak memory (process, resident): %.0f MB" % peak)
        print("machine load average after: %.1f" % os.getloadavg()[0])
        met_time = clock.wall <= TARGET_SECONDS
        met_memory = peak <= TARGET_PEAK_MB
        print(
            "target ≤ %.0f s for the report: %s (wall %.1f s; CPU %.1f s)"
            % (TARGET_SECONDS, "met" if met_time else "NOT met", clock.wall, clock.cpu)
        )
        print("target ≤ %.0f MB peak memory: %s" % (TARGET_PEAK_MB, "met" if met_memory else "NOT met"))
    return 0 if met_time and met_memory else 1


if __name__ == "__main__":
    sys.exit(main())
