"""Transitions between consecutive releases: regressions, fixes, stage changes, graph changes, op drift, timings.

A pure function over the cell table (one row per release, variant, python, case, mode,
as made by :func:`matrix.records.tables.cells`). Where a release ran under several
Pythons, the newest Python stands for it.

Series. Each (case, mode) is followed through the releases of one variant family in version
order: PyPI's builds form one series (their CUDA tags change from release to release, as PyPI's
default build does), the CPU builds another, each CUDA index's builds another. The releases of a
variant are those the ``releases`` mapping gives it (by default the ones the table holds). Builds
of one release from two variants (``2.13.0+cpu`` and PyPI's ``2.13.0+cu130``) are never in one
series: that is a comparison of builds (:mod:`matrix.records.builds`), not a change between
releases, so a CPU build between two PyPI releases neither adds nor hides a transition.

A transition compares two *consecutive* releases of a series and needs a cell on both
sides: a release of the series with no cell for the case (an env-error, a case not run
there, a build left out as incomplete) breaks the series there.

Kinds (KINDS), each claimed only on evidence a reader can trust:

- ``regression``/``fix``: both statuses applicable, ordered pass > mismatch > fail >
  crash = timeout. A status without a rank (a capability the release lacks, a broken
  case file) is neither better nor worse than anything, so no regression or fix is
  reported to or from it.
- ``wrong-result``: an export that used to refuse (fail, crash, timeout) now gives a
  program whose numbers differ from eager (mismatch). Higher in rank, but a user who got an
  error before now gets wrong numbers silently: it counts with the regressions, not the fixes.
- ``stage-regression``/``stage-fix``: the cell passes on both sides and a stage run on the
  exported program (``stage``: ``serialize`` for save/load, or ``decompose``) goes from
  ok to error, or from error to ok.
- ``graph-change``: both pass, both graph hashes come from the same hashing scheme (the
  same known ``fingerprint_version``) and they differ. Hashes of two schemes, or of a
  record that does not name its scheme, are not compared.
- ``op-drift``: the sets of operators differ, per stage: ``exported`` (``ops``) and
  ``decomposed`` (``decomposed_ops``); needs the op lists on both sides and, as a graph
  change does, the same known ``fingerprint_version``.
- ``slowdown``/``speedup``: both exported (pass or mismatch); each side has at least
  MIN_RUNS timed runs (``export_s_runs``); the median export time changes by at least
  ×1.5 and at least 50 ms; and the runs of the slower side are slower than those of the
  faster side beyond chance: a one-sided Mann-Whitney test gives p ≤ MAX_P. With 5 runs
  a side that holds only when the two sides' ranges of times are disjoint; with more runs,
  a few overlapping outliers are allowed. A single run never claims a timing change.

Steps. :func:`steps` groups the compared pairs and their transitions by release transition
(:class:`Step`), with what was compared: the passing pairs whose graphs cannot be compared,
the pairs exported on both sides and those with enough runs for a timing claim. The report's
pages render these; they judge nothing themselves.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.schema import MODES, STAGE_ERROR, STAGE_OK, STAGES, rank
from matrix.records import store, timings
from matrix.records.timings import both_exported, repeats, timeable

KINDS = (
    "regression",
    "wrong-result",
    "fix",
    "stage-regression",
    "stage-fix",
    "graph-change",
    "op-drift",
    "slowdown",
    "speedup",
)
# What a scheduled run treats as breakage: a cell that got worse, or a stage that stopped working.
REGRESSIONS = ("regression", "wrong-result", "stage-regression")
# What every count of fixes counts: a cell that got better (but not into wrong numbers), or a stage that works again.
FIXES = ("fix", "stage-fix")
# One line per kind, for the report's pages.
MEANING = {
    "regression": "the status got worse (pass > mismatch > fail > crash = timeout)",
    "wrong-result": "an export that used to fail (or crash, or time out) now gives other numbers than eager, silently",
    "fix": "the status got better (a failing export that now gives wrong numbers is a wrong-result instead)",
    "stage-regression": "passes on both sides, but a later stage (save/load, decomposition) starts failing",
    "stage-fix": "passes on both sides, and a later stage that failed now works",
    "graph-change": "passes on both sides with a different graph (hashes of the same scheme)",
    "op-drift": "the set of operators changed, in the exported or the decomposed program",
    "slowdown": "export got slower, on enough runs to rule out noise",
    "speedup": "export got faster, on enough runs to rule out noise",
}
OP_STAGES = (("exported", "ops"), ("decomposed", "decomposed_ops"))
STAGE_LABELS = dict(STAGES)

COLUMNS = [
    "kind", "case", "mode", "variant", "before", "after", "python_before", "python_after",
    "status_before", "status_after", "error_type", "error_message", "stage", "added", "removed",
    "hash_before", "hash_after", "export_s_before", "export_s_after", "detail",
    # The variant of the older cell (``variant`` is the newer one's); for timings, the timed
    # runs behind each side's median and the test's p-value.
    "variant_before", "runs_before", "runs_after", "p_value",
    # The cells' ``--with`` set ("" for none): a case run with two sets is two series, never compared across.
    "with_set",
]  # fmt: skip

Row = Dict[str, Any]
Env = Tuple[str, str]  # (variant, release)


def find(table: pd.DataFrame, releases: Optional[Mapping[str, Sequence[str]]] = None) -> pd.DataFrame:
    """Every transition in ``table``, sorted by release, variant, case, mode and kind.

    ``releases`` gives each variant's releases (so that a release with an env-error still
    breaks the series); by default, the releases the table holds.
    """
    return collect(pairs(table, releases))


def collect(compared: Sequence[Tuple[Row, Row]]) -> pd.DataFrame:
    """The transitions between each pair of cells (older, newer) of ``compared``, sorted as :func:`find` sorts."""
    found: List[Row] = []
    for before, after in compared:
        found.extend(compare(before, after))
    return _frame(found)


def pairs(table: pd.DataFrame, releases: Optional[Mapping[str, Sequence[str]]] = None) -> List[Tuple[Row, Row]]:
    """The pairs of cells (older, newer) that transitions compare; see the module docstring for the series."""
    if table.empty:
        return []
    # A case run with two --with sets is two series, compared each with itself, as two variants are.
    newest = store.newest_python(table)
    held: Dict[str, List[str]] = {str(v): list(r) for v, r in (releases or {}).items()}
    for variant, group in newest.groupby("variant"):
        held.setdefault(str(variant), store.ordered(group["release"]))
    chains = series(held)
    cells: Dict[Tuple[str, str, str], Dict[Env, Row]] = {}
    for row in newest.to_dict("records"):
        env = (str(row["variant"]), str(row["release"]))
        cells.setdefault((str(row["case"]), str(row["mode"]), str(row.get("with_set") or "")), {})[env] = row
    found: List[Tuple[Row, Row]] = []
    for by_env in cells.values():
        for variant in sorted({variant for variant, _ in by_env}):
            chain = chains[variant]
            for before, after in zip(chain, chain[1:]):
                if before in by_env and after in by_env:
                    found.append((by_env[before], by_env[after]))
    return found


@dataclass(frozen=True)
class Step:
    """One release transition: the pairs of cells compared (older, newer) and the transitions found between them."""

    before: str
    after: str
    pairs: Tuple[Tuple[Row, Row], ...]
    moves: Tuple[Row, ...]

    def count(self, *kinds: str) -> int:
        """The transitions of these kinds."""
        return sum(1 for m in self.moves if m["kind"] in kinds)

    def of(self, *kinds: str) -> List[Row]:
        """The transitions of these kinds, in :func:`find`'s order."""
        return [m for m in self.moves if m["kind"] in kinds]

    @property
    def incomparable(self) -> Tuple[Tuple[Row, Row], ...]:
        """The pairs that pass on both sides but whose graphs cannot be compared (not of one known scheme)."""
        return tuple(
            (b, a) for b, a in self.pairs if b.get("status") == a.get("status") == "pass" and scheme(b, a) is None
        )

    @property
    def exported(self) -> Tuple[Tuple[Row, Row], ...]:
        """The pairs whose cells exported on both sides."""
        return tuple((b, a) for b, a in self.pairs if both_exported(b, a))

    @property
    def timed(self) -> Tuple[Tuple[Row, Row], ...]:
        """The pairs with enough timed runs on both sides for a slowdown or speedup claim."""
        return tuple((b, a) for b, a in self.pairs if timeable(b, a))

    @property
    def repeats(self) -> Tuple[int, int]:
        """The fewest and the most runs behind a cell of the pairs compared (see :func:`repeats`)."""
        return repeats(cell.get("runs") for pair in self.pairs for cell in pair)


