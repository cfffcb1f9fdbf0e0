"""What recording a cell's reads costs inside one cell's process: the audit hook while it exports, and its end.

    python benchmarks/recording.py [--rounds 5]

A warm parent (torch imported, one strict export done) forks one process per figure and round, as the
runner forks a cell, and each exports a small model strictly (matrix/worker/reads.py says what is recorded):
  events        the audit events the export raises: the hook is called for each, whatever its name
  hook          ns a call of the hook costs (an ``id()`` with the hook, less one without, in a forked process;
                the least of the rounds, as for any timing of a few instructions)
  end, list     CPU ms and minor page faults of the end of recording where the cell takes its inherited
                modules' files from the list its parent made before the fork (what a run does)
  end, scan     the same where it reads every module in ``sys.modules`` instead
Other figures are medians over --rounds; CPU time and page faults vary less than a wall clock on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Callable, Dict, List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from matrix.worker import reads  # noqa: E402


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def export() -> None:
    torch.export.export(Small(), (torch.ones(2, 8),), strict=True)


def forked(measure: Callable[[], Dict[str, float]]) -> Dict[str, float]:
    """``measure()`` in a process forked from this one, as a cell is."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            os.write(write, json.dumps(measure()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    os.waitpid(pid, 0)
    return json.loads(text)


def events() -> Dict[str, float]:
    counted = [0]

    def count(event: str, args: object) -> None:
        counted[0] += 1

    sys.addaudithook(count)
    export()
    return {"events": counted[0]}


def per_call(hooked: bool) -> Dict[str, float]:
    if hooked:
        reads.allow()
        reads.start()
    number = 200000
    return {"ns": min(timeit.repeat("id(x)", globals={"x": 1}, number=number, repeat=5)) / number * 1e9}


def end(scan: bool, case_file: str) -> Callable[[], Dict[str, float]]:
    def measure() -> Dict[str, float]:
        reads.allow()
        recording = reads.start()
        assert recording is not None, "recording is off (%s=0)" % reads.SWITCH
        export()
        finish = reads.Recording().finish if scan else recording.finish
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        started = time.process_time()
        finish(case_file)
        return {
            "cpu_ms": (time.process_time() - started) * 1e3,
            "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults,
            "listed": recording.inherited is not None,
        }

    return measure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    export()  # the warm-up: forked cells time their own work, not first use
    with tempfile.TemporaryDirectory(prefix="bench-recording-") as folder:
        case_file = os.path.join(folder, "case.py")
        found: Dict[str, List[Dict[str, float]]] = {"events": [], "bare": [], "hooked": [], "list": [], "scan": []}
        for _ in range(args.rounds):
            found["events"].append(forked(events))
            found["bare"].append(forked(lambda: per_call(False)))
            found["hooked"].append(forked(lambda: per_call(True)))
            found["list"].append(forked(end(False, case_file)))
            found["scan"].append(forked(end(True, case_file)))

    def median(name: str, field: str) -> float:
        return statistics.median(row[field] for row in found[name])

    print("torch %s, %d modules, %d rounds" % (torch.__version__, len(sys.modules), args.rounds))
    print("events: %d a small strict export" % median("events", "events"))
    hook = min(row["ns"] for row in found["hooked"]) - min(row["ns"] for row in found["bare"])
    print("hook: %.0f ns a call, %.2f ms an export" % (hook, hook * median("events", "events") / 1e6))
    print("listed: %d of %d rounds" % (sum(bool(row["listed"]) for row in found["list"]), args.rounds))
    for name in ("list", "scan"):
        print("end, %s: %.2f ms CPU, %d page faults" % (name, median(name, "cpu_ms"), median(name, "faults")))


if __name__ == "__main__":
    main()
