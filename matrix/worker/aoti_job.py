"""The ``aoti-load`` job: a kept AOTInductor package loaded, run on its saved inputs and compared, in isolation.

A job kind of the batch engine (:data:`.jobs.KINDS`): the follow-up of a cell whose aoti stage
compiled a package and kept it with its program (:mod:`.aoti_stage`), run by the engine in a process
that never exported nor compiled (:mod:`.pristine`), as a serving process loads a package. Its
result says what ``load`` says of a program (``schema.LoadStatus``); :func:`merge_aoti_load` (``"aoti-load"``
in :data:`.jobs.MERGES`) turns it into the cell's ``aoti_*`` fields.

Loading a package runs native code from its folder, so the job reads nothing of the folder before
its ``meta.json`` is known to be signed with this machine's key (:mod:`.signing`; an untrusted
folder is ``untrusted``, never loaded) and every file it lists is whole. The package is then copied
into a folder of the job's own and checked again there, so that what is loaded is what was signed,
and a loader that writes beside its package (2.5 compiles one at load) leaves the saved folder as it was.

Standard library only (torch is imported when the job runs), Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from typing import Any, Callable, ClassVar, Dict, Optional

from ..contract import layout
from ..contract.records import without_paths
from ..contract.schema import STAGE_ERROR, STAGE_MISMATCH, STAGE_OK, LoadStatus, Status, first_line
from . import aoti, artifacts, compare, signing
from .load_job import LoadJob, import_case, incomplete, run_calls


@dataclasses.dataclass(frozen=True)
class AotiLoadJob(LoadJob):
    """Everything an isolated process needs to load one kept package, run it and compare."""

    KIND: ClassVar[str] = "aoti-load"

    trust: bool = False  # load without checking the folder's signature (``load --trust``)

    def run(self) -> Dict[str, Any]:
        return in_private("export-matrix-aoti-load-", lambda private, fields: _load_and_run(
            self.folder, self.meta, self.trust, private, fields))  # fmt: skip


def in_private(prefix: str, work: Callable[[str, Dict[str, Any]], Optional[bool]]) -> Dict[str, Any]:
    """The fields ``work(private, fields)`` finds in a folder of its own, removed after it unless it returns True
    (what it made there is handed on); a process out of memory says so."""
    from .failure import out_of_memory

    fields: Dict[str, Any] = {}
    private = tempfile.mkdtemp(prefix=prefix)
    handed = False
    try:
        handed = bool(work(private, fields))
    except MemoryError as exc:
        fields.update(out_of_memory(exc))
    finally:
        if not handed:
            shutil.rmtree(private, ignore_errors=True)
    return fields


def _load_and_run(folder: str, meta: Dict[str, Any], trust: bool, private: str, fields: Dict[str, Any]) -> None:
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
    if name not in layout.AOTI_FILES or not isinstance(entry.get("in_spec"), str):
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
        spec = aoti.spec_of(entry["in_spec"])
        inputs = artifacts.rebuild_inputs(
            artifacts.read_data(folder, layout.INPUTS), spec, meta.get("inputs_form", artifacts.ARGS_KWARGS)
        )
        outputs = artifacts.read_data(folder, layout.OUTPUTS)
        if len(inputs) != len(outputs):
            raise ValueError("%s and %s do not hold matching calls" % (layout.INPUTS, layout.OUTPUTS))
    except Exception as exc:
        fields.update(describe_error(exc), status=LoadStatus.LOAD_ERROR.value)
        return
    failure = run_calls(lambda: compiled, inputs, outputs, not meta.get("skip_check"), fields)
    if isinstance(failure, compare.Mismatch):
        fields.update(
            status=LoadStatus.MISMATCH.value, error_type="AssertionError", error_message=first_line(str(failure))
        )
    elif failure is not None:
        fields.update(describe_error(failure), status=LoadStatus.RUN_ERROR.value)
    else:
        fields["status"] = LoadStatus.PASS.value


def aoti_load(folder: str, discard: bool) -> Dict[str, Any]:
    """The follow-up of a cell that kept a package: this job, in a process that never compiled."""
    from .messages import message

    meta, _ = layout.read_meta(folder)
    job = AotiLoadJob(folder=folder, meta=meta or {})
    return {"message": message(job), "merge": "aoti-load", "folder": folder, "discard": discard}


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


# The result key that carries a kept package's fresh load to the runner; never a record field.
FRESH_PACKAGE_LOAD = "fresh_package_load"


def merge_aoti_load(cell: Dict[str, Any], load: Dict[str, Any], follow: Dict[str, Any]) -> None:
    """Fold the fresh load of a cell's package into its ``aoti_*`` fields; the cell's own status stays.

    The load itself goes with the result (``FRESH_PACKAGE_LOAD``): where the run keeps the package in
    --artifacts, ``load`` on this build reuses it (``runner.CellBatch.finished``).
    """
    if follow.get("discard"):
        shutil.rmtree(follow["folder"], ignore_errors=True)
    else:
        cell[FRESH_PACKAGE_LOAD] = load
    status = load.get("status")
    outcome = OUTCOMES.get(status, STAGE_ERROR) if isinstance(status, str) else STAGE_ERROR
    error: Optional[str] = None
    if outcome != STAGE_OK:
        step = "run" if status in (LoadStatus.MISMATCH.value, LoadStatus.RUN_ERROR.value) else "load"
        message = first_line(without_paths(load.get("error_message") or ""), 480) or "%s, no message" % status
        error = "%s: %s" % (step, message)
    cell.update(
        aoti_status=outcome,
        aoti_error=error,
        aoti_error_type=None if outcome == STAGE_OK else load.get("error_type"),
        aoti_load_s=load.get("load_s"),
        aoti_run_s=load.get("run_s"),
    )
