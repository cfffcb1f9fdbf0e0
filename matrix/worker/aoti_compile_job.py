"""The ``aoti-compile`` job: a program saved on an older release, compiled with AOTInductor here, then its package
loaded in a fresh process, run on the saved inputs and compared: "exported on X, compiled on Y".

A job kind of the batch engine (:data:`.jobs.KINDS`), run for ``load --aoti`` (:mod:`.loader`; which programs,
:mod:`.aoti_compiles`). The parent has checked the folder's signature; this process, forked from a parent that
never exported nor compiled, checks every file meta.json lists, imports the case module (custom ops register
there, as a user's code would), loads the program with ``torch.export.load`` and compiles it with this release's
own API (:mod:`.aoti`). A program that does not load here is not compiled: the record says ``skipped``, and its
own load says why. The compile runs in a process forked from this one with its own deadline, ``--aoti-timeout``
(:mod:`.forked`, as the aoti stage compiles): a compile that hangs or dies is that record's ``timeout`` or
``crash``, g++ included.

The package goes to a folder of this job's own, beside links to the program's files and a meta.json that lists
them all with their sha256. The package is then loaded by the ``aoti-load`` job (:mod:`.aoti_job`) as a follow-up,
in a process that never compiled (:mod:`.pristine`), which checks every file against that list before it loads
anything; :func:`merge_aoti_compile` folds its outcome into the record and removes the folder. The package is
not kept: the record says what it cost (``compile_s``, ``package_bytes``) and what became of it.

Standard library only (torch is imported when the job runs), Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from typing import Any, ClassVar, Dict, List, Optional

from ..contract import layout
from ..contract.records import without_paths
from ..contract.schema import STAGE_ERROR, STAGE_OK, STAGE_SKIPPED, LoadStatus, Status, first_line
from . import aoti, artifacts
from .aoti_job import OUTCOMES, AotiLoadJob, in_private
from .aoti_stage import compile_in_child
from .forensics import load_error
from .load_job import import_case
from .messages import FOLLOW_UP, message

NOT_APPLICABLE, CRASH, TIMEOUT = Status.NOT_APPLICABLE.value, Status.CRASH.value, Status.TIMEOUT.value
# The merge that folds the package's load into the compile's record (a key of jobs.MERGES).
MERGE = "aoti-compile"


@dataclasses.dataclass(frozen=True)
class AotiCompileJob:
    """Everything an isolated process needs to compile one saved program here and hand its package to a fresh load."""

    KIND: ClassVar[str] = "aoti-compile"

    folder: str
    meta: Dict[str, Any]
    timeout_s: float  # what the compile may take (--aoti-timeout)

    @classmethod
    def from_fields(cls, fields: Dict[str, Any]) -> AotiCompileJob:
        return cls(**fields)

    def run(self) -> Dict[str, Any]:
        # A package handed to its load is removed by the merge, after that load.
        return in_private("export-matrix-aoti-compile-", lambda private, fields: _compile(
            self.folder, self.meta, self.timeout_s, private, fields))  # fmt: skip


def _compile(folder: str, meta: Dict[str, Any], timeout_s: float, private: str, fields: Dict[str, Any]) -> bool:
    """Compile the program in ``folder`` into ``private``; True where a follow-up now loads the package."""
    import torch.export

    from .failure import describe_error

    problem = layout.verify(folder, meta)
    if problem is not None:
        fields.update(status=STAGE_SKIPPED, error_type="IncompleteArtifact",
                      error_message="not compiled: incomplete artifact: %s" % problem)  # fmt: skip
        return False
    api, missing = aoti.find_api()
    if api is None:
        fields.update(status=NOT_APPLICABLE, error_message=missing)
        return False
    fields["aoti_api"] = api.name
    fields["case_module"] = import_case(meta)
    saved = os.path.join(folder, layout.PROGRAM)
    loaded = False
    try:
        program = torch.export.load(saved)
        loaded = True
        calls = artifacts.read_inputs(folder, meta, program)
        spec = aoti.spec_text(program)
    except Exception as exc:
        found = describe_error(exc) if loaded else load_error(saved, meta, exc)  # the error torch met, as a load's
        said = first_line(without_paths(found.get("error_message") or ""), 400) or "no message"
        fields.update(found, status=STAGE_SKIPPED,
                      error_message="not compiled: the program does not load on this release: %s" % said)  # fmt: skip
        return False
    args, kwargs = calls[0] if calls else ((), {})
    path = os.path.join(private, api.file)

    result = compile_in_child(api, program, args, kwargs, path, timeout_s, describe_error)
    fields["compile_s"] = result.get("compile_s")
    status = result.get("status")
    if status != "compiled":
        if status == TIMEOUT:
            result["error_message"] = "ran past the compile's %g s limit (--aoti-timeout) and was killed" % timeout_s
        outcome = status if status in (NOT_APPLICABLE, CRASH, TIMEOUT) else STAGE_ERROR
        fields.update({k: v for k, v in result.items() if k in ("error_type", "error_message", "error_traceback")})
        fields.update(status=outcome, failed_step="compile" if outcome != NOT_APPLICABLE else None)
        return False
    fields["package_bytes"] = os.path.getsize(path)
    derived = _package_folder(folder, meta, private, api, spec, fields["compile_s"])
    load = AotiLoadJob(folder=private, meta=derived, trust=True)  # a folder this job made, of files it checked
    fields[FOLLOW_UP] = {"message": message(load), "merge": MERGE, "folder": private}
    return True


def _package_folder(
    folder: str, meta: Dict[str, Any], private: str, api: aoti.Api, spec: str, compile_s: Any
) -> Dict[str, Any]:
    """Put beside the package a link to each of the program's files; returns the meta.json that lists them all.

    The package's load checks each file against this list, so a program file changed after this job checked
    it is found changed there; links (copies where the system has none) cost nothing for a large model.
    """
    listed: List[Dict[str, Any]] = []
    for entry in meta.get("files") or []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if name not in layout.FILES:
            continue  # the saving release's own package, if it kept one, is not this one
        source = os.path.join(os.path.realpath(folder), name)
        try:
            os.symlink(source, os.path.join(private, name))
        except (OSError, NotImplementedError):
            shutil.copyfile(source, os.path.join(private, name))
        listed.append(dict(entry))
    package = os.path.join(private, api.file)
    listed.append({"name": api.file, "size": os.path.getsize(package), "sha256": layout.sha256_of(package)})
    device = meta.get("device") or "cpu"
    described = {"file": api.file, "api": api.name, "in_spec": spec, "device": device, "compile_s": compile_s}
    return dict(meta, files=listed, aoti=described)


def merge_aoti_compile(compiled: Dict[str, Any], load: Dict[str, Any], follow: Dict[str, Any]) -> None:
    """Fold the fresh load of a package compiled here into its compile's record, then remove the package's folder."""
    shutil.rmtree(follow["folder"], ignore_errors=True)
    status = load.get("status")
    outcome = OUTCOMES.get(status, STAGE_ERROR) if isinstance(status, str) else STAGE_ERROR
    step: Optional[str] = None
    if outcome != STAGE_OK and status != LoadStatus.NOT_APPLICABLE.value:
        step = "run" if status in (LoadStatus.MISMATCH.value, LoadStatus.RUN_ERROR.value) else "load"
    compiled.update(
        status=outcome,
        failed_step=step,
        error_type=None if outcome == STAGE_OK else load.get("error_type"),
        error_message=None if outcome == STAGE_OK else load.get("error_message") or "%s, no message" % status,
        error_traceback=None if outcome == STAGE_OK else load.get("error_traceback"),
        aoti_loader=load.get("aoti_loader"),
        checked_inputs=load.get("checked_inputs"),
        load_s=load.get("load_s"),
        run_s=load.get("run_s"),
    )
    if outcome != STAGE_OK and load.get("stderr_tail"):
        compiled["stderr_tail"] = load["stderr_tail"]
