"""The onnx stage: a passing cell's exported program converted to ONNX by the release's own exporter, run in
onnxruntime on the case's inputs and compared with eager.

``run --stages ...,onnx`` only. Since 2.5 ``torch.onnx.export(..., dynamo=True)`` is built on torch.export,
and it takes the ExportedProgram itself; where a release's exporter takes only the model (it exports it again
itself), the stage hands it the model and ``onnx_api`` says so. A release without that exporter, or an
environment without onnx and onnxscript (which the exporter needs) is ``not-applicable``, never a failure; so is
one without onnxruntime, after the export: its ``onnx_opset`` and ``onnx_nodes`` still say what it made.

The conversion runs before anything runs the program (running it can update its buffers in place); the whole
of it (export, save, onnxruntime session, run) runs in a process forked from the cell, with a deadline of its
own (:data:`SHARE` of the cell's --timeout, less what the cell spent before it): a crash or a hang there is the
stage's ``crash`` or ``timeout``, and the cell's status stays what its export and check say. The ``.onnx``
file is kept with the saved program where the cell keeps it (``--artifacts``).

Standard library only (torch, onnx and onnxruntime are imported when the stage runs), Python 3.8 syntax.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
import shutil
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..contract.records import without_paths
from ..contract.schema import Status, first_line
from ..contract.stages import ONNX
from . import compare, forked
from .failure import describe_error
from .progress import say
from .stage import Fields, StageRun

PASS, FAIL, MISMATCH = Status.PASS.value, Status.FAIL.value, Status.MISMATCH.value
NOT_APPLICABLE = Status.NOT_APPLICABLE.value
# The share of the cell's --timeout by which the stage must end, counting what the cell spent before it: the rest
# is the margin that keeps a hung conversion from turning the cell into a timeout.
SHARE = 0.8
# The packages the stage runs with, as its declaration installs them; the exporter needs the first two, the run the
# third (their import names are their distributions').
PACKAGES = ONNX.requires
MODEL = "model.onnx"  # its name in the saved-program folder
# What the release's API is called with: the exported program, or only the model where that is all it takes.
ON_PROGRAM = "torch.onnx.export(ExportedProgram, dynamo=True)"
ON_MODEL = "torch.onnx.export(nn.Module, dynamo=True)"


def versions() -> Fields:
    """``onnx_version``, ``onnxscript_version``, ``onnxruntime_version``: what is installed, None where absent."""
    from importlib import metadata

    found: Fields = {}
    for name in PACKAGES:
        try:
            found[name + "_version"] = metadata.version(name)
        except Exception:
            found[name + "_version"] = None
    return found


def exporter_api(torch: Any) -> Tuple[Optional[str], str]:
    """The release's torch.export-based exporter (ON_PROGRAM or ON_MODEL), or None and why it has none."""
    export = getattr(getattr(torch, "onnx", None), "export", None)
    if export is None:
        return None, "torch.onnx has no export"
    try:
        parameters = inspect.signature(export).parameters
    except (TypeError, ValueError):
        return None, "torch.onnx.export's signature cannot be read"
    if "dynamo" not in parameters:
        return None, "torch.onnx.export has no dynamo=True (no exporter built on torch.export)"
    takes = str(parameters["model"].annotation) if "model" in parameters else ""
    return (ON_PROGRAM if "ExportedProgram" in takes else ON_MODEL), ""


def _missing(names: Sequence[str]) -> List[str]:
    return [name for name in names if importlib.util.find_spec(name) is None]


