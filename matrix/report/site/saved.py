"""The site's saved programs: the epochs across which programs load, the load regressions, the saved × loaded
heatmaps; and the compiled packages' epochs and what they say of upstream's promise.

Nothing is judged here: the epochs are the verdicts' (:mod:`matrix.records.epochs`, as the Markdown's
:func:`matrix.report.verdicts.epochs_section` renders them) and the load regressions and heatmaps what the
saved-programs page wrote (``Findings.artifacts``, :mod:`matrix.report.artifacts`); the packages' epochs and
promise are :mod:`matrix.records.aoti_loads`', as the model holds them (``Model.packages``). Every pair of a case is
on its page's saved × loaded grid, and its compiled × loaded grid. The front page's AOTInductor verdicts
(:func:`aoti_lines`) link the packages' epochs.
"""

from __future__ import annotations

from typing import List, Mapping, Optional, Sequence

from matrix.contract import stages
from matrix.records.aoti_loads import PROMISED_FROM, PackageLoads
from matrix.records.epochs import Epoch
from matrix.report import aoti_loads as report_aoti
from matrix.report import artifacts as report_artifacts
from matrix.report.findings import Findings
from matrix.report.site import known_issues
from matrix.report.site.markup import clip, table, text

SHOWN_LOAD_REGRESSIONS = 20  # listed; the rest are counted
EPOCH_RULE = (
    "An epoch is a range of releases where a program saved on any of them loads and matches on that release and"
    " every newer one of the range (for each pair, at least half of the programs; the cases that fail are the"
    " exceptions). Older releases do not always read newer programs."
)
PACKAGE_RULE = (
    "The same rule for the packages AOTInductor compiled from those programs (run with --stages …,aoti): a range of"
    " releases where a package compiled on any of them loads and matches on that release and every newer one of"
    " the range. Upstream promises that from %s on, not that older releases load newer packages." % PROMISED_FROM
)


def _case(case: str, pages: Mapping[str, str]) -> str:
    page = pages.get(case)
    return '<a href="%s">%s</a>' % (text(page), text(case)) if page else text(case)


def _escape(value: str, limit: Optional[int] = None) -> str:
    return text(clip(value, limit) if limit is not None else value)


def epochs_table(epochs: Sequence[Epoch], pages: Mapping[str, str], noun: str = "program", css: str = "epochs") -> str:
    """The epochs as a table; ``noun`` what was loaded (``program``, ``package``)."""
    rows = [report_aoti.epoch_cells(e, _escape, lambda case: _case(case, pages)) for e in epochs]
    return table(report_aoti.epoch_headers(noun), rows, css)


def _regressions(written: Optional[report_artifacts.Written]) -> str:
    if written is None:
        return ""
    found = written.load_regressions
    if not found:
        return (
            "<p>No load regression: no loading release does worse with any saved program than the release before"
            " it.</p>"
        )
    lines = [
        "<li>saved on %s, loaded on %s after %s: %s; %s</li>"
        % tuple(
            text(v)
            for v in (
                row["saved"],
                row["after"],
                row["before"],
                report_artifacts.affected(row),
                report_artifacts.break_failure(row),
            )
        )
        for row in found[:SHOWN_LOAD_REGRESSIONS]
    ]
    if len(found) > SHOWN_LOAD_REGRESSIONS:
        lines.append("<li>… and %d more</li>" % (len(found) - SHOWN_LOAD_REGRESSIONS))
    return (
        "<details><summary><strong>%d load regression%s</strong>, affecting %d saved program%s: a loading release that"
        " does worse with the programs saved on one release than the loading release before it, counted once per"
        " saving release however many programs it saved (a click lists them)</summary><ul>%s</ul></details>"
        % (
            written.regressions,
            "" if written.regressions == 1 else "s",
            written.affected,
            "" if written.affected == 1 else "s",
            "".join(lines),
        )
    )


def section(f: Findings, pages: Mapping[str, str], charts: str = "") -> str:
    """The section; "" when the records hold no load of a saved program."""
    epochs = f.verdicts.epochs if f.verdicts is not None else ()
    if not epochs and f.artifacts is None:
        return ""
    parts: List[str] = ['<section id="saved"><h2>Saved programs across releases</h2>']
    if epochs:
        parts += ['<h3 id="epochs">Epochs</h3>', "<p>%s</p>" % text(EPOCH_RULE), epochs_table(epochs, pages)]
    parts.append(_regressions(f.artifacts))
    if charts:  # the whole matrix of loads, behind a click: the epochs above say what it shows
        parts.append("<details><summary>The charts of every saved × loaded pair</summary>%s</details>" % charts)
    parts.append(
        "<p>Every saved × loaded pair of a case, with its error, is on the case's page (<em>Saved × loaded</em>);"
        ' the glyphs are in the <a href="#legend-loads">legend</a>.</p>'
    )
    parts.append(packages(f.model.packages, pages))
    if not f.model.packages.empty:
        parts.append(known_issues.stage_paragraph(f.model.known_issues, stages.AOTI.name))
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def packages(found: Optional[PackageLoads], pages: Mapping[str, str]) -> str:
    """The compiled packages' part of the section: their epochs and upstream's promise; "" without package loads."""
    if found is None or found.empty:
        return ""
    parts = ['<h3 id="aoti-epochs">Compiled packages (AOTInductor)</h3>', "<p>%s</p>" % text(PACKAGE_RULE)]
    if found.epochs:
        parts.append(epochs_table(found.epochs, pages, "package", "epochs aoti"))
    parts.append("<p>%s</p>" % text(report_aoti.promise_words(found.promise)))
    parts.append(
        "<p>Every compiled × loaded pair of a case, with its error, is on the case's page (<em>Compiled ×"
        " loaded</em>), under its saved programs.</p>"
    )
    return "\n".join(parts)
