"""One cell: a case exported in one mode, staged, each stage timed, turned into record fields.

This runs inside the isolated child. Any exception is turned into a status here; only
process-level failures (a segfault, ``os._exit``, a hang) are left to the isolation layer.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import time
from importlib import import_module
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..contract import dependencies, records
from ..contract.case import CaseError, CaseInfo
from ..contract.options import DEFAULT_AOTI_TIMEOUT_S, DEFAULT_DIAGNOSIS_BUDGET_S
from ..contract.schema import STAGE_ERROR, STAGE_MISMATCH, STAGE_OK, STAGE_SKIPPED, Status, first_line
from ..contract.stages import DECLARED, Stage
from . import compare, fingerprint
from .canonical import normalize_text
from .case import Case
from .failure import OutOfMemory, allocation_failure, describe_error, one_line, out_of_memory

PASS, MISMATCH, FAIL = Status.PASS.value, Status.MISMATCH.value, Status.FAIL.value
CASE_ERROR = Status.CASE_ERROR.value

# The ``reason`` of a case-error raised inside a library the case declares: the library fails on this torch.
DEPENDENCY_IMPORT = "dependency-import"

# How each stage of a module of its own runs on a passing cell, registered by name like :data:`.jobs.KINDS`.
# A stage is declared in :mod:`matrix.contract.stages` (its name, help, default, report column, record fields,
# budget, module), which both sides read; its worker module provides ``run(record, program, case)``, which adds
# its fields to the record of a cell that passed, after decompose and before the program is kept. The five
# stages the cell runs itself (check, decompose, serialize, diagnose, aoti) declare no module. A stage's module
# imports torch inside ``run``, not at its top, since the process that forks the cells imports it.
StageRun = Callable[[Dict[str, Any], Any, Any], None]


def runs_of(declared: Sequence[Stage]) -> Dict[str, StageRun]:
    """Stage name -> the ``run`` of its worker module, for each of ``declared`` that names one."""
    return {stage.name: import_module("." + stage.module, __package__).run for stage in declared if stage.module}


STAGE_RUNS = runs_of(DECLARED)


def _blame_dependency(record: Dict[str, Any], exc: BaseException, info: CaseInfo) -> None:
    """Say so when the case failed inside one of its own libraries: the library, not torch.export, is at fault."""
    if not info.dependencies:
        return
    original = exc.__cause__ if isinstance(exc, CaseError) and exc.__cause__ is not None else exc
    culprit = dependencies.blamed(original, info.dependencies)
    if culprit is None:
        return
    import torch

    name, version = culprit
    what = "%s: %s" % (type(original).__name__, first_line(str(original), limit=None))
    text = "%s %s fails on torch %s as the case loads: %s" % (name, version, torch.__version__, what)
    record.update(reason=DEPENDENCY_IMPORT, error_message=records.without_paths(normalize_text(text))[:500])


def _clone(value: Any) -> Any:
    """A deep copy of inputs so that input mutation in one stage cannot leak into the next."""
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def _timed(record: Dict[str, Any], key: str, fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    try:
        return fn()
    except Exception as exc:
        if not isinstance(exc, OutOfMemory) and allocation_failure(exc) is not None:
            raise OutOfMemory(exc, key[: -len("_s")]) from exc
        raise
    finally:
        record[key] = round(time.perf_counter() - start, 6)


def _export(case: Case, mode: str, found: Dict[str, bool]) -> Tuple[Any, bool]:
    import torch.export

    kwargs = case.export_kwargs(mode, found, _clone)
    return torch.export.export(case.model, _clone(case.example_args), **kwargs), bool(found.get("export.strict"))


def run_cell(
    info: CaseInfo, mode: str, found: Dict[str, bool], loader: Callable[[CaseInfo], Case], device: str = "cpu",
    stages: Tuple[str, ...] = ("check", "decompose", "serialize"), artifacts: Optional[Any] = None,
    diagnose_s: float = 0.0, diagnosis_budget_s: float = DEFAULT_DIAGNOSIS_BUDGET_S, kept: Optional[Any] = None,
    aoti_timeout_s: float = DEFAULT_AOTI_TIMEOUT_S,
) -> Dict[str, Any]:  # fmt: skip
    """Run every stage of one cell and return the record fields it produced.

    ``artifacts``: an ``artifacts.Target`` where a passing cell keeps its program, or None.
    ``diagnose_s``: seconds into the cell by which a failed export's ``draft_export`` diagnosis must end
    (0: none); ``diagnosis_budget_s``: what the diagnosis itself may take (``diagnosis.budget``).
    ``kept``: a ``diagnosis.Kept`` where diagnoses are reused and kept, or None.
    ``aoti_timeout_s``: what the aoti stage's compile may take, where ``stages`` has it.
    """
    record: Dict[str, Any] = {}
    try:
        # 1. load
        try:
            case = _timed(record, "load_s", lambda: loader(info))
            if device != "cpu":
                case = _to_device(case, device)
        except Exception as exc:
            record.update(describe_error(exc), status=CASE_ERROR, failed_stage="load")
            _blame_dependency(record, exc, info)
            return record

        # 2. eager, on a copy of the model so that buffer mutation does not reach the export
        try:
            eager_model = copy.deepcopy(case.model)
        except Exception:
            eager_model = case.model
        # Each call gets its own copy of the inputs, kept afterwards: what eager did to its inputs
        # (user-input mutation) is part of what the exported program must reproduce.
        calls = [(_clone(args), _clone(case.example_kwargs)) for args in (case.example_args, *case.extra_args)]
        try:
            expected = _timed(record, "eager_s", lambda: eager_model(*calls[0][0], **calls[0][1]))
            expected_extra = [eager_model(*args, **kwargs) for args, kwargs in calls[1:]]
        except Exception as exc:
            record.update(describe_error(exc), status=CASE_ERROR, failed_stage="eager")
            _cpu_only(record, info, device)
            return record

        # 3. export
        try:
            ep, strict_passed = _timed(record, "export_s", lambda: _export(case, mode, found))
        except Exception as exc:
            record.update(describe_error(exc), status=FAIL, failed_stage="export")
            if diagnose_s > 0:
                from .diagnosis import budget, diagnose_failure

                spent = sum(record.get(key) or 0.0 for key in ("load_s", "eager_s", "export_s"))
                seconds = budget(diagnosis_budget_s, diagnose_s, spent)
                record.update(diagnose_failure(case, mode, found, seconds, record, kept))
            return record
        record["strict_passed"] = strict_passed
        try:
            digest, ops, nodes, text = fingerprint.fingerprint(ep)
            record.update(graph_hash=digest, ops=ops, node_count=nodes, graph_text=text)
            record["fingerprint_version"] = fingerprint.FINGERPRINT_VERSION
        except Exception as exc:  # a fingerprint bug must not hide the export result
            record["graph_text"] = "fingerprint failed: %s" % describe_error(exc)["error_message"]

        record["status"] = PASS
        # 6a. save now: running the program below can update its buffers in place
        saved = _save(record, ep, found) if "serialize" in stages else None
        # 6b. compile with AOTInductor (opt-in), before running the program too
        compiled = None
        if "aoti" in stages:
            from .aoti_stage import compile_stage

            args, kwargs = _clone(case.example_args), _clone(case.example_kwargs)
            compiled = compile_stage(record, ep, args, kwargs, device, aoti_timeout_s, describe_error)
        # 4. run the exported program and compare with eager
        if "check" in stages:
            _check(record, case, ep, expected, expected_extra, info, calls)
        # 5. decompose to core ATen
        if "decompose" in stages:
            _decompose(record, ep, found)
        # 5b. every other stage selected, as its worker module runs it (STAGE_RUNS)
        for name in stages:
            if name in STAGE_RUNS:
                STAGE_RUNS[name](record, ep, case)
        # 6. save / load round trip
        if saved is not None:
            _load(record, case, saved, expected)
        # 7. keep the program, its inputs and eager's outputs (and the package), for loading on other releases
        folder = None
        if artifacts is not None and record["status"] == PASS:
            from .artifacts import keep

            files, meta = ({compiled.file: compiled.path}, {"aoti": compiled.meta}) if compiled else (None, None)
            folder = keep(artifacts, record, info, mode, ep, saved, case, expected, expected_extra, files, meta)
            if folder and saved is not None:
                record[KEPT] = folder  # the runner loads it again in a fresh process (cell_job.merge_fresh_load)
        if compiled is not None:
            from .aoti_stage import settle

            settle(record, compiled, folder)
            if folder:
                record[PACKAGED] = folder  # the runner loads the package in a fresh process (load_job.merge_aoti_load)
        return record

    except MemoryError as exc:  # wherever it was met: the cell ends as a crash
        record.update(out_of_memory(exc))
        return record


# Where a passing cell kept the program its serialize stage saved: read (and removed) by CellJob.
KEPT = "_kept"
# Where it kept the package its aoti stage compiled, beside that program: read (and removed) by CellJob.
PACKAGED = "_packaged"


def _check(
    record: Dict[str, Any], case: Case, ep: Any, expected: Any, expected_extra: List[Any], info: CaseInfo,
    eager_calls: List[Tuple[Any, Any]],
) -> None:  # fmt: skip
    """Run the exported program on every input; outputs, and the inputs after the call, must match eager's."""
    inputs = [(case.example_args, case.example_kwargs, expected)]
    inputs += [(args, case.example_kwargs, out) for args, out in zip(case.extra_args, expected_extra)]

    def check() -> None:
        module = ep.module()
        for number, (args, kwargs, out) in enumerate(inputs):
            given = (_clone(args), _clone(kwargs))
            actual = compare.call(module, number, given[0], given[1])
            if info.skip_check is None:
                compare.outputs(number, out, actual)
                try:
                    compare.leaves(eager_calls[number], given)
                except AssertionError as exc:
                    detail = str(exc).strip().replace("output", "argument", 1)
                    raise compare.Mismatch("input %d, after the call, differs from eager's: %s" % (number, detail))
        record["checked_inputs"] = len(inputs)

    try:
        _timed(record, "check_s", check)
    except compare.Mismatch as exc:
        record.update(check_status=STAGE_MISMATCH, check_detail=str(exc)[:2000], status=MISMATCH, failed_stage="check")
        record.update(error_type="AssertionError", error_message=first_line(str(exc)))
        return
    except Exception as exc:
        record.update(describe_error(exc), check_status=STAGE_ERROR, status=MISMATCH, failed_stage="check")
        record["check_detail"] = "the exported program raised where eager did not"
        return
    if info.skip_check is not None:
        record.update(check_status=STAGE_SKIPPED, check_detail=info.skip_check)
    else:
        record["check_status"] = STAGE_OK


