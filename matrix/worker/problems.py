"""The problems a diagnosis lists: ``draft_export``'s report, or its records so far, one entry per kind and place.

Each entry has the problem's kind, a short message, the user frame torch points at and a count;
what torch prints about them stays out of the record.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Dict, Iterator, List, Optional, Tuple

# At most this many problems are recorded per cell; the count per kind covers the rest.
MAX_PROBLEMS = 20
MESSAGE_WIDTH = 200


# draft_export's trace records that are problems, by the kind its report gives them.
_PROBLEM_RECORDS = {
    "propagate_real_tensors_provenance": "data-dependent-error",
    "missing_fake_kernel": "missing-fake-kernel",
    "mismatched_fake_kernel": "mismatched-fake-kernel",
}


@contextlib.contextmanager
def keeping_records(met: List[Any]) -> Iterator[None]:
    """While inside, each record draft_export starts of the problems it meets is appended to ``met``.

    draft_export keeps them in its trace handler (``CaptureStructuredTrace.log_record``) and drops
    them when it leaves; this keeps a reference to each, so that a diagnosis stopped by its budget
    can still say what was met. Where the release has no such handler, nothing is kept.
    """
    try:
        from torch.export import _draft_export as module

        handler = module.CaptureStructuredTrace
    except Exception:
        yield
        return

    class Keeping(handler):  # type: ignore[misc, valid-type]
        def __enter__(self) -> Any:
            entered = super().__enter__()
            met.append(self.log_record)
            return entered

    module.CaptureStructuredTrace = Keeping  # type: ignore[misc]
    try:
        yield
    finally:
        module.CaptureStructuredTrace = handler  # type: ignore[misc]


def problems_met(met: List[Any]) -> List[Dict[str, Any]]:
    """The problems in draft_export's records ``met`` (see keeping_records), as problems_of lists a report's."""
    failures, names = [], {}
    for record in met:
        for name, contents in list(getattr(record, "logs", None) or []):
            if name == "str" and isinstance(contents, (tuple, list)) and len(contents) == 2:
                names[contents[1]] = contents[0]
            elif name in _PROBLEM_RECORDS and isinstance(contents, dict):
                failures.append(
                    _Met(_PROBLEM_RECORDS[name], dict(contents, occurrences=_count(record, name, contents)))
                )
    return _merged(failures, names)


class _Met:
    """A problem read from draft_export's records: shaped as its report's failures, for problems_of."""

    def __init__(self, kind: str, data: Dict[str, Any]) -> None:
        self.failure_type, self.data = kind, data

    def print(self, names: Any) -> str:
        return str(self.data.get("expr") or self.data.get("op") or "no detail")


def _count(record: Any, name: str, contents: Dict[str, Any]) -> Optional[int]:
    try:
        return int(record.get_log_count((name, contents)))
    except Exception:
        return None


def _merged(failures: List[Any], names: Any) -> List[Dict[str, Any]]:
    merged: Dict[Tuple[Any, ...], Dict[str, Any]] = {}
    for failure in failures:
        kind = _kind(getattr(failure, "failure_type", None))
        data = getattr(failure, "data", None) or {}
        message = _message(failure, data, names)
        frame = _user_frame(data, names)
        entry = merged.setdefault(
            (kind, message, frame), {"kind": kind, "message": message, "frame": frame, "count": 0}
        )
        occurrences = data.get("occurrences") if isinstance(data, dict) else None
        entry["count"] += occurrences if isinstance(occurrences, int) and occurrences > 0 else 1
    ordered = sorted(merged.values(), key=lambda e: (e["kind"], -e["count"], e["message"]))
    return ordered[:MAX_PROBLEMS]


def problems_of(report: Any) -> List[Dict[str, Any]]:
    """One entry per problem kind and place: kind, short message, user frame, how often it happened."""
    if report is None:
        return []
    names = getattr(report, "str_to_filename", None) or {}
    return _merged(list(getattr(report, "failures", []) or []), names)


def _kind(failure_type: Any) -> str:
    if isinstance(failure_type, str):
        return failure_type
    name = getattr(failure_type, "name", None) or str(failure_type or "unknown")
    return name.lower().replace("_", "-")


def short(text: Any) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MESSAGE_WIDTH else text[: MESSAGE_WIDTH - 1] + "…"


def _message(failure: Any, data: Any, names: Any) -> str:
    if isinstance(data, dict):
        for key in ("expr", "reason", "op", "name"):
            if data.get(key):
                prefix = {"expr": "cannot decide", "op": "operator"}.get(key, key)
                return short("%s %s" % (prefix, data[key]))
    try:  # older and newer reports print themselves; keep the first sentence that is not a banner
        text = failure.print(names)
    except Exception:
        text = str(data)
    for line in str(text).splitlines():
        line = line.strip().lstrip("0123456789. ")
        if line and not line.startswith("#"):
            return short(line)
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
        return short("%s: %s" % (where, code) if code else where)
    return None
