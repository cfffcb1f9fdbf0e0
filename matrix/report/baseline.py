"""What changed since an earlier report (``--baseline``): a short section of the front page and its own page.

The front page's section counts the changes and names the first few regressions that are new; the
page (:data:`PAGE`) lists every cell whose status changed, every regression and fix between
releases that is new or no longer seen, and the new and vanished cells.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import pandas as pd

from matrix.contract.schema import STAGES
from matrix.records import figures as headline
from matrix.records import store, transitions
from matrix.records.baseline import BaselineComparison
from matrix.records.figures import Since
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import phrases as say
from matrix.report import transition_page

PAGE = "baseline.md"
TITLE = "Since the previous report"
# The new regressions the front page names; all of them are on PAGE.
SHOWN = 5
STAGE_LABELS = dict(STAGES)
FULL = d.link("full comparison", d.page(PAGE[: -len(".md")]))


def section(b: BaselineComparison, name: Optional[str], figures: Optional[Since] = None) -> d.Section:
    """The front page's section: the counts, the figures that moved, the first :data:`SHOWN` new regressions and
    a link to the page."""
    items = [d.Item(_changed(b)), d.Item(_between_releases(b)), *moved_figures(figures)]
    regressed = _new_regressions(b)
    if regressed:
        shown = [d.Item(line) for line in regressed[:SHOWN]]
        if len(regressed) > SHOWN:
            shown.append(d.Item(d.phrase("… and %d more on the " % (len(regressed) - SHOWN), FULL, ".")))
        items.append(d.Item(d.phrase("Regressions new since then (%d):" % len(regressed)), items=tuple(shown)))
    lead = d.phrase("Compared with ", d.Code(name or "the baseline"), "; every change is on the ", FULL, ".")
    return d.Section("since-the-previous-report", TITLE, (d.Paragraph(lead), d.Items(tuple(items))))


def build(b: BaselineComparison, name: Optional[str], cells: pd.DataFrame, figures: Optional[Since] = None) -> d.Page:
    """The page of the whole comparison, for the current cells compared with the baseline's."""
    order = store.ordered(list(cells["release"]) + list(b.vanished_cells["release"]))
    present = set(cells["case"].astype(str))
    blocks: List[d.Block] = [
        d.Paragraph(d.phrase("Compared with ", d.Code(name or "the baseline"), ".")),
        d.Items((d.Item(_changed(b)), d.Item(_between_releases(b)), *moved_figures(figures))),
    ]
    for anchor, title, frame in (("new", "New regressions and fixes between releases", b.new_transitions),
                                 ("gone", "Regressions and fixes no longer seen", b.gone_transitions)):  # fmt: skip
        blocks.append(d.Section(anchor, "%s (%d)" % (title, len(frame)), (_transitions(frame, present),)))
    changed = _changed_cells(b.changed)
    blocks.append(d.Section("changed", "Cells whose status changed (%d)" % len(b.changed), (changed,)))
    for anchor, title, frame in (("new-cells", "New cells", b.new_cells),
                                 ("vanished", "Vanished cells", b.vanished_cells)):  # fmt: skip
        blocks.append(d.Section(anchor, "%s (%d)" % (title, len(frame)), (_cell_groups(frame, order),)))
    return d.Page(PAGE[: -len(".md")], TITLE, tuple(blocks), up=say.BACK)


def moved_figures(figures: Optional[Since]) -> List[d.Item]:
    """One item per headline figure that moved, with one per cause of its move (figures.moved), under a heading."""
    if figures is None or not figures.moved:
        return []
    lead = "no cell changed, so this version's rules moved them" if figures.same_cells else "the cells changed too"
    moved = tuple(
        d.Item(
            d.phrase("%s: %d → %d" % (m.figure, m.before, m.now)),
            items=tuple(d.Item(d.phrase(headline.cause(p))) for p in m.parts),
        )
        for m in figures.moved
    )
    return [d.Item(d.phrase("Headline figures moved (%s):" % lead), items=moved)]


def _changed(b: BaselineComparison) -> d.Phrase:
    cells = d.plural(len(b.changed), "cell")
    new, vanished = d.plural(len(b.new_cells), "new cell"), d.plural(len(b.vanished_cells), "vanished cell")
    return d.phrase("%s changed status (%s), %s, %s." % (cells, _moves(b.changed), new, vanished))