def _decompose(record: Dict[str, Any], ep: Any, found: Dict[str, bool]) -> None:
    if not found.get("run_decompositions"):
        record.update(decompose_status=STAGE_SKIPPED, decompose_error="missing capability: run_decompositions")
        return
    try:
        decomposed = _timed(record, "decompose_s", ep.run_decompositions)
        digest, ops, _, _ = fingerprint.fingerprint(decomposed)
        record.update(decompose_status=STAGE_OK, decomposed_hash=digest, decomposed_ops=ops)
    except Exception as exc:
        record.update(decompose_status=STAGE_ERROR, decompose_error=one_line(exc))


def _save(record: Dict[str, Any], ep: Any, found: Dict[str, bool]) -> Optional[io.BytesIO]:
    if not (found.get("export.save") and found.get("export.load")):
        record.update(serialize_status=STAGE_SKIPPED, serialize_error="missing capability: export.save/export.load")
        return None
    import torch.export

    buffer = io.BytesIO()
    try:
        _timed(record, "serialize_s", lambda: torch.export.save(ep, buffer))
    except Exception as exc:
        record.update(serialize_status=STAGE_ERROR, serialize_error="save: " + one_line(exc))
        return None
    buffer.seek(0)
    return buffer


def _load(record: Dict[str, Any], case: Case, buffer: io.BytesIO, expected: Any) -> None:
    import torch.export

    saved_s = record.get("serialize_s") or 0.0

    def round_trip() -> None:
        loaded = torch.export.load(buffer)
        actual = loaded.module()(*_clone(case.example_args), **_clone(case.example_kwargs))
        if record.get("check_status") == STAGE_OK:
            compare.leaves(expected, actual)

    try:
        _timed(record, "serialize_s", round_trip)
        record["serialize_status"] = STAGE_OK
    except Exception as exc:
        record.update(serialize_status=STAGE_ERROR, serialize_error="load: " + one_line(exc))
    finally:
        record["serialize_s"] = round(saved_s + (record.get("serialize_s") or 0.0), 6)


