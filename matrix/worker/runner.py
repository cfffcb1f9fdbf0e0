"""``export-matrix run``: run the case set in the installed torch and append records.

The parent imports torch once, detects capabilities, exports a tiny model to warm up,
then hands each (case, mode, run) cell to an isolation backend. Records are flushed one
by one, so an interrupted run keeps every finished cell and the next run resumes.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import fnmatch
import hashlib
import os
import platform
import sys
import time
import uuid
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import records
from .case import MODES, CaseError, CaseInfo, discover_source, missing_for

RUNNER_VERSION = "1"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cases", nargs="+", metavar="PATH", default=None, help="case files or folders (default: ./cases)"
    )
    parser.add_argument(
        "--source",
        choices=("cases", "exportdb"),
        default="cases",
        help="our case files, or the ExportDB examples bundled with the installed torch",
    )
    parser.add_argument(
        "--select",
        nargs="+",
        metavar="GLOB",
        default=None,
        help="keep cells whose case name or cell id matches one of these globs",
    )
    parser.add_argument("--tag", nargs="+", metavar="TAG", default=None, help="keep cases with one of these tags")
    parser.add_argument("--mode", choices=("strict", "non-strict", "both"), default="both")
    parser.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds per cell (default 120)")
    parser.add_argument(
        "--max-memory",
        type=int,
        default=8192,
        metavar="MB",
        help="address space a cell may add before it is stopped (default 8192; 0: no limit)",
    )
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--variant", default=None, help="wheel variant to record (default: from torch's version tag)")
    parser.add_argument("--runs", type=int, default=1, metavar="N", help="repetitions of each cell (default 1)")
    parser.add_argument("--force", action="store_true", help="re-run cells already recorded in --out")
    parser.add_argument(
        "--isolation",
        choices=("fork", "spawn", "inline"),
        default=None,
        help="fork per cell (default where available), a fresh interpreter per cell, or none",
    )
    parser.add_argument(
        "--stages",
        default="check,decompose,serialize",
        help="stages after export, comma-separated (default: check,decompose,serialize)",
    )
    parser.add_argument(
        "--hide-capability",
        nargs="+",
        metavar="NAME",
        default=[],
        help="treat these capabilities as missing, to preview how older releases report",
    )
    parser.add_argument("--progress", choices=("auto", "bar", "lines", "none"), default="auto")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the record files")  # fmt: skip


class UsageError(Exception):
    """Bad options or input; the message says which."""


def select_cases(infos: Sequence[CaseInfo], tags: Optional[List[str]]) -> List[CaseInfo]:
    """The cases with one of ``tags`` (all cases when none are given); globs apply per cell, in ``plan``."""
    return [info for info in infos if not tags or set(tags) & set(info.tags)]


def cell_selected(case: str, cell: str, select: Optional[List[str]]) -> bool:
    return not select or any(fnmatch.fnmatchcase(case, g) or fnmatch.fnmatchcase(cell, g) for g in select)


def variant_of(torch_version: str) -> str:
    return torch_version.split("+", 1)[1] if "+" in torch_version else "pypi"


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _packages_hash() -> str:
    try:
        from importlib import metadata

        names = sorted("%s==%s" % (d.metadata["Name"], d.version) for d in metadata.distributions())
    except Exception:
        names = []
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]


def environment_record(torch: Any, found: Dict[str, bool], args: argparse.Namespace, run_id: str) -> Dict[str, Any]:
    from .capabilities import strict_default

    version = str(torch.__version__)
    python = "%d.%d" % sys.version_info[:2]
    variant = args.variant or variant_of(version)
    return {
        "schema_version": records.SCHEMA_VERSION,
        "kind": "environment",
        "run_id": run_id,
        "env_id": "torch-%s_%s_py%s" % (version, variant, python),
        "torch_version": version,
        "torch_git_version": getattr(getattr(torch, "version", None), "git_version", None),
        "variant": variant,
        "python": python,
        "python_full": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": _cpu_name(),
        "cuda_version": getattr(getattr(torch, "version", None), "cuda", None),
        "cuda_available": bool(torch.cuda.is_available()),
        "device": args.device,
        "runner_version": RUNNER_VERSION,
        "capabilities": found,
        "strict_default": strict_default(),
        "packages_hash": _packages_hash(),
        "started_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "source": args.source,
    }


# Set in the parent before forking; read by ``work`` in the child.
_STATE: Dict[str, Any] = {}


def work(job: Dict[str, Any]) -> Dict[str, Any]:
    """Run one cell (in the isolated child)."""
    from .case import load
    from .cell import run_cell

    fields: Dict[str, Any] = dict(job["info"], tags=tuple(job["info"]["tags"]), requires=tuple(job["info"]["requires"]))
    info = CaseInfo(**fields)
    if info.source == "exportdb":
        from . import exportdb

        loader = exportdb.load
    else:
        loader = load
    return run_cell(info, job["mode"], _STATE["found"], loader, job["device"], tuple(job["stages"]))


class Progress:
    """A one-line bar on a terminal, plain lines elsewhere (CI, pipes)."""

    def __init__(self, total: int, style: str) -> None:
        if style == "auto":
            style = "bar" if sys.stderr.isatty() and not os.environ.get("CI") else "lines"
        self.style, self.total, self.done = style, total, 0

    def start(self, cell: str) -> None:
        if self.style == "bar":
            width = 30
            filled = int(width * self.done / max(self.total, 1))
            line = "[%s%s] %d/%d %s" % ("#" * filled, "." * (width - filled), self.done, self.total, cell)
            sys.stderr.write("\r\033[K" + line[:160])
            sys.stderr.flush()

    def finish(self, cell: str, status: str, seconds: float) -> None:
        self.done += 1
        if self.style == "lines":
            sys.stderr.write("[%d/%d] %-14s %6.2fs %s\n" % (self.done, self.total, status, seconds, cell))
            sys.stderr.flush()

    def close(self) -> None:
        if self.style == "bar":
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _discover(args: argparse.Namespace) -> List[CaseInfo]:
    try:
        return discover_source(args.source, args.cases)
    except CaseError as exc:
        raise UsageError(str(exc))


def plan(
    infos: Sequence[CaseInfo], modes: Sequence[str], runs: int, torch_version: str, select: Optional[List[str]]
) -> List[Tuple[CaseInfo, str, int]]:
    cells = []
    for info in infos:
        for mode in modes:
            if not cell_selected(info.name, records.cell_id(torch_version, mode, info.name), select):
                continue
            for run in range(runs):
                cells.append((info, mode, run))
    return cells


def execute(args: argparse.Namespace) -> Dict[str, int]:
    """Run the selected cells; returns counts per status of the cells run now."""
    isolation_name = args.isolation or ("fork" if hasattr(os, "fork") else "spawn")
    if isolation_name == "fork" and args.device == "cpu":
        # A forked child deadlocks in OpenMP once the parent has used its thread pool.
        os.environ["OMP_NUM_THREADS"] = "1"
    if args.runs < 1:
        raise UsageError("--runs must be at least 1")
    stages = tuple(s for s in args.stages.split(",") if s)
    unknown = set(stages) - {"check", "decompose", "serialize"}
    if unknown:
        raise UsageError("--stages: unknown stage(s) %s; known: check, decompose, serialize" % sorted(unknown))
    infos = select_cases(_discover(args), args.tag)

    import torch

    from .capabilities import detect

    if isolation_name == "fork" and args.device == "cpu":
        torch.set_num_threads(1)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: CUDA is not available in this torch (%s)" % torch.__version__)
    found = detect()
    hidden = sorted(set(args.hide_capability) - set(found))
    if hidden:
        raise UsageError("--hide-capability: unknown capabilities %s; known: %s" % (hidden, ", ".join(sorted(found))))
    found.update({name: False for name in args.hide_capability})
    _STATE["found"] = found
    run_id = uuid.uuid4().hex[:12]
    env = environment_record(torch, found, args, run_id)
    path = os.path.join(args.out, records.env_file_name(env["torch_version"], env["variant"], env["python"]))
    done: set = set()
    warnings: List[str] = []
    if not args.force:
        done, warnings = records.done_keys(path)
    for warning in warnings:
        sys.stderr.write("warning: %s\n" % warning)
    modes = MODES if args.mode == "both" else (args.mode,)
    cells = plan(infos, modes, args.runs, env["torch_version"], args.select)
    todo = [c for c in cells if (c[0].name, c[1], c[2]) not in done]
    sys.stderr.write(
        "torch %s (%s): %d cells, %d already recorded, %d to run -> %s\n"
        % (env["torch_version"], env["variant"], len(cells), len(cells) - len(todo), len(todo), path)
    )
    counts: Dict[str, int] = {}
    with records.Writer(path) as writer:
        writer.write(env)
        if not todo:
            return counts
        backend = _backend(isolation_name, found, args)
        progress = Progress(len(todo), args.progress)
        try:
            for info, mode, run in todo:
                record = _run_one(backend, info, mode, run, env, found, args, stages, progress)
                writer.write(record)
                counts[record["status"]] = counts.get(record["status"], 0) + 1
        finally:
            progress.close()
            backend.close()
    return counts


def _backend(name: str, found: Dict[str, bool], args: argparse.Namespace) -> Any:
    from . import isolate

    memory = None if args.device == "cuda" else (args.max_memory or None)
    if name == "spawn":
        return isolate.SpawnIsolation(memory)
    from .cell import warm_up

    problem = warm_up(found)
    if problem:
        sys.stderr.write(
            "warning: the warm-up export failed (%s); timings of the first cells include warm-up\n" % problem
        )
    if name == "inline":
        return isolate.InlineIsolation(work)
    return isolate.ForkIsolation(work, memory)


def _run_one(
    backend: Any,
    info: CaseInfo,
    mode: str,
    run: int,
    env: Dict[str, Any],
    found: Dict[str, bool],
    args: argparse.Namespace,
    stages: Tuple[str, ...],
    progress: Progress,
) -> Dict[str, Any]:
    cell = records.cell_id(env["torch_version"], mode, info.name)
    record = records.empty_cell(
        run_id=env["run_id"], env_id=env["env_id"], cell_id=cell, torch_version=env["torch_version"],
        variant=env["variant"], python=env["python"], device=args.device, source=info.source, case=info.name,
        case_file=info.path, mode=mode, run=run, tags=list(info.tags), requires=list(info.requires),
        expected=info.expected,
    )  # fmt: skip
    progress.start(cell)
    start = time.perf_counter()
    missing = missing_for(info, mode, found)
    if info.problem:
        record.update(
            status="case-error",
            failed_stage="load",
            error_type="matrix.worker.case.CaseError",
            error_message=info.problem,
        )
    elif missing:
        lacks = "needs %s, which torch %s lacks" % (", ".join(missing), env["torch_version"])
        record.update(status="not-applicable", missing=missing, error_message=lacks)
    else:
        job = {"info": dataclasses.asdict(info), "mode": mode, "device": args.device, "stages": list(stages)}
        result = backend.run(job, args.timeout)
        record.update({k: v for k, v in result.items() if k in records.CELL_KEYS})
    record["total_s"] = round(time.perf_counter() - start, 6)
    record["finished_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    if record["status"] is None:
        record.update(status="crash", error_message="the cell reported no status")
    progress.finish(cell, record["status"], record["total_s"])
    return record


def main(args: argparse.Namespace) -> int:
    try:
        counts = execute(args)
    except UsageError as exc:
        sys.stderr.write("export-matrix run: error: %s\n" % exc)
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("\nexport-matrix run: interrupted; every finished cell is recorded, run again to resume\n")
        return 130
    summary = ", ".join("%s %d" % (status, counts[status]) for status in records.STATUSES if status in counts)
    sys.stderr.write("done: %s\n" % (summary or "nothing to run"))
    return 0
