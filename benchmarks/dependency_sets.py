"""Measure what a case's packages cost: a dependency set's environment, and the cells that import them.

    python benchmarks/dependency_sets.py [--build 2.9.1] [--set transformers] [--repeat 3]
                                         [--cases staging/folder] [--jobs 2]

Figures (targets in brackets):
  set from cache     a dependency set's environment made again with uv's cache warm [<= 3 s]
  set reused         prepare() of a set environment that exists
  cases, parent      the cases of --cases run in the set's environment (-j --jobs), the set's
                     libraries imported once in the runner before it forks the cells [<= 4 min for the pack]
  cases, each cell   the same with EXPORT_MATRIX_PREIMPORT=0: every cell imports them itself

The build must be installable here (uv's cache, pip's configuration or PyPI); the first
prepare of a set downloads what the cache lacks and is not counted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matrix.contract import dependencies  # noqa: E402
from matrix.envs import environments, pythons, releases  # noqa: E402


def quiet(_: str) -> None:
    pass


def seconds(values: List[float]) -> str:
    return "min %.2f s, median %.2f s, max %.2f s (%d runs)" % (
        min(values),
        statistics.median(values),
        max(values),
        len(values),
    )


def run_cases(environment: environments.Environment, cases: str, key: str, jobs: int, preimport: bool) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-sets-") as out:
        env = environment.worker_env()
        env["EXPORT_MATRIX_PREIMPORT"] = "1" if preimport else "0"
        command = environment.worker_command(
            "run", "--cases", cases, "--out", out, "--dependency-set", key, "--jobs", str(jobs), "--progress", "none",
            "--stages", "check", "--no-cache",
        )  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=str(ROOT))
        took = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit("the run failed:\n" + done.stderr[-2000:])
        print("  " + done.stderr.strip().splitlines()[-1])
        return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="2.9.1", help="a release (and variant) in the matrix")
    parser.add_argument("--set", default="transformers", help="requirements of the set, separated by spaces")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default=None, help="a case folder whose cases need exactly this set")
    parser.add_argument("--jobs", type=int, default=2)
    options = parser.parse_args()

    build = releases.default_matrix().resolve(options.build)
    key = dependencies.set_key(options.set.split())
    spec = environments.Spec(build, pythons.default_python(build.release), key)
    envs = environments.env_dir()
    first = environments.prepare(spec, envs, log=quiet)  # fills uv's cache; not counted
    print("set %r beside torch %s: %s" % (key, build.torch_version, first.path))

    again: List[float] = []
    for _ in range(options.repeat):
        shutil.rmtree(envs / spec.name, ignore_errors=True)
        started = time.perf_counter()
        environments.prepare(spec, envs, log=quiet)
        again.append(time.perf_counter() - started)
    print("set from cache     %s   [target <= 3 s]" % seconds(again))
    reused = []
    for _ in range(options.repeat):
        started = time.perf_counter()
        environments.prepare(spec, envs, log=quiet)
        reused.append(time.perf_counter() - started)
    print("set reused         %s" % seconds(reused))

    if options.cases:
        environment = environments.prepare(spec, envs, log=quiet)
        parent = run_cases(environment, options.cases, key, options.jobs, preimport=True)
        each = run_cases(environment, options.cases, key, options.jobs, preimport=False)
        print("cases, parent      %.1f s with -j %d   [target <= 240 s for the pack]" % (parent, options.jobs))
        print("cases, each cell   %.1f s with -j %d   (each/parent: %.2fx)" % (each, options.jobs, each / parent))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
