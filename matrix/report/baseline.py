"""The front page's section on what changed since an earlier report (``--baseline``)."""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import pandas as pd

from matrix.records import store, transitions
from matrix.records.baseline import BaselineComparison
from matrix.report import markdown as md


def render(b: BaselineComparison, name: Optional[str], cells: pd.DataFrame) -> str:
    """The section, for the current cells compared with the baseline's."""
    order = store.ordered(list(cells["release"]) + list(b.vanished_cells["release"]))
    present = set(cells["case"].astype(str))
    out = ["## Since the baseline\n", "Compared with %s.\n" % md.code(name or "the baseline")]
    out.append(
        "- %d cells changed status (%d regressions, %d fixes), %d new cells, %d vanished cells.\n"
        % (
            len(b.changed),
            int(b.changed["kind"].isin(transitions.REGRESSIONS).sum()),
            int(b.changed["kind"].isin(transitions.FIXES).sum()),
            len(b.new_cells),
            len(b.vanished_cells),
        )
    )
    for title, frame in (("New regressions and fixes between releases", b.new_transitions),
                         ("Regressions and fixes no longer seen", b.gone_transitions)):  # fmt: skip
        out.append("### %s (%d)\n" % (title, len(frame)))
        out.append(
            md.table(
                ["kind", "releases", "case", "mode", "variant", "status"],
                [
                    [
                        md.text(m["kind"]),
                        md.moved(m),
                        _case(m["case"], present),
                        md.text(m["mode"]),
                        md.text(m["variant"]),
                        "%s → %s" % (md.status(m["status_before"]), md.status(m["status_after"])),
                    ]
                    for m in frame.to_dict("records")
                ],
            )
        )
    out.append("### Cells whose status changed (%d)\n" % len(b.changed))
    out.append(
        md.table(
            ["kind", "release", "variant", "Python", "case", "mode", "baseline", "now"],
            [
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
                for r in b.changed.to_dict("records")
            ],
        )
    )
    for title, frame in (("New cells", b.new_cells), ("Vanished cells", b.vanished_cells)):
        out.append("### %s (%d)\n" % (title, len(frame)))
        out.append(_cell_groups(frame, order))
    return "\n".join(out)


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
