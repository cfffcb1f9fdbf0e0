"""The site's devices: each build run on two devices, the cells that differ by device, as ``devices.md`` says them.

Nothing is judged here: the comparison is :mod:`matrix.records.devices`, its words :mod:`matrix.report.devices_page`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from matrix.records.devices import DeviceComparison, Difference
from matrix.report import devices_page
from matrix.report.site.markup import clip, status, table, text

ANCHOR = "devices"


def line(comparisons: Sequence[DeviceComparison]) -> str:
    """The verdict line (``<li>``), linking the section ("" for none)."""
    if not comparisons:
        return ""
    main = comparisons[0].main
    parts = [
        "%s on %s vs %s: %s" % (text(c.release), text(c.device), text(c.main), text(devices_page.counts(c)))
        for c in comparisons
    ]
    return (
        "<li><strong>Devices</strong>: the other verdicts, the grid and the changes are of the cells run on %s; the"
        " cells run on another device are compared with their build's own cells on %s, never in a transition or"
        ' verdict (<a href="#%s">every difference</a>): %s.</li>' % (text(main), text(main), ANCHOR, " · ".join(parts))
    )


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
        rows = [_row(d, pages) for d in c.differences]
        out.append('<div class="wide">%s</div>' % table(headers, rows) if rows else "<p>No difference.</p>")
    out.append("</section>")
    return "\n".join(out)


def _row(d: Difference, pages: Mapping[str, str]) -> Sequence[str]:
    page = pages.get(d.case)
    name = '<a href="%s">%s</a>' % (text(page), text(d.case)) if page else text(d.case)
    if d.with_set:
        name += " <small>[%s]</small>" % text(d.with_set)
    return [
        name,
        text("%s, Python %s" % (d.mode, d.python)),
        _outcome(d, d.main),
        _outcome(d, d.other),
        text(clip(devices_page.error(d.main), devices_page.ERROR_LIMIT)),
        text(clip(devices_page.error(d.other), devices_page.ERROR_LIMIT)),
    ]


def _outcome(d: Difference, side: Mapping[str, object]) -> str:
    shown = status(side.get("status"))
    if d.status_differs:
        return shown
    return "%s, graph <code>%s</code>" % (shown, text(str(side.get("graph_hash") or "")[:12]))
