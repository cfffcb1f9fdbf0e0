"""Faults of the runner, told apart from torch.export's own failures.

A cell forked from a process that holds a CUDA context, or one whose CUDA context cannot be
made, fails for the harness, not for the case: counted as ``fail`` it would read as a
torch.export regression. :func:`harness_fault` recognises those errors by what CUDA and
torch say of them; the batch engine records such an item as ``harness-error``, which has
no rank, so tables, transitions and verdicts never count it (as an install error).

Standard library only, Python 3.8 syntax: the worker uses it.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Tuple

# (text in the error, the reason recorded): what torch and the CUDA driver say when the runner's
# processes, not the case, keep CUDA from working.
FAULTS: Tuple[Tuple[str, str], ...] = (
    ("Cannot re-initialize CUDA in forked subprocess", "cuda-after-fork"),
    ("CUDA driver initialization failed", "cuda-driver"),
    ("CUDA call failed lazily at initialization", "cuda-init"),
    ("CUDA error: initialization error", "cuda-init"),
    ("cudaErrorInitializationError", "cuda-init"),
    ("CUDA driver version is insufficient", "cuda-driver"),
)


def harness_fault(record: Mapping[str, Any]) -> Optional[str]:
    """The reason an item's error is the runner's fault, or None where it is the item's own outcome."""
    text = "%s\n%s" % (record.get("error_message") or "", record.get("error_type") or "")
    for needle, reason in FAULTS:
        if needle in text:
            return reason
    return None
