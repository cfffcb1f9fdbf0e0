"""The jobs that use a product on this build (:mod:`matrix.contract.products`), each in an isolated process.

Job kinds of the batch engine (:data:`.jobs.KINDS`); why a load failed is worked out in :mod:`.forensics`.

- ``load``: one saved program loaded with ``torch.export.load``, run on its saved inputs and compared; run for
  ``load`` (:mod:`.loader`) and for a cell's fresh load (:mod:`.cell_job`).
- ``aoti-load``: a kept AOTInductor package loaded, run on its saved inputs and compared: the follow-up of a cell
  whose aoti stage compiled a package and kept it with its program (:mod:`.aoti_stage`), run in a process that
  never exported nor compiled (:mod:`.pristine`), as a serving process loads a package, and ``load``'s load of a
  kept package. Its result says what ``load`` says of a program (``schema.LoadStatus``); :func:`merge_aoti_load`
  turns a cell's into its ``aoti_*`` fields. Loading a package runs native code from its folder, so the job reads
  nothing of the folder before its ``meta.json`` is known to be signed with this machine's key (:mod:`.signing`;
  an untrusted folder is ``untrusted``, never loaded) and every file it lists is whole. The package is then copied
  into a folder of the job's own and checked again there, so that what is loaded is what was signed, and a loader
  that writes beside its package (2.5 compiles one at load) leaves the saved folder as it was.
- ``aoti-compile``: a program saved on an older release, compiled with AOTInductor here, then its package loaded
  in a fresh process, run on the saved inputs and compared: "exported on X, compiled on Y" (``load --aoti``; which
  programs, :mod:`.aoti_compiles`). The parent has checked the folder's signature; this process, forked from a
  parent that never exported nor compiled, checks every file meta.json lists, imports the case module and loads the
  program as a program's load does, then compiles it with this release's own API (:mod:`.aoti`). A program that
  does not load here is not compiled: the record says ``skipped``, and its own load says why. The compile runs in
  a process forked from this one with its own deadline, ``--aoti-timeout`` (:mod:`.forked`, as the aoti stage
  compiles): a compile that hangs or dies is that record's ``timeout`` or ``crash``, g++ included. The package goes
  to a folder of this job's own, beside links to the program's files and a meta.json that lists them all with
  their sha256, and is loaded by an ``aoti-load`` follow-up, which checks every file against that list before it
  loads anything; :func:`merge_aoti_compile` folds its outcome into the record and removes the folder. The package
  is not kept: the record says what it cost (``compile_s``, ``package_bytes``) and what became of it.

Standard library only (torch is imported when a job runs), Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from typing import Any, Callable, ClassVar, Dict, List, Optional, Tuple

from ..contract import layout, records
from ..contract.products import PACKAGE, PROGRAM
from ..contract.schema import STAGE_ERROR, STAGE_MISMATCH, STAGE_OK, STAGE_SKIPPED, LoadStatus, Status, first_line
from . import aoti, artifacts, compare, signing
from .aoti_stage import compile_in_child
from .forensics import blame_case_module, load_error
from .messages import FOLLOW_UP, message


@dataclasses.dataclass(frozen=True)
class LoadJob:
    """Everything an isolated process needs to load one artifact, run it and compare."""

    KIND: ClassVar[str] = "load"

    folder: str
    meta: Dict[str, Any]

    @classmethod
    def from_fields(cls, fields: Dict[str, Any]) -> LoadJob:
        return cls(**fields)

    def run(self) -> Dict[str, Any]:
        fields: Dict[str, Any] = {"serializer_version": artifacts.serializer_version()}
        return in_private(None, lambda private, found: _load_and_run(self.folder, self.meta, found), fields)


def in_private(
    prefix: Optional[str],
    work: Callable[[str, Dict[str, Any]], Optional[bool]],
    fields: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """The fields (beside ``fields``) that ``work(private, fields)`` finds in a folder of its own (none without a
    ``prefix``), removed after it unless it returns True (what it made there is handed on); a process out of memory
    says so."""
    from .failure import out_of_memory

    fields = {} if fields is None else fields
    private = tempfile.mkdtemp(prefix=prefix) if prefix else ""
    handed = False
    try:
        handed = bool(work(private, fields))
    except MemoryError as exc:
        fields.update(out_of_memory(exc))
    finally:
        if private and not handed:
            shutil.rmtree(private, ignore_errors=True)
    return fields


def load_program(
    folder: str, meta: Dict[str, Any], then: Callable[[Any], Any]
) -> Tuple[Any, Any, Optional[Dict[str, Any]]]:
    """The program saved in ``folder`` loaded with ``torch.export.load`` and what ``then(program)`` reads for it,
    and None; or the error fields of what failed (a load's own, as :func:`.forensics.load_error` tells them)."""
    import torch.export

    from .failure import describe_error

    path = os.path.join(folder, layout.PROGRAM)
    loaded = False
    try:
        program = torch.export.load(path)
        loaded = True
        return program, then(program), None
    except Exception as exc:
        return None, None, describe_error(exc) if loaded else load_error(path, meta, exc)


def _load_and_run(folder: str, meta: Dict[str, Any], fields: Dict[str, Any]) -> None:
    problem = layout.verify(folder, meta)
    if problem is not None:
        fields.update(incomplete(problem))
        return
    fields["case_module"] = import_case(meta)
    # load_s times torch.export.load and reading the saved data, not the checks and imports before.
    start = time.perf_counter()
    program, calls, failed = load_program(folder, meta, lambda found: calls_of(folder, meta, artifacts.in_spec(found)))
    fields["load_s"] = round(time.perf_counter() - start, 6)
    if failed is not None:
        fields.update(failed, status=LoadStatus.LOAD_ERROR.value)
        blame_case_module(fields)
        return
    check = not meta.get("skip_check")
    settle(fields, run_calls(program.module, calls[0], calls[1], check, fields), check, meta, blame=True)


def calls_of(folder: str, meta: Dict[str, Any], spec: Any) -> Tuple[Any, Any]:
    """The saved calls' inputs, for a program whose in_spec is ``spec``, and their outputs."""
    inputs = artifacts.read_inputs(folder, meta, spec)
    outputs = artifacts.read_data(folder, layout.OUTPUTS)
    if len(inputs) != len(outputs):
        raise ValueError("%s and %s do not hold matching calls" % (layout.INPUTS, layout.OUTPUTS))
    return inputs, outputs


def run_calls(
    make: Callable[[], Any], inputs: Any, outputs: Any, check: bool, fields: Dict[str, Any]
) -> Optional[Exception]:
    """Run what ``make`` gives (a loaded program's module, a loaded package) on each saved call and, where ``check``,
    compare with the saved outputs: ``run_s`` and ``checked_inputs`` go into ``fields``. Returns what failed: a
    ``compare.Mismatch``, another error, or None where every call ran (and matched)."""
    start = time.perf_counter()
    try:
        module = make()
        for number, ((args, kwargs), expected) in enumerate(zip(inputs, outputs)):
            actual = compare.call(module, number, args, kwargs)
            if check:
                compare.outputs(number, list(expected), actual)
        fields["checked_inputs"] = len(inputs)
    except Exception as exc:
        return exc
    finally:
        fields["run_s"] = round(time.perf_counter() - start, 6)
    return None


def settle(
    fields: Dict[str, Any], failure: Optional[Exception], check: bool, meta: Dict[str, Any], blame: bool
) -> None:
    """The outcome of the saved calls' run (:func:`run_calls`); ``blame``: a run error names a case module that did
    not import (a program's load; a package holds what it runs)."""
    from .failure import describe_error

    if isinstance(failure, compare.Mismatch):
        fields.update(
            status=LoadStatus.MISMATCH.value,
            check_status=STAGE_MISMATCH,
            check_detail=str(failure)[:2000],
            error_type="AssertionError",
            error_message=first_line(str(failure)),
        )
    elif failure is not None:
        fields.update(describe_error(failure), status=LoadStatus.RUN_ERROR.value, check_status=STAGE_ERROR)
        if blame:
            blame_case_module(fields)
    else:
        fields.update(status=LoadStatus.PASS.value, check_status=STAGE_OK if check else STAGE_SKIPPED)
        if not check:
            fields["check_detail"] = str(meta.get("skip_check"))


def incomplete(problem: str) -> Dict[str, Any]:
    """The record fields of an artifact whose folder lacks a file or holds a changed one."""
    return {
        "status": LoadStatus.LOAD_ERROR.value,
        "error_type": "IncompleteArtifact",
        "error_message": "incomplete artifact: %s" % problem,
    }


def import_case(meta: Dict[str, Any]) -> str:
    """Import the case's module when its file is here: it registers what the program may name
    (custom ops, pytree types), as the user's own code would before loading. Returns how it went.

    Only a relative path inside the current folder (the project's checkout) is imported: an
    artifact's meta.json is data, and must not choose which code runs.
    """
    path = meta.get("case_file")
    if meta.get("source") != "cases" or not isinstance(path, str) or not _inside_here(path):
        return "absent"
    from ..contract.case import CaseInfo
    from .case import load

    try:
        load(CaseInfo(name=str(meta["case"]), path=path, description=""))
    except Exception as exc:
        return "failed: %s" % (records.without_paths(first_line(str(exc), 300)) or type(exc).__name__)
    return "imported"


def _inside_here(path: str) -> bool:
    if os.path.isabs(path) or not path.endswith(".py") or "\0" in path:
        return False
    here = os.path.realpath(os.getcwd())
    resolved = os.path.realpath(os.path.join(here, path))
    return os.path.commonpath([here, resolved]) == here and os.path.isfile(resolved)


# --- a kept AOTInductor package --------------------------------------------------------------


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
    settle(fields, run_calls(lambda: compiled, inputs, outputs, check, fields), check, meta, blame=False)


def fresh_load(folder: str, discard: bool, product: str = PROGRAM.name) -> Dict[str, Any]:
    """The follow-up of a cell that kept a product (products.PRODUCTS, by name: its program, or the package its
    aoti stage compiled): a load job, in a process that never exported nor compiled."""
    meta, _ = layout.read_meta(folder)
    job_class, merge = FRESH[product]
    return {"message": message(job_class(folder=folder, meta=meta or {})), "merge": merge, "folder": folder,
            "discard": discard}  # fmt: skip


# Product name -> the job that loads it again in a fresh process, and the merge that folds its result into the cell.
FRESH: Dict[str, Tuple[Any, str]] = {PROGRAM.name: (LoadJob, "fresh-load"), PACKAGE.name: (AotiLoadJob, "aoti-load")}


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


# --- a saved program compiled here -----------------------------------------------------------


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
    from .failure import describe_error

    problem = layout.verify(folder, meta)
    if problem is not None:
        fields.update(status=STAGE_SKIPPED, error_type="IncompleteArtifact",
                      error_message="not compiled: incomplete artifact: %s" % problem)  # fmt: skip
        return False
    api, missing = aoti.find_api()
    if api is None:
        fields.update(status=LoadStatus.NOT_APPLICABLE.value, error_message=missing)
        return False
    fields["aoti_api"] = api.name
    fields["case_module"] = import_case(meta)
    program, read, found = load_program(folder, meta, lambda loaded: (
        artifacts.read_inputs(folder, meta, artifacts.in_spec(loaded)), aoti.spec_text(loaded)))  # fmt: skip
    if found is not None:  # the error torch met, as a load's
        said = first_line(records.without_paths(found.get("error_message") or ""), 400) or "no message"
        fields.update(found, status=STAGE_SKIPPED,
                      error_message="not compiled: the program does not load on this release: %s" % said)  # fmt: skip
        return False
    calls, spec = read
    args, kwargs = calls[0] if calls else ((), {})
    path = os.path.join(private, api.file)

    result = compile_in_child(api, program, args, kwargs, path, timeout_s, describe_error, "the compile's")
    fields["compile_s"] = result.get("compile_s")
    outcome = result["status"]
    if outcome != "compiled":
        fields.update({k: v for k, v in result.items() if k in ("error_type", "error_message", "error_traceback")})
        fields.update(status=outcome, failed_step="compile" if outcome != LoadStatus.NOT_APPLICABLE.value else None)
        return False
    fields["package_bytes"] = os.path.getsize(path)
    derived = _package_folder(folder, meta, private, api, spec, fields["compile_s"])
    load = AotiLoadJob(folder=private, meta=derived, trust=True)  # a folder this job made, of files it checked
    fields[FOLLOW_UP] = {"message": message(load), "merge": "aoti-compile", "folder": private}
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
    status, outcome, step = _outcome(load)
    failed = outcome != STAGE_OK
    compiled.update(
        status=outcome,
        failed_step=step if failed and status != LoadStatus.NOT_APPLICABLE.value else None,
        error_type=load.get("error_type") if failed else None,
        error_message=load.get("error_message") or "%s, no message" % status if failed else None,
        error_traceback=load.get("error_traceback") if failed else None,
        aoti_loader=load.get("aoti_loader"),
        checked_inputs=load.get("checked_inputs"),
        load_s=load.get("load_s"),
        run_s=load.get("run_s"),
    )
    if failed and load.get("stderr_tail"):
        compiled["stderr_tail"] = load["stderr_tail"]


# The job kinds of this module, by name, and the merges their follow-ups name: what the registry (.jobs) takes.
KINDS = {job.KIND: job for job in (LoadJob, AotiLoadJob, AotiCompileJob)}
MERGES = {AotiLoadJob.KIND: merge_aoti_load, AotiCompileJob.KIND: merge_aoti_compile}