def steps(compared: Sequence[Tuple[Row, Row]], moves: pd.DataFrame) -> List[Step]:
    """The release transitions of ``compared`` (from :func:`pairs`) with their ``moves`` (from :func:`collect`).

    One step per (older, newer) release, in the newer release's order, then the older's.
    """
    by_step: Dict[Tuple[str, str], List[Tuple[Row, Row]]] = {}
    for before, after in compared:
        by_step.setdefault((str(before["release"]), str(after["release"])), []).append((before, after))
    found: Dict[Tuple[str, str], List[Row]] = {}
    for move in moves.to_dict("records") if not moves.empty else []:
        found.setdefault((str(move["before"]), str(move["after"])), []).append(move)
    keys = sorted(by_step, key=lambda k: (store.release_key(k[1]), store.release_key(k[0])))
    return [Step(b, a, tuple(by_step[(b, a)]), tuple(found.get((b, a), []))) for b, a in keys]


def series(releases: Mapping[str, Sequence[str]]) -> Dict[str, List[Env]]:
    """Each variant's series of (variant, release): its own releases, in version order."""
    return {
        variant: [(variant, r) for r in sorted(dict.fromkeys(names), key=store.release_key)]
        for variant, names in releases.items()
    }


def base(release: str) -> str:
    """The release a build belongs to: ``2.9.1`` for ``2.9.1+cpu``."""
    return str(release).split("+", 1)[0]


