"""``export-matrix load ARTIFACT_DIR... --out DIR``: programs saved on any release, loaded and run on this one.

``run --artifacts`` keeps each passing cell's program with its inputs and eager outputs
(see :mod:`matrix.worker.artifacts`). This command takes every artifact under the
folders given, whichever release saved it (this one included), and in this torch loads
it with ``torch.export.load``, runs it on the saved inputs and compares the results with
the saved outputs, with the cell check's tolerance. Each artifact is isolated as a cell
is: a load that crashes or hangs is recorded as such and the command goes on.

One record per artifact goes to ``DIR/load_torch-<version>_<variant>_py<X.Y>.jsonl``
(kind ``load``, keys ``schema.LOAD_KEYS``, statuses ``schema.LoadStatus``). Artifacts
already recorded there (same saving release, case and mode) are skipped unless
``--force``; the run journal locks the file and records an artifact that killed the
command as a crash rather than loading it again.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import os
import sys
import time
import uuid
from typing import Any, Dict, List, Optional, Set, Tuple

from ..errors import UserError
from ..options import (
    PROGRESS,
    add_jobs,
    add_limits,
    add_progress,
    at_least,
    from_namespace,
    memory_mb,
    positive_seconds,
    safe_name,
)
from ..schema import LOAD_KEYS, LOAD_STATUSES, MODES, SCHEMA_VERSION, LoadStatus, now
from . import artifacts, records, resources
from .environment import installed_torch_version, variant_of
from .journal import Journal, culprits, interrupted
from .lanes import Lanes
from .progress import Progress, say

# (saved_torch_version, saved_variant, saved_python, case, mode): what a load record is kept for.
Key = Tuple[str, str, str, str, str]


class UsageError(UserError):
    """Bad options or input; the message says which."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "artifacts",
        nargs="+",
        metavar="ARTIFACT_DIR",
        help="folders written by `run --artifacts` (or one release's folder in one)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the record file")
    parser.add_argument(
        "--select",
        nargs="+",
        metavar="GLOB",
        default=None,
        help="keep artifacts whose case name or path (release/mode/case) matches one of these globs",
    )
    add_limits(parser, "load")
    parser.add_argument("--variant", default=None, help="wheel variant to record (default: from torch's version tag)")
    parser.add_argument("--force", action="store_true", help="load artifacts already recorded in --out again")
    parser.add_argument(
        "--isolation",
        choices=("fork", "inline"),
        default=None,
        help="fork per artifact (default where available), or none (debugging only)",
    )
    add_progress(parser, "artifact")
    add_jobs(
        parser,
        "artifacts loaded at once, each in its own forked process (default 0: the usable cores,"
        " as many as memory holds at --max-memory each)",
    )


@dataclasses.dataclass(frozen=True)
class LoadOptions:
    """The options of ``export-matrix load``, validated before torch is imported."""

    artifacts: Tuple[str, ...]
    out: str
    select: Optional[Tuple[str, ...]] = None
    timeout: float = 120.0
    max_memory: int = 8192
    variant: Optional[str] = None
    force: bool = False
    isolation: Optional[str] = None
    progress: str = "auto"
    jobs: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "artifacts", tuple(self.artifacts))
        at_least("--jobs", self.jobs, 0)
        if not self.artifacts:
            raise UsageError("ARTIFACT_DIR: give at least one folder written by `run --artifacts`")
        if self.select is not None:
            object.__setattr__(self, "select", tuple(self.select))
        object.__setattr__(self, "timeout", positive_seconds("--timeout", self.timeout))
        memory_mb("--max-memory", self.max_memory)
        safe_name("--variant", self.variant)
        if self.isolation not in (None, "fork", "inline"):
            raise UsageError("--isolation %s: choose fork or inline" % self.isolation)
        if self.progress not in PROGRESS:
            raise UsageError("--progress %s: choose auto, bar, lines or none" % self.progress)

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> LoadOptions:
        return from_namespace(cls, namespace)

    @property
    def isolation_name(self) -> str:
        return self.isolation or ("fork" if hasattr(os, "fork") else "inline")


OPTIONS = LoadOptions


