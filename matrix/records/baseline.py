"""What changed since an earlier report (``--baseline``): the cells whose status changed, new and vanished cells,
and the regressions and fixes between releases that are new or no longer show.

An analysis over the current cell table and transitions and an earlier report's tables
(``cells.parquet``, ``transitions.parquet``); :mod:`matrix.report.baseline` words it on the front page.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, Tuple

import pandas as pd

from matrix.contract.errors import UserError
from matrix.records import devices, store, transitions
from matrix.records.columns import KEY


class BaselineError(UserError):
    """A --baseline folder that is not a report's tables folder."""


@dataclass(frozen=True)
class BaselineComparison:
    """What is new since an earlier report's tables."""

    # Cells in both whose status differs: kind regression / wrong-result / fix, as between two releases
    # (transitions.status_change), or change where either status has no rank.
    changed: pd.DataFrame
    new_cells: pd.DataFrame  # identity columns of cells only in the current report
    vanished_cells: pd.DataFrame  # identity columns of cells only in the baseline
    # Regressions and fixes (transitions.REGRESSIONS and FIXES) between releases not in the baseline report.
    new_transitions: pd.DataFrame
    gone_transitions: pd.DataFrame  # regressions and fixes of the baseline that no longer show


def read_baseline(folder: str) -> Tuple[pd.DataFrame, Optional[pd.DataFrame]]:
    """An earlier report's cells.parquet and, when present, transitions.parquet."""
    path = os.path.join(folder, "cells.parquet")
    if not os.path.isfile(path):
        raise BaselineError(
            "%s: no cells.parquet here; --baseline takes the --out folder of an earlier `export-matrix report`" % folder
        )
    try:
        # The verdicts compare one device's cells: the table holds every device's (records.devices).
        base = devices.main_cells(pd.read_parquet(path))
        moves_path = os.path.join(folder, "transitions.parquet")
        moves = pd.read_parquet(moves_path) if os.path.isfile(moves_path) else None
    except (OSError, ValueError) as exc:
        raise BaselineError("%s: cannot read the baseline tables: %s" % (folder, exc))
    if "with_set" not in base.columns:
        base = base.assign(with_set="")  # a report from before --with sets were told apart: none had one
    missing = sorted(set(KEY + ["status"]) - set(base.columns))
    if missing:
        raise BaselineError("%s: cells.parquet lacks the columns %s" % (path, ", ".join(missing)))
    return base, moves


TRANSITION_KEY = ["kind", "case", "mode", "variant", "with_set", "before", "after"]


def compare(
    current: pd.DataFrame, moves: pd.DataFrame, base: pd.DataFrame, base_moves: Optional[pd.DataFrame]
) -> BaselineComparison:
    """Compare the current cells and transitions with a baseline's."""
    left = current[KEY + ["status"]].astype({k: str for k in KEY})
    right = base[KEY + ["status"]].astype({k: str for k in KEY})
    both = left.merge(right, on=KEY, how="outer", suffixes=("", "_baseline"), indicator=True)
    changed = both[(both["_merge"] == "both") & (both["status"] != both["status_baseline"])].copy()
    changed["kind"] = [
        transitions.status_change(old, new) or "change"
        for old, new in zip(changed["status_baseline"], changed["status"])
    ]
    changed = store.sort_cells(changed.drop(columns="_merge"), release="release", extra=["case", "mode"])
    changed = changed[[*KEY, "kind", "status_baseline", "status"]]
    new = store.sort_cells(both[both["_merge"] == "left_only"][KEY], release="release", extra=["case", "mode"])
    gone = store.sort_cells(both[both["_merge"] == "right_only"][KEY], release="release", extra=["case", "mode"])
    new_moves, gone_moves = _transition_changes(moves, base_moves, transitions.REGRESSIONS + transitions.FIXES)
    return BaselineComparison(changed, new, gone, new_moves, gone_moves)


def _transition_changes(
    moves: pd.DataFrame, base_moves: Optional[pd.DataFrame], kinds: Tuple[str, ...]
) -> Tuple[pd.DataFrame, pd.DataFrame]:
    now = _with_set_text(moves[moves["kind"].isin(kinds)] if not moves.empty else moves)
    if base_moves is None or not set(TRANSITION_KEY) - {"with_set"} <= set(base_moves.columns):
        return now.iloc[0:0], now.iloc[0:0]
    # A baseline from before --with sets were told apart has no with_set: none of its cells had one.
    before = _with_set_text(base_moves[base_moves["kind"].isin(kinds)])
    now_keys = set(now[TRANSITION_KEY].astype(str).itertuples(index=False, name=None)) if not now.empty else set()
    old_keys = set(before[TRANSITION_KEY].astype(str).itertuples(index=False, name=None))
    fresh = [k not in old_keys for k in now[TRANSITION_KEY].astype(str).itertuples(index=False, name=None)]
    gone = [k not in now_keys for k in before[TRANSITION_KEY].astype(str).itertuples(index=False, name=None)]
    return now[fresh].reset_index(drop=True), before[gone].reset_index(drop=True)


def _with_set_text(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its ``with_set`` as text ("" where missing), so that keys compare alike."""
    sets = frame["with_set"] if "with_set" in frame.columns else pd.Series("", index=frame.index, dtype=object)
    return frame.assign(with_set=[v if isinstance(v, str) else "" for v in sets])
