"""``export-matrix run``: run the case set in the installed torch and append records.

The parent imports torch once, detects capabilities, exports a tiny model to warm up,
then hands each (case, mode, run) cell to an isolation backend. Records are flushed one
by one, so an interrupted run keeps every finished cell and the next run resumes.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import os
import sys
import time
import uuid
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import UserError
from ..options import (
    add_jobs,
    add_limits,
    add_progress,
    at_least,
    from_namespace,
    memory_mb,
    positive_seconds,
    safe_name,
)
from ..schema import CELL_KEYS, MODES, STATUSES, Status, cell_id, now
from . import records, resources
from .case import CaseError, CaseInfo, missing_for
from .environment import environment_record, installed_torch_version, variant_of
from .journal import Journal, culprits, interrupted
from .progress import Progress, say
from .sources import SOURCES, discover_source, loader_for


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cases", nargs="+", metavar="PATH", default=None, help="case files or folders (default: ./cases)"
    )
    parser.add_argument(
        "--source",
        choices=SOURCES,
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
    parser.add_argument(
        "--mode",
        choices=("strict", "non-strict", "both"),
        default="both",
        help="export with strict=True, strict=False, or both (default both)",
    )
    add_limits(parser, "cell")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="where the cases run (default cpu)")
    parser.add_argument("--variant", default=None, help="wheel variant to record (default: from torch's version tag)")
    parser.add_argument("--runs", type=int, default=1, metavar="N", help="repetitions of each cell (default 1)")
    parser.add_argument(
        "--force", action="store_true", help="re-run cells already recorded in --out (and cells a dead run left)"
    )
    parser.add_argument(
        "--isolation",
        choices=("fork", "spawn", "inline"),
        default=None,
        help="fork per cell (default where available), a fresh interpreter per cell, or none (debugging only)",
    )
    parser.add_argument(
        "--stages",
        default=",".join(STAGES),
        help="stages after export, comma-separated: check (run and compare with eager), decompose,"
        " serialize (save/load round trip), diagnose (draft_export on a failed export);"
        " default: %s" % ",".join(STAGES),
    )
    parser.add_argument(
        "--hide-capability",
        nargs="+",
        metavar="NAME",
        default=[],
        help="treat these capabilities as missing, to preview how older releases report",
    )
    add_progress(parser, "cell")
    add_jobs(
        parser,
        "cells run at once, each in its own forked process (default 0: the usable cores,"
        " as many as memory holds at --max-memory each)",
    )
    parser.add_argument(
        "--warm-up",
        choices=("auto", "always", "never"),
        default="auto",
        help="export a tiny model before forking cells: auto does it from %d cells on (default auto)" % WARM_UP_FROM,
    )
    parser.add_argument(
        "--artifacts",
        metavar="DIR",
        default=None,
        help="keep each passing cell's saved program, inputs and eager outputs under DIR, for `load` on other releases",
    )
    parser.add_argument(
        "--no-artifacts", dest="artifacts", action="store_const", const=None, help="keep none (default)"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the record files")


STAGES = ("check", "decompose", "serialize", "diagnose")
# A failed export's diagnosis may use this share of the cell's --timeout, less what the cell
# already spent: the rest is margin, so that a slow diagnosis never turns a fail into a timeout.
DIAGNOSIS_SHARE = 0.6
# From this many cells on, a warm-up export in the parent costs less than each forked cell
# paying first-use costs itself (benchmarks/overhead.py --warm-up measures the break-even).
WARM_UP_FROM = 6
# What a cell may take when --max-memory is 0 (no limit), for sizing parallel cells.
DEFAULT_CELL_MB = 4096


class UsageError(UserError):
    """Bad options or input; the message says which."""


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """The options of ``export-matrix run``, validated before torch is imported."""

    out: str
    cases: Optional[Tuple[str, ...]] = None
    source: str = "cases"
    select: Optional[Tuple[str, ...]] = None
    tag: Optional[Tuple[str, ...]] = None
    mode: str = "both"
    timeout: float = 120.0
    max_memory: int = 8192
    device: str = "cpu"
    variant: Optional[str] = None
    runs: int = 1
    force: bool = False
    isolation: Optional[str] = None
    stages: Tuple[str, ...] = STAGES
    hide_capability: Tuple[str, ...] = ()
    progress: str = "auto"
    warm_up: str = "auto"
    jobs: int = 0
    artifacts: Optional[str] = None

    def __post_init__(self) -> None:
        def tuple_of(value: Any) -> Optional[Tuple[str, ...]]:
            return None if value is None else tuple(value)

        for name in ("cases", "select", "tag"):
            object.__setattr__(self, name, tuple_of(getattr(self, name)))
        object.__setattr__(self, "hide_capability", tuple(self.hide_capability or ()))
        stages = self.stages.split(",") if isinstance(self.stages, str) else list(self.stages)
        object.__setattr__(self, "stages", tuple(s.strip() for s in stages if s.strip()))
        unknown = sorted(set(self.stages) - set(STAGES))
        if unknown:
            raise UsageError("--stages: unknown stage(s) %s; known: %s" % (", ".join(unknown), ", ".join(STAGES)))
        object.__setattr__(self, "timeout", positive_seconds("--timeout", self.timeout))
        memory_mb("--max-memory", self.max_memory)
        at_least("--runs", self.runs, 1)
        at_least("--jobs", self.jobs, 0)
        safe_name("--variant", self.variant)
        if self.source not in SOURCES:
            raise UsageError("--source %s: choose one of %s" % (self.source, ", ".join(SOURCES)))
        if self.mode not in ("both",) + MODES:
            raise UsageError("--mode %s: choose strict, non-strict or both" % self.mode)
        if self.tag:
            from .case import TAGS

            unknown = sorted(set(self.tag) - TAGS)
            if unknown:
                raise UsageError(
                    "--tag: unknown tag(s) %s; the taxonomy is in matrix/worker/case.py (e.g. %s)"
                    % (", ".join(unknown), ", ".join(sorted(TAGS)[:4]))
                )

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> RunOptions:
        return from_namespace(cls, namespace)

    @property
    def modes(self) -> Tuple[str, ...]:
        return MODES if self.mode == "both" else (self.mode,)

    def lanes(self) -> int:
        """Cells run at once: as asked, else the usable cores, as many as memory holds at --max-memory each."""
        if self.isolation_name == "inline":
            return 1  # no isolation: nothing to run side by side
        per_cell = self.max_memory or DEFAULT_CELL_MB
        return resources.jobs(self.jobs or None, per_cell)

    @property
    def isolation_name(self) -> str:
        return self.isolation or ("fork" if hasattr(os, "fork") else "spawn")


OPTIONS = RunOptions


def select_cases(infos: Sequence[CaseInfo], tags: Optional[Sequence[str]]) -> List[CaseInfo]:
    """The cases with one of ``tags`` (all cases when none are given); globs apply per cell, in ``plan``."""
    return [info for info in infos if not tags or set(tags) & set(info.tags)]


def cell_selected(case: str, cell: str, select: Optional[Sequence[str]]) -> bool:
    return not select or any(fnmatch.fnmatchcase(case, g) or fnmatch.fnmatchcase(cell, g) for g in select)


def work(job: Dict[str, Any]) -> Dict[str, Any]:
    """Run one cell (in the isolated child); the job carries everything, the child keeps no state."""
    from .cell import run_cell

    fields: Dict[str, Any] = dict(job["info"], tags=tuple(job["info"]["tags"]), requires=tuple(job["info"]["requires"]))
    info = CaseInfo(**fields)
    found = job["found"]
    target = None
    if job.get("artifacts"):
        from .artifacts import Target

        target = Target(job["artifacts"], job["variant"], job["device"])
    stages = tuple(job["stages"])
    return run_cell(
        info, job["mode"], found, loader_for(info.source), job["device"], stages, target, job.get("diagnose_s", 0.0)
    )


def _discover(options: RunOptions) -> List[CaseInfo]:
    try:
        return discover_source(options.source, list(options.cases) if options.cases else None)
    except CaseError as exc:
        raise UsageError(str(exc))


Cell = Tuple[CaseInfo, str, int]


def plan(
    infos: Sequence[CaseInfo], modes: Sequence[str], runs: int, torch_version: str, select: Optional[Sequence[str]]
) -> List[Cell]:
    cells = []
    for info in infos:
        for mode in modes:
            if not cell_selected(info.name, cell_id(torch_version, mode, info.name), select):
                continue
            for run in range(runs):
                cells.append((info, mode, run))
    return cells


def record_path(options: RunOptions, torch_version: str, variant: str) -> str:
    python = "%d.%d" % sys.version_info[:2]
    return os.path.join(options.out, records.env_file_name(torch_version, variant, python))


def execute(options: RunOptions) -> Dict[str, int]:
    """Run the selected cells; returns counts per status of the cells recorded now."""
    infos = select_cases(_discover(options), list(options.tag) if options.tag else None)
    version = installed_torch_version()
    variant = options.variant or variant_of(version)
    cells = plan(infos, options.modes, options.runs, version, options.select)
    if not cells:
        raise UsageError(
            "nothing selected: no case of %d matches --select %s --tag %s in --mode %s"
            % (len(infos), " ".join(options.select or ["*"]), " ".join(options.tag or ["*"]), options.mode)
        )
    path = record_path(options, version, variant)
    os.makedirs(options.out, exist_ok=True)
    with Journal(path) as journal:
        done: set = set()
        warnings: List[str] = []
        if not options.force:
            done, warnings = records.done_keys(path)
        for warning in warnings:
            sys.stderr.write("warning: %s\n" % warning)
        wanted = [(info.name, mode, run) for info, mode, run in cells]
        dead: set = set()
        suspects: List[Any] = []
        if not options.force:
            started = journal.started()
            killers, suspects = culprits(started, interrupted(started, done, wanted))
            dead = set(killers)
        todo = [c for c in cells if (c[0].name, c[1], c[2]) not in done]
        # Suspects of a runner's death go first, one at a time: see journal.culprits.
        first = set(suspects)
        todo = [c for c in todo if (c[0].name, c[1], c[2]) in first] + [
            c for c in todo if (c[0].name, c[1], c[2]) not in first
        ]
        sys.stderr.write(
            "torch %s (%s): %d cells, %d already recorded, %d to run -> %s\n"
            % (version, variant, len(cells), len(cells) - len(todo), len(todo) - len(dead), path)
        )
        if not todo:
            return {}
        return _run_cells(options, todo, dead, path, journal, variant, first)


def _run_cells(
    options: RunOptions,
    todo: List[Cell],
    dead: set,
    path: str,
    journal: Journal,
    variant: str,
    suspects: Optional[set] = None,
) -> Dict[str, int]:
    if options.isolation_name == "fork" and options.device == "cpu":
        # A forked child deadlocks in OpenMP once the parent has used its thread pool.
        os.environ["OMP_NUM_THREADS"] = "1"
    say("importing torch %s..." % installed_torch_version())
    import torch
    import torch.export  # noqa: F401  # every cell needs it: import it once, before forking

    try:  # strict export traces with dynamo: a second of import that each forked cell would pay again
        import torch._dynamo  # noqa: F401
    except Exception:
        pass

    from .capabilities import cached_detect

    if options.isolation_name == "fork" and options.device == "cpu":
        torch.set_num_threads(1)
    if options.device == "cuda" and not torch.cuda.is_available():
        raise UsageError("--device cuda: CUDA is not available in this torch (%s)" % torch.__version__)
    found, cached = cached_detect()
    if not cached:
        say("detected the capabilities of this torch (kept for the next run)")
    hidden = sorted(set(options.hide_capability) - set(found))
    if hidden:
        raise UsageError("--hide-capability: unknown capabilities %s; known: %s" % (hidden, ", ".join(sorted(found))))
    found.update({name: False for name in options.hide_capability})
    run_id = uuid.uuid4().hex[:12]
    env = environment_record(torch, found, options.device, options.source, run_id, variant)
    counts: Dict[str, int] = {}
    with records.Writer(path) as writer:
        writer.write(env)
        for info, mode, run in [c for c in todo if (c[0].name, c[1], c[2]) in dead]:
            record = _cell_record(info, mode, run, env, options)
            record.update(
                status="crash",
                reason="runner-killed",
                error_type="matrix.worker.runner.RunnerDied",
                error_message="the runner died while this cell ran (killed by the case or from outside);"
                " recorded as a crash and not run again without --force",
                finished_at=now(),
            )
            writer.write(record)
            counts["crash"] = counts.get("crash", 0) + 1
            sys.stderr.write("crash (runner died during it in an earlier run): %s\n" % record["cell_id"])
        live = [c for c in todo if (c[0].name, c[1], c[2]) not in dead]
        if not live:
            return counts

        def keep(cell: Dict[str, Any]) -> None:
            writer.write(cell)
            counts[cell["status"]] = counts.get(cell["status"], 0) + 1

        progress = Progress(len(live), options.progress)
        prepared = [_prepare(info, mode, run, env, found, options) for info, mode, run in live]
        for cell, job in prepared:
            if job is None:
                _finish(cell, None, time.perf_counter(), progress)
                keep(cell)
        runnable = [(cell, job) for cell, job in prepared if job is not None]
        suspected = [(c, j) for c, j in runnable if (c["case"], c["mode"], c["run"]) in (suspects or set())]
        rest = [(c, j) for c, j in runnable if (c["case"], c["mode"], c["run"]) not in (suspects or set())]
        lanes = min(options.lanes(), len(rest))
        try:
            if suspected:
                say("running %d cells again, one at a time: the runner died while they ran" % len(suspected))
                _run_isolated(options, found, suspected, 1, journal, run_id, progress, keep)
            if lanes > 1:
                say("running %d cells, %d at a time" % (len(rest), lanes))
            if rest:
                _run_isolated(options, found, rest, lanes, journal, run_id, progress, keep)
        finally:
            progress.close()
    return counts


def _run_isolated(
    options: RunOptions,
    found: Dict[str, bool],
    runnable: List[Tuple[Dict[str, Any], Dict[str, Any]]],
    lanes: int,
    journal: Journal,
    run_id: str,
    progress: Progress,
    keep: Any,
) -> None:
    """Run the cells that need torch, one at a time or in parallel lanes; record each as it ends."""
    backend = _backend(options, found, len(runnable), lanes)
    started: Dict[str, float] = {}

    def hand_out() -> Any:
        for cell, job in runnable:
            journal.start((cell["case"], cell["mode"], cell["run"]), run_id, now(), alone=lanes == 1)
            progress.start(cell["cell_id"])
            started[cell["cell_id"]] = time.perf_counter()
            yield cell, job

    try:
        if lanes > 1:
            for cell, result in backend.run(hand_out(), options.timeout):
                _finish(cell, result, started[cell["cell_id"]], progress)
                keep(cell)
        else:
            for cell, job in hand_out():
                _finish(cell, backend.run(job, options.timeout), started[cell["cell_id"]], progress)
                keep(cell)
    finally:
        backend.close()


def warms_up(options: RunOptions, cells: int) -> bool:
    """Whether a warm-up export in the parent pays for itself: only over enough forked cells."""
    if options.isolation_name == "spawn" or options.warm_up == "never":
        return False
    return options.warm_up == "always" or cells >= WARM_UP_FROM


def _backend(options: RunOptions, found: Dict[str, bool], cells: int, lanes: int = 1) -> Any:
    from . import isolate

    memory = None if options.device == "cuda" else (options.max_memory or None)
    if options.isolation_name == "spawn":
        if lanes > 1:
            from .lanes import Lanes

            return Lanes(lambda: isolate.SpawnIsolation(memory), lanes)
        return isolate.SpawnIsolation(memory)
    if warms_up(options, cells):
        from .cell import warm_up

        say("warming up (one export in each mode, so that forked cells time their case, not first use)...")
        problem = warm_up(found)
        if problem:
            say("warning: the warm-up export failed (%s); timings of the first cells include warm-up" % problem)
    if options.isolation_name == "inline":
        return isolate.InlineIsolation(work)
    if lanes > 1:
        from .lanes import Lanes

        return Lanes(lambda: isolate.ForkIsolation(work, memory), lanes)
    return isolate.ForkIsolation(work, memory)


def _cell_record(info: CaseInfo, mode: str, run: int, env: Dict[str, Any], options: RunOptions) -> Dict[str, Any]:
    return records.empty_cell(
        run_id=env["run_id"], env_id=env["env_id"], cell_id=cell_id(env["torch_version"], mode, info.name),
        torch_version=env["torch_version"], variant=env["variant"], python=env["python"], device=options.device,
        source=info.source, case=info.name, case_file=info.path, mode=mode, run=run, tags=list(info.tags),
        requires=list(info.requires), expected=info.expected,
    )  # fmt: skip


def _prepare(
    info: CaseInfo, mode: str, run: int, env: Dict[str, Any], found: Dict[str, bool], options: RunOptions
) -> Tuple[Dict[str, Any], Optional[Dict[str, Any]]]:
    """A cell's record, and the job its isolation must run (None when the record is already complete)."""
    record = _cell_record(info, mode, run, env, options)
    missing = missing_for(info, mode, found)
    if info.problem:
        record.update(
            status=Status.CASE_ERROR.value,
            failed_stage="load",
            error_type="matrix.worker.case.CaseError",
            error_message=info.problem,
        )
        return record, None
    if missing:
        lacks = "needs %s, which torch %s lacks" % (", ".join(missing), env["torch_version"])
        record.update(status=Status.NOT_APPLICABLE.value, missing=missing, error_message=lacks)
        return record, None
    job = {
        "info": dataclasses.asdict(info),
        "mode": mode,
        "device": options.device,
        "stages": list(options.stages),
        "found": found,
        "diagnose_s": DIAGNOSIS_SHARE * options.timeout if "diagnose" in options.stages else 0.0,
        "artifacts": options.artifacts if run == 0 else None,  # one program per cell, whatever --runs
        "variant": env["variant"],
    }
    return record, job


def _finish(record: Dict[str, Any], result: Optional[Dict[str, Any]], started: float, progress: Progress) -> None:
    if result is not None:
        record.update({k: v for k, v in result.items() if k in CELL_KEYS})
    record["total_s"] = round(time.perf_counter() - started, 6)
    record["finished_at"] = now()
    if record["status"] is None:
        record.update(status=Status.CRASH.value, error_message="the cell reported no status")
    progress.finish(record["cell_id"], record["status"], record["total_s"])


def main(options: RunOptions) -> int:
    counts = execute(options)
    summary = ", ".join("%s %d" % (status, counts[status]) for status in STATUSES if status in counts)
    sys.stderr.write("done: %s\n" % (summary or "nothing to run"))
    return 0
