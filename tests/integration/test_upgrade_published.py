"""The upgrade answer on the published reports' own tables: no row's verdict contradicts that row's cells.

The rows are read back as a reader reads the page: the export's status on A and on B, each stage's outcome on
both, each product used on B and the same product used on A with its own files, straight from the tables
(``cells.parquet``, ``loads.parquet``, ``aoti_loads.parquet``, ``aoti_compiles.parquet``), apart from the code that
judges them. Run as a script it prints the figures of the report folders it names:
``python tests/integration/test_upgrade_published.py reports/latest``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pandas as pd

from matrix.contract import stages
from matrix.records import model, store, upgrade

ROOT = Path(__file__).resolve().parents[2]
FAILS = ("fail", "mismatch", "crash", "timeout")
LOAD_FAILS = ("load-error", "run-error", "mismatch", "crash", "timeout")
COMPILE_FAILS = ("error", "mismatch", "crash", "timeout")
Key = Tuple[str, str, str]


def _table(folder: Path, name: str, key: List[str]) -> Dict[Tuple[str, ...], Dict[str, Any]]:
    path = folder / name
    if not path.exists():
        return {}
    frame = pd.read_parquet(path)
    if "with_set" in frame.columns:
        frame = frame[[not isinstance(v, str) or not v for v in frame["with_set"]]]
    return {tuple(str(r[k]) for k in key): r for r in frame.to_dict("records")}


def _stage(cell: Optional[Dict[str, Any]], stage: str) -> Optional[bool]:
    """A stage's outcome on a cell that exported: it runs on the exported program alone."""
    if not cell or cell.get("status") != "pass":
        return None
    outcome = cell.get(stage + "_status")
    return True if outcome == "ok" else False if outcome == "error" else None


class Raw:
    """A report folder's tables, keyed as a row reads them."""

    def __init__(self, folder: Path) -> None:
        self.cells = _table(folder, "cells.parquet", ["release", "case", "mode"])
        used = ["saved_torch_version", "torch_version", "case", "mode"]
        self.uses = {
            "saved": _table(folder, "loads.parquet", used),
            "package": _table(folder, "aoti_loads.parquet", used),
            "compile": _table(folder, "aoti_compiles.parquet", used),
        }

    def row(self, a: str, b: str, case: str, mode: str) -> Dict[str, Tuple[Optional[bool], Optional[bool]]]:
        """Each thing of a row: (worked on A, works on B), None where not tried."""
        found: Dict[str, Tuple[Optional[bool], Optional[bool]]] = {}
        ca, cb = self.cells.get((a, case, mode)), self.cells.get((b, case, mode))

        def export(cell: Optional[Dict[str, Any]]) -> Optional[bool]:
            status = cell.get("status") if cell else None
            return True if status == "pass" else False if status in FAILS else None

        found["export"] = (export(ca), export(cb))
        for stage in ("decompose", "serialize"):
            found[stage] = (_stage(ca, stage), _stage(cb, stage))
        for declared in stages.SHOWN:  # a stage that declares its outcome: passing works, another it tried fails
            shown = declared.shown
            assert shown is not None

            def judged(cell: Optional[Dict[str, Any]], shown: Any = shown) -> Optional[bool]:
                outcome = cell.get(shown.status_key) if cell and cell.get("status") == "pass" else None
                return True if outcome == shown.passing else False if outcome in shown.tried else None

            found[shown.label] = (judged(ca), judged(cb))
        for product, fails, good in (("saved", LOAD_FAILS, "pass"), ("package", LOAD_FAILS, "pass"),
                                     ("compile", COMPILE_FAILS, "ok")):  # fmt: skip

            def said(rec: Optional[Dict[str, Any]], fails: Tuple[str, ...] = fails, good: str = good) -> Optional[bool]:
                status = rec.get("status") if rec else None
                return True if status == good else False if status in fails else None

            on_b = said(self.uses[product].get((a, b, case, mode)))
            if product == "compile":
                own = ca.get("aoti_status") if ca else None
                home = said({"status": own}) if isinstance(own, str) else None
                if home is None:  # A's own compile unknown: its own package's load on A
                    home = said(self.uses["package"].get((a, a, case, mode)), LOAD_FAILS, "pass")
            else:
                home = said(self.uses[product].get((a, a, case, mode)))
            found[product] = (home, on_b) if on_b is not None else (None, None)
        return found


def contradicts(verdict: str, things: Dict[str, Tuple[Optional[bool], Optional[bool]]]) -> bool:
    """Whether a row's printed verdict says what its own cells do not."""
    broken = any(a is True and b is False for a, b in things.values())
    fixed = any(a is False and b is True for a, b in things.values())
    failing = [(a, b) for a, b in things.values() if b is False]
    working = any(b is True for _, b in things.values())
    if broken != (verdict == "breaks"):
        return True
    if verdict == "fixed":
        return not fixed
    if verdict == "works":
        return bool(failing) or not working
    if verdict == "fails":  # fails on both
        return not failing or any(a is not False for a, _ in failing)
    if verdict == "fails on B":
        return not failing or all(a is False for a, _ in failing)
    if verdict == "not tried":
        return bool(failing) or working
    return False


def printed(found: upgrade.Upgrade) -> List[Tuple[str, str, str]]:
    """Each row as the page prints it: (case, mode, its verdict)."""
    rows = []
    for c in found.cases:
        for m in c.modes:
            # A mode's own verdict where the model judges one; a page that printed the case's on every mode row
            # is read as it printed it.
            rows.append((c.case, m.mode, str(getattr(m, "verdict", c.verdict))))
    return rows


def upgrades_of(folder: Path) -> upgrade.Upgrades:
    return model.build(store.load([str(folder)], workers=0)).upgrades


def find_release(upgrades: upgrade.Upgrades, version: str) -> str:
    return next(r for r in upgrades.releases if r.split("+")[0] == version)


def figures(folder: Path, pairs: List[Tuple[str, str]]) -> List[str]:
    raw = Raw(folder)
    upgrades = upgrades_of(folder)
    lines = []
    for a, b in pairs:
        before, after = find_release(upgrades, a), find_release(upgrades, b)
        found = upgrades.answer(before, after)
        rows = printed(found)
        bad = [r for r in rows if contradicts(r[2], raw.row(before, after, r[0], r[1]))]
        breaks = sum(1 for c in found.cases if c.breaks)
        lines.append("%s %s → %s: %d rows, %d contradict their own cells, %d cases break" % (
            folder.name, before, after, len(rows), len(bad), breaks))  # fmt: skip
        lines += ["  %s %s: %s" % r for r in bad]
    return lines


PAIRS = [("2.14.1", "2.15.0"), ("2.5.1", "2.15.0")]


def test_no_row_of_the_published_upgrade_answer_contradicts_its_own_cells() -> None:
    said = figures(ROOT / "reports" / "latest", PAIRS)
    assert all(" 0 contradict " in line for line in said if not line.startswith("  ")), "\n".join(said)


def test_the_checker_catches_a_verdict_its_cells_do_not_support() -> None:
    # pass → pass with its saved program failing on B after loading on A: the row breaks; "works" contradicts it.
    things = {"export": (True, True), "saved": (True, False)}
    assert contradicts("works", things) and not contradicts("breaks", things)
    # The saved program never loaded on A: nothing broke; it fails on both.
    things = {"export": (True, True), "saved": (False, False)}
    assert contradicts("breaks", things) and not contradicts("fails", things)
    # fail → fail printed as "works" (the case's verdict on a row of another mode).
    assert contradicts("works", {"export": (False, False)})


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print("\n".join(figures(Path(name), PAIRS)))