class OnnxStage(StageRun):
    """The stage on one cell: converted and run before anything runs the program; its file kept with it."""

    folder: Optional[str] = None

    @classmethod
    def set_up(cls) -> Fields:
        """Import the exporter and onnxruntime once, before forking the cells (each would import them again), and
        say once what is missing: the cells then keep their export results alone (``check`` and the nox sessions
        install the packages; ``run`` runs with what this environment has)."""
        missing = _missing(PACKAGES)
        if "onnxruntime" in missing and not _missing(PACKAGES[:2]):
            say("the onnx stage: onnxruntime is not installed for this Python; the ONNX models are exported, not run")
        elif missing:
            are = "is" if len(missing) == 1 else "are"
            say("the onnx stage: %s %s not installed for this Python; the stage records not-applicable"
                % (" and ".join(missing), are))  # fmt: skip
        for name in [p for p in PACKAGES if p not in missing] + ["torch.onnx"]:
            try:
                __import__(name)
            except Exception:  # each cell records what its own import says
                pass
        if not _missing(PACKAGES[:2]):
            _warm_up()
        return {}

    def before(self) -> Fields:
        import torch

        ctx = self.context
        fields: Fields = dict(versions(), onnx_status=None)
        api, why = exporter_api(torch)
        missing = _missing(PACKAGES[:2])
        if api is None or missing:
            why = why or "needs %s, which this environment does not have" % " and ".join(missing)
            return dict(fields, onnx_status=NOT_APPLICABLE, onnx_error=why)
        fields["onnx_api"] = api
        self.folder = tempfile.mkdtemp(prefix="export-matrix-onnx-")
        path = os.path.join(self.folder, MODEL)
        spent = sum(v for k, v in ctx.record.items() if k.endswith("_s") and isinstance(v, (int, float)))
        deadline = max(SHARE * ctx.timeout - spent, 1.0) if ctx.timeout > 0 else 600.0
        result = forked.run(lambda: self._convert_and_run(api, path), deadline)
        status = result.pop("status", None)
        if status in (Status.CRASH.value, Status.TIMEOUT.value):  # the forked process died or hung: in which step
            message = "ran past %g s (%g of --timeout, less the cell's time) and was killed" % (deadline, SHARE)
            error = message if status == Status.TIMEOUT.value else result.get("error_message") or ""
            result = dict(onnx_step=_read_step(self.folder), onnx_error_type=result.get("error_type"),
                          onnx_error=first_line(without_paths(error), 480))  # fmt: skip
        _read_step(self.folder)  # and removed, so that only what the exporter wrote is kept
        fields.update({k: v for k, v in result.items() if k.startswith("onnx")}, onnx_status=status)
        if not os.path.exists(path):
            self.discard()
        return fields

    def _convert_and_run(self, api: str, path: str) -> Fields:
        """In the forked process: every step, until one fails; the result names the step that did."""
        ctx = self.context
        fields: Fields = {}
        step = _step(self.folder, "export")
        try:
            program = _timed(fields, "onnx_export_s", lambda: _export(api, ctx))
            model = program.model_proto
            fields["onnx_opset"] = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
            fields["onnx_nodes"] = len(model.graph.node)
            step = _step(self.folder, "save")
            _timed(fields, "onnx_save_s", lambda: program.save(path))
            fields["onnx_bytes"] = _size(self.folder or "")
            if _missing(PACKAGES[2:]):
                why = "onnxruntime is not installed for this Python: exported, not run"
                return dict(fields, status=NOT_APPLICABLE, onnx_step="session", onnx_error=why)
            step = _step(self.folder, "session")
            session = _timed(fields, "onnx_session_s", lambda: _session(path))
            step = _step(self.folder, "run")
            checked = _timed(fields, "onnx_run_s", lambda: _run_and_compare(session, ctx))
        except compare.Mismatch as exc:
            return dict(fields, status=MISMATCH, onnx_step=step, onnx_error_type="AssertionError",
                        onnx_error=first_line(str(exc), 480))  # fmt: skip
        except MemoryError:
            raise
        except Exception as exc:
            error = describe_error(exc)
            message = first_line(_plain(error.get("error_message") or ""), 480) or "no message"
            cause = exc.__cause__
            while cause is not None and cause.__cause__ is not None:  # the innermost says what failed
                cause = cause.__cause__
            if cause is not None:  # the exporter wraps what failed in its own error: name both
                message += " (from %s: %s)" % (type(cause).__name__, first_line(_plain(str(cause)), 300))
            return dict(fields, status=FAIL, onnx_step=step, onnx_error_type=error.get("error_type"),
                        onnx_error=message)  # fmt: skip
        return dict(fields, status=PASS, onnx_checked_inputs=checked)

    def files(self) -> Tuple[Dict[str, str], Fields]:
        if self.folder is None or not os.path.exists(os.path.join(self.folder, MODEL)):
            return {}, {}
        names = sorted(os.listdir(self.folder))  # the model, and its external data where the exporter wrote one
        return {name: os.path.join(self.folder, name) for name in names}, {"onnx": {"file": MODEL, "files": names}}

    def kept(self, folder: Optional[str]) -> Fields:
        self.discard()  # kept files were moved into the program's folder
        return {}

    def discard(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


STAGE = OnnxStage


# The step the forked process is in, written where its parent reads it should the process die or hang.
_STEP_FILE = ".step"


def _step(folder: Optional[str], step: str) -> str:
    with open(os.path.join(folder or "", _STEP_FILE), "w") as f:
        f.write(step)
    return step


def _read_step(folder: Optional[str]) -> Optional[str]:
    path = os.path.join(folder or "", _STEP_FILE)
    try:
        with open(path) as f:
            step = f.read().strip() or None
        os.remove(path)
        return step
    except OSError:
        return None


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _plain(text: str) -> str:
    """A message without the terminal colours the exporter adds, nor this machine's paths."""
    return without_paths(_ANSI.sub("", text))


def _warm_up() -> None:
    """One export of a tiny program in the run's process, so that the forked cells find the exporter's first-use
    work done (its imports, and the sources its operator registry reads) and time their case, not first use."""
    try:
        import torch

        class Tiny(torch.nn.Module):
            def forward(self, x: Any) -> Any:
                return torch.relu(x) + 1

        api, _ = exporter_api(torch)
        if api is not None:
            program = torch.export.export(Tiny(), (torch.ones(2),))
            torch.onnx.export(program if api == ON_PROGRAM else Tiny(), (torch.ones(2),), dynamo=True, verbose=False)
    except Exception:  # each cell records what its own export says
        pass


def _timed(fields: Fields, key: str, fn: Any) -> Any:
    start = time.perf_counter()
    try:
        return fn()
    finally:
        fields[key] = round(time.perf_counter() - start, 6)


def _size(folder: str) -> int:
    """The bytes of the model and of its external data, where the exporter wrote some."""
    return sum(os.path.getsize(os.path.join(folder, name)) for name in os.listdir(folder) if name != _STEP_FILE)


def _export(api: str, ctx: Any) -> Any:
    import torch

    from .steps import clone

    case = ctx.case
    model = ctx.program if api == ON_PROGRAM else case.model
    args, kwargs = clone(case.example_args), clone(case.example_kwargs)
    return torch.onnx.export(model, args, kwargs=kwargs or None, dynamo=True, verbose=False)


def _session(path: str) -> Any:
    # Imported by name: an optional package of this stage alone, looked for before (the worker needs only torch).
    onnxruntime = importlib.import_module("onnxruntime")

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only: its warnings would fill the cell's output
    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def _run_and_compare(session: Any, ctx: Any) -> int:
    """Run the session on every input of the case; each one's outputs must match eager's, as the check's are."""
    import torch
    from torch.utils import _pytree

    case = ctx.case
    inputs = [(case.example_args, ctx.expected)] + list(zip(case.extra_args, ctx.expected_extra))
    names = [given.name for given in session.get_inputs()]
    for number, (args, expected) in enumerate(inputs):
        leaves = _pytree.tree_flatten((args, case.example_kwargs))[0]
        tensors = [leaf.detach().cpu().numpy() for leaf in leaves if isinstance(leaf, torch.Tensor)]
        if len(tensors) != len(names):
            raise ValueError("input %d: the ONNX model takes %d inputs, the case gives %d tensors"
                             % (number, len(names), len(tensors)))  # fmt: skip
        outputs = session.run(None, dict(zip(names, tensors)))
        if ctx.info.skip_check is None:
            # An ONNX model's outputs are tensors: eager's Python numbers (``.tolist()``) come back as 0-d ones.
            leaves = [leaf for leaf in _pytree.tree_flatten(expected)[0] if leaf is not None]
            wanted = [leaf if isinstance(leaf, torch.Tensor) else torch.as_tensor(leaf) for leaf in leaves]
            compare.outputs(number, wanted, [torch.from_numpy(out) for out in outputs])
    return len(inputs)
