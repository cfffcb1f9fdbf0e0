"""The candidate verdict in words: the front page's first line per candidate, and ``candidates.md`` with every cell.

The judging is :mod:`matrix.records.candidate`; this module only words it. A release manager
reads the first line before a release: what the candidate breaks that the newest release does
not, then the evidence, cell by cell, on the page.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from matrix.records.candidate import Verdict
from matrix.report import markdown as md

PAGE = "candidates.md"
# Cells named in the front page's line before the rest are counted.
SHOWN = 5


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
        out.append(_moves("Broken", v.broken))
        out.append(_unloadable(v.unloadable))
        out.append(_moves("Fixed", v.fixed))
        out.append(_moves("Graph and op changes", v.changed))
    return "\n".join(out).rstrip("\n") + "\n"


def _moves(name: str, moves: Sequence[Dict[str, Any]]) -> str:
    if not moves:
        return "### %s (0)\n\n_None._\n" % name
    rows = [
        [
            md.case_link(str(m["case"])),
            md.text(m["mode"]),
            md.text(m["kind"]),
            md.text(m.get("detail") or "", 160),
            md.text(m.get("error_message") or "", 200),
        ]
        for m in moves
    ]
    return "### %s (%d)\n\n%s" % (
        name,
        len(moves),
        md.table(["case", "mode", "kind", "release → candidate", "error"], rows),
    )


def _unloadable(rows: Sequence[Dict[str, Any]]) -> str:
    if not rows:
        return "### Saved programs it cannot load (0)\n\n_None._\n"
    table: List[List[str]] = [
        [
            md.case_link(str(r["case"])),
            md.text(r["mode"]),
            md.text(r["saved_torch_version"]),
            md.text(r["status"]),
            md.text(r.get("error_message") or "", 200),
        ]
        for r in rows
    ]
    return "### Saved programs it cannot load (%d)\n\n%s" % (
        len(rows),
        md.table(["case", "mode", "saved on", "status here", "error"], table),
    )
