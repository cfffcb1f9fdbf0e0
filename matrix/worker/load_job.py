"""The ``load`` job: one saved program loaded, run on its saved inputs and compared, in an isolated process.

A job kind of the batch engine (:data:`.jobs.KINDS`), run for ``load`` (:mod:`.loader`) and for a
cell's fresh load (:mod:`.cell_job`). Why a load failed is worked out in :mod:`.forensics`.

Standard library only (torch is imported when the job runs), Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any, Callable, ClassVar, Dict, Optional

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
        from .failure import out_of_memory

        fields: Dict[str, Any] = {"serializer_version": artifacts.serializer_version()}
        try:
            _load_and_run(self.folder, self.meta, fields)
        except MemoryError as exc:
            fields.update(out_of_memory(exc))
        return fields


def _load_and_run(folder: str, meta: Dict[str, Any], fields: Dict[str, Any]) -> None:
    import torch
    import torch.export

    from .failure import describe_error

    problem = layout.verify(folder, meta)
    if problem is not None:
        fields.update(incomplete(problem))
        return
    fields["case_module"] = import_case(meta)
    path = os.path.join(folder, layout.PROGRAM)
    # load_s times torch.export.load and reading the saved data, not the checks and imports before.
    start = time.perf_counter()
    loaded = False
    failure: Optional[Exception] = None
    try:
        program = torch.export.load(path)
        loaded = True
        inputs = artifacts.read_inputs(folder, meta, program)
        outputs = artifacts.read_data(folder, layout.OUTPUTS)
        if len(inputs) != len(outputs):
            raise ValueError("%s and %s do not hold matching calls" % (layout.INPUTS, layout.OUTPUTS))
    except Exception as exc:
        failure = exc
    finally:
        fields["load_s"] = round(time.perf_counter() - start, 6)
    if failure is not None:
        fields.update(describe_error(failure) if loaded else load_error(path, meta, failure))
        fields["status"] = LoadStatus.LOAD_ERROR.value
        blame_case_module(fields)
        return
    check = not meta.get("skip_check")
    failure = run_calls(program.module, inputs, outputs, check, fields)
    if isinstance(failure, compare.Mismatch):
        fields.update(
            status=LoadStatus.MISMATCH.value,
            check_status=STAGE_MISMATCH,
            check_detail=str(failure)[:2000],
            error_type="AssertionError",
            error_message=first_line(str(failure)),
        )
        return
    if failure is not None:
        fields.update(describe_error(failure), status=LoadStatus.RUN_ERROR.value, check_status=STAGE_ERROR)
        blame_case_module(fields)
        return
    fields["status"] = LoadStatus.PASS.value
    fields["check_status"] = STAGE_OK if check else STAGE_SKIPPED
    if not check:
        fields["check_detail"] = str(meta.get("skip_check"))


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