def file_name(torch_version: str, variant: str, python: str) -> str:
    """The load record file of one loading environment: ``load_torch-2.9.1_pypi_py3.11.jsonl``."""
    return "load_" + records.env_file_name(torch_version, variant, python)


# --- finding artifacts ---------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Artifact:
    """One artifact folder, identified from its meta.json or, failing that, from its path."""

    folder: str
    relative: str  # <environment>/<mode>/<case folder>
    saved_torch_version: str
    saved_variant: str
    saved_python: str
    case: str
    mode: str
    meta: Optional[Dict[str, Any]]
    problem: Optional[str]  # why it cannot be loaded before trying (incomplete, inconsistent)

    @property
    def key(self) -> Key:
        return (self.saved_torch_version, self.saved_variant, self.saved_python, self.case, self.mode)


def _folders(path: str) -> List[str]:
    try:
        names = os.listdir(path)
    except OSError:
        return []
    return sorted(name for name in names if not name.startswith(".") and os.path.isdir(os.path.join(path, name)))


def _environments(root: str) -> List[str]:
    """The environment folders in ``root``: ``root`` itself when it is one, else its children that are."""
    if artifacts.parse_env_folder(os.path.basename(os.path.normpath(root))) is not None and any(
        os.path.isdir(os.path.join(root, mode)) for mode in MODES
    ):
        return [root]
    return [os.path.join(root, name) for name in _folders(root) if artifacts.parse_env_folder(name) is not None]


def discover(roots: Tuple[str, ...]) -> List[Artifact]:
    """Every artifact folder under ``roots``, in path order; the first of two with the same key is kept."""
    found: List[Artifact] = []
    for root in roots:
        if not os.path.isdir(root):
            raise UsageError("ARTIFACT_DIR %s: no such folder" % root)
        here = []
        for env in _environments(root):
            saved = artifacts.parse_env_folder(os.path.basename(os.path.normpath(env)))
            assert saved is not None
            for mode in MODES:
                for name in _folders(os.path.join(env, mode)):
                    here.append(_artifact(os.path.join(env, mode, name), saved, mode, name))
        if not here:
            raise UsageError(
                "ARTIFACT_DIR %s: no artifacts here; give the folder of `run --artifacts DIR`"
                " (it holds <torch>_<variant>_py<X.Y>/<mode>/<case> folders)" % root
            )
        found.extend(here)
    kept: Dict[Key, Artifact] = {}
    for artifact in found:
        if artifact.key in kept:
            sys.stderr.write(
                "warning: %s is the same artifact as %s; loading the first only\n"
                % (artifact.folder, kept[artifact.key].folder)
            )
            continue
        kept[artifact.key] = artifact
    return list(kept.values())


def _artifact(folder: str, saved: Tuple[str, str, str], mode: str, name: str) -> Artifact:
    torch_version, variant, python = saved
    relative = "%s/%s/%s" % (artifacts.env_folder(torch_version, variant, python), mode, name)
    meta, problem = artifacts.read_meta(folder)
    if meta is not None:
        where = (
            meta["torch_version"],
            meta["variant"],
            meta["python"],
            meta["mode"],
            artifacts.case_folder(meta["case"]),
        )
        if where != (torch_version, variant, python, mode, name):
            problem = "%s names %s/%s/%s, not the folder it is in" % (
                artifacts.META,
                artifacts.env_folder(meta["torch_version"], meta["variant"], meta["python"]),
                meta["mode"],
                artifacts.case_folder(meta["case"]),
            )
            meta = None
    if meta is None:
        # Without a usable meta.json the folder's own name stands for the case.
        return Artifact(folder, relative, torch_version, variant, python, name, mode, None, problem)
    return Artifact(folder, relative, torch_version, variant, python, meta["case"], mode, meta, None)


def selected(artifact: Artifact, select: Optional[Tuple[str, ...]]) -> bool:
    return not select or any(
        fnmatch.fnmatchcase(artifact.case, g) or fnmatch.fnmatchcase(artifact.relative, g) for g in select
    )


