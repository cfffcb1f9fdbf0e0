"""Why an export failed: ``torch.export.draft_export`` exports anyway and lists every problem it met.

Run in the failing cell (same process, same loaded case) where the release has ``draft_export``, bounded in time so
that a slow diagnosis can never turn the cell's ``fail`` into a timeout; the problems are recorded as :mod:`.problems`
lists them. One that runs out of its budget still lists those met by then (the first data-dependent error is usually
met early, near where the export itself failed), after a ``budget`` entry that says the list may be incomplete.
draft_export's trace file goes to a folder of the diagnosis's own, removed afterwards, not to the temporary folder
where such files would pile up.

A finished diagnosis (done, or draft_export's own error) is kept in the result cache (:mod:`.reuse`, kind
``diagnosis``) under a key of the case's source, the mode, the error it diagnoses, the worker and the dependency set,
and not the release: a later release that fails the same way reuses it (``diagnosis_reused_from`` names the release
and run that ran it) instead of spending its budget again. A skip is never kept: it says how much time the cell had.
One that ran out of its budget is kept under a key that adds the budget and the machine: the same failure on another
release of the same machine is not diagnosed again only to run out of time again (it names the one that did), while
another machine or budget tries again. How long draft_export takes depends on the model far more than on the error
(it traces the whole model, with real tensors beside the fake ones), so a case and mode whose diagnosis ran out of the
budget here is not diagnosed again on a later release that fails with another error either: that cell's diagnosis is
``skipped``, naming the release and run that ran out of time (a larger ``--diagnosis-budget`` tries again).

Standard library and torch only, Python 3.8 syntax.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence

from ..contract.schema import DIAGNOSIS_DONE, STAGE_ERROR, STAGE_SKIPPED, Status, first_line
from . import manifests, reads, reuse
from .problems import keeping_records, problems_met, problems_of, short

# The result cache's kind for kept diagnoses, and the outcomes it keeps.
KIND = "diagnosis"
KEPT_STATUSES = (DIAGNOSIS_DONE, STAGE_ERROR)
# What draft_export's error says when it ran out of memory: the machine's doing, never kept.
_OUT_OF_MEMORY = ("MemoryError", "OutOfMemoryError", "out of memory", "can't allocate memory")


def budget(budget_s: float, deadline_s: float, spent_s: float) -> float:
    """Seconds a failed export's diagnosis may take: its own budget (--diagnosis-budget), and no more than
    is left before ``deadline_s`` into the cell (DIAGNOSIS_SHARE of --timeout) after ``spent_s``."""
    return min(budget_s, deadline_s - spent_s)


def signature(record: Mapping[str, Any]) -> Dict[str, Any]:
    """The error a diagnosis explains: its type and first line, as the record holds them.

    The message is the recorded one: addresses and paths already normalized (failure.describe_error).
    Symbol names (``u0``, ``zuf0``, ``s12``) are kept: they are torch's for this case's trace, a renamed
    symbol is a changed error, and a miss costs one diagnosis where a wrong hit would explain another error.
    """
    return {"error_type": record.get("error_type"), "error_message": record.get("error_message")}


def diagnosis_key(case_hash: str, cell: Mapping[str, Any], record: Mapping[str, Any]) -> str:
    """The key a diagnosis is kept under: the case's source (``case_hash``, reuse.case_fingerprint), what
    ``cell`` says of it (case, source, mode, device, dependency set), the error and the worker's code.

    Not the release, nor --timeout, --stages or the budget: that is what makes it reusable elsewhere.
    """
    fields = dict(cell, kind=KIND, format=reuse.FORMAT, worker=reuse.worker_fingerprint(), case_hash=case_hash)
    fields.update(signature(record))
    return reuse.digest(fields)


class Kept:
    """The diagnoses kept under a result cache's ``root``, for the cell of ``case_path`` and ``cell``'s fields.

    ``origin`` (``"<torch_version>/<run_id>"``) names this cell in what it keeps.
    """

    def __init__(
        self, root: str, case_path: str, cell: Mapping[str, Any], origin: str, exclude: Sequence[Optional[str]] = ()
    ) -> None:
        self.cache = reuse.ResultCache(root, KIND)
        self.case_path, self.cell, self.origin = case_path, dict(cell), origin
        self.exclude = tuple(exclude)  # what reads.so_far leaves out: the run's own folders

    def _entry(self, key: str) -> Optional[Dict[str, Any]]:
        """The entry kept under ``key`` where every file its cell had read is as it was (``reads.changed``): a
        diagnosis explains the code it ran, as a cell's result does."""
        entry = self.cache.get(key)
        manifest = (entry or {}).get("extra", {}).get("manifest")
        if entry is None or not manifests.valid(manifest):
            return None
        if manifests.changed(manifest, self.case_path, self.cache.hashes):
            return None
        return entry

    def _put(self, key: str, record: Dict[str, Any]) -> None:
        """Keep ``record`` with the manifest of what this cell has read so far; nothing where none is recorded."""
        manifest = reads.so_far(self.case_path, (*self.exclude, self.cache.root))
        if manifest is not None:
            self.cache.put(key, record, {"manifest": manifest})

    def case_key(self, budget_s: float) -> Optional[str]:
        """The key under which a diagnosis of this case and mode that ran out of ``budget_s`` on this machine is
        noted, whatever the error; None where the case's source cannot be read."""
        case_hash = reuse.case_fingerprint(self.case_path)
        if case_hash is None:
            return None
        fields = dict(self.cell, kind=KIND, format=reuse.FORMAT, worker=reuse.worker_fingerprint())
        fields.update(case_hash=case_hash, budget_s=round(budget_s, 3), machine=_machine(), out_of_time="any error")
        return reuse.digest(fields)

    def noted(self, key: str) -> Optional[str]:
        """The release and run (``<torch_version>/<run_id>``) whose diagnosis noted under ``key`` ran out of time."""
        entry = self._entry(key)
        origin = (entry or {}).get("record", {}).get("reused_from")
        return origin if isinstance(origin, str) else None

    def note(self, key: str) -> None:
        """Note that a diagnosis of this case and mode ran out of its budget here (see case_key)."""
        self._put(key, {"diagnosis_status": Status.TIMEOUT.value, "reused_from": self.origin})

    def key(self, record: Mapping[str, Any], budget_s: Optional[float] = None) -> Optional[str]:
        """The key of the failure ``record`` describes; None where the case's source cannot be read.

        With ``budget_s``: the key of a diagnosis of it that ran out of that budget on this machine.
        Running out of time depends on the budget and on the machine, so both are in that key: on
        another release here the same failure runs out of time again, and is not tried again; on
        another machine, or with another budget, it is.
        """
        case_hash = reuse.case_fingerprint(self.case_path)
        if case_hash is None:
            return None
        if budget_s is None:
            return diagnosis_key(case_hash, self.cell, record)
        return diagnosis_key(case_hash, dict(self.cell, budget_s=round(budget_s, 3), machine=_machine()), record)

    def get(self, key: str, out_of_time: bool = False) -> Optional[Dict[str, Any]]:
        """The record fields of the diagnosis kept under ``key``, naming where it came from; None if none."""
        entry = self._entry(key)
        kept = entry["record"] if entry is not None else {}
        allowed = (Status.TIMEOUT.value,) if out_of_time else KEPT_STATUSES
        if kept.get("diagnosis_status") not in allowed or not isinstance(kept.get("diagnosis"), list):
            return None
        return {
            "diagnosis_status": kept["diagnosis_status"],
            "diagnosis": kept["diagnosis"],
            "diagnosis_reused_from": kept.get("reused_from"),
        }

    def put(self, key: str, record: Mapping[str, Any], fields: Mapping[str, Any], out_of_time: bool = False) -> None:
        """Keep a finished diagnosis ``fields`` of the failure ``record`` describes (kept beside it, to read);
        a skip or running out of memory says more about the machine, and is not kept; one that ran out
        of time only under its budget's key (``out_of_time``, see ``key``)."""
        allowed = (Status.TIMEOUT.value,) if out_of_time else KEPT_STATUSES
        if fields.get("diagnosis_status") not in allowed or _out_of_memory(fields):
            return
        kept = {"status": record.get("status"), "failed_stage": record.get("failed_stage"), **signature(record)}
        kept.update(diagnosis_status=fields["diagnosis_status"], diagnosis=fields.get("diagnosis") or [])
        self._put(key, dict(kept, reused_from=self.origin))


