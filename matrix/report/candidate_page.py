"""The candidate verdict in words: the front page's first line per candidate, and ``candidates.md`` with every cell.

The judging is :mod:`matrix.records.candidate`; this module only words it. A release manager
reads the first line before a release: what the candidate breaks that the newest release does
not, then the evidence, cell by cell, on the page.
"""

from __future__ import annotations

from typing import Any, Dict, Sequence, Tuple

from matrix.records.candidate import Verdict
from matrix.report import markdown as md

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


def title(v: Verdict) -> str:
    return "%s (%s) vs %s (%s)" % (v.candidate, v.variant, v.reference, v.reference_variant)


def line(v: Verdict) -> str:
    """One verdict line for the front page: whether the candidate regresses, and what."""
    head = "- **Candidate %s**" % md.text(title(v))
    if not v.compared:
        return head + ": no cell in common with the release to compare."
    if v.regresses:
        cases = list(dict.fromkeys("%s %s" % (m["case"], m["mode"]) for m in v.broken))
        named = ", ".join(md.text(c) for c in cases[:SHOWN]) + (
            " and %d more" % (len(cases) - SHOWN) if len(cases) > SHOWN else ""
        )
        verdict = "**regresses**: %s broken%s" % (md.plural(len(v.broken), "cell"), " (%s)" % named if named else "")
        if v.unloadable:
            verdict += ", %s no longer load" % md.plural(len(v.unloadable), "saved program")
    else:
        verdict = "no regression against the release"
    return "%s: %s; %s fixed, %s (of %s compared; [every cell](%s))." % (
        head,
        verdict,
        md.plural(len(v.fixed), "cell"),
        md.plural(len(v.changed), "graph or op change"),
        md.plural(v.compared, "cell"),
        PAGE,
    )


def render(verdicts: Sequence[Verdict]) -> str:
    """The page: per candidate, what it breaks, the programs it cannot load, what it fixes and what changed."""
    out = [
        "# Candidates against the newest release\n",
        "[← back to the matrix](index.md)\n",
        "Each build from a pre-release channel (a nightly, a release candidate) against the newest release's build"
        " of its family, case by case and mode by mode, under the rules of a transition. *Broken*: worse on the"
        " candidate, wrong numbers where the release refused, or a stage that stopped working.\n",
    ]
    for v in verdicts:
        out.append("## %s\n" % md.text(title(v)))
        out.append(_section("Broken", v.broken, MOVED))
        out.append(_section("Saved programs it cannot load", v.unloadable, UNLOADABLE))
        out.append(_section("Fixed", v.fixed, MOVED))
        out.append(_section("Graph and op changes", v.changed, MOVED))
    return "\n".join(out).rstrip("\n") + "\n"


def _section(title: str, rows: Sequence[Dict[str, Any]], columns: Sequence[Tuple[str, str]]) -> str:
    """A heading that counts ``rows``, then their table: the case, then each column's (header, field)."""
    if not rows:
        return "### %s (0)\n\n_None._\n" % title
    table = [
        [md.case_link(str(r["case"]))] + [md.text(r.get(f) or "", LIMITS.get(f)) for _, f in columns] for r in rows
    ]
    return "### %s (%d)\n\n%s" % (title, len(rows), md.table(["case", *(h for h, _ in columns)], table))