def _between_releases(b: BaselineComparison) -> d.Phrase:
    new = d.plural(len(b.new_transitions), "regression or fix is", "regressions or fixes are")
    said = "Between releases: %s new (%s); %d no longer seen."
    return d.phrase(said % (new, _moves(b.new_transitions), len(b.gone_transitions)))


def _moves(frame: pd.DataFrame) -> str:
    """``3 regressions, 1 fix``: the regressions and the fixes among ``frame``'s changes."""
    kinds = frame["kind"] if not frame.empty else pd.Series(dtype=object)
    regressions, fixes = int(kinds.isin(transitions.REGRESSIONS).sum()), int(kinds.isin(transitions.FIXES).sum())
    return "%s, %s" % (d.plural(regressions, "regression"), d.plural(fixes, "fix", "fixes"))


def _new_regressions(b: BaselineComparison) -> List[d.Phrase]:
    """One line per regression that is new: cells worse than in the baseline, then new ones between releases."""
    lines = [
        d.phrase(say.case(r["case"]), " %s on %s: " % (r["mode"], r["release"]),
                 transition_page.moved(r["status_baseline"], r["status"]), " since the previous report.")
        for r in b.changed.to_dict("records")
        if r["kind"] in transitions.REGRESSIONS
    ]  # fmt: skip
    moves = b.new_transitions
    found = moves[moves["kind"].isin(transitions.REGRESSIONS)] if not moves.empty else moves
    lines += [
        d.phrase(say.case(m["case"], m.get("with_set")), " %s: " % m["mode"], _move(m), " at ", say.transition(m), ".")
        for m in found.to_dict("records")
    ]
    return lines


def _move(m: Dict[str, Any]) -> d.Phrase:
    if str(m["kind"]).startswith("stage-"):
        return d.phrase("%s starts failing" % STAGE_LABELS.get(str(m.get("stage")), "a stage"))
    return transition_page.moved(m["status_before"], m["status_after"], m["kind"])


def _transitions(frame: pd.DataFrame, present: set) -> d.Table:
    rows = [
        (
            d.phrase(str(m["kind"])),
            d.phrase(md.transition_title(m["before"], m["after"], m.get("variant_before"), m.get("variant"))),
            say.case(m["case"]) if str(m["case"]) in present else d.phrase(str(m["case"])),  # a gone case: no page
            d.phrase(say.plain(m["mode"])),
            d.phrase(say.plain(m["variant"])),
            transition_page.moved(m["status_before"], m["status_after"]),
        )
        for m in frame.to_dict("records")
    ]
    return say.table(["kind", "releases", "case", "mode", "variant", "status"], rows)


def _changed_cells(changed: pd.DataFrame) -> d.Table:
    rows = [
        tuple(d.phrase(say.plain(r[k])) for k in ("kind", "release", "variant", "python"))
        + (
            say.case(r["case"]),
            d.phrase(say.plain(r["mode"])),
            d.phrase(say.status(r["status_baseline"])),
            d.phrase(say.status(r["status"])),
        )  # fmt: skip
        for r in changed.to_dict("records")
    ]
    return say.table(["kind", "release", "variant", "Python", "case", "mode", "baseline", "now"], rows)


def _cell_groups(frame: pd.DataFrame, order: List[str]) -> d.Table:
    """Cells grouped by where they appear: a new release adds every case, a new case every release."""
    cases: Dict[Tuple[str, str, str, str], List[str]] = {}
    counts: Dict[Tuple[str, str, str, str], int] = {}
    by = ["variant", "python", "mode", "case"]
    for (variant, python, mode, case), members in md.grouped(frame.to_dict("records"), by):
        key = (variant, python, mode, md.release_spans([m["release"] for m in members], order))
        cases.setdefault(key, []).append(case)
        counts[key] = counts.get(key, 0) + len(members)
    rows = [(*(d.phrase(part) for part in key), d.phrase(str(counts[key])), d.phrase(_names(cases[key])))
            for key in sorted(cases)]  # fmt: skip
    return say.table(["variant", "Python", "mode", "releases", "cells", "cases"], rows)


def _names(values: List[str], limit: int = 12) -> str:
    """Sorted names, cut after ``limit`` with a count."""
    ordered = sorted(values)
    return ", ".join(ordered[:limit]) + (" … (+%d)" % (len(ordered) - limit) if len(ordered) > limit else "")