def done_keys(path: str) -> Tuple[Set[Key], List[str]]:
    """The artifacts already recorded in a load record file, for resuming."""
    if not os.path.exists(path):
        return set(), []
    found, warnings = records.read(path)
    keys: Set[Key] = set()
    for record in found:
        if record.get("kind") != "load":
            continue
        key = tuple(record.get(k) for k in ("saved_torch_version", "saved_variant", "saved_python", "case", "mode"))
        if all(isinstance(part, str) for part in key):
            keys.add(key)  # type: ignore[arg-type]
        else:
            warnings.append("%s: skipped a load record without a usable saving release, case and mode" % path)
    return keys, warnings


def _journal_key(key: Key) -> Tuple[str, str, int]:
    # The journal keeps (case, mode, run): the saving release goes into the first part.
    return (json.dumps(list(key[:4])), key[4], 0)


# --- in the isolated process ---------------------------------------------------------------


class _Mismatch(Exception):
    pass


def work(job: Dict[str, Any]) -> Dict[str, Any]:
    """Load one artifact, run it and compare (in the isolated child); returns record fields."""
    from .cell import out_of_memory

    fields: Dict[str, Any] = {"serializer_version": artifacts.serializer_version()}
    try:
        _load_and_run(job, fields)
    except MemoryError as exc:
        fields.update(out_of_memory(exc))
    return fields


def _describe(exc: BaseException) -> Dict[str, Any]:
    from .cell import describe_error

    return describe_error(exc)


def _load_and_run(job: Dict[str, Any], fields: Dict[str, Any]) -> None:
    import torch
    import torch.export

    from .cell import _compare

    folder, meta = job["folder"], job["meta"]
    problem = artifacts.verify(folder, meta)
    if problem is not None:
        fields.update(
            status=LoadStatus.LOAD_ERROR.value,
            error_type="IncompleteArtifact",
            error_message="incomplete artifact: %s" % problem,
        )
        return
    fields["case_module"] = _import_case(meta)
    # load_s times torch.export.load and reading the saved data, not the checks and imports before.
    start = time.perf_counter()
    try:
        program = torch.export.load(os.path.join(folder, artifacts.PROGRAM))
        inputs = artifacts.read_data(folder, artifacts.INPUTS)
        outputs = artifacts.read_data(folder, artifacts.OUTPUTS)
        if len(inputs) != len(outputs) or not all(
            isinstance(call, (list, tuple)) and len(call) == 2 and isinstance(call[1], dict) for call in inputs
        ):
            raise ValueError("%s and %s do not hold matching calls" % (artifacts.INPUTS, artifacts.OUTPUTS))
    except Exception as exc:
        fields.update(_describe(exc), status=LoadStatus.LOAD_ERROR.value)
        _blame_case_module(fields)
        return
    finally:
        fields["load_s"] = round(time.perf_counter() - start, 6)
    compare = not meta.get("skip_check")
    start = time.perf_counter()
    try:
        module = program.module()
        for number, ((args, kwargs), expected) in enumerate(zip(inputs, outputs)):
            try:
                actual = module(*args, **kwargs)
            except Exception as exc:
                exc.args = ("input %d: %s" % (number, exc.args[0] if exc.args else ""),) + tuple(exc.args[1:])
                raise
            if compare:
                try:
                    _compare(list(expected), actual)
                except AssertionError as exc:
                    raise _Mismatch("input %d: %s" % (number, str(exc).strip()))
        fields["checked_inputs"] = len(inputs)
    except _Mismatch as exc:
        fields.update(
            status=LoadStatus.MISMATCH.value,
            check_status="mismatch",
            check_detail=str(exc)[:2000],
            error_type="AssertionError",
            error_message=str(exc).splitlines()[0][:500],
        )
        return
    except Exception as exc:
        fields.update(_describe(exc), status=LoadStatus.RUN_ERROR.value, check_status="error")
        _blame_case_module(fields)
        return
    finally:
        fields["run_s"] = round(time.perf_counter() - start, 6)
    fields["status"] = LoadStatus.PASS.value
    fields["check_status"] = "ok" if compare else "skipped"
    if not compare:
        fields["check_detail"] = str(meta.get("skip_check"))


def _import_case(meta: Dict[str, Any]) -> str:
    """Import the case's module when its file is here: it registers what the program may name
    (custom ops, pytree types), as the user's own code would before loading. Returns how it went.

    Only a relative path inside the current folder (the project's checkout) is imported: an
    artifact's meta.json is data, and must not choose which code runs.
    """
    path = meta.get("case_file")
    if meta.get("source") != "cases" or not isinstance(path, str) or not _inside_here(path):
        return "absent"
    from .case import CaseInfo, load

    try:
        load(CaseInfo(name=str(meta["case"]), path=path, description=""))
    except Exception as exc:
        first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        return "failed: %s" % first
    return "imported"


