"""The upgrade answer in words and as the Markdown page ``upgrade.md``: the newest pair of builds, case by case.

What is judged is :mod:`matrix.records.upgrade`'s (``Model.upgrades``); this module words it. The words of a
tally and of an answer are plain text shared by the Markdown page, the site and ``check --torch A B``.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from matrix.records import upgrade
from matrix.records.upgrade import CaseAnswer, ModeAnswer, Tally, Upgrade
from matrix.report import markdown as md

PAGE = "upgrade.md"
# What each question is called in a table's header.
HEADERS = {"export": "export", "saved": "saved program", "package": "AOTInductor package", "compile": "compile"}
# A case's verdict, as a reader reads it.
VERDICTS = {
    "breaks": "breaks",
    "fixed": "fixed",
    "works": "works",
    "fails": "fails on both",
    "not tried": "not tried",
}
NOT_TRIED = "–"
SHOWN_ERROR = 100


def tally_words(t: Tally) -> str:
    """One tally in words: ``export, strict: 139 of 156 pass on B (119 of 151 on A)``."""
    if t.question == "export":
        said = "%d of %d pass" % (t.yes, t.tried) if t.tried else "none ran"
        if t.tried_before:
            said += " (%d of %d on the older build)" % (t.yes_before, t.tried_before)
        return "export, %s: %s" % (t.mode, said)
    noun = {"saved": "saved programs", "package": "packages", "compile": "programs compiled"}[t.question]
    verb = "compile, load and match" if t.question == "compile" else "load and match"
    return "%s, %s: %d of %d %s" % (noun, t.mode, t.yes, t.tried, verb)


def tallies_words(found: Upgrade, cases: Optional[Sequence[CaseAnswer]] = None) -> List[str]:
    """Each question's tallies, one line per question (its modes joined); a question nothing tried says so."""
    chosen = found.tallies(cases)
    lines = []
    for question in upgrade.QUESTIONS:
        mine = [t for t in chosen if t.question == question]
        if mine:
            lines.append("; ".join(tally_words(t) for t in mine))
        else:
            lines.append("%s: not run for this pair" % HEADERS[question])
    return lines


def export_words(m: ModeAnswer) -> str:
    """``fail → pass``: the cell's status on the older and the newer build (``–`` where it did not run)."""
    before = m.before.status if m.before else NOT_TRIED
    after = m.after.status if m.after else NOT_TRIED
    return "%s → %s" % (before, after)


def found_words(found: Optional[upgrade.Found]) -> str:
    return found.status if found is not None else NOT_TRIED


def mode_cells(m: ModeAnswer) -> List[str]:
    """One mode's four answers: export (A → B), then the saved program's, the package's and the compile's status."""
    return [export_words(m), *(found_words(m.found(q)) for q in upgrade.QUESTIONS[1:])]


def breaks_words(c: CaseAnswer) -> str:
    """What the upgrade breaks, in words: ``strict: saved program; non-strict: AOTInductor package``."""
    by_mode: Dict[str, List[str]] = {}
    for mode, question in c.breaks:
        by_mode.setdefault(mode, []).append(HEADERS[question])
    return "; ".join("%s: %s" % (mode, ", ".join(qs)) for mode, qs in by_mode.items())


def first_error(c: CaseAnswer) -> str:
    """The first error behind what breaks, for the reader who wants the why."""
    for m in c.modes:
        for question in m.broken():
            found = m.found(question)
            if found is not None and found.error:
                return found.error
    return ""


def _rows(cases: Sequence[CaseAnswer]) -> List[List[str]]:
    rows = []
    for c in cases:
        for m in c.modes:
            rows.append([md.case_link(c.case), md.text(VERDICTS[c.verdict]), md.text(m.mode)]
                        + [md.text(v) for v in mode_cells(m)])  # fmt: skip
    return rows


def render(found: Optional[Upgrade]) -> str:
    """The page for one pair: the tallies, the real-model pack case by case, then every other case it breaks."""
    lines = ["# Upgrading\n", "[← back to the matrix](index.md)\n"]
    if found is None:
        return "\n".join(lines + ["_Fewer than two builds: no upgrade to answer._\n"])
    lines.append(
        "From **%s** to **%s**, for every case: does it export on the newer build (and did it on the older); does"
        " a program saved on the older build load on the newer one and reproduce its saved outputs; does an"
        " AOTInductor package compiled on the older build load and match; does a program exported on the older"
        " build compile with AOTInductor on the newer one. `–`: no record (not run, or not tried: a release that"
        " cannot load a file, a program never saved because its export failed). The site answers any pair"
        " (`site/upgrade.html#upgrade=A..B`).\n" % (md.text(found.before), md.text(found.after))
    )
    lines.append("## Every case\n")
    lines += ["- %s" % md.text(line) for line in tallies_words(found)]
    lines.append("")
    headers = ["case", "verdict", "mode", "export", *[HEADERS[q] for q in upgrade.QUESTIONS[1:]]]
    if found.pack:
        lines.append("## The real-model pack\n")
        lines += ["- %s" % md.text(line) for line in tallies_words(found, found.pack)]
        lines.append("")
        lines.append(md.table(headers, _rows(found.pack)))
    broken = [c for c in found.cases if c.breaks and c not in found.pack]
    lines.append("## Other cases the upgrade breaks\n")
    if broken:
        rows = [[md.case_link(c.case), md.text(breaks_words(c)), md.text(first_error(c), SHOWN_ERROR)] for c in broken]
        lines.append(md.table(["case", "breaks", "first error"], rows))
    else:
        lines.append("_None._\n")
    return "\n".join(lines)


def line(found: Optional[Upgrade]) -> str:
    """The front page's line: the newest pair's tallies and a link to the page ("" without a pair)."""
    if found is None or not found.cases:
        return ""
    broken = sum(1 for c in found.cases if c.breaks)
    return "**Upgrading %s → %s**: the upgrade breaks %s of %d; %s ([per case](%s)).\n" % (
        md.text(found.before),
        md.text(found.after),
        md.plural(broken, "case"),
        len(found.cases),
        md.text("; ".join(tallies_words(found)[1:])),
        PAGE,
    )


def newest(upgrades: upgrade.Upgrades) -> Optional[Upgrade]:
    """The answer for the two newest builds, or None with fewer than two."""
    pair = upgrade.newest_pair(upgrades.releases)
    return upgrades.answer(*pair) if pair is not None else None
