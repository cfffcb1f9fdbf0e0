"""The site's verdicts: what :mod:`matrix.records.verdicts` judged, as HTML, and the pass rates per release and mode.

Nothing is judged here: the open regressions, the releases that pass the most of what is
documented to work, the saved-program epochs and the changes since the baseline come from
``Findings.verdicts``; the pass rates from ``Findings.pass_rates`` (both :mod:`matrix.records.model`).
Each line links to its evidence: a case's page, or the grid filtered to the cells behind it.
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from matrix.contract.schema import MODES, STAGES
from matrix.records import figures as headline
from matrix.records.builds import BuildComparison
from matrix.records.candidate import Verdict
from matrix.records.completeness import IncompleteBuild
from matrix.records.failures import Sighting
from matrix.records.model import PassRate, newest_pass_rate
from matrix.records.open_regressions import OpenRegression
from matrix.records.verdicts import SinceBaseline, Verdicts
from matrix.report import builds_page
from matrix.report import markdown as md
from matrix.report import verdicts as report_verdicts
from matrix.report.site import known_issues
from matrix.report.site.markup import HTML, filter_link, status, text

ANY_FAILURE = "failing"  # the grid's status filter for every failing status
SHOWN_OPEN = 20  # open regressions listed; the rest are counted
STAGE_LABELS = dict(STAGES)


def pass_rates(rates: Sequence[PassRate]) -> Dict[str, Dict[str, Tuple[int, int]]]:
    """Per environment label (report order) and mode: (passing cells, cells that ran torch.export)."""
    found: Dict[str, Dict[str, Tuple[int, int]]] = {}
    for rate in rates:
        found.setdefault(rate.label, {})[rate.mode] = (rate.passed, rate.judged)
    return found


def percent(passed: int, total: int) -> str:
    return "%.1f%%" % (100.0 * passed / total) if total else "–"


def render(
    rates: Sequence[PassRate],
    v: Optional[Verdicts],
    pages: Mapping[str, str],
    changes: Optional[str] = None,
    incomplete: Sequence[IncompleteBuild] = (),
    builds: Sequence[BuildComparison] = (),
    labels: Optional[Mapping[str, str]] = None,
    candidates: Sequence[Verdict] = (),
    known: Sequence[Sighting] = (),
    more: Sequence[str] = (),
) -> str:
    """The verdicts section: one line per answer, then the pass rates (:mod:`matrix.records.model`'s) per release
    and mode. ``changes``: the link to the newest release's regressions in the table of changes, where there is one;
    ``incomplete`` and ``builds``: the builds that lack a dependency set, and the builds of one release compared;
    ``labels``: each build's environment label, which the grid's release filter takes; ``candidates``: each
    nightly or release candidate against the newest release, first; ``known``: the known upstream issues that label
    some of the report's failures; ``more``: other verdicts' lines (``<li>``: AOTInductor's, the upgrade's), after
    what broke in the newest release."""
    lines: List[str] = [_candidate(c, labels or {}) for c in candidates]
    newest, passed, total = newest_pass_rate(rates)
    if newest:
        lines.append(
            "<li><strong>Newest release, %s</strong>: %s of the cells that ran torch.export pass (%d of %d, every"
            ' mode); <a href="%s">its failing cells</a>.</li>'
            % (text(newest), percent(passed, total), passed, total, filter_link(release=newest, status=ANY_FAILURE))
        )
    if v is not None:
        lines += [
            _open(v, pages),
            _in_newest(v, pages, changes),
            builds_page.incomplete_line(incomplete, HTML, '<a href="#env-errors">install errors</a>', ""),
            *more,
        ]
        lines += [_best(v), _epochs(v), _since(v), _builds(builds, labels or {})]
    lines += known_issues.verdict_items(known)
    parts = ['<section id="verdicts"><h2>Verdicts</h2>', "<ul>%s</ul>" % "".join(line for line in lines if line)]
    # Every build's pass rate behind a click: the newest's is the first verdict, and the grid shows each build's cells.
    parts.append(
        "<details><summary>Pass rate of every build, per mode (%d)</summary>%s</details>"
        % (len({r.label for r in rates}), rates_table(rates, v))
    )
    parts.append("</section>")
    return "\n".join(parts)


def _candidate(v: Verdict, labels: Mapping[str, str]) -> str:
    """A candidate against the newest release: whether it regresses, and the cells it breaks."""
    link = '<a href="%s">%s</a>' % (filter_link(release=labels.get(v.candidate, v.candidate)), text(v.candidate))
    head = "<li><strong>Candidate</strong> %s (%s) vs %s (%s): " % (
        link, text(v.variant), text(v.reference), text(v.reference_variant),
    )  # fmt: skip
    if not v.regresses:
        said = "no regression against the release"
    else:
        cases = list(dict.fromkeys("%s %s" % (m["case"], m["mode"]) for m in v.broken))
        said = "<strong>regresses</strong>: %d cell(s) broken (%s)" % (len(v.broken), text(", ".join(cases[:5])))
        if v.unloadable:
            said += ", %d saved program(s) no longer load" % len(v.unloadable)
    return head + "%s; %d fixed, %d graph or op changes, of %d cells compared.</li>" % (
        said, len(v.fixed), len(v.changed), v.compared,
    )  # fmt: skip


def _builds(found: Sequence[BuildComparison], labels: Mapping[str, str]) -> str:
    """Each build of another variant against PyPI's build of its release, in counts."""
    if not found:
        return ""
    parts = [
        builds_page.compared(
            c, '<a href="%s">%s</a>' % (filter_link(release=labels.get(c.build, c.build)), text(c.build)), HTML
        )
        for c in found
    ]
    return (
        "<li><strong>Builds of one release</strong> (another variant's build against PyPI's build of the release,"
        " never a transition between releases): %s.</li>" % " · ".join(parts)
    )


def _open(v: Verdicts, pages: Mapping[str, str]) -> str:
    r = v.regressions
    newest = ", ".join(r.newest) or "the newest release"
    if not r.found:
        return "<li><strong>Still broken on %s</strong>: no regression was found between releases.</li>" % text(newest)
    said = "<strong>Still broken on %s</strong>: %d of the %d regressions found between releases" % (
        text(newest),
        r.open_count,
        r.found,
    )
    said += " (%d fixed since)" % r.fixed if r.fixed else ""
    items = [_item(found, pages) for found in r.open[:SHOWN_OPEN]]
    more = "<li>… and %d more</li>" % (len(r.open) - SHOWN_OPEN) if len(r.open) > SHOWN_OPEN else ""
    return "<li>%s:<ul>%s%s</ul></li>" % (said, "".join(items), more) if items else "<li>%s.</li>" % said


def _in_newest(v: Verdicts, pages: Mapping[str, str], changes: Optional[str] = None) -> str:
    """What regressed in the newest release: the open regressions that broke there, and a link to the table."""
    r = v.regressions
    if not r.found:
        return ""
    said = "<strong>Regressed in %s</strong>" % text(", ".join(r.newest) or "the newest release")
    table = ' <a href="%s">Every change there</a>.' % changes if changes else ""
    if not r.in_newest:
        return "<li>%s: nothing broke there.%s</li>" % (said, table)
    items = "".join(_item(found, pages) for found in r.in_newest[:SHOWN_OPEN])
    more = "<li>… and %d more</li>" % (len(r.in_newest) - SHOWN_OPEN) if len(r.in_newest) > SHOWN_OPEN else ""
    return "<li>%s:<ul>%s%s</ul>%s</li>" % (said, items, more, table)


def _item(found: OpenRegression, pages: Mapping[str, str]) -> str:
    """One open regression: the case, its modes, what broke at which transition, and how it stands now."""
    page = pages.get(found.case)
    name = '<a href="%s">%s</a>' % (text(page), text(found.case)) if page else text(found.case)
    name += " [%s]" % text(found.with_set) if found.with_set else ""
    if found.kind == "stage-regression":
        stage = STAGE_LABELS.get(found.stage or "", found.stage or "a stage")
        change = "%s stopped working" % text(stage)
        now = report_verdicts.stage_now(found, text(stage), HTML)
    else:
        change = "%s → %s" % (status(found.status_before), status(found.status_after))
        change += " (now wrong numbers)" if found.kind == "wrong-result" else ""
        now = "now " + ", ".join(status(s) for s in dict.fromkeys(found.now))
    return "<li>%s (%s): %s at %s → %s; %s</li>" % (
        name,
        text(", ".join(found.modes)),
        change,
        text(found.before),
        text(found.after),
        now,
    )


def _best(v: Verdicts) -> str:
    if not v.best:
        return ""
    parts = ["%s: %s (%d of %d)" % (b.mode, ", ".join(b.environments), b.passed, b.cases) for b in v.best]
    return "<li><strong>Passes the most of what is documented to work</strong>: %s.</li>" % text("; ".join(parts))


def _epochs(v: Verdicts) -> str:
    if not v.epochs:
        return ""
    spans = []
    for e in v.epochs:
        tried = "%d of %d loads match" % (e.passed, e.tried) if e.tried else "no load tried within"
        spans.append("%s (%s)" % (report_verdicts.span(e), tried))
    return '<li><strong>Saved programs</strong> load across %s: %s (<a href="#epochs">epochs</a>).</li>' % (
        md.plural(len(v.epochs), "epoch"),
        text(" · ".join(spans)),
    )


def _since(v: Verdicts) -> str:
    b = v.baseline
    if b is None:
        return ""
    counted = "%d cells changed status (%d regressions, %d fixes), %d new and %d vanished cells" % (
        b.changed,
        b.regressions,
        b.fixes,
        b.new_cells,
        b.vanished_cells,
    )
    return "<li><strong>Since %s</strong>: %s.%s</li>" % (text(b.name), counted, _figures_moved(b))


def _figures_moved(b: SinceBaseline) -> str:
    """The headline figures that moved since the baseline, each with what moved it (figures.moved)."""
    if b.figures is None or not b.figures.moved:
        return ""
    lead = "with no cell changed, so by this version's rules" if b.figures.same_cells else "since then"
    items = "".join(
        "<li>%s %d → %d: %s</li>" % (text(m.figure), m.before, m.now, text("; ".join(map(headline.cause, m.parts))))
        for m in b.figures.moved
    )
    return ' Headline figures moved %s:<ul class="moved">%s</ul>' % (lead, items)


def rates_table(found: Sequence[PassRate], v: Optional[Verdicts]) -> str:
    """Per release and mode: the pass rate over the cells that ran, and over the cases documented to work."""
    rates = pass_rates(found)
    modes = [m for m in MODES if any(m in by_mode for by_mode in rates.values())]
    documented = {(e.environment, e.mode): e for e in v.expected} if v is not None else {}
    head = "".join("<th>%s: pass rate</th>" % text(m) for m in modes)
    if documented:
        head += "".join("<th>%s: documented to work</th>" % text(m) for m in modes)
    rows = []
    for label, by_mode in rates.items():
        shown = []
        for mode in modes:
            p, t = by_mode.get(mode, (0, 0))
            bar = '<span class="bar" style="width:%dpx"></span>' % round(60 * p / t) if t else ""
            shown.append('<td class="num">%s%s <small>%d/%d</small></td>' % (bar, percent(p, t), p, t))
        if documented:
            for mode in modes:
                e = documented.get((label, mode))
                cell = "%s <small>%d/%d</small>" % (percent(e.passed, e.cases), e.passed, e.cases) if e else "–"
                shown.append('<td class="num">%s</td>' % cell)
        link = '<a href="%s">%s</a>' % (filter_link(release=label), text(label))
        rows.append("<tr><th>%s</th>%s</tr>" % (link, "".join(shown)))
    caption = "Pass rate: passing cells over the cells that ran torch.export (not-applicable and case-error left out)."
    if documented:
        caption += (
            " Documented to work: passing cells over every case whose claim on that release (for an ExportDB case,"
            " the release's own ExportDB where it names one) says it works in that mode, run or not."
        )
    return (
        '<table class="rates"><caption>%s</caption><thead><tr><th>release</th>%s</tr></thead><tbody>%s</tbody>'
        "</table>" % (caption, head, "".join(rows))
    )
