"""The site's upgrade page, ``site/upgrade.html``: from one build to a newer one, the answer per case and for the
real-model pack, on one screen.

The page takes the pair from its address (``#upgrade=2.5.1+cu124..2.15.0+cu132``, with ``scope=pack`` or
``scope=all`` and ``case=`` words that narrow the rows), so that an answer can be linked. Every pair is judged
here in Python by :mod:`matrix.records.upgrade` (``Model.upgrades``) and embedded in the page as data;
``assets/upgrade.js`` only picks the pair and draws it. Per pair the data holds each case's verdict and the
status of its saved program, package and compile per mode, as one character each (``codes``); each build's
export statuses are held once, per build; the tallies come already worded (:mod:`matrix.report.upgrade`).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from matrix.contract.products import COMPILE
from matrix.contract.schema import LOAD_STATUSES, MODES, STATUSES
from matrix.records import upgrade
from matrix.records.upgrade import Found, Upgrades
from matrix.report import markdown as md
from matrix.report import upgrade as words
from matrix.report.site.markup import script_json, text
from matrix.report.writers import colour, glyph

PAGE = "upgrade.html"
SCRIPT = "upgrade.js"
# One character per code: the data's alphabet (no quote or backslash, so that a row is a plain JSON string).
_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
NONE = "-"  # no record
# The most case answers (pairs × cases) the page holds: about 7 bytes each, 1.4 MB at most.
PAIR_BUDGET = 200_000
# The page's own rules: the site's style sheet is shared by every page.
STYLE = (
    "table.upgrade td{text-align:center;white-space:nowrap}table.upgrade th[scope=row]{white-space:nowrap}"
    ".verdict-breaks{color:#a40e26;font-weight:600}.verdict-fixed{color:#116329;font-weight:600}"
    "#upgrade-form label{margin-right:1rem}"
)
VERDICTS = upgrade.CASE_ORDER  # a case's verdict, by its index here
# What a row holds per mode after the verdict: each product's question and the table its status's code is read from.
USES = (("saved", "load"), ("package", "load"), ("compile", "compile"))


def _codes() -> Tuple[Dict[Tuple[str, str], str], Dict[str, List[str]]]:
    """Each (table, status) as one character, and what each character draws: [CSS classes, glyph, title]."""
    chars: Dict[Tuple[str, str], str] = {}
    # No record drawn as the page's own words say it (matrix.report.upgrade.build's lead), not as the grids' dot.
    drawn: Dict[str, List[str]] = {NONE: ["st", words.NOT_TRIED, "no record: not run, or not tried"]}
    kinds = (("cell", STATUSES), ("load", LOAD_STATUSES), ("compile", COMPILE.statuses))
    for at, (table, status) in enumerate((kind, status) for kind, known in kinds for status in known):
        char = _ALPHABET[at]
        chars[(table, status)] = char
        drawn[char] = ["st " + colour(status, table), glyph(status, table), status]
    return chars, drawn


CHARS, DRAWN = _codes()


def _code(table: str, found: Optional[Found]) -> str:
    return CHARS.get((table, found.status), NONE) if found is not None else NONE


def offered(upgrades: Upgrades) -> List[Tuple[str, str]]:
    """The pairs the page answers: every one, or where that would pass PAIR_BUDGET case answers (a page of megabytes),
    those that end on the newest build and those of consecutive builds."""
    every = upgrades.pairs()
    if len(every) * max(1, len(upgrades.case_names)) <= PAIR_BUDGET:
        return every
    builds = upgrades.releases
    return [(a, b) for a, b in every if b == builds[-1] or builds.index(b) == builds.index(a) + 1]


def data(upgrades: Upgrades, pages: Mapping[str, str]) -> Dict[str, Any]:
    """What the page's script draws: the builds, the cases, each build's export statuses and each pair's answer.

    ``export[build]``: per case (``cases`` order) one character per mode (``modes``). ``pairs["A..B"]``: ``rows``,
    per case one verdict character (index into ``verdicts``) then per mode its saved program's, package's and
    compile's characters; ``all`` and ``pack``: the tallies in words; ``breaks`` and ``breaks_pack``: the cases it
    breaks, of all and of the pack.
    """
    cases = list(upgrades.case_names)
    export = {
        release: "".join(_code("cell", upgrades.cells.get((release, case, mode))) for case in cases for mode in MODES)
        for release in upgrades.releases
    }
    pairs = {}
    for before, after in offered(upgrades):
        found = upgrades.answer(before, after)
        rows = []
        for answer in found.cases:
            by_mode = {m.mode: m for m in answer.modes}
            row = _ALPHABET[VERDICTS.index(answer.verdict)]
            for m in (by_mode.get(mode) for mode in MODES):
                row += "".join(_code(table, m.found(question) if m else None) for question, table in USES)
            rows.append(row)
        pairs["%s..%s" % (before, after)] = {
            "rows": "".join(rows),
            "all": words.tallies_words(found),
            "pack": words.tallies_words(found, found.pack),
            "breaks": sum(1 for c in found.cases if c.breaks),
            "breaks_pack": sum(1 for c in found.pack if c.breaks),
        }
    newest = upgrade.newest_pair(upgrades.releases)
    return {
        "releases": list(upgrades.releases),
        "cases": cases,
        "pages": [pages.get(case, "") for case in cases],
        "pack": [i for i, case in enumerate(cases) if case.startswith(upgrade.PACK_PREFIX)],
        "modes": list(MODES),
        "codes": DRAWN,
        "verdicts": [words.VERDICTS[v] for v in VERDICTS],
        "export": export,
        "pairs": pairs,
        "newest": "%s..%s" % newest if newest else "",
        "every_pair": len(pairs) == len(upgrades.pairs()),
    }


def widget(upgrades: Upgrades) -> Dict[str, str]:
    """The pair chooser of the upgrade page (:func:`matrix.report.upgrade.build`), by widget name: the pair and
    scope chosen in a form, the answer drawn under it by ``upgrade.js`` in place of the newest pair's. What the page
    asks and how the address keeps the pair are said once, in the page's lead."""
    pages = {case: "cases/%s.html" % md.page_file(case) for case in upgrades.case_names}
    options = "".join('<option value="%s">%s</option>' % (text(r), text(r)) for r in upgrades.releases)
    body = [
        '<form id="upgrade-form" class="filters"><label>from A <select id="upgrade-before">%s</select></label> '
        '<label>to B <select id="upgrade-after">%s</select></label> '
        '<label>cases <select id="upgrade-scope"><option value="pack">the real-model pack</option>'
        '<option value="all">every case</option></select></label> '
        '<label>named <input id="upgrade-case" type="search" placeholder="hf_llama tv_resnet18"></label></form>'
        % (options, options),
        '<div id="upgrade-answer" aria-live="polite"></div>',
        "<style>%s</style>" % STYLE,
        '<script id="upgrade-data" type="application/json">%s</script>' % script_json(data(upgrades, pages)),
        '<script src="%s"></script>' % SCRIPT,
    ]
    return {"pair-chooser": "\n".join(body)}
