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
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..contract.products import PACKAGE
from ..contract.records import without_paths
from ..contract.schema import AOTI_KEYS, STAGE_ERROR, STAGE_SKIPPED, Status, first_line
from . import aoti, forked
from .failure import describe_error
from .stage import Fields, StageRun
from .steps import clone

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
