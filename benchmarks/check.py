"""Time `export-matrix check` of one case against its floor: a bare export in each release's interpreter.

    python benchmarks/check.py [--case cases/models/einsum_bilinear.py] [--torch 2.1.2 2.3.1 ...] [--rounds 3]

Figures, measured in one run on environments that are already installed:
  floor            per release: `python -c "import torch; <load and export the case in both modes>"`,
                   summed over releases, as a serial loop would pay it
  check            `export-matrix check CASE --torch ...` (releases in parallel, as many as cores allow)
  check -j 1       the same, one release at a time
  current floor    the bare export in this interpreter
  check current    `export-matrix check CASE --torch current`
  known            `check CASE --torch ...` with every cell in the result cache: answered without
                   importing torch (matrix/worker/known.py)
  reused, torch    the same with the environments' kept facts removed before each round: every cell
                   reused, each worker importing torch to compute the keys
Targets: check over 6 releases <= 20 s wall; check current <= 1.5 x its floor; known <= 3 s.
--reused-only measures the last two alone.
Each figure is the median of --rounds rounds; rounds interleave the commands so that a
slow moment of a shared machine falls on all of them alike.
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
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matrix.envs import environments, pythons, releases  # noqa: E402

DEFAULT_TORCH = ["2.1.2", "2.3.1", "2.5.1", "2.8.0", "2.13.0+cpu", "2.15.0"]

# The least any tool can do: start the release's interpreter, import torch, load the case
# and export it in both modes. Written for every release from 2.1 (no strict= before 2.2).
FLOOR = """
import importlib.util, inspect, sys
import torch
spec = importlib.util.spec_from_file_location("case", sys.argv[1])
case = importlib.util.module_from_spec(spec)
sys.modules["case"] = case  # strict export finds the module of the code it traces
spec.loader.exec_module(case)
kwargs = getattr(case, "example_kwargs", {})
shapes = getattr(case, "dynamic_shapes", None)
try:
    shapes = shapes() if callable(shapes) else shapes
except ImportError:  # an API the release lacks: the tool reports the cell not-applicable without exporting
    sys.exit(0)
modes = [True, False] if "strict" in inspect.signature(torch.export.export).parameters else [None]
for strict in modes:
    extra = {} if strict is None else {"strict": strict}
    try:
        torch.export.export(case.model, case.example_args, kwargs, dynamic_shapes=shapes, **extra)
    except Exception as exc:
        print("export raised", type(exc).__name__)
"""


def timed(command: List[str], env: Optional[Dict[str, str]] = None, cache: str = "off") -> float:
    # Every round measures the work: results kept by an earlier round are not reused, unless ``cache`` says.
    env = dict(os.environ if env is None else env, EXPORT_MATRIX_RESULT_CACHE=cache)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit("%s failed (%d):\n%s" % (" ".join(command), done.returncode, done.stderr[-2000:]))
    return seconds


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--case", default="cases/models/einsum_bilinear.py", help="the case file (default: a small model)"
    )
    parser.add_argument("--torch", nargs="+", default=DEFAULT_TORCH, help="installed releases to check")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each figure is their median (default 3)")
    parser.add_argument("--reused-only", action="store_true", help="measure only the runs whose cells are kept")
    args = parser.parse_args(argv)
    matrix = releases.default_matrix()
    interpreters = []
    for word in args.torch:
        build = matrix.resolve(word)
        spec = environments.Spec(build, pythons.default_python(build.release))
        if not environments.is_ready(spec):
            raise SystemExit(
                "%s is not installed: run `export-matrix check %s --torch %s` once" % (word, args.case, word)
            )
        interpreters.append(str(environments.python_in(environments.env_dir() / spec.name)))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    check = [sys.executable, "-m", "matrix", "check", args.case, "--torch", *args.torch]
    current = [sys.executable, "-m", "matrix", "check", args.case, "--torch", "current"]
    timed(check, env)  # the first call copies the worker and fills each environment's capability cache
    if args.reused_only:
        return reused(check, env, len(interpreters), args)
    timed(current, env)
    figures: Dict[str, List[float]] = {
        name: [] for name in ("floor", "check", "check -j 1", "current floor", "current")
    }
    for _ in range(args.rounds):
        figures["floor"].append(sum(timed([python, "-c", FLOOR, args.case]) for python in interpreters))
        figures["check"].append(timed(check, env))
        figures["check -j 1"].append(timed(check + ["--jobs", "1"], env))
        figures["current floor"].append(timed([sys.executable, "-c", FLOOR, args.case]))
        figures["current"].append(timed(current, env))
    median = {name: statistics.median(values) for name, values in figures.items()}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        "check of %s in both modes, %d releases, %d rounds (load average %.1f)"
        % (args.case, len(interpreters), args.rounds, load)
    )
    for name, values in figures.items():
        print("  %-14s %6.1f s   (%s)" % (name, median[name], ", ".join("%.1f" % v for v in values)))
    print("  check / serial floor          %.2f   target: check <= 20 s" % (median["check"] / median["floor"]))
    print("  check current / its floor     %.2f   target: <= 1.5" % (median["current"] / median["current floor"]))
    return 0


def reused(check: List[str], env: Dict[str, str], count: int, args: argparse.Namespace) -> int:
    """``check`` with every cell kept in a result cache of its own: answered without torch, and with torch."""
    with tempfile.TemporaryDirectory(prefix="check-bench-cache-") as cache:
        timed(check, env, cache)  # fills the cache
        figures: Dict[str, List[float]] = {"known": [], "reused, torch": []}
        for _ in range(args.rounds):
            figures["known"].append(timed(check, env, cache))
            shutil.rmtree(os.path.join(cache, "environment"), ignore_errors=True)
            figures["reused, torch"].append(timed(check, env, cache))  # keeps the facts again for the next round
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print("check of %s in both modes, %d releases, every cell kept, %d rounds (load average %.1f)" % (
        args.case, count, args.rounds, load))  # fmt: skip
    for name, values in figures.items():
        print("  %-14s %6.1f s   (%s)" % (name, statistics.median(values), ", ".join("%.1f" % v for v in values)))
    print("  known / reused with torch     %.2f   target: known <= 3 s" % (
        statistics.median(figures["known"]) / statistics.median(figures["reused, torch"])))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
