"""The graph diffs a report shows, kept beside its tables so that a rebuild never loses one.

A graph change (a transition of kind ``graph-change``) is shown with the unified diff of the graph texts on
its two sides. The texts are bulky: a report rebuilt from tables that lack them (an older publication, a
``texts.parquet`` left out) could show the change but not its diff. So every report writes ``graph_diffs.parquet``:
each graph change it shows with a diff, keyed by what identifies the change (case, mode, ``--with`` set, the
two builds and the two graph hashes). A later build carries a kept diff over to a graph change of the same key
whose texts it lacks: with both hashes in the key, a carried diff is the diff of these very two graphs. A carried
diff names where it was first kept (``kept_from``), and the pages say so.

:func:`lost` is the guard: the graph changes a previous publication showed with a diff that a new build still
shows, without one. ``report`` refuses to write over such a publication.
"""

from __future__ import annotations

import difflib
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

TABLE = "graph_diffs.parquet"
# What identifies a graph change: the transition's case, mode and --with set, its two builds and two graphs.
KEY = ("case", "mode", "with_set", "variant_before", "before", "variant", "after", "hash_before", "hash_after")
COLUMNS = (*KEY, "diff", "kept_from")
# Where a graph change is: its key without the two hashes.
PLACE = KEY[:7]
# The columns a build adds to its graph changes where their texts are missing and a kept diff is at hand.
CARRIED = "graph_diff"
CARRIED_FROM = "graph_diff_from"
MOVE_COLUMNS = (CARRIED, CARRIED_FROM)
GRAPH_CHANGE = "graph-change"
# Where a carried diff was kept, when the report that kept it had computed it from its own texts.
EARLIER = "an earlier build of this report"

Key = Tuple[str, ...]
Row = Dict[str, Any]


def key_of(row: Mapping[str, Any]) -> Key:
    """The key of a graph change (a transition row, or a row of the table)."""
    return tuple(_text(row.get(k)) for k in KEY)


def diff_lines(before: str, after: str) -> List[str]:
    """The unified diff of two graph texts, without its two file-name lines (the pages title the sides)."""
    return list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm=""))[2:]


def frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The table of diffs: one row per key (the first given wins), sorted by key."""
    found: Dict[Key, Row] = {}
    for row in rows:
        kept_from = _text(row.get("kept_from")) or None
        found.setdefault(
            key_of(row), {**dict(zip(KEY, key_of(row))), "diff": _text(row.get("diff")), "kept_from": kept_from}
        )
    table = pd.DataFrame([found[k] for k in sorted(found)], columns=list(COLUMNS))
    return table.astype({c: object for c in COLUMNS})


def computed(moves: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """The diffs of the graph changes in ``moves`` whose two sides have a graph text in ``cells``."""
    if moves.empty or cells.empty or "graph_text" not in cells.columns:
        return frame([])
    texts: Dict[Tuple[str, ...], str] = {}
    for row in cells.to_dict("records"):
        text = row.get("graph_text")
        if isinstance(text, str) and text:
            texts[_side(row, "release", "variant", "python")] = text
    rows = []
    for move in _changes(moves):
        before = texts.get(_side(move, "before", "variant_before", "python_before"))
        after = texts.get(_side(move, "after", "variant", "python_after"))
        if before is not None and after is not None:
            rows.append({**move, "diff": "\n".join(diff_lines(before, after)), "kept_from": None})
    return frame(rows)


def read(folder: str) -> Optional[pd.DataFrame]:
    """The diffs a report folder kept, or None where it kept none (a report from before this table)."""
    path = os.path.join(folder, TABLE)
    if not os.path.isfile(path):
        return None
    table = pd.read_parquet(path)
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError("%s: not a table of graph diffs (no %s)" % (path, ", ".join(missing)))
    return frame(table.to_dict("records"))


def table(moves: pd.DataFrame, cells: pd.DataFrame, kept: Sequence[pd.DataFrame] = ()) -> pd.DataFrame:
    """What a report keeps: the diff of each graph change it shows, from its texts, else from ``kept`` (earlier
    reports' tables, the first that has the key wins); and every kept diff between two of its cells, with those
    very hashes (a case's page diffs releases with a graph that are not consecutive where those between have none)."""
    fresh = computed(moves, cells)
    shown = {key_of(m) for m in _changes(moves)}
    sides = set()
    if not cells.empty and "graph_hash" in cells.columns:
        sides = {_side(row, "release", "variant", "graph_hash") for row in cells.to_dict("records")}
    carried = [
        dict(row, kept_from=_text(row.get("kept_from")) or EARLIER)
        for one in kept
        for row in one.to_dict("records")
        if key_of(row) in shown or {_before(row), _after(row)} <= sides
    ]
    return frame([*fresh.to_dict("records"), *carried])


def carried(diffs: pd.DataFrame) -> Dict[Key, Row]:
    """The diffs of a table that an earlier report kept (those with ``kept_from``), by key."""
    return {key_of(row): row for row in diffs.to_dict("records") if _text(row.get("kept_from"))}


def attach(moves: pd.DataFrame, cells: pd.DataFrame, diffs: pd.DataFrame) -> pd.DataFrame:
    """``moves`` with the kept diff of each graph change whose texts ``cells`` lack (:data:`CARRIED`, lines joined,
    and where it was kept, :data:`CARRIED_FROM`): what the pages show where they cannot diff the texts."""
    if moves.empty:
        return moves
    fresh = {key_of(r) for r in computed(moves, cells).to_dict("records")}
    held = {key_of(r): r for r in diffs.to_dict("records")}
    carried: List[Optional[str]] = []
    sources: List[Optional[str]] = []
    for move in moves.to_dict("records"):
        key = key_of(move)
        row = held.get(key) if move.get("kind") == GRAPH_CHANGE and key not in fresh else None
        carried.append(row["diff"] if row is not None else None)
        sources.append((row.get("kept_from") or EARLIER) if row is not None else None)
    return moves.assign(**{CARRIED: carried, CARRIED_FROM: sources})


def lost(previous: pd.DataFrame, moves: pd.DataFrame, now: pd.DataFrame) -> List[Key]:
    """The graph changes ``moves`` shows without a diff in ``now`` (the new build's table) where ``previous`` (a
    publication's table) had one for the same case, mode, ``--with`` set and builds, whatever the hashes: evidence
    a rebuild would drop."""
    places = {key_of(r)[: len(PLACE)] for r in previous.to_dict("records")}
    held = {key_of(r) for r in now.to_dict("records")}
    return sorted(k for k in {key_of(m) for m in _changes(moves)} - held if k[: len(PLACE)] in places)


def describe(key: Key) -> str:
    """``models/x strict 2.5.1 → 2.6.0 (3f… → 9a…)``: a graph change in a line."""
    named = dict(zip(KEY, key))
    with_set = " [%s]" % named["with_set"] if named["with_set"] else ""
    return "%s%s %s %s → %s (%s → %s)" % (
        named["case"], with_set, named["mode"], named["before"], named["after"], named["hash_before"],
        named["hash_after"],
    )  # fmt: skip


def _changes(moves: pd.DataFrame) -> List[Row]:
    if moves.empty or "kind" not in moves.columns:
        return []
    return [m for m in moves.to_dict("records") if m.get("kind") == GRAPH_CHANGE]


def _before(row: Mapping[str, Any]) -> Tuple[str, ...]:
    return _side(row, "before", "variant_before", "hash_before")


def _after(row: Mapping[str, Any]) -> Tuple[str, ...]:
    return _side(row, "after", "variant", "hash_after")


def _side(row: Mapping[str, Any], release: str, variant: str, python: str) -> Tuple[str, ...]:
    return tuple(_text(row.get(k)) for k in ("case", "mode", "with_set", release, variant, python))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
