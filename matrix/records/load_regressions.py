"""Load regressions: a loading release that does worse with a saved program than the loading release before it.

Pure functions over :func:`matrix.records.artifacts.table`.

- :func:`program_regressions`: each artifact (saving environment, case and mode) that a loading
  release does worse with than the loading release before it, statuses ranked pass > mismatch >
  run-error > load-error = crash = timeout. Loading releases are taken in version order; where
  one ran under several Pythons the newest stands for it, and two builds of one release
  (``2.9.1``, ``2.9.1+cpu``) are not compared with each other.
- :func:`regressions`: ``load-regression``, one (saving environment, loading release) pair whose
  loading release does worse than the one before it with some of that environment's artifacts:
  the unit a reader counts. A change of serialization format is one load regression per saving
  release it breaks, however many programs each saved; the pair names how many it affects
  (``programs``, of the ``loaded_before`` that the release before it loaded) and their most
  common failure.
"""

from __future__ import annotations

import collections
from typing import Any, Dict, List, Tuple

import pandas as pd

from matrix.contract.schema import MODES, load_rank
from matrix.records import store
from matrix.records.artifacts import LOADED_ENV, PROGRAM, SAVED_ENV, Failure, common_failure, env_order
from matrix.records.transitions import base

REGRESSION = "load-regression"
# One row per artifact that a loading release does worse with (program_regressions).
PROGRAM_COLUMNS = [
    "kind", "saved", "case", "mode", "with_set", "before", "after", "status_before", "status_after",
    "error_type", "error_message", *SAVED_ENV, "torch_version_before", "torch_version_after",
]  # fmt: skip
# One row per (saving environment, loading release) pair that does worse (regressions): ``programs``
# affected of the ``loaded_before`` (artifacts the release before loaded, whatever their outcome),
# and their most common failure (``status``, ``error_type``, ``error_message``), shared by ``sharing``.
REGRESSION_COLUMNS = [
    "kind", "saved", "before", "after", "programs", "loaded_before", "status", "error_type", "error_message",
    "sharing", *SAVED_ENV, "torch_version_before", "torch_version_after",
]  # fmt: skip


def regressions(loads: pd.DataFrame) -> pd.DataFrame:
    """Each ``load-regression`` of a :func:`.artifacts.table`: one row per (saving environment, loading release) pair
    that does worse with some artifacts than the loading release before it (see the module docstring),
    in saving then loading order."""
    moves = program_regressions(loads)
    if moves.empty:
        return pd.DataFrame([], columns=REGRESSION_COLUMNS, dtype=object)
    loaded = _loaded_before(loads)
    found = []
    for _, group in moves.groupby([*SAVED_ENV, "before", "after"], sort=False):
        rows = group.to_dict("records")
        failed = group.rename(columns={"status_after": "status"})
        cause = common_failure(failed)
        first = rows[0]
        row: Dict[str, Any] = dict.fromkeys(REGRESSION_COLUMNS)
        row.update({key: first[key] for key in ("saved", "before", "after", *SAVED_ENV)}, kind=REGRESSION)
        row.update({key: first[key] for key in ("torch_version_before", "torch_version_after")}, programs=len(rows))
        row["loaded_before"] = loaded[(first["saved"], first["before"], first["after"])]
        if cause is not None:
            kinds = [(f.status, f.error_type) for f in map(Failure.of, failed.to_dict("records"))]
            row.update(status=cause.status, error_type=cause.error_type or None, error_message=cause.message or None)
            row["sharing"] = kinds.count((cause.status, cause.error_type))
        found.append(row)
    frame = pd.DataFrame(found, columns=REGRESSION_COLUMNS, dtype=object)
    keyed = frame.assign(_saved=env_order(frame, SAVED_ENV), _after=frame["torch_version_after"].map(store.release_key))
    keyed = keyed.sort_values(["_saved", "_after"], kind="stable")
    return keyed.drop(columns=["_saved", "_after"]).reset_index(drop=True)


def _loaded_before(loads: pd.DataFrame) -> Dict[Tuple[str, str, str], int]:
    """Per (saved, before, after) step of :func:`program_regressions`' series: the artifacts compared
    across it that the older loading release loaded (any status but load-error, crash, timeout)."""
    counts: Dict[Tuple[str, str, str], int] = collections.Counter()
    for before, after in _series_steps(loads):
        rank = load_rank(before["status"])
        if rank is not None and rank > 0 and load_rank(after["status"]) is not None:
            counts[(str(after["saved"]), str(before["loaded"]), str(after["loaded"]))] += 1
    return counts


def _series_steps(loads: pd.DataFrame) -> List[Tuple[Dict[str, Any], Dict[str, Any]]]:
    """Each pair of consecutive loads (older, newer loading release) of one artifact; see the module docstring."""
    found: List[Tuple[Dict[str, Any], Dict[str, Any]]] = []
    if loads.empty:
        return found
    ranked = loads.assign(_loaded=env_order(loads, LOADED_ENV), _python=store.rank(loads["python"].astype(object)))
    # The newest Python stands for a loading build; builds of one release are not compared.
    ranked = ranked.sort_values(["_python"], kind="stable").drop_duplicates(
        [*PROGRAM, "torch_version", "variant"], keep="last"
    )
    ranked = ranked.assign(_saved=env_order(ranked, SAVED_ENV)).sort_values(
        ["_saved", "case", "mode", "_loaded"], kind="stable"
    )
    for _, series in ranked.groupby(PROGRAM, sort=False):
        rows = series.to_dict("records")
        for before, after in zip(rows, rows[1:]):
            if base(before["torch_version"]) != base(after["torch_version"]):
                found.append((before, after))
    return found


def program_regressions(loads: pd.DataFrame) -> pd.DataFrame:
    """Each artifact of a :func:`.artifacts.table` that a loading release does worse with than the one before it
    (see the module docstring), in saving, case, mode, loading order."""
    found: List[Dict[str, Any]] = []
    for before, after in _series_steps(loads):
        old, new = load_rank(before["status"]), load_rank(after["status"])
        if old is not None and new is not None and new < old:
            found.append(_regression(before, after))
    frame = pd.DataFrame(found, columns=PROGRAM_COLUMNS, dtype=object)
    if frame.empty:
        return frame
    keyed = frame.assign(
        _saved=env_order(frame, SAVED_ENV),
        _mode=frame["mode"].map({m: i for i, m in enumerate(MODES)}),
        _after=frame["torch_version_after"].map(store.release_key),
    )
    keyed = keyed.sort_values(["_saved", "case", "_mode", "with_set", "_after"], kind="stable")
    return keyed.drop(columns=["_saved", "_mode", "_after"]).reset_index(drop=True)


def _regression(before: Dict[str, Any], after: Dict[str, Any]) -> Dict[str, Any]:
    row: Dict[str, Any] = dict.fromkeys(PROGRAM_COLUMNS)
    row.update({key: after.get(key) for key in ("saved", "case", "mode", "with_set", "error_type", "error_message")})
    for side, load in (("before", before), ("after", after)):
        row.update({side: load["loaded"], "status_" + side: load["status"]})
        row["torch_version_" + side] = load["torch_version"]
    row.update({key: after[key] for key in SAVED_ENV}, kind=REGRESSION)
    return row
