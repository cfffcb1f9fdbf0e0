"""A saved program's load on this build, in an isolated process, and what every product's job shares.

Job kind of the batch engine (:data:`.jobs.KINDS`); why a load failed is worked out in :mod:`.forensics`.

- ``load``: one saved program loaded with ``torch.export.load``, run on its saved inputs and compared; run for
  ``load`` (:mod:`.loader`) and for a cell's fresh load (:mod:`.cell_job`).
- what the other products' jobs share with it (each lives in the module its product's declaration names,
  :mod:`.use`): a private folder per job, a program's load, its saved calls run and compared, the settling of
  an outcome, a case module's import.

Standard library only (torch is imported when a job runs), Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from typing import Any, Callable, ClassVar, Dict, Optional, Tuple

from ..contract import layout, records
from ..contract.schema import STAGE_ERROR, STAGE_MISMATCH, STAGE_OK, STAGE_SKIPPED, LoadStatus, first_line
from . import artifacts, compare
from .forensics import blame_case_module, load_error


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


# The result key that carries a kept package's fresh load to the runner; never a record field.
FRESH_PACKAGE_LOAD = "fresh_package_load"
