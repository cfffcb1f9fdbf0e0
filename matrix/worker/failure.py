"""An exception as record fields: its qualified type, first line and traceback, addresses and paths normalized.

An allocation failure, wherever it is met and however torch wraps it, is not described as the
stage's error: it ends the cell (or load) as a ``crash`` with ``reason`` ``out-of-memory``.
"""

from __future__ import annotations

import traceback
from typing import Any, Dict, Optional

from ..contract import records
from ..contract.schema import Status, first_line
from .canonical import normalize_text

TRACEBACK_LINES = 40
# The ``reason`` of a cell that could not allocate memory: a resource failure, not a broken case.
OUT_OF_MEMORY = "out-of-memory"
# What torch's allocators say when an allocation fails (CPU, CUDA, MPS, XPU).
_OUT_OF_MEMORY_TEXT = ("can't allocate memory", "out of memory")


class OutOfMemory(MemoryError):
    """An allocation failure, wherever in the cell and however wrapped: it ends the cell as a crash."""

    def __init__(self, original: BaseException, stage: Optional[str]) -> None:
        super().__init__(str(original))
        self.original, self.stage = original, stage


def allocation_failure(exc: BaseException) -> Optional[BaseException]:
    """The innermost allocation failure in ``exc``'s chain (torch wraps it, case loading too), if any."""
    found = None
    seen = set()
    current: Optional[BaseException] = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, MemoryError) or type(current).__name__ == "OutOfMemoryError":
            found = current
        elif isinstance(current, RuntimeError) and any(text in str(current) for text in _OUT_OF_MEMORY_TEXT):
            found = current
        # Followed even when suppressed: dynamo re-raises the failure ``from None``, keeping it only as context.
        current = current.__cause__ or current.__context__
    return getattr(found, "original", found)


def out_of_memory(exc: BaseException) -> Dict[str, Any]:
    """The record fields of a cell that ran out of memory."""
    original = allocation_failure(exc) or exc
    for link in (exc, original):  # free what the failed stage's frames hold before describing it
        traceback.clear_frames(link.__traceback__)
    fields = _describe(original)
    fields.update(
        status=Status.CRASH.value,
        reason=OUT_OF_MEMORY,
        failed_stage=getattr(exc, "stage", None),
        error_message=fields["error_message"] or "the cell ran out of memory",
    )
    return fields


def describe_error(exc: BaseException) -> Dict[str, Any]:
    """The record fields that describe an exception, with addresses and paths normalized.

    An allocation failure is raised again, as a MemoryError: it ends the cell (see ``cell.run_cell``).
    """
    if isinstance(exc, MemoryError):
        raise exc
    if allocation_failure(exc) is not None:
        raise OutOfMemory(exc, None) from exc
    return _describe(exc)


def one_line(exc: BaseException) -> str:
    """``Type: first line`` of an exception, as a stage's ``*_error`` field holds it."""
    error = describe_error(exc)
    return "%s: %s" % (error["error_type"], error["error_message"])


def _describe(exc: BaseException) -> Dict[str, Any]:
    cls = type(exc)
    qualified = cls.__qualname__ if cls.__module__ == "builtins" else "%s.%s" % (cls.__module__, cls.__qualname__)
    first = first_line(str(exc), limit=None)
    lines = traceback.format_exception(cls, exc, exc.__traceback__)
    tail = "".join(lines).splitlines()[-TRACEBACK_LINES:]
    gb_type = getattr(exc, "gb_type", None)
    case_name = getattr(exc, "case_name", None)
    return {
        "error_type": qualified,
        "error_message": records.without_paths(normalize_text(first))[:500],
        "error_traceback": records.without_paths(normalize_text("\n".join(tail))),
        "gb_type": str(gb_type) if gb_type is not None else None,
        "error_case_name": str(case_name) if case_name is not None else None,
    }
