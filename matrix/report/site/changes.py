"""The site's changes between releases: what changed in the newest release, and every regression and fix of each
release transition in one table that the page filters.

Nothing is judged here. The transitions are the model's steps (``Findings.steps``, from
:mod:`matrix.records.transitions`), counted per kind as the Markdown's transition table counts them
(:data:`matrix.report.transition_page.COUNTED`), and each change of a case is one row with its modes together,
as the Markdown's regressions table groups them. The table's filters (``into``: the newer release of a
transition; ``change``: regressions, fixes or one kind) live in the page's address like the grid's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from matrix.records import transitions
from matrix.records.transitions import Step
from matrix.report import transition_page
from matrix.report.site.markup import clip, filter_link, present, selects, status, text

KINDS = transitions.REGRESSIONS + transitions.FIXES
GROUPS = (("regressions", transitions.REGRESSIONS), ("fixes", transitions.FIXES))
NOW_WRONG = " (now wrong numbers)"
ERROR_LIMIT = 200
# The rows of the table of changes shown at a time; a button shows the rest of what the filters keep.
PAGE = 5
# The fields that make two transitions of a case one change, told apart only by their modes.
SAME_CHANGE = ("before", "after", "variant_before", "variant", "case", "with_set", "kind", "status_before",
               "status_after", "stage", "detail", "error_type", "error_message")  # fmt: skip


@dataclass(frozen=True)
class Change:
    """One change of one case between two consecutive releases, in every mode it shows in."""

    step: str  # the transition's title (transition_page.title)
    into: str  # its newer release: what the table's ``into`` filter picks
    case: str
    with_set: str
    modes: Tuple[str, ...]
    kind: str  # one of KINDS
    status_before: str
    status_after: str
    detail: str  # a stage change's stage and outcomes (``save/load ok → error``)
    error: str  # the failing side's error: the newer release's for a regression, the older's for a fix


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def changes(steps: Sequence[Step]) -> List[Change]:
    """The regressions and fixes of ``steps``, step by step in their order, then in the steps' own order."""
    found: List[Change] = []
    for step in steps:
        title = transition_page.title(step)
        groups: Dict[Tuple[str, ...], List[Mapping[str, Any]]] = {}
        for move in step.of(*KINDS):
            groups.setdefault(tuple(_text(move.get(k)) for k in SAME_CHANGE), []).append(move)
        for members in groups.values():
            first = members[0]
            error = ": ".join(p for p in (present(first.get("error_type")), present(first.get("error_message"))) if p)
            found.append(
                Change(
                    step=title,
                    into=step.after,
                    case=str(first["case"]),
                    with_set=_text(first.get("with_set")),
                    modes=tuple(str(m["mode"]) for m in members),
                    kind=str(first["kind"]),
                    status_before=_text(first.get("status_before")),
                    status_after=_text(first.get("status_after")),
                    detail=_text(first.get("detail")),
                    error=error.split("\n", 1)[0],
                )
            )
    return found


def group(kind: str) -> str:
    """``regressions`` or ``fixes``: the group of a kind."""
    return next(name for name, kinds in GROUPS if kind in kinds)


def change_text(c: Change) -> str:
    """What changed, in HTML: the statuses with their glyphs, or the stage that started or stopped failing."""
    if c.kind in ("stage-regression", "stage-fix"):
        return "%s, %s" % (status(c.status_after), text(c.detail))
    said = "%s → %s" % (status(c.status_before), status(c.status_after))
    return said + (NOW_WRONG if c.kind == "wrong-result" else "")


def _case(c: Change, pages: Mapping[str, str]) -> str:
    page = pages.get(c.case)
    name = '<a href="%s">%s</a>' % (text(page), text(c.case)) if page else text(c.case)
    return name + (" [%s]" % text(c.with_set) if c.with_set else "")


def rows(found: Sequence[Change], pages: Mapping[str, str]) -> str:
    """The table rows: each carries its newer release and group, for the page's filters."""
    return "".join(
        '<tr data-into="%s" data-change="%s %s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>'
        "<td>%s</td></tr>"
        % (
            text(c.into),
            text(group(c.kind)),
            text(c.kind),
            text(c.step),
            _case(c, pages),
            text(", ".join(c.modes)),
            text(c.kind),
            change_text(c),
            text(clip(c.error, ERROR_LIMIT)),
        )
        for c in found
    )


HEADERS = ("transition", "case", "mode", "kind", "change", "error (the newer release's; for a fix, the older's)")


def table(found: Sequence[Change], pages: Mapping[str, str], css: str = "changes", id_: str = "", page: int = 0) -> str:
    """The table of ``found``; with ``page``, the page's script shows that many rows a filter keeps at a time."""
    ident = ' id="%s"' % id_ if id_ else ""
    paged = ' data-page="%d"' % page if page else ""
    head = "".join("<th>%s</th>" % text(h) for h in HEADERS)
    return '<div class="wide"><table class="%s"%s%s><thead><tr>%s</tr></thead><tbody>%s</tbody></table></div>' % (
        css,
        ident,
        paged,
        head,
        rows(found, pages),
    )