def _inside_here(path: str) -> bool:
    if os.path.isabs(path) or not path.endswith(".py") or "\0" in path:
        return False
    here = os.path.realpath(os.getcwd())
    resolved = os.path.realpath(os.path.join(here, path))
    return os.path.commonpath([here, resolved]) == here and os.path.isfile(resolved)


def _blame_case_module(fields: Dict[str, Any]) -> None:
    note = fields.get("case_module") or ""
    if note.startswith("failed"):
        fields["error_message"] = records.without_paths(
            "%s (the case module did not import: %s)" % (fields.get("error_message") or "", note[len("failed: ") :])
        )


# --- in the parent ---------------------------------------------------------------------------


def _record(artifact: Artifact, env: Dict[str, Any]) -> Dict[str, Any]:
    record: Dict[str, Any] = {key: None for key in LOAD_KEYS}
    meta = artifact.meta or {}
    record.update(
        schema_version=SCHEMA_VERSION,
        kind="load",
        run_id=env["run_id"],
        saved_torch_version=artifact.saved_torch_version,
        saved_variant=artifact.saved_variant,
        saved_python=artifact.saved_python,
        torch_version=env["torch_version"],
        variant=env["variant"],
        python=env["python"],
        device=meta.get("device"),
        case=artifact.case,
        mode=artifact.mode,
        artifact=artifact.relative,
        saved_serializer_version=meta.get("serializer_version"),
        serializer_version=env["serializer_version"],
        format_version=meta.get("format_version"),
    )
    return record


def execute(options: LoadOptions) -> Dict[str, int]:
    """Load the selected artifacts; returns counts per status of the loads recorded now."""

    found = [a for a in discover(options.artifacts) if selected(a, options.select)]
    if not found:
        raise UsageError("nothing selected: no artifact under %s matches --select %s"
                         % (", ".join(options.artifacts), " ".join(options.select or ["*"])))  # fmt: skip
    version = installed_torch_version()
    variant = options.variant or variant_of(version)
    python = artifacts.python_version()
    path = os.path.join(options.out, file_name(version, variant, python))
    os.makedirs(options.out, exist_ok=True)
    with Journal(path) as journal:
        done: Set[Key] = set()
        if not options.force:
            done, warnings = done_keys(path)
            for warning in warnings:
                sys.stderr.write("warning: %s\n" % warning)
        todo = [a for a in found if a.key not in done]
        dead: Set[Key] = set()
        suspects: List[Any] = []
        if not options.force:
            by_journal = {_journal_key(a.key): a.key for a in todo}
            entries = journal.started()
            killers, suspects = culprits(
                entries, interrupted(entries, {_journal_key(k) for k in done}, list(by_journal))
            )
            dead = {by_journal[k] for k in killers}
        sys.stderr.write(
            "torch %s (%s): %d artifacts, %d already recorded, %d to load -> %s\n"
            % (version, variant, len(found), len(found) - len(todo), len(todo) - len(dead), path)
        )
        if not todo:
            return {}
        env = {"torch_version": version, "variant": variant, "python": python, "run_id": uuid.uuid4().hex[:12]}
        if suspects:  # the loader died with several loads in flight: one at a time, so the next death names one
            say("loading one at a time: the load command died while %d artifacts loaded side by side" % len(suspects))
            options = dataclasses.replace(options, jobs=1)
        return _load_all(options, todo, dead, path, journal, env)


