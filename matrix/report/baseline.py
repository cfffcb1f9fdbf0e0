"""What changed since an earlier report (``--baseline``): a short section of the front page and its own page.

The front page's section counts the changes and names the first few regressions that are new; the
page (:data:`PAGE`) lists every cell whose status changed, every regression and fix between
releases that is new or no longer seen, and the new and vanished cells.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import pandas as pd

from matrix.contract.schema import STAGES
from matrix.records import figures as headline
from matrix.records import store, transitions
from matrix.records.baseline import BaselineComparison
from matrix.records.figures import Since
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import parts

PAGE = "baseline.md"
TITLE = "Since the previous report"
# The new regressions the front page names; all of them are on PAGE.
SHOWN = 5
STAGE_LABELS = dict(STAGES)


def section(b: BaselineComparison, name: Optional[str], figures: Optional[Since] = None) -> d.Section:
    """The front page's section: the counts, the figures that moved, the first :data:`SHOWN` new regressions and
    a link to :data:`PAGE`."""
    full = d.link("full comparison", d.page(PAGE[: -len(".md")]))
    items = [d.Item(d.phrase(_changed(b))), d.Item(d.phrase(_between_releases(b)))]
    if figures is not None and figures.moved:
        lead = "no cell changed, so this version's rules moved them" if figures.same_cells else "the cells changed too"
        moved = tuple(
            d.Item(d.phrase("%s: %d → %d" % (m.figure, m.before, m.now)),
                   items=tuple(d.Item(d.phrase(headline.cause(p))) for p in m.parts))
            for m in figures.moved
        )  # fmt: skip
        items.append(d.Item(d.phrase("Headline figures moved (%s):" % lead), items=moved))
    regressed = _new_regressions(b)
    if regressed:
        shown = [d.Item(line) for line in regressed[:SHOWN]]
        if len(regressed) > SHOWN:
            shown.append(d.Item(d.phrase("… and %d more on the " % (len(regressed) - SHOWN), full, ".")))
        items.append(d.Item(d.phrase("Regressions new since then (%d):" % len(regressed)), items=tuple(shown)))
    said = d.phrase("Compared with ", d.Code(name or "the baseline"), "; every change is on the ", full, ".")
    return d.Section("since-the-previous-report", TITLE, (d.Paragraph(said), d.Items(tuple(items))))


def page(b: BaselineComparison, name: Optional[str], cells: pd.DataFrame, figures: Optional[Since] = None) -> str:
    """The page of the whole comparison, for the current cells compared with the baseline's."""
    order = store.ordered(list(cells["release"]) + list(b.vanished_cells["release"]))
    present = set(cells["case"].astype(str))
    out = [
        "# %s\n" % TITLE,
        "[← back to the matrix](index.md)\n",
        "Compared with %s.\n" % md.code(name or "the baseline"),
        "- %s\n- %s" % (_changed(b), _between_releases(b)),
        "\n".join(moved_figures(figures)) + "\n",
    ]
    for title, frame in (("New regressions and fixes between releases", b.new_transitions),
                         ("Regressions and fixes no longer seen", b.gone_transitions)):  # fmt: skip
        out.append("## %s (%d)\n" % (title, len(frame)))
        out.append(_transitions(frame, present))
    out.append("## Cells whose status changed (%d)\n" % len(b.changed))
    out.append(_changed_cells(b.changed))
    for title, frame in (("New cells", b.new_cells), ("Vanished cells", b.vanished_cells)):
        out.append("## %s (%d)\n" % (title, len(frame)))
        out.append(_cell_groups(frame, order))
    return "\n".join(out)


def moved_figures(figures: Optional[Since]) -> List[str]:
    """One line per headline figure that moved, then one per cause of its move (figures.moved)."""
    if figures is None or not figures.moved:
        return []
    lead = "no cell changed, so this version's rules moved them" if figures.same_cells else "the cells changed too"
    out = ["- Headline figures moved (%s):" % lead]
    for m in figures.moved:
        out.append("  - %s: %d → %d" % (md.text(m.figure), m.before, m.now))
        out += ["    - %s" % md.text(headline.cause(p)) for p in m.parts]
    return out


