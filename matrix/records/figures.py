"""The headline figures a report opens with, and how each moved since an earlier report, with what moved it.

A figure moves for one of two reasons: the cells changed (a new run), or the same cells were judged by
other rules (the report re-rendered by a newer version of this tool). :func:`moved` tells them apart
where the tables show it, and never guesses:

- a transition the earlier report listed and this one does not, between builds of two variants, while
  this report compares no two variants: the series rule (one series per variant);
- a transition that touches a build this report marks incomplete: the incomplete-build rule;
- a transition whose cells changed status, appeared or vanished: the cells changed;
- "still broken", where the earlier report's own tables judged by today's rule give another figure than it
  published: the rule that judges which regressions are still open (the rest of its move is not attributed);
- anything else is said to have moved, by how much, with no reason given.

The earlier report's figures are read from its ``figures.json`` (:data:`FILE`, written beside its tables);
one published before that file existed gives its transition counts from its ``transitions.parquet`` and its
"still broken" figure from its front page's verdict line, which is what its readers saw.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Set, Tuple

import pandas as pd

from matrix.records import transitions
from matrix.records.baseline import TRANSITION_KEY, BaselineComparison

FILE = "figures.json"
STILL_BROKEN = "still broken"
# Each figure counted from the transitions, by its kinds, in the order the page names them.
COUNTED: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("regressions found", transitions.REGRESSIONS),
    ("fixes", transitions.FIXES),
    ("graph changes", ("graph-change",)),
    ("op drift", ("op-drift",)),
)
NAMES = (STILL_BROKEN,) + tuple(name for name, _ in COUNTED)

SERIES_RULE = "across variants (now one series per variant)"
INCOMPLETE_RULE = "of an incomplete build (now left out)"
CELLS_CHANGED = "of cells that changed"
OPEN_RULE = "the rule for which regressions are still open changed (the earlier tables give %d by today's rule)"
# The earlier front page's verdict line, for a report published before FILE existed.
_STILL_BROKEN_LINE = re.compile(r"\*\*Still broken on [^*]*\*\*: (\d+) of the \d+ regressions")


@dataclass(frozen=True)
class Part:
    """A share of a figure's move and what caused it ("" where the tables do not say)."""

    count: int  # signed: what this cause adds to the figure
    reason: str


@dataclass(frozen=True)
class Moved:
    """One headline figure that is not what the earlier report published."""

    figure: str
    before: int
    now: int
    parts: Tuple[Part, ...]  # their counts add up to now - before


@dataclass(frozen=True)
class Since:
    """The headline figures' moves since an earlier report."""

    same_cells: bool  # no cell changed status, appeared or vanished: whatever moved, the rules moved it
    moved: Tuple[Moved, ...]


def of(moves: pd.DataFrame, still_broken: int) -> Dict[str, int]:
    """A report's headline figures: its open regressions and its transitions counted by kind."""
    kinds = moves["kind"] if not moves.empty else pd.Series(dtype=object)
    found = {STILL_BROKEN: int(still_broken)}
    found.update({name: int(kinds.isin(group).sum()) for name, group in COUNTED})
    return found


def dumps(figures: Mapping[str, int]) -> str:
    """:data:`FILE`'s text: the figures in :data:`NAMES` order."""
    return json.dumps({name: figures[name] for name in NAMES if name in figures}, indent=2) + "\n"


def read(folder: str, moves: Optional[pd.DataFrame]) -> Dict[str, int]:
    """An earlier report's figures: its :data:`FILE`, else what its transitions table and front page give."""
    path = os.path.join(folder, FILE)
    if os.path.isfile(path):
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            return {k: int(v) for k, v in data.items() if k in NAMES}
        except (OSError, ValueError, TypeError):
            return {}
    found: Dict[str, int] = {}
    if moves is not None and "kind" in moves.columns:
        found = {k: v for k, v in of(moves, 0).items() if k != STILL_BROKEN}
    index = os.path.join(folder, "index.md")
    if os.path.isfile(index):
        with open(index, encoding="utf-8") as f:
            line = _STILL_BROKEN_LINE.search(f.read())
        if line:
            found[STILL_BROKEN] = int(line.group(1))
    return found


def moved(
    before: Mapping[str, int],
    now: Mapping[str, int],
    comparison: BaselineComparison,
    base_moves: Optional[pd.DataFrame],
    moves: pd.DataFrame,
    incomplete: Iterable[Tuple[str, str]] = (),
    rejudged_still_broken: Optional[int] = None,
) -> Since:
    """The figures of ``now`` that differ from ``before``, each move split by what caused it.

    ``incomplete``: this report's incomplete builds, (release, variant); ``rejudged_still_broken``: the
    earlier report's tables judged by today's rule for open regressions (None where they cannot be).
    """
    same = comparison.changed.empty and comparison.new_cells.empty and comparison.vanished_cells.empty
    touched = _touched(comparison)
    series_rule = moves.empty or not _across_variants(moves).any()
    found: List[Moved] = []
    for name in NAMES:
        if name not in before or name not in now or before[name] == now[name]:
            continue
        if name == STILL_BROKEN:
            parts = _still_broken_parts(before[name], now[name], rejudged_still_broken)
        else:
            kinds = dict(COUNTED)[name]
            parts = _transition_parts(
                before[name], now[name], kinds, base_moves, moves, set(incomplete), touched, series_rule
            )
        found.append(Moved(name, before[name], now[name], parts))
    return Since(same, tuple(found))