def _out_of_memory(fields: Mapping[str, Any]) -> bool:
    if fields.get("diagnosis_status") != STAGE_ERROR:
        return False
    text = " ".join(str(problem.get("message")) for problem in fields.get("diagnosis") or [])
    return any(word in text for word in _OUT_OF_MEMORY)


def diagnose_failure(
    case: Any, mode: str, found: Dict[str, bool], budget_s: float, record: Mapping[str, Any], kept: Optional[Kept]
) -> Dict[str, Any]:
    """The diagnosis fields of a failed export (``record`` holds its error): kept ones where ``kept`` has
    them for this failure, else a fresh diagnosis, kept there when it finished."""
    if not found.get("draft_export") or kept is None:
        return diagnose(case, mode, found, budget_s)
    where = kept.key(record)
    hit = kept.get(where) if where is not None else None
    if hit is not None:
        return hit
    over = kept.key(record, budget_s)  # the same failure ran out of this budget here before
    hit = kept.get(over, out_of_time=True) if over is not None else None
    if hit is not None:
        return hit
    slow = kept.case_key(budget_s)  # this case and mode ran out of this budget here, with another error
    origin = kept.noted(slow) if slow is not None else None
    if origin is not None:
        why = "not tried: a diagnosis of this case and mode ran out of %.0f s on %s" % (budget_s, origin)
        return {"diagnosis_status": STAGE_SKIPPED, "diagnosis": [{"kind": "budget", "message": why}]}
    fields = diagnose(case, mode, found, budget_s)
    if fields.get("diagnosis_status") == Status.TIMEOUT.value:
        if over is not None:
            kept.put(over, record, fields, out_of_time=True)
        if slow is not None:
            kept.note(slow)
    elif where is not None:
        kept.put(where, record, fields)
    return fields


