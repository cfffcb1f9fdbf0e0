"""Export times of two cells compared: a ``slowdown`` or ``speedup``, claimed only on enough timed runs.

The rule, with the thresholds below, is stated with those kinds in :mod:`matrix.records.transitions`.
"""

from __future__ import annotations

import collections
import functools
import math
import numbers
import statistics
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from matrix.records.columns import EXPORTED

Row = Dict[str, Any]

SLOW_RATIO = 1.5
SLOW_MIN_S = 0.05
MIN_RUNS = 5
MAX_P = 0.005
# Sample sizes (product of the two sides' runs) up to which the p-value is exact; above it,
# the normal approximation is close and the exact one costs more.
EXACT_UP_TO = 400


def both_exported(before: Row, after: Row) -> bool:
    """Whether both cells hold an exported program (pass or mismatch), whose export time says something."""
    return before.get("status") in EXPORTED and after.get("status") in EXPORTED


def timeable(before: Row, after: Row) -> bool:
    """Whether a slowdown or speedup may be claimed between the cells: both exported, MIN_RUNS timed runs each."""
    return (
        both_exported(before, after)
        and len(samples(before.get("export_s_runs"))) >= MIN_RUNS
        and len(samples(after.get("export_s_runs"))) >= MIN_RUNS
    )


def repeats(runs: Iterable[Any]) -> Tuple[int, int]:
    """The fewest and the most runs behind a cell, from the cells' ``runs`` (1 where not recorded); (0, 0) for none.

    What a timing or flakiness claim can rest on: one run per cell supports neither.
    """
    counts = [_runs(value) for value in runs]
    return (min(counts), max(counts)) if counts else (0, 0)


def _runs(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return 1
    number = float(value)
    return int(number) if math.isfinite(number) and number >= 1 else 1


def change(before: Row, after: Row) -> Optional[Tuple[str, Row]]:
    """A slowdown or speedup with the transition's columns that say so, when the runs on both sides show one."""
    if not timeable(before, after):
        return None
    old, new = samples(before.get("export_s_runs")), samples(after.get("export_s_runs"))
    old_median, new_median = statistics.median(old), statistics.median(new)
    if new_median >= old_median * SLOW_RATIO and new_median - old_median >= SLOW_MIN_S:
        kind, fast, slow = "slowdown", old, new
    elif old_median >= new_median * SLOW_RATIO and old_median - new_median >= SLOW_MIN_S:
        kind, fast, slow = "speedup", new, old
    else:
        return None
    p = mann_whitney(fast, slow)
    if p > MAX_P:
        return None
    ratio = new_median / old_median if old_median > 0 else math.inf
    runs = "%d runs each" % len(old) if len(old) == len(new) else "%d and %d runs" % (len(old), len(new))
    spread = "ranges disjoint" if max(fast) < min(slow) else "ranges overlap"
    detail = "×%.2f (median %.3f s → %.3f s), %s, %s, Mann-Whitney p = %.2g" % (
        ratio, old_median, new_median, runs, spread, p
    )  # fmt: skip
    columns = dict(export_s_before=old_median, export_s_after=new_median, runs_before=len(old), runs_after=len(new))
    return kind, dict(columns, p_value=p, detail=detail)


def mann_whitney(low: Sequence[float], high: Sequence[float]) -> float:
    """One-sided p-value of a Mann-Whitney test: the chance of ``high`` beating ``low`` this often if neither is larger.

    U counts the pairs (one value of each) where ``high``'s is larger, ties counting one
    half. The p-value is exact (for untied values; a half is rounded down, which can only
    make it larger) while ``len(low) * len(high) <= EXACT_UP_TO``, else the normal
    approximation with the tie correction and a continuity correction.
    """
    m, n = len(low), len(high)
    u = sum(1.0 if y > x else 0.5 if y == x else 0.0 for x in low for y in high)
    if m * n <= EXACT_UP_TO:
        return _exact_tail(m, n)[int(math.floor(u))]
    total = m + n
    ties = sum(t**3 - t for t in collections.Counter(list(low) + list(high)).values())
    variance = m * n / 12.0 * ((total + 1) - ties / (total * (total - 1)))
    if variance <= 0:
        return 1.0
    z = (u - m * n / 2.0 - 0.5) / math.sqrt(variance)
    return 0.5 * math.erfc(z / math.sqrt(2))


@functools.cache
def _exact_tail(m: int, n: int) -> Tuple[float, ...]:
    """P(U >= u) for u = 0..m*n under the null hypothesis, for samples of m and n untied values."""
    # dist[j] is U's distribution for i low and j high values, built for i = 0..m. The
    # largest value of all is a high one with probability j/(i+j), and then beats all i low ones.
    previous: List[List[float]] = [[1.0] for _ in range(n + 1)]
    for i in range(1, m + 1):
        current: List[List[float]] = [[1.0]]
        for j in range(1, n + 1):
            probs = [0.0] * (i * j + 1)
            for u, p in enumerate(current[j - 1]):
                probs[u + i] += p * j / (i + j)
            for u, p in enumerate(previous[j]):
                probs[u] += p * i / (i + j)
            current.append(probs)
        previous = current
    tail: List[float] = []
    running = 0.0
    for p in reversed(previous[n]):
        running += p
        tail.append(min(1.0, running))
    return tuple(reversed(tail))


def samples(value: Any) -> List[float]:
    """The finite numbers of a list of per-run times (a list, array, or list of texts from Parquet)."""
    if value is None or isinstance(value, (str, bytes, int, float)):
        return []
    found = []
    for item in value:
        try:
            number = float(item)
        except (TypeError, ValueError):
            continue
        if math.isfinite(number):
            found.append(number)
    return found