def _still_broken_parts(before: int, now: int, rejudged: Optional[int]) -> Tuple[Part, ...]:
    """The rule's share where the earlier tables judged by it give another figure; the rest is not attributed."""
    if rejudged is None or rejudged == before:
        return (Part(now - before, ""),)
    parts = [Part(rejudged - before, OPEN_RULE % rejudged)]
    if now != rejudged:
        parts.append(Part(now - rejudged, ""))
    return tuple(parts)


def _transition_parts(
    before: int,
    now: int,
    kinds: Tuple[str, ...],
    base_moves: Optional[pd.DataFrame],
    moves: pd.DataFrame,
    incomplete: Set[Tuple[str, str]],
    touched: Set[Tuple[str, str, str]],
    series_rule: bool,
) -> Tuple[Part, ...]:
    if base_moves is None or "kind" not in base_moves.columns:
        return (Part(now - before, ""),)
    old = _keyed(base_moves[base_moves["kind"].isin(kinds)])
    new = _keyed(moves[moves["kind"].isin(kinds)] if not moves.empty else moves)
    counts: Dict[str, int] = {}
    for key, move in old.items():
        if key not in new:
            reason = _reason(move, incomplete, touched, series_rule)
            counts[reason] = counts.get(reason, 0) - 1
    for key, move in new.items():
        if key not in old:
            reason = _reason(move, incomplete, touched, False)
            counts[reason] = counts.get(reason, 0) + 1
    # Whatever the keys do not account for (the earlier figure read from its page) is not attributed.
    rest = (now - before) - sum(counts.values())
    if rest:
        counts[""] = counts.get("", 0) + rest
    ordered = sorted(counts.items(), key=lambda item: (item[0] == "", item[0]))
    return tuple(Part(count, reason) for reason, count in ordered if count)


def _reason(
    move: Mapping[str, Any], incomplete: Set[Tuple[str, str]], touched: Set[Tuple[str, str, str]], series_rule: bool
) -> str:
    """What left out (or added) one transition; several causes together where more than one holds."""
    reasons = []
    variant_before = _text(move.get("variant_before")) or _text(move.get("variant"))
    if series_rule and variant_before != _text(move.get("variant")):
        reasons.append(SERIES_RULE)
    builds = {(_text(move.get("before")), variant_before), (_text(move.get("after")), _text(move.get("variant")))}
    if builds & incomplete:
        reasons.append(INCOMPLETE_RULE)
    case, mode = _text(move.get("case")), _text(move.get("mode"))
    if {(case, mode, _text(move.get("before"))), (case, mode, _text(move.get("after")))} & touched:
        reasons.append(CELLS_CHANGED)
    return "transitions " + " and ".join(reasons) if reasons else ""


def _touched(b: BaselineComparison) -> Set[Tuple[str, str, str]]:
    """(case, mode, release) of every cell that changed status, appeared or vanished."""
    found: Set[Tuple[str, str, str]] = set()
    for frame in (b.changed, b.new_cells, b.vanished_cells):
        if not frame.empty:
            found |= set(zip(frame["case"].astype(str), frame["mode"].astype(str), frame["release"].astype(str)))
    return found


def _across_variants(moves: pd.DataFrame) -> pd.Series:
    if "variant_before" not in moves.columns:
        return pd.Series(False, index=moves.index)
    before = [_text(v) for v in moves["variant_before"]]
    return pd.Series([b != "" and b != _text(v) for b, v in zip(before, moves["variant"])], index=moves.index)


def _keyed(frame: pd.DataFrame) -> Dict[Tuple[str, ...], Dict[str, Any]]:
    if frame.empty:
        return {}
    rows = frame.to_dict("records")
    return {tuple(_text(row.get(k)) for k in TRANSITION_KEY): row for row in rows}


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value) or value is pd.NA:
        return ""
    return str(value)


def short(since: Since) -> str:
    """The moves without their causes: ``still broken 10 → 8, fixes 156 → 150``."""
    return ", ".join("%s %d → %d" % (m.figure, m.before, m.now) for m in since.moved)


def cause(part: Part) -> str:
    """One cause of a move in plain words: ``−6: transitions across variants (…)``, ``+2 not attributed``."""
    sign = "+" if part.count > 0 else "−"
    return "%s%d%s" % (sign, abs(part.count), ": " + part.reason if part.reason else " not attributed")
