"""A site case page's section on the builds that also ran the case on another device, in the words of the Markdown
case page's (:func:`matrix.report.devices_page.case_markdown`); the devices page itself is built once
(:func:`matrix.report.devices_page.page`)."""

from __future__ import annotations

from typing import Sequence

from matrix.records.devices import CaseOnDevice, DeviceComparison, Difference
from matrix.report import devices_page
from matrix.report.site.markup import HTML, status, table, text

ANCHOR = "devices"


def case_section(found: Sequence[CaseOnDevice]) -> str:
    """A case page's section on the builds that also ran it on another device ("" for none), in the words of the
    Markdown page's (:func:`devices_page.case_markdown`)."""
    if not found:
        return ""
    out = [
        "<h2>On other devices</h2>",
        '<p>%s <a href="../index.html#%s">Every build\'s differences.</a></p>'
        % (text(devices_page.CASE_INTRO % found[0].comparison.main), ANCHOR),
    ]
    for f in found:
        c = f.comparison
        out.append("<h3>%s on %s</h3>" % (text(c.release), text(devices_page.device_name(c))))
        out.append("<p>%s.</p>" % text(devices_page.case_counts(f).capitalize()))
        if f.differences:
            headers = ["mode", c.main, c.device, "error on %s" % c.main, "error on %s" % c.device]
            rows = [devices_page.row(d, "", HTML, status)[1:] for d in f.differences]
            out.append('<div class="wide">%s</div>' % table(headers, rows))
        out.append(_checks(c, f.differences))
    return "\n".join(part for part in out if part)


def _checks(c: DeviceComparison, differences: Sequence[Difference]) -> str:
    """The checks that run each of ``differences`` again on its device, as a list ("" where none has a case file)."""
    checks = devices_page.checks_of(differences)
    if not checks:
        return ""
    items = "".join(
        "<li>%s: <code>%s</code></li>" % (text(devices_page.cell_name(d)), text(command)) for d, command in checks
    )
    return '<p>%s</p><ul class="commands">%s</ul>' % (text(devices_page.again(c)), items)
