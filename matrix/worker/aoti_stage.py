"""The aoti stage in the cell: the exported program compiled with AOTInductor, then kept with the saved program.

``run --stages ...,aoti`` only. Where the export passed, the cell compiles its program with the
release's own API (:mod:`.aoti`) before the check runs it (running a program can update its buffers
in place, as the serialize stage knows). The compile runs in a process forked from the cell
(:mod:`.forked`) with its own deadline, ``--aoti-timeout``: a compile that hangs or dies is the
stage's ``timeout`` or ``crash``, and the cell's status stays what its export and check say.

The package waits in a temporary folder until the cell keeps its program
(:func:`matrix.worker.artifacts.keep`), which lists and signs it with the rest; a cell whose program
is not kept (it did not pass) does not load its package: the stage is ``skipped`` and says why. The
load itself, in a process that never compiled, is the cell's follow-up (:mod:`.load_job`), which
decides ``aoti_status``.

Standard library only (torch is imported when the stage runs), Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Tuple

from ..contract import layout, records
from ..contract.layout import Artifact
from ..contract.products import PACKAGE
from ..contract.records import without_paths
from ..contract.schema import (
    AOTI_KEYS,
    LOAD_STATUSES,
    STAGE_ERROR,
    STAGE_MISMATCH,
    STAGE_OK,
    STAGE_SKIPPED,
    LoadStatus,
    Status,
    first_line,
)
from . import aoti, forked, signing
from .failure import describe_error
from .load_job import FRESH_PACKAGE_LOAD, LoadJob, calls_of, import_case, in_private, incomplete, run_calls
from .load_job import settle as settle_load
from .stage import Fields, StageRun
from .steps import clone
from .use import Found, Use, listed

NOT_APPLICABLE, CRASH, TIMEOUT = Status.NOT_APPLICABLE.value, Status.CRASH.value, Status.TIMEOUT.value


@dataclasses.dataclass(frozen=True)
class Compiled:
    """A package the stage compiled, in a temporary folder until the cell keeps it with its program."""

    path: str
    meta: Dict[str, Any]  # what meta.json says of it under ``aoti``: file, api, in_spec, device, compile_s

    @property
    def file(self) -> str:
        """Its name in the saved-program folder (aoti.AOTI_PACKAGE or aoti.AOTI_LIBRARY)."""
        return str(self.meta["file"])

    def discard(self) -> None:
        shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)


def blank() -> Dict[str, Any]:
    """The aoti fields of a cell whose run selected the stage, before it runs."""
    return {key: None for key in AOTI_KEYS}


def compile_stage(
    record: Dict[str, Any],
    program: Any,
    args: Sequence[Any],
    kwargs: Dict[str, Any],
    device: str,
    timeout_s: float,
    describe: Callable[[BaseException], Dict[str, Any]],
) -> Optional[Compiled]:
    """Compile ``program`` for the aoti stage; the record gets what the compile found. None: nothing to load.

    ``describe`` turns an exception into the record's error fields (``failure.describe_error``).
    """
    record.update(blank())
    api, missing = aoti.find_api()
    if api is None:
        record.update(aoti_status=NOT_APPLICABLE, aoti_error=missing)
        return None
    record["aoti_api"] = api.name
    problem = aoti.compiler_problem()
    if problem is not None:
        error = "compile: %s" % without_paths(problem)
        record.update(aoti_status=NOT_APPLICABLE, aoti_error_type=aoti.NO_COMPILER_TYPE, aoti_error=error[:500])
        return None
    folder = tempfile.mkdtemp(prefix="export-matrix-aoti-")
    path = os.path.join(folder, api.file)
    try:
        spec = aoti.spec_text(program)
    except Exception as exc:
        shutil.rmtree(folder, ignore_errors=True)
        _failed(record, STAGE_ERROR, describe(exc), "compile")
        return None

    result = compile_in_child(api, program, args, kwargs, path, timeout_s, describe, "the aoti stage's")
    record["aoti_compile_s"] = result.get("compile_s")
    if result["status"] != "compiled":
        shutil.rmtree(folder, ignore_errors=True)
        _failed(record, result["status"], result, "compile")
        return None
    record["aoti_package_bytes"] = os.path.getsize(path)
    meta = {"file": api.file, "api": api.name, "in_spec": spec, "device": device, "compile_s": result["compile_s"]}
    return Compiled(path, meta)


def compile_in_child(
    api: aoti.Api,
    program: Any,
    args: Any,
    kwargs: Any,
    path: str,
    timeout_s: float,
    describe: Callable[[BaseException], Dict[str, Any]],
    limited: str,
) -> Dict[str, Any]:
    """Compile ``program`` into ``path`` in a forked child bounded by ``timeout_s`` (``limited``: whose limit, for
    a timeout's message): ``{"status": "compiled", "compile_s": ...}``, or the failure's status (error,
    not-applicable without a compiler, crash, timeout) and error fields, as ``describe`` gives them."""

    def compile_here() -> Dict[str, Any]:
        start = time.perf_counter()
        try:
            aoti.compile_program(api, program, args, kwargs, path)
        except MemoryError:
            raise
        except Exception as exc:
            fields = dict(describe(exc), status=STAGE_ERROR, compile_s=_since(start))
            lacking = aoti.no_compiler(exc)
            if lacking is not None:  # torch looked for a compiler only once it had lowered the program
                fields.update(status=NOT_APPLICABLE, error_type=aoti.NO_COMPILER_TYPE, error_message=lacking)
            return fields
        return {"status": "compiled", "compile_s": _since(start)}

    result = forked.run(compile_here, timeout_s)
    status = result.get("status")
    if status == TIMEOUT:
        result["error_message"] = "ran past %s %g s limit (--aoti-timeout) and was killed" % (limited, timeout_s)
    if status != "compiled":
        result["status"] = status if status in (NOT_APPLICABLE, CRASH, TIMEOUT) else STAGE_ERROR
    return result


def settle(fields: Dict[str, Any], record: Dict[str, Any], compiled: Compiled, kept: Optional[str]) -> None:
    """After the cell kept its program (in ``kept``, or None): a package not kept with it is skipped, saying why in
    ``fields``; ``record`` is the cell's."""
    compiled.discard()  # kept ones were moved into the program's folder
    if kept is not None:
        return
    if record.get("status") != Status.PASS.value:
        why = "the cell is %s, and only a passing cell's program is kept and its package loaded" % record.get("status")
    elif record.get("artifact_error"):
        why = "its program could not be kept: %s" % record["artifact_error"]
    else:
        why = "this run keeps no programs"
    fields.update(aoti_status=STAGE_SKIPPED, aoti_error="not loaded: %s" % why)


class AotiStage(StageRun):
    """The stage on one cell: compiled before anything runs the program, kept with it, loaded as a follow-up."""

    compiled: Optional[Compiled] = None

    @classmethod
    def set_up(cls) -> Fields:
        """Import AOTInductor once, before forking (each cell would import it again), and name the compiler: the
        compiler decides the stage's results too, so it is part of each cell's key."""
        try:
            import torch._inductor  # noqa: F401
        except Exception:  # a release that cannot: each cell records why
            pass
        return {"compiler": aoti.compiler_identity()}

    def before(self) -> Fields:
        ctx = self.context
        fields: Fields = {}
        args, kwargs = clone(ctx.case.example_args), clone(ctx.case.example_kwargs)
        self.compiled = compile_stage(fields, ctx.program, args, kwargs, ctx.device, self.budget or 0.0, describe_error)
        return fields

    def files(self) -> Tuple[Dict[str, str], Fields]:
        compiled = self.compiled
        return ({compiled.file: compiled.path}, {"aoti": compiled.meta}) if compiled else ({}, {})

    def kept(self, folder: Optional[str]) -> Fields:
        fields: Fields = {}
        if self.compiled is not None:
            settle(fields, self.context.record, self.compiled, folder)
        return fields

    def follow_ups(self, folder: Optional[str]) -> List[Tuple[str, str]]:
        # The package, loaded in a process that never compiled (load_job.merge_aoti_load decides aoti_status).
        return [(PACKAGE.name, folder)] if folder and self.compiled is not None else []


STAGE = AotiStage


def _failed(record: Dict[str, Any], status: Any, error: Dict[str, Any], step: str) -> None:
    message = first_line(without_paths(error.get("error_message") or ""), 480) or "no message"
    record.update(aoti_status=status, aoti_error_type=error.get("error_type"), aoti_error="%s: %s" % (step, message))


def _since(start: float) -> float:
    return round(time.perf_counter() - start, 6)


# --- its package, loaded in a fresh process and by ``load`` (products.PACKAGE) ---------------------------


# ``aoti-load``: a kept AOTInductor package loaded, run on its saved inputs and compared: the follow-up of a cell
# whose aoti stage compiled a package and kept it with its program (:class:`AotiStage`), run in a process that
# never exported nor compiled (:mod:`.pristine`), as a serving process loads a package, and ``load``'s load of a
# kept package. Its result says what ``load`` says of a program (``schema.LoadStatus``); :func:`merge_aoti_load`
# turns a cell's into its ``aoti_*`` fields. Loading a package runs native code from its folder, so the job reads
# nothing of the folder before its ``meta.json`` is known to be signed with this machine's key (:mod:`.signing`;
# an untrusted folder is ``untrusted``, never loaded) and every file it lists is whole. The package is then copied
# into a folder of the job's own and checked again there, so that what is loaded is what was signed, and a loader
# that writes beside its package (2.5 compiles one at load) leaves the saved folder as it was.
@dataclasses.dataclass(frozen=True)
class AotiLoadJob(LoadJob):
    """Everything an isolated process needs to load one kept package, run it and compare."""

    KIND: ClassVar[str] = "aoti-load"

    trust: bool = False  # load without checking the folder's signature (``load --trust``)

    def run(self) -> Dict[str, Any]:
        return in_private("export-matrix-aoti-load-", lambda private, fields: _load_package(
            self.folder, self.meta, self.trust, private, fields))  # fmt: skip


def _load_package(folder: str, meta: Dict[str, Any], trust: bool, private: str, fields: Dict[str, Any]) -> None:
    from .failure import describe_error

    distrust = None if trust else signing.untrusted(folder, meta, signing.verifying_key())
    if distrust is not None:
        fields.update(
            status=LoadStatus.UNTRUSTED.value,
            error_type="UntrustedArtifact",
            error_message="untrusted package: %s; only folders signed with this machine's key are loaded" % distrust,
        )
        return
    described = meta.get("aoti")
    entry: Dict[str, Any] = described if isinstance(described, dict) else {}
    name = str(entry.get("file"))
    if name not in aoti.AOTI_FILES or not isinstance(entry.get("in_spec"), str):
        problem: Optional[str] = "%s describes no AOTInductor package" % layout.META
    else:
        problem = layout.verify(folder, meta)  # every file it lists, the package too
    if problem is not None:
        fields.update(incomplete(problem))
        return
    copy = os.path.join(private, name)
    shutil.copyfile(os.path.join(folder, name), copy)
    problem = layout.verify_file(folder, meta, name, copy)
    if problem is not None:
        fields.update(incomplete(problem))
        return
    loader, missing = aoti.loader_for(name)
    if loader is None:
        fields.update(status=LoadStatus.NOT_APPLICABLE.value, error_message=missing)
        return
    fields["aoti_loader"] = loader
    fields["case_module"] = import_case(meta)  # registers what the program names (custom ops), as a user would
    start = time.perf_counter()
    try:
        compiled = aoti.load(copy, name, str(entry.get("device") or meta.get("device") or "cpu"))
    except aoti.NoLoader as exc:
        fields.update(status=LoadStatus.NOT_APPLICABLE.value, error_message=str(exc))
        return
    except Exception as exc:
        lacking = aoti.no_compiler(exc)  # a loader that compiles (2.5) or checks the device (2.10 on) with g++
        if lacking is not None:
            fields.update(
                status=LoadStatus.NOT_APPLICABLE.value, error_type=aoti.NO_COMPILER_TYPE, error_message=lacking
            )
        else:
            fields.update(describe_error(exc), status=LoadStatus.LOAD_ERROR.value)
        return
    finally:
        fields["load_s"] = round(time.perf_counter() - start, 6)
    try:
        inputs, outputs = calls_of(folder, meta, aoti.spec_of(entry["in_spec"]))
    except Exception as exc:
        fields.update(describe_error(exc), status=LoadStatus.LOAD_ERROR.value)
        return
    check = not meta.get("skip_check")
    settle_load(fields, run_calls(lambda: compiled, inputs, outputs, check, fields), check, meta, blame=False)


# A load's status as the aoti stage's outcome (schema.AOTI_STATUSES).
OUTCOMES = {
    LoadStatus.PASS.value: STAGE_OK,
    LoadStatus.MISMATCH.value: STAGE_MISMATCH,
    LoadStatus.RUN_ERROR.value: STAGE_ERROR,
    LoadStatus.LOAD_ERROR.value: STAGE_ERROR,
    LoadStatus.NOT_APPLICABLE.value: Status.NOT_APPLICABLE.value,
    LoadStatus.UNTRUSTED.value: LoadStatus.UNTRUSTED.value,
    Status.CRASH.value: Status.CRASH.value,
    Status.TIMEOUT.value: Status.TIMEOUT.value,
}


def _outcome(load: Dict[str, Any]) -> Tuple[Any, str, str]:
    """A package load's status, its outcome (:data:`OUTCOMES`) and the step that failed where it did not pass."""
    status = load.get("status")
    outcome = OUTCOMES.get(status, STAGE_ERROR) if isinstance(status, str) else STAGE_ERROR
    step = "run" if status in (LoadStatus.MISMATCH.value, LoadStatus.RUN_ERROR.value) else "load"
    return status, outcome, step


def merge_aoti_load(cell: Dict[str, Any], load: Dict[str, Any], follow: Dict[str, Any]) -> None:
    """Fold the fresh load of a cell's package into its ``aoti_*`` fields; the cell's own status stays.

    The load itself goes with the result (``FRESH_PACKAGE_LOAD``): where the run keeps the package in
    --artifacts, ``load`` on this build reuses it (``runner.CellBatch.finished``).
    """
    if follow.get("discard"):
        shutil.rmtree(follow["folder"], ignore_errors=True)
    else:
        cell[FRESH_PACKAGE_LOAD] = load
    status, outcome, step = _outcome(load)
    error: Optional[str] = None
    if outcome != STAGE_OK:
        said = first_line(records.without_paths(load.get("error_message") or ""), 480) or "%s, no message" % status
        error = "%s: %s" % (step, said)
    cell.update(
        aoti_status=outcome,
        aoti_error=error,
        aoti_error_type=None if outcome == STAGE_OK else load.get("error_type"),
        aoti_load_s=load.get("load_s"),
        aoti_run_s=load.get("run_s"),
    )


def package_of(artifact: Artifact) -> Optional[Dict[str, Any]]:
    """What an artifact's meta.json says of the AOTInductor package kept with its program (its ``aoti`` key),
    or None where its cell kept none."""
    described = (artifact.meta or {}).get("aoti")
    return described if isinstance(described, dict) else None


class PackageUse(Use):
    """The AOTInductor package a cell's aoti stage kept with its program, loaded (products.PACKAGE)."""

    product = PACKAGE
    refuses_damaged = False  # a package's load finds a damaged folder in its own process
    compiles = True
    kinds: Tuple[Any, ...] = (AotiLoadJob,)
    merges = {AotiLoadJob.KIND: merge_aoti_load}

    def journal_more(self, dependency_set: str) -> list:
        return [dependency_set, self.product.kind]

    def fields(self, artifact: Artifact, env: Fields) -> Fields:
        described = package_of(artifact) or {}
        name, api = described.get("file"), described.get("api")
        size = listed(artifact.meta or {}, name).get("size")
        return {"package": name if isinstance(name, str) else None, "package_bytes": size if isinstance(size, int)
                else None, "aoti_api": api if isinstance(api, str) else None}  # fmt: skip

    def present(self, artifact: Artifact) -> bool:
        return package_of(artifact) is not None

    def label(self, artifact: Artifact, record: Fields) -> str:
        return "%s/%s" % (artifact.relative, record["package"] or "aoti")

    def described(self, record: Fields) -> Optional[Fields]:
        if record["package"] not in aoti.AOTI_FILES:
            return incomplete("%s describes no AOTInductor package" % layout.META)
        return None

    def available(self, loads: Any, record: Fields) -> Found:
        return loads.loaders.get(record["package"], (None, "no loader was looked for"))  # type: ignore[no-any-return]

    def job(self, loads: Any, folder: str, meta: Fields, record: Fields) -> Tuple[Any, float]:
        return AotiLoadJob(folder=folder, meta=meta, trust=loads.trust), 0.0

    def fresh(self, folder: str, meta: Fields) -> Tuple[Any, str]:
        return AotiLoadJob(folder=folder, meta=meta), AotiLoadJob.KIND

    def set_up(self, loads: Any) -> None:
        if not loads.loaders:  # found once, here: importing torch._inductor before forking spares each use it
            loads.loaders = {name: aoti.loader_for(name) for name in aoti.AOTI_FILES}
            loads.compiler = aoti.compiler_identity()

    def lacking(self, missing: Optional[str]) -> Fields:
        lacking = missing or "no AOTInductor API"
        no_compiler = lacking.startswith(aoti.NEEDS_COMPILER)  # the machine lacks a C++ compiler
        return {"status": LoadStatus.NOT_APPLICABLE.value, "error_message": lacking,
                "error_type": aoti.NO_COMPILER_TYPE if no_compiler else None}  # fmt: skip

    def cache_fields(self, artifact: Artifact) -> Optional[Fields]:
        name = (package_of(artifact) or {}).get("file")
        sha256 = listed(artifact.meta or {}, name).get("sha256")
        return {"package": name, "package_sha256": sha256} if isinstance(sha256, str) else None

    def tried(self, status: Any) -> bool:
        return status in LOAD_STATUSES and status not in (LoadStatus.NOT_APPLICABLE.value, LoadStatus.UNTRUSTED.value)


USE = PackageUse()