def change_link(into: str, change: str = "") -> str:
    """A link to the changes table filtered to the transitions into a release, and to a group or kind of change."""
    filters = {"into": into}
    if change:
        filters["change"] = change
    return filter_link(**filters)


def newest(steps: Sequence[Step], newest_builds: Sequence[str], pages: Mapping[str, str]) -> str:
    """What changed in the newest release: its regressions listed, its fixes counted, each linking the table."""
    names = ", ".join(newest_builds)
    into = [s for s in steps if s.after in newest_builds]
    if not into:
        return (
            '<section id="newest"><h2>What changed in %s</h2><p>Nothing to compare it with: no older release ran'
            " the same cases in the same variant.</p></section>" % text(names or "the newest release")
        )
    found = changes(into)
    regressed = [c for c in found if group(c.kind) == "regressions"]
    fixed = [c for c in found if group(c.kind) == "fixes"]
    lines = [
        '<section id="newest"><h2>What changed in %s</h2>' % text(names),
        "<p>Compared with %s: %d regressed (%s), %d fixed (%s).</p>"
        % (
            text(", ".join(dict.fromkeys(s.before for s in into))),
            len(regressed),
            '<a href="%s">in the table of changes</a>' % change_link(into[-1].after, "regressions"),
            len(fixed),
            '<a href="%s">in the table of changes</a>' % change_link(into[-1].after, "fixes"),
        ),
    ]
    lines.append("<h3>Regressed</h3>")
    lines.append(table(regressed, pages, "changes newest") if regressed else "<p>Nothing regressed there.</p>")
    lines.append("<h3>Fixed</h3>")
    lines.append(table(fixed, pages, "changes newest") if fixed else "<p>Nothing was fixed there.</p>")
    lines.append("</section>")
    return "\n".join(lines)


def _counts(step: Step) -> List[str]:
    cells = []
    for kind in KINDS:
        count = step.count(kind)
        link = '<a href="%s">%d</a>' % (change_link(step.after, kind), count) if count else ""
        cells.append('<td class="num">%s</td>' % link)
    cells.append('<td class="num">%s</td>' % (step.count("graph-change") or ""))
    cells.append('<td class="num">%s</td>' % (step.count("op-drift") or ""))
    return cells


def steps_table(steps: Sequence[Step]) -> str:
    """Per transition: the cells compared and the changes of each kind, each count linking its rows."""
    head = ["transition", "cells compared"] + [transition_page.COUNTED[k] for k in KINDS]
    head += ["graph changes", "op drift"]
    lines = [
        '<tr><th><a href="%s">%s</a></th><td class="num">%d</td>%s</tr>'
        % (change_link(s.after), text(transition_page.title(s)), len(s.pairs), "".join(_counts(s)))
        for s in steps
    ]
    return '<div class="wide"><table class="steps"><thead><tr>%s</tr></thead><tbody>%s</tbody></table></div>' % (
        "".join("<th>%s</th>" % text(h) for h in head),
        "".join(lines),
    )


def section(steps: Sequence[Step], pages: Mapping[str, str], charts: str = "") -> str:
    """Every release transition counted, then every regression and fix in one table with its filters."""
    if not steps:
        return '<section id="changes"><h2>Changes between releases</h2><p>No two releases compared.</p></section>'
    found = changes(steps)
    intos = list(dict.fromkeys(s.after for s in steps))
    froms: Dict[str, List[str]] = {}
    for s in steps:
        froms.setdefault(s.after, []).append(s.before)
    options = [("", "every transition")] + [(i, "into %s (from %s)" % (i, " or ".join(froms[i]))) for i in intos]
    kinds = [("", "regressions and fixes"), ("regressions", "regressions"), ("fixes", "fixes")]
    kinds += [(k, transition_page.COUNTED[k]) for k in KINDS]
    menus = selects("c", (("into", "transition", options), ("change", "change", kinds)))
    timing = transition_page.not_timed(steps)
    return "\n".join(
        [
            '<section id="changes"><h2>Changes between releases</h2>',
            "<p>Each release compared with the one before it, case by case and mode by mode (%d transitions):"
            " regressions are cells that got worse (%s), fixes cells that got better (%s). Graph changes and op drift"
            " are counted here and listed on each case's page.%s</p>"
            % (
                len(steps),
                text(", ".join(transition_page.COUNTED[k] for k in transitions.REGRESSIONS)),
                text(", ".join(transition_page.COUNTED[k] for k in transitions.FIXES)),
                " Slowdowns and speedups %s." % text(timing) if timing else "",
            ),
            steps_table(steps),
            charts,
            '<form id="change-filters" class="filters" onsubmit="return false">%s</form>' % menus,
            '<p id="c-count" aria-live="polite">%d changes</p>' % len(found),
            table(found, pages, "changes", "change-table", PAGE),
            '<p><button type="button" id="c-more" hidden>Show all</button></p>',
            "</section>",
        ]
    )


def newest_link(steps: Sequence[Step], newest_builds: Sequence[str]) -> Optional[str]:
    """The link to the regressions into the newest release, or None without a transition into it."""
    into = [s for s in steps if s.after in newest_builds]
    return change_link(into[-1].after, "regressions") if into else None
