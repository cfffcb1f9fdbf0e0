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
from matrix.report import phrases as say

NAME = "upgrade"  # the page: upgrade.md and site/upgrade.html
# What each question is called in a table's header.
HEADERS = {"export": "export", **{question: product.label for question, product in upgrade.PRODUCT_OF.items()}}
# A verdict (a mode's, or a case's summary of its modes'), as a reader reads it.
VERDICTS = {
    "breaks": "breaks",
    "fixed": "fixed",
    "works": "works",
    "fails": "fails on both",
    "fails on B": "fails, not tried on the older build",
    "not tried": "not tried",
}
# What happened to one thing of a row, where it fails on the newer build.
CHANGES = {
    "broken": "broken",
    "still fails": "fails on both (since %(since)s)",
    "fails on B": "fails, not tried on the older build",
}
NOT_TRIED = "–"
SHOWN_ERROR = 100
SHOWN_APART = 3  # the disagreements the front page's line names


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


def tallies_words(
    found: Upgrade, cases: Optional[Sequence[CaseAnswer]] = None, asked: Sequence[str] = upgrade.QUESTIONS
) -> List[str]:
    """Each question's tallies, one line per question (its modes joined); a question nothing tried says so.
    ``asked``: the questions the records could answer (a product no record made or used is not asked)."""
    chosen = found.tallies(cases)
    said = {question: "; ".join(tally_words(t) for t in chosen if t.question == question) for question in asked}
    return [said[question] or "%s: not run for this pair" % HEADERS[question] for question in asked]


def export_words(m: ModeAnswer) -> str:
    """``fail → pass``: the cell's status on the older and the newer build (``–`` where it did not run), each
    failing stage named beside its pass: ``pass, decomposition error → pass, decomposition error``."""
    return "%s → %s" % (found_words(m.before), found_words(m.after))


def found_words(cell: Optional[upgrade.Found]) -> str:
    """A record's outcome: its status, a passing cell's failed stages after it (a product's record holds no stages),
    ``–`` for no record."""
    if cell is None:
        return NOT_TRIED
    failed = [
        "%s %s" % (label, outcome)
        for label, outcome, _ in cell.stages
        if upgrade.stage_answer(outcome, label) is upgrade.Answer.NO
    ]
    return ", ".join([cell.status, *failed]) if cell.status == "pass" else cell.status


def case_words(c: CaseAnswer) -> str:
    """The case's verdict as the summary of its modes': ``works in non-strict; fails on both in strict``, or one
    verdict where every mode has it (``works``)."""
    found = c.by_verdict
    if len(found) <= 1:
        return VERDICTS[c.verdict]
    return "; ".join("%s in %s" % (VERDICTS[v], ", ".join(modes)) for v, modes in found)


def note_words(m: ModeAnswer) -> str:
    """Why a mode's verdict is what it is: each thing that fails on B, with its error's first line and the known
    issue it matches, or where it failed on the older build too; the case's packages whose versions differ."""
    said = []
    for o in m.outcomes:
        if o.change in ("not tried", "works", "fixed"):
            continue
        part = "%s %s" % (HEADERS.get(o.thing, o.thing), CHANGES[o.change] % {"since": o.since})
        if o.error:
            part += ": " + o.error[:SHOWN_ERROR]
        said.append(part + _issue_words(o))
    said += ["%s %s → %s" % v for v in m.versions]
    return "; ".join(said)


def _issue_words(o: upgrade.Outcome) -> str:
    """`` (known upstream issue …)`` where a known issue matches the failure on B."""
    return " (%s)" % o.issue.words if o.issue is not None else ""


def breaks_words(c: CaseAnswer) -> str:
    """What the upgrade breaks, in words: ``strict: saved program; non-strict: AOTInductor package``."""
    broken = ((m.mode, [HEADERS.get(thing, thing) for thing in m.broken()]) for m in c.modes)
    return "; ".join("%s: %s" % (mode, ", ".join(things)) for mode, things in broken if things)


def first_error(c: CaseAnswer) -> str:
    """The first error behind what breaks, with the known issue it matches, for the reader who wants the why."""
    broken = (o for m in c.modes for o in m.outcomes if o.change == "broken" and o.error)
    return next((o.error + _issue_words(o) for o in broken), "")


# The columns of the table of a case's rows, one per mode: each a header and the phrase a row says under it. A new
# field of a row is one more entry here.
Said = Callable[[CaseAnswer, ModeAnswer], d.Phrase]
ROW: Tuple[Tuple[str, Said], ...] = (
    ("case", lambda c, m: say.case(c.case)),
    ("verdict", lambda c, m: d.phrase(VERDICTS[m.verdict])),
    ("mode", lambda c, m: d.phrase(m.mode)),
    ("export", lambda c, m: d.phrase(export_words(m))),
    *((HEADERS[q], functools.partial(lambda q, c, m: d.phrase(found_words(m.found(q))), q))
      for q in upgrade.QUESTIONS[1:]),
    ("why", lambda c, m: d.phrase(say.clip(note_words(m), 2 * SHOWN_ERROR))),
)  # fmt: skip
BROKEN: Tuple[Tuple[str, Callable[[CaseAnswer], d.Phrase]], ...] = (
    ("case", lambda c: say.case(c.case)),
    ("verdict", lambda c: d.phrase(case_words(c))),
    ("breaks", lambda c: d.phrase(breaks_words(c))),
    ("first error", lambda c: d.phrase(say.clip(first_error(c), SHOWN_ERROR))),
)


def _tallies(found: Upgrade, cases: Optional[Sequence[CaseAnswer]] = None) -> d.Items:
    return d.Items(tuple(d.Item(d.phrase(line)) for line in tallies_words(found, cases)))


def build(found: Optional[Upgrade], chooser: bool = False) -> d.Page:
    """The page for one pair: the tallies, the real-model pack case by case, then every other case it breaks;
    ``chooser``: the site's widget that answers any other pair (``pair-chooser``) opens it."""
    if found is None:
        said = d.Paragraph(d.phrase("Fewer than two builds: no upgrade to answer."))
        return d.Page(NAME, "Upgrading", (said,), up=say.BACK)
    lead = d.phrase(
        "From ", d.Strong(d.phrase(found.before)), " to ", d.Strong(d.phrase(found.after)),
        ", for every case: does it export on the newer build (and did it on the older); ",
        "; ".join(product.asked for product in upgrade.PRODUCT_OF.values()), ". ",
        d.Code(NOT_TRIED), ": no record (not run, or not tried: a release that cannot load a file, a"
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
    return d.Page(NAME, "Upgrading", tuple(blocks), up=say.BACK)


def apart_words(found: Upgrade, apart: Sequence[upgrade.Disagreement]) -> str:
    """Why the upgrade's breaks and the regressions in B name different cells, each reason once with the first few
    cells it holds for (plain text)."""
    reasons: Dict[str, List[str]] = {}
    for x in apart:
        reasons.setdefault(x.why, []).append("%s %s%s" % (x.case, x.mode, " (%s)" % x.what if x.what else ""))
    said = ["%s: %s" % (why, say.first_of(cells, SHOWN_APART)) for why, cells in reasons.items()]
    return ". Not among the cells that regressed in %s: %s" % (found.after, "; ".join(said)) if said else ""


def newest(upgrades: upgrade.Upgrades) -> Optional[Upgrade]:
    """The answer for the two newest builds, or None with fewer than two."""
    pair = upgrade.newest_pair(upgrades.releases)
    return upgrades.answer(*pair) if pair is not None else None