def _load_all(
    options: LoadOptions, todo: List[Artifact], dead: Set[Key], path: str, journal: Journal, env: Dict[str, Any]
) -> Dict[str, int]:
    from . import isolate

    fork = options.isolation_name == "fork"
    if fork:
        # A forked child deadlocks in OpenMP once the parent has used its thread pool.
        os.environ["OMP_NUM_THREADS"] = "1"
    say("importing torch %s..." % env["torch_version"])
    import torch

    if fork:
        torch.set_num_threads(1)
    try:
        import torch.export

        can_load = hasattr(torch.export, "load")
    except Exception:
        can_load = False
    if can_load:
        _warm_up()
    env["serializer_version"] = artifacts.serializer_version()
    counts: Dict[str, int] = {}
    with records.Writer(path) as writer:

        def write(record: Dict[str, Any]) -> None:
            record["finished_at"] = now()
            writer.write(record)
            counts[record["status"]] = counts.get(record["status"], 0) + 1

        live = []
        for artifact in todo:
            record = _record(artifact, env)
            if artifact.key in dead:
                record.update(
                    status=LoadStatus.CRASH.value,
                    error_type="matrix.worker.loader.LoaderDied",
                    error_message="the load command died while this artifact loaded (killed by it or from"
                    " outside); recorded as a crash and not loaded again without --force",
                )
                sys.stderr.write("crash (the loader died during it in an earlier run): %s\n" % artifact.relative)
            elif artifact.problem is not None:
                record.update(
                    status=LoadStatus.LOAD_ERROR.value,
                    error_type="IncompleteArtifact",
                    error_message="incomplete artifact: %s" % artifact.problem,
                )
            elif not can_load:
                record.update(
                    status=LoadStatus.NOT_APPLICABLE.value,
                    error_message="torch %s has no torch.export.load" % env["torch_version"],
                )
            else:
                live.append((artifact, record))
                continue
            write(record)
        if not live:
            return counts
        memory = options.max_memory or None
        lanes = min(resources.jobs(options.jobs or None, memory or 4096), len(live)) if fork else 1
        if lanes > 1:
            backend: Any = Lanes(lambda: isolate.ForkIsolation(work, memory), lanes)
            say("loading %d artifacts, %d at a time" % (len(live), lanes))
        else:
            backend = isolate.ForkIsolation(work, memory) if fork else isolate.InlineIsolation(work)
        progress = Progress(len(live), options.progress)
        started: Dict[str, float] = {}

        def hand_out() -> Any:
            for artifact, record in live:
                journal.start(_journal_key(artifact.key), env["run_id"], now(), alone=lanes == 1)
                progress.start(artifact.relative)
                started[artifact.relative] = time.perf_counter()
                yield (artifact, record), {"folder": os.path.abspath(artifact.folder), "meta": artifact.meta}

        def finish(artifact: Any, record: Dict[str, Any], result: Dict[str, Any]) -> None:
            record.update({k: v for k, v in result.items() if k in LOAD_KEYS and k not in _PARENT_KEYS})
            record["total_s"] = round(time.perf_counter() - started[artifact.relative], 6)
            if record["status"] not in LOAD_STATUSES:
                record.update(status=LoadStatus.CRASH.value, error_message="the load reported no status")
            progress.finish(artifact.relative, record["status"], record["total_s"])
            write(record)

        try:
            if lanes > 1:
                for (artifact, record), result in backend.run(hand_out(), options.timeout):
                    finish(artifact, record, result)
            else:
                for (artifact, record), job in hand_out():
                    finish(artifact, record, backend.run(job, options.timeout))
        finally:
            progress.close()
            backend.close()
    return counts


# What the parent knows better than the child: the identity of the load.
_PARENT_KEYS = frozenset(("schema_version", "kind", "run_id", "torch_version", "variant", "python", "case", "mode"))


def _warm_up() -> None:
    """Save, load and run a tiny program once in the parent, so that forked loads time the load, not imports.

    Loading and running a program imports the deserializer, the unlifting code and more on
    first use, which costs more than a second on some releases; forked children inherit it.
    """
    import io

    import torch

    try:
        program = torch.export.export(torch.nn.Linear(2, 2), (torch.ones(1, 2),))
        buffer = io.BytesIO()
        torch.export.save(program, buffer)
        buffer.seek(0)
        torch.export.load(buffer).module()(torch.ones(1, 2))
    except Exception:  # the warm-up only saves time: a release where it fails loads each program cold
        pass


def main(options: LoadOptions) -> int:
    counts = execute(options)
    summary = ", ".join("%s %d" % (status, counts[status]) for status in LOAD_STATUSES if status in counts)
    sys.stderr.write("done: %s\n" % (summary or "nothing to load"))
    return 0