# What torch says when one operation meets tensors on two devices.
_DEVICE_MISMATCH = ("Expected all tensors to be on the same device", "found at least two devices")


def _cpu_only(record: Dict[str, Any], info: CaseInfo, device: str) -> None:
    """A bundled ExportDB example whose eager run on ``device`` meets a CPU tensor it builds itself: not-applicable.

    torch's examples cannot be changed, and some build CPU tensors in ``forward``; off the CPU that says
    nothing about torch.export. Our own cases take their device from their inputs: there it stays a case-error.
    """
    message = record.get("error_message") or ""
    if device == "cpu" or info.source != "exportdb" or not any(text in message for text in _DEVICE_MISMATCH):
        return
    record.update(
        status=Status.NOT_APPLICABLE.value,
        missing=["device:%s" % device],
        error_message="torch's bundled example builds CPU tensors in forward, so it cannot run on %s: %s"
        % (device, first_line(message)),
    )


def _to_device(case: Case, device: str) -> Case:
    import torch

    def move(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return value.to(device)
        if isinstance(value, tuple):
            return tuple(move(v) for v in value)
        if isinstance(value, list):
            return [move(v) for v in value]
        if isinstance(value, dict):
            return {k: move(v) for k, v in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a dataclass input (a pytree node)
            fields = {f.name: move(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
            return dataclasses.replace(value, **fields)
        return value

    return dataclasses.replace(
        case, model=case.model.to(device), example_args=move(case.example_args),
        example_kwargs=move(case.example_kwargs), extra_args=tuple(move(a) for a in case.extra_args),
    )  # fmt: skip


def warm_up(found: Dict[str, bool], cuda_possible: bool = False) -> Optional[str]:
    """Pay the first-use costs in the parent, so forked cells time their case, not the process.

    The first export in a process imports dynamo and fills caches that every later export
    reuses; a forked child inherits them. The warm-up covers the common paths: a module
    with parameters, a dynamic dimension, torch.cond, both modes, running the exported
    program, decomposition and serialization.

    ``cuda_possible``: this torch was built for CUDA and a GPU is visible. A strict export then
    stays out of this process, as does torch.cond (outside a strict export, some releases compile
    its branches with TorchDynamo): TorchDynamo initialises CUDA there, and no cell forked from
    this process could use CUDA (see :mod:`.gpu`). What they would have warmed, each strict cell
    pays in its own export time on such a machine.
    """
    import torch

    class Warm(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x: Any) -> Any:
            y = torch.relu(self.linear(x)) + x.shape[0]
            if found.get("cond") and not cuda_possible:
                y = torch.cond(y.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (y,))
            return y

    modes: Tuple[Optional[bool], ...] = (True, False) if found.get("export.strict") else (None,)
    if cuda_possible:  # without the keyword (or where it defaults to True) an export is strict
        modes = (False,) if found.get("export.strict") else ()
    try:
        x = torch.ones(3, 4)
        model = Warm()
        model(x)
        dynamic = None
        if found.get("dim") and found.get("export.dynamic_shapes"):
            dynamic = ({0: torch.export.Dim("warm_batch", min=2, max=64)},)
        for strict in modes:
            kwargs: Dict[str, Any] = {} if strict is None else {"strict": strict}
            if dynamic is not None:
                kwargs["dynamic_shapes"] = dynamic
            ep = torch.export.export(model, (x,), **kwargs)
            ep.module()(x)
            fingerprint.fingerprint(ep)
            if found.get("run_decompositions"):
                fingerprint.fingerprint(ep.run_decompositions())
            if found.get("export.save") and found.get("export.load"):
                buffer = io.BytesIO()
                torch.export.save(ep, buffer)
                buffer.seek(0)
                torch.export.load(buffer).module()(x)
        return None
    except Exception as exc:
        return describe_error(exc)["error_message"]
