"""What every step of a cell does alike: copy the inputs it is handed, and time itself.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import copy
import time
from typing import Any, Callable, Dict

from .failure import OutOfMemory, allocation_failure


def clone(value: Any) -> Any:
    """A deep copy of inputs so that input mutation in one stage cannot leak into the next."""
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def timed(record: Dict[str, Any], key: str, fn: Callable[[], Any]) -> Any:
    """``fn()``, its seconds in ``record[key]``; a failed allocation becomes ``OutOfMemory`` naming the step."""
    start = time.perf_counter()
    try:
        return fn()
    except Exception as exc:
        if not isinstance(exc, OutOfMemory) and allocation_failure(exc) is not None:
            raise OutOfMemory(exc, key[: -len("_s")]) from exc
        raise
    finally:
        record[key] = round(time.perf_counter() - start, 6)
