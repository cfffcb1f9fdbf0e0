"""The candidate verdict in words: the front page's first line per candidate, and ``candidates.md`` with every cell.

The judging is :mod:`matrix.records.candidate`; this module only words it. A release manager
reads the first line before a release: what the candidate breaks that the newest release does
not, then the evidence, cell by cell, on the page.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

from matrix.records.candidate import Verdict
from matrix.report import document as d
from matrix.report import phrases as say

PAGE = "candidates.md"
# Cells named in the front page's line before the rest are counted.
SHOWN = 5
# The columns of the page's tables after the case, (header, field), and the longest text each field quotes.
MOVED = (("mode", "mode"), ("kind", "kind"), ("release → candidate", "detail"), ("error", "error_message"))
UNLOADABLE = (
    ("mode", "mode"),
    ("saved on", "saved_torch_version"),
    ("status here", "status"),
    ("error", "error_message"),
)
LIMITS = {"detail": 160, "error_message": 200}


def title_of(v: Verdict) -> str:
    return "%s (%s) vs %s (%s)" % (v.candidate, v.variant, v.reference, v.reference_variant)


def line(v: Verdict) -> d.Item:
    """One verdict for the front page: whether the candidate regresses, and what."""
    title = "Candidate %s" % title_of(v)
    if not v.compared:
        return d.Item(d.phrase("no cell in common with the release to compare."), title)
    if v.regresses:
        cases = list(dict.fromkeys("%s %s" % (m["case"], m["mode"]) for m in v.broken))
        named = say.first_of(cases, SHOWN)
        verdict = d.phrase(
            d.Strong(d.phrase("regresses")), ": ", d.plural(len(v.broken), "cell"), " broken",
            " (%s)" % named if named else None,
            ", %s no longer load" % d.plural(len(v.unloadable), "saved program") if v.unloadable else None,
        )  # fmt: skip
    else:
        verdict = d.phrase("no regression against the release")
    counted = "; %s fixed, %s (of %s compared; " % (
        d.plural(len(v.fixed), "cell"), d.plural(len(v.changed), "graph or op change"), d.plural(v.compared, "cell"),
    )  # fmt: skip
    return d.Item(d.phrase(verdict, counted, d.link("every cell", d.page(PAGE[: -len(".md")])), ")."), title)


def build(verdicts: Sequence[Verdict]) -> d.Page:
    """The page: per candidate, what it breaks, the programs it cannot load, what it fixes and what changed."""
    intro = (
        "Each build from a pre-release channel (a nightly, a release candidate) against the newest release's build"
        " of its family, case by case and mode by mode, under the rules of a transition. "
    )
    blocks: List[d.Block] = [
        d.Paragraph(d.phrase(intro, d.Strong(d.phrase("Broken")), ": worse on the candidate, wrong numbers where the"
                             " release refused, or a stage that stopped working."))
    ]  # fmt: skip
    for i, v in enumerate(verdicts):
        parts = (
            ("broken", "Broken", v.broken, MOVED),
            ("unloadable", "Saved programs it cannot load", v.unloadable, UNLOADABLE),
            ("fixed", "Fixed", v.fixed, MOVED),
            ("changed", "Graph and op changes", v.changed, MOVED),
        )
        blocks.append(
            d.Section("candidate-%d" % i, title_of(v),
                      tuple(_section("%s-%d" % (anchor, i), heading, rows, columns)
                            for anchor, heading, rows, columns in parts))
        )  # fmt: skip
    return d.Page(PAGE[: -len(".md")], "Candidates against the newest release", tuple(blocks), up=say.BACK)


def _section(
    anchor: str, heading: str, rows: Sequence[Dict[str, Any]], columns: Sequence[Tuple[str, str]]
) -> d.Section:
    """A heading that counts ``rows``, then their table: the case, then each column's (header, field)."""
    table = d.Table(
        (d.Column("case"), *(d.Column(h) for h, _ in columns)),
        tuple((say.case(r["case"]), *(d.phrase(say.clip(r.get(f) or "", LIMITS.get(f))) for _, f in columns))
              for r in rows),
    )  # fmt: skip
    return d.Section(anchor, "%s (%d)" % (heading, len(rows)), (table,))
