"""One build on two devices compared (``devices.md``): the cells that differ by device, with their errors.

The comparison is :mod:`matrix.records.devices`; this module words it: a verdict line for the front page and the
page that lists, per build, every cell whose status or graph differs between the main device and another.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Sequence

from matrix.records.devices import DeviceComparison, Difference
from matrix.report import markdown as md

PAGE = "devices.md"
# The longest error quoted in a cell of the page.
ERROR_LIMIT = 200


def device_name(c: DeviceComparison) -> str:
    """The other device as its cells name it: ``cuda (NVIDIA H200, compute 9.0, driver 580.1)``."""
    return "%s (%s)" % (c.device, "; ".join(c.gpus)) if c.gpus else c.device


def counts(c: DeviceComparison) -> str:
    found = [
        "%d cells on both" % c.compared,
        md.plural(c.statuses, "other status", "other statuses"),
        md.plural(c.graphs, "other graph"),
    ]
    if c.only_here:
        found.append("%d only on %s" % (c.only_here, c.device))
    return ", ".join(found)


def line(comparisons: Sequence[DeviceComparison]) -> str:
    """The front page's verdict on builds run on two devices ("" for none)."""
    if not comparisons:
        return ""
    main = comparisons[0].main
    parts = [
        "%s on %s vs %s: %s" % (md.text(c.release), md.text(c.device), md.text(c.main), counts(c)) for c in comparisons
    ]
    return (
        "- **Devices**: the other verdicts, the grid and the changes are of the cells run on %s; the cells run on"
        " another device are compared with their build's own cells on %s, never in a transition or verdict"
        " ([every difference](%s)): %s." % (md.text(main), md.text(main), PAGE, " · ".join(parts))
    )


def render(comparisons: Sequence[DeviceComparison]) -> str:
    """The page: per build and device, every cell whose status or graph differs from the main device's."""
    out = [
        "# One build on two devices\n",
        "[← back to the matrix](index.md)\n",
        "Each build whose cases also ran on another device, against its own cells on the report's main device, case"
        " by case and mode by mode (same Python and `--with` set). A cell differs when its status differs, or when"
        " both exported and their graph hashes, of one scheme, differ. A difference here is the device's, not the"
        " release's: these cells are never in a transition between releases.\n",
    ]
    for c in comparisons:
        out.append("## %s: %s vs %s\n" % (md.text(c.release), md.text(device_name(c)), md.text(c.main)))
        out.append("%s.\n" % counts(c).capitalize())
        headers = ["case", "mode", c.main, c.device, "error on %s" % c.main, "error on %s" % c.device]
        rows = [_row(d) for d in c.differences]
        out.append(md.table([md.text(h) for h in headers], rows) if rows else "_No difference._\n")
    return "\n".join(out).rstrip("\n") + "\n"


def _row(d: Difference) -> List[str]:
    return [
        md.case_with(d.case, d.with_set),
        md.text("%s, Python %s" % (d.mode, d.python)),
        _outcome(d, d.main),
        _outcome(d, d.other),
        md.text(error(d.main), ERROR_LIMIT),
        md.text(error(d.other), ERROR_LIMIT),
    ]


def _outcome(d: Difference, side: Mapping[str, Any]) -> str:
    status = md.text(side.get("status") or "")
    if d.status_differs:
        return status
    return "%s, graph %s" % (status, md.code((side.get("graph_hash") or "")[:12]))


def error(side: Mapping[str, Any]) -> str:
    """A cell's error as one line: ``RuntimeError: Expected all tensors to be on the same device``."""
    kind, message = str(side.get("error_type") or ""), str(side.get("error_message") or "")
    return ("%s: %s" % (kind, message) if kind and message else kind or message).strip()
