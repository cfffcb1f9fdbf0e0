"""The upgrade answer in words and as the Markdown page ``upgrade.md``: the newest pair of builds, case by case.

What is judged is :mod:`matrix.records.upgrade`'s (``Model.upgrades``); this module words it. The words of a
tally and of an answer are plain text shared by the Markdown page, the site and ``check --torch A B``.
"""

from __future__ import annotations

import functools
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from matrix.records import upgrade
from matrix.records.upgrade import CaseAnswer, ModeAnswer, Tally, Upgrade
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import phrases as say

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


# The columns of the table of a case's rows, one per mode: each a header and the phrase a row says under it. A new
# field of a row is one more entry here.
Said = Callable[[CaseAnswer, ModeAnswer], d.Phrase]
ROW: Tuple[Tuple[str, Said], ...] = (
    ("case", lambda c, m: say.case(c.case)),
    ("verdict", lambda c, m: d.phrase(VERDICTS[c.verdict])),
    ("mode", lambda c, m: d.phrase(m.mode)),
    ("export", lambda c, m: d.phrase(export_words(m))),
    *((HEADERS[q], functools.partial(lambda q, c, m: d.phrase(found_words(m.found(q))), q))
      for q in upgrade.QUESTIONS[1:]),
)  # fmt: skip
BROKEN: Tuple[Tuple[str, Callable[[CaseAnswer], d.Phrase]], ...] = (
    ("case", lambda c: say.case(c.case)),
    ("breaks", lambda c: d.phrase(breaks_words(c))),
    ("first error", lambda c: d.phrase(say.clip(first_error(c), SHOWN_ERROR))),
)


def _tallies(found: Upgrade, cases: Optional[Sequence[CaseAnswer]] = None) -> d.Items:
    return d.Items(tuple(d.Item(d.phrase(line)) for line in tallies_words(found, cases)))


def build(found: Optional[Upgrade], chooser: bool = False) -> d.Page:
    """The page for one pair: the tallies, the real-model pack case by case, then every other case it breaks;
    ``chooser``: the site's widget that answers any other pair (``pair-chooser``) opens it."""
    name = PAGE[: -len(".md")]
    up = d.link("← back to the matrix", d.page("index"))
    if found is None:
        said = d.Paragraph(d.phrase("Fewer than two builds: no upgrade to answer."))
        return d.Page(name, "Upgrading", (said,), up=up)
    lead = d.phrase(
        "From ", d.Strong(d.phrase(found.before)), " to ", d.Strong(d.phrase(found.after)),
        ", for every case: does it export on the newer build (and did it on the older); does a program saved on the"
        " older build load on the newer one and reproduce its saved outputs; does an AOTInductor package compiled on"
        " the older build load and match; does a program exported on the older build compile with AOTInductor on the"
        " newer one. ", d.Code(NOT_TRIED), ": no record (not run, or not tried: a release that cannot load a file, a"
        " program never saved because its export failed). The site answers any pair (", d.Code("#upgrade=A..B"),
        "); the words are in the ", d.link("glossary", d.page("glossary")), ".",
    )  # fmt: skip
    blocks: List[d.Block] = [d.Paragraph(lead)]
    if chooser:
        blocks.append(d.Widget("pair-chooser"))
    blocks.append(d.Section("every-case", "Every case", (_tallies(found),)))
    if found.pack:
        rows = tuple(tuple(said(c, m) for _, said in ROW) for c in found.pack for m in c.modes)
        table = d.Table(tuple(d.Column(header) for header, _ in ROW), rows, wide=True)
        blocks.append(d.Section("pack", "The real-model pack", (_tallies(found, found.pack), table)))
    broken = [c for c in found.cases if c.breaks and c not in found.pack]
    table = d.Table(tuple(d.Column(h) for h, _ in BROKEN), tuple(tuple(f(c) for _, f in BROKEN) for c in broken))
    blocks.append(d.Section("other-breaks", "Other cases the upgrade breaks", (table,)))
    return d.Page(name, "Upgrading", tuple(blocks), up=up)


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
