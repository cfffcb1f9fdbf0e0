"""Why an export failed: ``torch.export.draft_export`` exports anyway and lists every problem it met.

Run in the failing cell (same process, same loaded case) where the release has
``draft_export``, bounded in time so that a slow diagnosis can never turn the cell's
``fail`` into a timeout. The problems are recorded per kind with a short message, the
user frame torch points at and a count; what torch prints about them stays out of the
record. Standard library and torch only, Python 3.8 syntax.
"""

from __future__ import annotations

import os
import signal
import threading
from typing import Any, Dict, List, Optional

from ..contract.schema import DIAGNOSIS_DONE, STAGE_ERROR, STAGE_SKIPPED, Status, first_line

# At most this many problems are recorded per cell; the count per kind covers the rest.
MAX_PROBLEMS = 20
MESSAGE_WIDTH = 200


class _OutOfTime(Exception):
    pass


def _on_alarm(signum: int, frame: Any) -> None:
    raise _OutOfTime()


def diagnose(case: Any, mode: str, found: Dict[str, bool], budget_s: float) -> Dict[str, Any]:
    """The record fields of a diagnosis: ``diagnosis_status`` and ``diagnosis`` (a list of problems)."""
    if not found.get("draft_export"):
        return {"diagnosis_status": Status.NOT_APPLICABLE.value}
    if budget_s <= 0:
        return {"diagnosis_status": STAGE_SKIPPED, "diagnosis": [{"kind": "budget", "message": "no time left"}]}
    timed = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGALRM, _on_alarm) if timed else None
    if timed:
        signal.setitimer(signal.ITIMER_REAL, budget_s)
    try:
        report = _draft_report(case, mode, found)
    except _OutOfTime:
        over = [{"kind": "budget", "message": "over %.0f s" % budget_s}]
        return {"diagnosis_status": Status.TIMEOUT.value, "diagnosis": over}
    except Exception as exc:  # draft_export itself gave up: say how, briefly
        text = first_line("%s: %s" % (type(exc).__name__, exc), limit=None)
        return {"diagnosis_status": STAGE_ERROR, "diagnosis": [{"kind": "draft-export-error", "message": _short(text)}]}
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    problems = problems_of(report)
    return {"diagnosis_status": DIAGNOSIS_DONE, "diagnosis": problems}


def _draft_report(case: Any, mode: str, found: Dict[str, bool]) -> Any:
    import copy

    import torch.export

    kwargs: Dict[str, Any] = {}
    if case.example_kwargs:
        kwargs["kwargs"] = copy.deepcopy(case.example_kwargs)
    if case.dynamic_shapes is not None:
        kwargs["dynamic_shapes"] = case.dynamic_shapes
    if found.get("export.strict"):
        kwargs["strict"] = mode == "strict"
    ep = torch.export.draft_export(case.model, copy.deepcopy(case.example_args), **kwargs)
    return getattr(ep, "_report", None)


def problems_of(report: Any) -> List[Dict[str, Any]]:
    """One entry per problem kind and place: kind, short message, user frame, how often it happened."""
    if report is None:
        return []
    names = getattr(report, "str_to_filename", None) or {}
    merged: Dict[tuple, Dict[str, Any]] = {}
    for failure in list(getattr(report, "failures", []) or []):
        kind = _kind(getattr(failure, "failure_type", None))
        data = getattr(failure, "data", None) or {}
        message = _message(failure, data, names)
        frame = _user_frame(data, names)
        key = (kind, message, frame)
        entry = merged.setdefault(key, {"kind": kind, "message": message, "frame": frame, "count": 0})
        occurrences = data.get("occurrences") if isinstance(data, dict) else None
        entry["count"] += occurrences if isinstance(occurrences, int) and occurrences > 0 else 1
    ordered = sorted(merged.values(), key=lambda e: (e["kind"], -e["count"], e["message"]))
    return ordered[:MAX_PROBLEMS]


def _kind(failure_type: Any) -> str:
    name = getattr(failure_type, "name", None) or str(failure_type or "unknown")
    return name.lower().replace("_", "-")


def _short(text: Any) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MESSAGE_WIDTH else text[: MESSAGE_WIDTH - 1] + "…"


def _message(failure: Any, data: Any, names: Any) -> str:
    if isinstance(data, dict):
        for key in ("expr", "reason", "op", "name"):
            if data.get(key):
                prefix = {"expr": "cannot decide", "op": "operator"}.get(key, key)
                return _short("%s %s" % (prefix, data[key]))
    try:  # older and newer reports print themselves; keep the first sentence that is not a banner
        text = failure.print(names)
    except Exception:
        text = str(data)
    for line in str(text).splitlines():
        line = line.strip().lstrip("0123456789. ")
        if line and not line.startswith("#"):
            return _short(line)
    return "no detail"


def _user_frame(data: Any, names: Any) -> Optional[str]:
    """The innermost frame of the user's code, as ``file.py:line in function``, when torch gives one."""
    stack = data.get("user_stack") if isinstance(data, dict) else None
    if not isinstance(stack, list):
        return None
    for frame in reversed(stack):
        if not isinstance(frame, dict):
            continue
        filename = frame.get("filename")
        if isinstance(filename, int) and isinstance(names, dict):
            filename = names.get(filename, filename)
        filename = str(filename)
        if os.sep + "torch" + os.sep in filename:
            continue  # torch's own frames (module call wrappers) are not where the user can act
        where = "%s:%s in %s" % (os.path.basename(filename), frame.get("line"), frame.get("name"))
        code = frame.get("loc")
        return _short("%s: %s" % (where, code) if code else where)
    return None