def _machine() -> Dict[str, Any]:
    """What decides how far a diagnosis gets in its budget besides torch: the processor and its cores."""
    import platform

    from .environment import cpu_name

    return {"cpu": cpu_name(), "cores": os.cpu_count(), "machine": platform.machine()}


class _OutOfTime(Exception):
    pass


# Set when the budget's alarm went off: torch may catch the exception it raises and raise its own
# (dynamo wraps it in "Dynamo failed to run FX node with fake tensors"), which is still out of time.
_rang: List[bool] = []


def _on_alarm(signum: int, frame: Any) -> None:
    _rang.append(True)
    raise _OutOfTime()


def diagnose(case: Any, mode: str, found: Dict[str, bool], budget_s: float) -> Dict[str, Any]:
    """The record fields of a diagnosis: ``diagnosis_status`` and ``diagnosis`` (a list of problems)."""
    if not found.get("draft_export"):
        return {"diagnosis_status": Status.NOT_APPLICABLE.value}
    if budget_s <= 0:
        return {"diagnosis_status": STAGE_SKIPPED, "diagnosis": [{"kind": "budget", "message": "no time left"}]}
    timed = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    met: List[Any] = []  # draft_export's record of what it met, as it goes
    del _rang[:]
    with _trace_folder(), keeping_records(met):
        previous = signal.signal(signal.SIGALRM, _on_alarm) if timed else None
        if timed:
            signal.setitimer(signal.ITIMER_REAL, budget_s)
        try:
            report = _draft_report(case, mode, found)
        except Exception as exc:
            if isinstance(exc, _OutOfTime) or _rang:
                return out_of_time(budget_s, problems_met(met))
            # draft_export itself gave up: say how, briefly
            text = first_line("%s: %s" % (type(exc).__name__, exc), limit=None)
            problem = {"kind": "draft-export-error", "message": short(text)}
            return {"diagnosis_status": STAGE_ERROR, "diagnosis": [problem]}
        finally:
            if timed:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
    problems = problems_of(report)
    return {"diagnosis_status": DIAGNOSIS_DONE, "diagnosis": problems}


def out_of_time(budget_s: float, met: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The fields of a diagnosis stopped by its budget, with the problems ``met`` before then."""
    if met:
        why = "over %.0f s; the problems met before then follow (there may be more)" % budget_s
    else:
        why = "over %.0f s, before any problem was met" % budget_s
    return {"diagnosis_status": Status.TIMEOUT.value, "diagnosis": [{"kind": "budget", "message": why}] + met}


@contextlib.contextmanager
def _trace_folder() -> Iterator[None]:
    """draft_export's trace file in a folder of this diagnosis's own (TORCH_DTRACE), removed afterwards."""
    variable = "TORCH_DTRACE"
    folder = tempfile.mkdtemp(prefix="export-matrix-draft-")
    before = os.environ.get(variable)
    os.environ[variable] = folder
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = before
        shutil.rmtree(folder, ignore_errors=True)


def _draft_report(case: Any, mode: str, found: Dict[str, bool]) -> Any:
    import copy

    import torch.export

    kwargs = case.export_kwargs(mode, found, copy.deepcopy)
    ep = torch.export.draft_export(case.model, copy.deepcopy(case.example_args), **kwargs)
    return getattr(ep, "_report", None)