def _changed(b: BaselineComparison) -> str:
    return "%s changed status (%s, %s), %s, %s." % (
        md.plural(len(b.changed), "cell"),
        md.plural(_kinds(b.changed, transitions.REGRESSIONS), "regression"),
        md.plural(_kinds(b.changed, transitions.FIXES), "fix", "fixes"),
        md.plural(len(b.new_cells), "new cell"),
        md.plural(len(b.vanished_cells), "vanished cell"),
    )


def _between_releases(b: BaselineComparison) -> str:
    return "Between releases: %s new (%s, %s); %d no longer seen." % (
        md.plural(len(b.new_transitions), "regression or fix is", "regressions or fixes are"),
        md.plural(_kinds(b.new_transitions, transitions.REGRESSIONS), "regression"),
        md.plural(_kinds(b.new_transitions, transitions.FIXES), "fix", "fixes"),
        len(b.gone_transitions),
    )


def _kinds(frame: pd.DataFrame, kinds: Tuple[str, ...]) -> int:
    return int(frame["kind"].isin(kinds).sum()) if not frame.empty else 0


def _new_regressions(b: BaselineComparison) -> List[d.Phrase]:
    """One line per regression that is new: cells worse than in the baseline, then new ones between releases."""
    lines = [
        d.phrase(parts.case(r["case"]), " %s on %s: " % (r["mode"], r["release"]), parts.status(r["status_baseline"]),
                 " → ", parts.status(r["status"]), " since the previous report.")
        for r in b.changed.to_dict("records")
        if r["kind"] in transitions.REGRESSIONS
    ]  # fmt: skip
    moves = b.new_transitions
    found = moves[moves["kind"].isin(transitions.REGRESSIONS)] if not moves.empty else moves
    for m in found.to_dict("records"):
        if str(m["kind"]).startswith("stage-"):
            change = d.phrase("%s starts failing" % STAGE_LABELS.get(str(m.get("stage")), "a stage"))
        else:
            wrong = " (now wrong numbers)" if m["kind"] == "wrong-result" else None
            change = d.phrase(parts.status(m["status_before"]), " → ", parts.status(m["status_after"]), wrong)
        step = parts.transition(m["before"], m["after"], m.get("variant_before"), m.get("variant"))
        lines.append(d.phrase(parts.case(m["case"], m.get("with_set")), " %s: " % m["mode"], change, " at ", step, "."))
    return lines


def _transitions(frame: pd.DataFrame, present: set) -> str:
    rows = [
        [
            md.text(m["kind"]),
            md.moved(m),
            _case(m["case"], present),
            md.text(m["mode"]),
            md.text(m["variant"]),
            "%s → %s" % (md.status(m["status_before"]), md.status(m["status_after"])),
        ]
        for m in frame.to_dict("records")
    ]
    return md.table(["kind", "releases", "case", "mode", "variant", "status"], rows)


def _changed_cells(changed: pd.DataFrame) -> str:
    rows = [
        [
            md.text(r["kind"]),
            md.text(r["release"]),
            md.text(r["variant"]),
            md.text(r["python"]),
            md.case_link(r["case"]),
            md.text(r["mode"]),
            md.status(r["status_baseline"]),
            md.status(r["status"]),
        ]
        for r in changed.to_dict("records")
    ]
    return md.table(["kind", "release", "variant", "Python", "case", "mode", "baseline", "now"], rows)


def _case(case: object, present: set) -> str:
    # A case that is gone has no page to link to.
    return md.case_link(case) if str(case) in present else md.text(case)


def _cell_groups(frame: pd.DataFrame, order: List[str]) -> str:
    """Cells grouped by where they appear: a new release adds every case, a new case every release."""
    cases: Dict[Tuple[str, str, str, str], List[str]] = {}
    counts: Dict[Tuple[str, str, str, str], int] = {}
    by = ["variant", "python", "mode", "case"]
    for (variant, python, mode, case), members in md.grouped(frame.to_dict("records"), by):
        key = (variant, python, mode, md.release_spans([m["release"] for m in members], order))
        cases.setdefault(key, []).append(case)
        counts[key] = counts.get(key, 0) + len(members)
    rows = [
        [md.text(variant), md.text(python), md.text(mode), md.text(span), str(counts[key]), md.names(cases[key])]
        for key in sorted(cases)
        for variant, python, mode, span in [key]
    ]
    return md.table(["variant", "Python", "mode", "releases", "cells", "cases"], rows)
