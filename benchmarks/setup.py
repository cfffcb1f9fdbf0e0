"""Measure what setting up torch environments costs, and print the figures.

    python benchmarks/setup.py [--build 2.13.0+cpu] [--repeat 5] [--cold-build 2.1.2]

Figures (targets in brackets):
  warm prepare      prepare() of an environment that exists: the per-session setup cost on a re-run
  warm nox session  `nox -s run(...) -- --help`: nox, the noxfile, prepare() and the worker's start [<= 2 s]
  second env        a new environment of a release already in uv's cache [<= 5 s]
  uv vs pip         the same environment installed by each, caches warm
  cold install      uv with an empty cache: wheel bytes unpacked and linked per second

Use a build whose wheel is at hand (the default is the local CPU wheel that pip's
configuration provides on the development machine); --cold-build downloads a release
into a throwaway cache (a PyPI CUDA build is about 2.5 GB).
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
from typing import Callable, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matrix.envs import environments, install, pythons, releases  # noqa: E402


def quiet(_: str) -> None:
    pass


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def size_mb(path: Path) -> float:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total / 1e6


def fresh(spec: environments.Spec, envs: Path) -> None:
    shutil.rmtree(envs / spec.name, ignore_errors=True)


def measure(args: argparse.Namespace) -> List[Dict[str, str]]:
    matrix = releases.default_matrix()
    build = matrix.resolve(args.build)
    spec = environments.Spec(build, pythons.default_python(build.release))
    envs = Path(tempfile.mkdtemp(prefix="export-matrix-bench-"))
    rows: List[Dict[str, str]] = []

    def row(name: str, value: str, target: str = "", note: str = "") -> None:
        rows.append({"figure": name, "value": value, "target": target, "note": note})
        print("  %-22s %-12s %-8s %s" % (name, value, target, note), flush=True)

    try:
        uv = install.UvInstaller(install.find_uv() or "uv")
        first = timed(lambda: environments.prepare(spec, envs, tool=uv, log=quiet))
        row("first env", "%.1f s" % first, "", "%s, torch and the copy of the worker" % spec.name)

        warm = [timed(lambda: environments.prepare(spec, envs, tool=uv, log=quiet)) for _ in range(args.repeat * 10)]
        row("warm prepare", "%.1f ms" % (1000 * statistics.median(warm)), "", "median of %d" % len(warm))

        session = "run(torch='%s', variant='%s')" % (build.release.version, build.variant.name)
        env = dict(os.environ, **{environments.ENV_DIR_VARIABLE: str(envs)})
        command = [sys.executable, "-m", "nox", "--noxfile", str(ROOT / "noxfile.py"), "-s", session, "--", "--help"]
        env["EXPORT_MATRIX_TORCH"] = build.label
        nox_runs = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
            nox_runs.append(time.perf_counter() - started)
            if done.returncode != 0:
                raise SystemExit("nox session failed:\n" + done.stderr[-2000:])
        row("warm nox session", "%.2f s" % statistics.median(nox_runs), "<= 2 s", "median of %d" % len(nox_runs))

        second = []
        for _ in range(args.repeat):
            fresh(spec, envs)
            second.append(timed(lambda: environments.prepare(spec, envs, tool=uv, log=quiet)))
        installed = size_mb(envs / spec.name)
        row(
            "second env (uv)",
            "%.2f s" % statistics.median(second),
            "<= 5 s",
            "median of %d, %.0f MB" % (len(second), installed),
        )

        # pip has no offline-first attempt: an unreachable variant index costs it minutes of
        # retries. Point the variant at an empty local index so both installers do the same work.
        pip = install.PipInstaller()
        empty = envs / "empty-index"
        empty.mkdir()
        previous_index = os.environ.get(build.variant.env)
        os.environ[build.variant.env] = empty.as_uri()
        try:
            fresh(spec, envs)
            pip_first = timed(lambda: environments.prepare(spec, envs, tool=pip, log=quiet))
            fresh(spec, envs)
            pip_warm = timed(lambda: environments.prepare(spec, envs, tool=pip, log=quiet))
        finally:
            if previous_index is None:
                os.environ.pop(build.variant.env, None)
            else:
                os.environ[build.variant.env] = previous_index
        row(
            "same env with pip",
            "%.1f s" % pip_warm,
            "",
            "first pip run %.1f s; uv %.2f s" % (pip_first, statistics.median(second)),
        )

        cold_build = matrix.resolve(args.cold_build) if args.cold_build else build
        cold_spec = environments.Spec(cold_build, pythons.default_python(cold_build.release))
        cache = Path(tempfile.mkdtemp(prefix="uv-cold-cache-", dir=envs.parent))
        previous = os.environ.get("UV_CACHE_DIR")
        os.environ["UV_CACHE_DIR"] = str(cache)
        try:
            fresh(cold_spec, envs)
            cold = timed(lambda: environments.prepare(cold_spec, envs, tool=uv, log=quiet))
        finally:
            if previous is None:
                os.environ.pop("UV_CACHE_DIR", None)
            else:
                os.environ["UV_CACHE_DIR"] = previous
            shutil.rmtree(cache, ignore_errors=True)
        cold_mb = size_mb(envs / cold_spec.name)
        row(
            "cold install (uv)",
            "%.0f MB/s" % (cold_mb / cold),
            "",
            "%s: %.0f MB installed in %.1f s, empty cache" % (cold_spec.name, cold_mb, cold),
        )
    finally:
        shutil.rmtree(envs, ignore_errors=True)
    return rows


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="2.13.0+cpu", help="the build to measure (default 2.13.0+cpu)")
    parser.add_argument("--cold-build", default=None, help="build for the cold-install figure (default: --build)")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of each timed step (default 3)")
    args = parser.parse_args(argv)
    print("environment setup on %s (%d CPUs)" % (sys.platform, os.cpu_count() or 0))
    measure(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