def compare(before: Row, after: Row) -> List[Row]:
    """The transitions from one release's cell to the next one's (same case and mode)."""
    found: List[Row] = []
    old, new = before.get("status"), after.get("status")
    kind = status_change(old, new)
    if kind is not None:
        # A regression or a wrong result is explained by the new error, a fix by the error it removed.
        source = before if kind == "fix" else after
        error = {key: source.get(key) for key in ("error_type", "error_message")}
        found.append(_row(kind, before, after, detail="%s → %s" % (old, new), **error))
    if old == new == "pass":
        found.extend(_stage_changes(before, after))
    comparable = scheme(before, after)
    old_hash, new_hash = _text(before.get("graph_hash")), _text(after.get("graph_hash"))
    if old == new == "pass" and comparable is not None and old_hash and new_hash and old_hash != new_hash:
        found.append(_row("graph-change", before, after, hash_before=old_hash, hash_after=new_hash))
        found[-1]["detail"] = "%s → %s" % (old_hash, new_hash)
    for stage, column in OP_STAGES if comparable is not None else ():
        old_ops, new_ops = op_set(before.get(column)), op_set(after.get(column))
        if old_ops is None or new_ops is None or old_ops == new_ops:
            continue
        added, removed = sorted(new_ops - old_ops), sorted(old_ops - new_ops)
        found.append(_row("op-drift", before, after, stage=stage, added=added, removed=removed))
        found[-1]["detail"] = " ".join(["+" + op for op in added] + ["−" + op for op in removed])
    timing = timings.change(before, after)
    if timing is not None:
        found.append(_row(timing[0], before, after, **timing[1]))
    return found


def status_change(old: Any, new: Any) -> Optional[str]:
    """The kind of a change of a cell's status: ``regression``, ``wrong-result`` or ``fix``; None for no change,
    or where either status has no rank (see the module docstring)."""
    old_rank, new_rank = rank(old), rank(new)
    if old_rank is None or new_rank is None or old_rank == new_rank:
        return None
    if new_rank < old_rank:
        return "regression"
    return "wrong-result" if new == "mismatch" else "fix"


def scheme(before: Row, after: Row) -> Optional[int]:
    """The hashing scheme both cells' graph hashes and op lists come from; None when they differ or one is unknown."""
    old = version_of(before.get("fingerprint_version"))
    return old if old is not None and old == version_of(after.get("fingerprint_version")) else None


def _stage_changes(before: Row, after: Row) -> List[Row]:
    found = []
    for stage, label in STAGES:
        was, now = before.get(stage + "_status"), after.get(stage + "_status")
        if (was, now) == (STAGE_OK, STAGE_ERROR):
            kind, source = "stage-regression", after
        elif (was, now) == (STAGE_ERROR, STAGE_OK):
            kind, source = "stage-fix", before
        else:
            continue
        found.append(_row(kind, before, after, stage=stage, error_message=_text(source.get(stage + "_error"))))
        found[-1]["detail"] = "%s %s → %s" % (label, was, now)
    return found


def op_set(value: Any) -> Optional[FrozenSet[str]]:
    """Operator names as a set; None when the cell has no op list (export did not get that far)."""
    if value is None or isinstance(value, (str, float, int)):
        return None
    return frozenset(str(op) for op in value)


def version_of(value: Any) -> Optional[int]:
    """A fingerprint scheme version; None when missing (NaN from a table) or not a whole number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    number = float(value)
    return int(number) if math.isfinite(number) and number == int(number) else None


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) and value else None


def _row(kind: str, before: Row, after: Row, **values: Any) -> Row:
    row: Row = dict.fromkeys(COLUMNS)
    row.update({key: after.get(key) for key in ("case", "mode", "variant")}, variant_before=before.get("variant"))
    for side, cell in (("before", before), ("after", after)):
        row.update({side: cell.get("release"), "python_" + side: cell.get("python")})
        row["status_" + side] = cell.get("status")
    row.update(kind=kind, with_set=_text(after.get("with_set")) or "", **values)
    return row


def _frame(rows: List[Row]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=COLUMNS, dtype=object)
    if frame.empty:
        return frame
    frame["_after"] = store.rank(frame["after"])
    frame["_before"] = store.rank(frame["before"])
    frame["_kind"] = frame["kind"].map({k: i for i, k in enumerate(KINDS)})
    # Stages in the order they run: exported before decomposed, save/load before decomposition.
    order = {name: i for i, (name, _) in enumerate(OP_STAGES)}
    order.update({name: i for i, (name, _) in enumerate(STAGES)})
    frame["_stage"] = [order.get(stage, -1) for stage in frame["stage"]]
    frame["_mode"] = frame["mode"].map({m: i for i, m in enumerate(MODES)})
    by = ["_after", "variant", "_before", "variant_before", "case", "with_set", "_mode", "_kind", "_stage"]
    helpers = ["_after", "_before", "_kind", "_stage", "_mode"]
    return frame.sort_values(by, kind="stable").drop(columns=helpers).reset_index(drop=True)
