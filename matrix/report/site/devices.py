"""The site's devices: each build run on two devices, the cells that differ by device, as ``devices.md`` says them.

Nothing is judged here: the comparison is :mod:`matrix.records.devices`, its words :mod:`matrix.report.devices_page`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from matrix.records.devices import DeviceComparison, Difference
from matrix.report import devices_page
from matrix.report.site.markup import HTML, status, table, text

ANCHOR = "devices"


def line(comparisons: Sequence[DeviceComparison]) -> str:
    """The verdict line (``<li>``), linking the section ("" for none)."""
    return devices_page.line(comparisons, HTML, "#" + ANCHOR)


def section(comparisons: Sequence[DeviceComparison], pages: Mapping[str, str]) -> str:
    """The section: per build and device, a table of the cells that differ ("" for none)."""
    if not comparisons:
        return ""
    out = [
        '<section id="%s"><h2>One build on two devices</h2>' % ANCHOR,
        "<p>Each build whose cases also ran on another device, against its own cells on the report's main device"
        " (same Python and <code>--with</code> set). A cell differs when its status differs, or when both exported"
        " and their graph hashes, of one scheme, differ. The grid, the changes and the verdicts show the main"
        " device's cells only.</p>",
    ]
    for c in comparisons:
        out.append(
            "<h3>%s: %s vs %s</h3>" % (text(c.release), text(devices_page.device_name(c)), text(c.main))
            + "<p>%s.</p>" % text(devices_page.counts(c).capitalize())
        )
        headers = ["case", "mode", c.main, c.device, "error on %s" % c.main, "error on %s" % c.device]
        rows = [devices_page.row(d, _name(d, pages), HTML, status) for d in c.differences]
        out.append('<div class="wide">%s</div>' % table(headers, rows) if rows else "<p>No difference.</p>")
        out.append(_checks(c, c.differences))
    out.append("</section>")
    return "\n".join(out)


def _checks(c: DeviceComparison, differences: Sequence[Difference]) -> str:
    """The checks that run each of ``differences`` again on its device, as a list ("" where none has a case file)."""
    checks = devices_page.checks_of(differences)
    if not checks:
        return ""
    items = "".join(
        "<li>%s: <code>%s</code></li>" % (text(devices_page.cell_name(d)), text(command)) for d, command in checks
    )
    return '<p>%s</p><ul class="commands">%s</ul>' % (text(devices_page.again(c)), items)


def _name(d: Difference, pages: Mapping[str, str]) -> str:
    page = pages.get(d.case)
    name = '<a href="%s">%s</a>' % (text(page), text(d.case)) if page else text(d.case)
    return name + (" <small>[%s]</small>" % text(d.with_set) if d.with_set else "")
