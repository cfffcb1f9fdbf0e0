"""One cell: a case exported in one mode, staged, each stage timed, turned into record fields.

This runs inside the isolated child. Any exception is turned into a status here; only
process-level failures (a segfault, ``os._exit``, a hang) are left to the isolation layer.
"""

from __future__ import annotations

import copy
import dataclasses
import io
from typing import Any, Callable, Dict, Optional, Tuple

from ..contract import dependencies, records
from ..contract.case import CaseError, CaseInfo
from ..contract.schema import Status, first_line
from ..contract.stages import DEFAULT as DEFAULT_STAGES
from . import fingerprint, stage
from .canonical import normalize_text
from .case import Case
from .failure import describe_error, out_of_memory
from .steps import clone, timed

PASS, FAIL = Status.PASS.value, Status.FAIL.value
CASE_ERROR = Status.CASE_ERROR.value

# The ``reason`` of a case-error raised inside a library the case declares: the library fails on this torch.
DEPENDENCY_IMPORT = "dependency-import"


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


def _export(case: Case, mode: str, found: Dict[str, bool]) -> Tuple[Any, bool]:
    import torch.export

    kwargs = case.export_kwargs(mode, found, clone)
    return torch.export.export(case.model, clone(case.example_args), **kwargs), bool(found.get("export.strict"))


def run_cell(
    info: CaseInfo, mode: str, found: Dict[str, bool], loader: Callable[[CaseInfo], Case], device: str = "cpu",
    stages: Tuple[str, ...] = DEFAULT_STAGES, artifacts: Optional[Any] = None, **context: Any,
) -> Dict[str, Any]:  # fmt: skip
    """Run every stage of one cell and return the record fields it produced.

    ``artifacts``: an ``artifacts.Target`` where a passing cell keeps its program, or None. ``context``: the rest of
    what its stages are handed (``stage.Context``: budgets, timeout, cache, origin, private, dependency_set).
    The record's ``FOLLOW_UPS`` lists the products the run uses again in a fresh process.
    """
    record: Dict[str, Any] = {}
    ctx = stage.Context(info, mode, found, device, **dict({"budgets": {}}, **context), keep=artifacts, record=record)
    try:
        # 1. load
        try:
            case = timed(record, "load_s", lambda: loader(info))
            if device != "cpu":
                case = _to_device(case, device)
        except Exception as exc:
            record.update(describe_error(exc), status=CASE_ERROR, failed_stage="load")
            _blame_dependency(record, exc, info)
            return record
        ctx.case = case

        # 2. eager, on a copy of the model so that buffer mutation does not reach the export
        try:
            eager_model = copy.deepcopy(case.model)
        except Exception:
            eager_model = case.model
        # Each call gets its own copy of the inputs, kept afterwards: what eager did to its inputs
        # (user-input mutation) is part of what the exported program must reproduce.
        ctx.calls = [(clone(args), clone(case.example_kwargs)) for args in (case.example_args, *case.extra_args)]
        calls = ctx.calls
        try:
            ctx.expected = timed(record, "eager_s", lambda: eager_model(*calls[0][0], **calls[0][1]))
            ctx.expected_extra = [eager_model(*args, **kwargs) for args, kwargs in calls[1:]]
        except Exception as exc:
            record.update(describe_error(exc), status=CASE_ERROR, failed_stage="eager")
            _cpu_only(record, info, device)
            return record

        runs = stage.start(stages, ctx)
        # 3. export
        try:
            ep, strict_passed = timed(record, "export_s", lambda: _export(case, mode, found))
        except Exception as exc:
            record.update(describe_error(exc), status=FAIL, failed_stage="export")
            for run in runs:
                record.update(run.failed())
            return record
        ctx.program = ep
        record["strict_passed"] = strict_passed
        try:
            digest, ops, nodes, text = fingerprint.fingerprint(ep)
            record.update(graph_hash=digest, ops=ops, node_count=nodes, graph_text=text)
            record["fingerprint_version"] = fingerprint.FINGERPRINT_VERSION
        except Exception as exc:  # a fingerprint bug must not hide the export result
            record["graph_text"] = "fingerprint failed: %s" % describe_error(exc)["error_message"]

        record["status"] = PASS
        # 4. every selected stage, in declared order: first what needs the program as exported (running it can
        # update its buffers in place), then the rest
        for run in runs:
            record.update(run.before())
        for run in runs:
            record.update(run.run())
        # 5. keep the program, its inputs and eager's outputs, and the stages' files, for other releases
        folder = None
        if artifacts is not None and record["status"] == PASS:
            from .artifacts import keep

            files: Dict[str, str] = {}
            meta: Dict[str, Any] = {}
            for run in runs:
                more, said = run.files()
                files.update(more)
                meta.update(said)
            folder = keep(
                artifacts, record, info, mode, ep, ctx.saved, case, ctx.expected, ctx.expected_extra, files or None,
                meta or None,
            )  # fmt: skip
        follows = []
        for run in runs:
            record.update(run.kept(folder))
            follows += run.follow_ups(folder)
        if follows:
            record[FOLLOW_UPS] = follows  # the runner uses each again in a fresh process (cell_job.CellJob.run)
        return record

    except MemoryError as exc:  # wherever it was met: the cell ends as a crash
        record.update(out_of_memory(exc))
        return record


# The products a passing cell kept for the run to use again in a fresh process, as (product name, folder): read
# (and removed) by CellJob.
FOLLOW_UPS = "_follow_ups"


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
