"""Transitions between consecutive releases: regressions, fixes, graph changes, op drift, slowdowns.

A pure function over the cell table (one row per release, variant, python, case, mode,
as made by :func:`matrix.records.tables.cells`). Each (case, mode, variant) is a series ordered
by release; where a release ran under several Pythons, the newest Python stands for it.

Rules, chosen to be simple and honest:

- A transition compares two *consecutive* releases of the variant's release list, and
  needs a cell on both sides. A release with no cell for the case (an env-error, a case
  not run there) breaks the series there: nothing is compared across the gap.
- ``regression``/``fix`` need both statuses applicable, ordered pass > mismatch > fail >
  crash = timeout. A status without a rank (a capability the release lacks, a broken
  case file) is neither better nor worse than anything, so no regression or fix is
  reported to or from it.
- ``graph-change``: both pass and the graph hashes differ.
- ``op-drift``: the sets of operators differ, per stage: ``export`` (``ops``) and
  ``decomposed`` (``decomposed_ops``); needs the op list on both sides.
- ``slowdown``/``speedup``: both exported (pass or mismatch) and the median export time
  changes by more than ×1.5 and by more than 50 ms.
"""

from __future__ import annotations

import math
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from matrix.records import store
from matrix.schema import MODES, rank

KINDS = ("regression", "fix", "graph-change", "op-drift", "slowdown", "speedup")
EXPORTED = ("pass", "mismatch")
SLOW_RATIO = 1.5
SLOW_MIN_S = 0.05
OP_STAGES = (("export", "ops"), ("decomposed", "decomposed_ops"))

COLUMNS = [
    "kind", "case", "mode", "variant", "before", "after", "python_before", "python_after",
    "status_before", "status_after", "error_type", "error_message", "stage", "added", "removed",
    "hash_before", "hash_after", "export_s_before", "export_s_after", "detail",
]  # fmt: skip

Row = Dict[str, Any]


def find(table: pd.DataFrame, releases: Optional[Mapping[str, Sequence[str]]] = None) -> pd.DataFrame:
    """Every transition in ``table``, sorted by release, variant, case, mode and kind.

    ``releases`` gives each variant's ordered release list (so that a release with an
    env-error still breaks the series); by default, the releases the table holds.
    """
    if table.empty:
        return _frame([])
    newest = table.assign(_python=store.rank(table["python"].astype(object)))
    newest = newest.sort_values("_python", kind="stable").drop_duplicates(
        ["variant", "case", "mode", "release"], keep="last"
    )
    if releases is None:
        releases = {str(v): store.ordered(group["release"]) for v, group in newest.groupby("variant")}
    series: Dict[Tuple[str, str, str], Dict[str, Row]] = {}
    for row in newest.drop(columns="_python").to_dict("records"):
        series.setdefault((str(row["variant"]), str(row["case"]), str(row["mode"])), {})[str(row["release"])] = row
    found: List[Row] = []
    for (variant, _case, _mode), by_release in series.items():
        order = list(releases.get(variant, ())) or store.ordered(by_release)
        for before, after in zip(order, order[1:]):
            if before in by_release and after in by_release:
                found.extend(compare(by_release[before], by_release[after]))
    return _frame(found)


def compare(before: Row, after: Row) -> List[Row]:
    """The transitions from one release's cell to the next one's (same case, mode and variant)."""
    found: List[Row] = []
    old, new = before.get("status"), after.get("status")
    old_rank, new_rank = rank(old), rank(new)
    if old_rank is not None and new_rank is not None and old_rank != new_rank:
        kind = "regression" if new_rank < old_rank else "fix"
        # A regression is explained by the new error, a fix by the error it removed.
        source = after if kind == "regression" else before
        found.append(
            _row(kind, before, after, error_type=source.get("error_type"), error_message=source.get("error_message"))
        )
        found[-1]["detail"] = "%s → %s" % (old, new)
    old_hash, new_hash = _text(before.get("graph_hash")), _text(after.get("graph_hash"))
    if old == new == "pass" and old_hash and new_hash and old_hash != new_hash:
        found.append(_row("graph-change", before, after, hash_before=old_hash, hash_after=new_hash))
        found[-1]["detail"] = "%s → %s" % (old_hash, new_hash)
    for stage, column in OP_STAGES:
        old_ops, new_ops = op_set(before.get(column)), op_set(after.get(column))
        if old_ops is None or new_ops is None or old_ops == new_ops:
            continue
        added, removed = sorted(new_ops - old_ops), sorted(old_ops - new_ops)
        found.append(_row("op-drift", before, after, stage=stage, added=added, removed=removed))
        found[-1]["detail"] = " ".join(["+" + op for op in added] + ["−" + op for op in removed])
    old_s, new_s = _seconds(before.get("export_s")), _seconds(after.get("export_s"))
    if old in EXPORTED and new in EXPORTED and old_s is not None and new_s is not None:
        timing: Optional[str] = None
        if new_s > old_s * SLOW_RATIO and new_s - old_s > SLOW_MIN_S:
            timing = "slowdown"
        elif old_s > new_s * SLOW_RATIO and old_s - new_s > SLOW_MIN_S:
            timing = "speedup"
        if timing:
            found.append(_row(timing, before, after, export_s_before=old_s, export_s_after=new_s))
            ratio = new_s / old_s if old_s > 0 else math.inf
            found[-1]["detail"] = "%.3f s → %.3f s (×%.2f)" % (old_s, new_s, ratio)
    return found


def op_set(value: Any) -> Optional[FrozenSet[str]]:
    """Operator names as a set; None when the cell has no op list (export did not get that far)."""
    if value is None or isinstance(value, (str, float, int)):
        return None
    return frozenset(str(op) for op in value)


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) and value else None


def _seconds(value: Any) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _row(kind: str, before: Row, after: Row, **values: Any) -> Row:
    row: Row = {column: None for column in COLUMNS}
    row.update(
        kind=kind,
        case=after.get("case"),
        mode=after.get("mode"),
        variant=after.get("variant"),
        before=before.get("release"),
        after=after.get("release"),
        python_before=before.get("python"),
        python_after=after.get("python"),
        status_before=before.get("status"),
        status_after=after.get("status"),
    )
    row.update(values)
    return row


def _frame(rows: List[Row]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=COLUMNS, dtype=object)
    if frame.empty:
        return frame
    frame["_after"] = store.rank(frame["after"])
    frame["_kind"] = frame["kind"].map({k: i for i, k in enumerate(KINDS)})
    frame["_stage"] = frame["stage"].fillna("")
    frame["_mode"] = frame["mode"].map({m: i for i, m in enumerate(MODES)})
    by = ["_after", "variant", "case", "_mode", "_kind", "_stage"]
    helpers = ["_after", "_kind", "_stage", "_mode"]
    return frame.sort_values(by, kind="stable").drop(columns=helpers).reset_index(drop=True)
