"""One build on two devices compared (``devices.md``): the cells that differ by device, with their errors.

The comparison is :mod:`matrix.records.devices`; this module words it: a verdict line for the front page and the
page that lists, per build, every cell whose status or graph differs between the main device and another.
"""

from __future__ import annotations

from typing import Any, List, Mapping, Optional, Sequence, Tuple

from matrix.records import repro
from matrix.records.devices import CaseOnDevice, DeviceComparison, Difference
from matrix.report import document as d
from matrix.report import phrases as say
from matrix.report.writers.markdown import github_anchor as markdown_anchor

NAME = "devices"  # the page, devices.md and site/devices.html
PAGE = NAME + ".md"
# The longest error quoted in a cell of the page.
ERROR_LIMIT = 200


def device_name(c: DeviceComparison) -> str:
    """The other device as its cells name it: ``cuda (NVIDIA H200, compute 9.0, driver 580.1)``."""
    return "%s (%s)" % (c.device, "; ".join(c.gpus)) if c.gpus else c.device


def counts(c: DeviceComparison) -> str:
    found = [
        "%d cells on both" % c.compared,
        d.plural(c.statuses, "other status", "other statuses"),
        d.plural(c.graphs, "other graph"),
    ]
    if c.only_here:
        found.append("%d only on %s" % (c.only_here, c.device))
    return ", ".join(found)


def line(comparisons: Sequence[DeviceComparison]) -> Optional[d.Item]:
    """The front page's verdict on builds run on two devices, linking the devices page (None for none)."""
    if not comparisons:
        return None
    main = comparisons[0].main
    said = " · ".join("%s on %s vs %s: %s" % (c.release, c.device, c.main, counts(c)) for c in comparisons)
    return d.Item(
        d.phrase(
            "the other verdicts, the grid and the changes are of the cells run on %s; the cells run on another device"
            " are compared with their build's own cells on %s, never in a transition or verdict (" % (main, main),
            d.link("every difference", d.page(NAME)), "): %s." % said,
        ),
        "Devices",
    )  # fmt: skip


def page(comparisons: Sequence[DeviceComparison]) -> d.Page:
    """The page: per build and device, every cell whose status or graph differs from the main device's."""
    blocks: List[d.Block] = []
    for c in comparisons:
        title = "%s: %s vs %s" % (c.release, device_name(c), c.main)
        blocks.append(d.Section(markdown_anchor(title), title, _build(c, counts(c), c.differences, True)))
    intro = d.phrase(
        "Each build whose cases also ran on another device, against its own cells on the report's main device, case"
        " by case and mode by mode (same Python and ", d.Code("--with"), " set). A cell differs when its status"
        " differs, or when both exported and their graph hashes, of one scheme, differ. A difference here is the"
        " device's, not the release's: these cells are never in a transition between releases.",
    )  # fmt: skip
    return d.Page(NAME, "One build on two devices", (d.Paragraph(intro), *blocks), up=say.BACK)


def _build(c: DeviceComparison, counted: str, differences: Sequence[Difference], page: bool) -> Tuple[d.Block, ...]:
    """A build on another device, on the devices page (``page``: every case, a table even of none) or a case's page:
    its counts, its cells that differ and the checks that run each again."""
    headers = ["case"] if page else []
    headers += ["mode", c.main, c.device, "error on %s" % c.main, "error on %s" % c.device]
    rows = [((say.case(x.case, x.with_set),) if page else ()) + _cells(x) for x in differences]
    table = [say.table(headers, rows, empty="No difference.")] if rows or page else []
    return (d.Paragraph(d.phrase(counted.capitalize() + ".")), *table, *_checks(c, differences))


def _checks(c: DeviceComparison, differences: Sequence[Difference]) -> List[d.Block]:
    """The ``export-matrix check`` that runs each of ``differences`` again on its device (naming its ``--device``),
    where its case has a file of ours: a line and a list, or nothing."""
    found = [(x, repro.check_command(repro.Cell.from_row(x.other))) for x in differences]
    items = tuple(d.Item(d.phrase(cell_name(x) + ": ", d.Code(command))) for x, command in found if command)
    again = "Run again on %s, in the cell's own environment (export-matrix check, from a checkout):" % c.device
    return [d.Paragraph(d.phrase(again)), d.Items(items)] if items else []


def cell_name(d: Difference) -> str:
    """A cell of the table in a few words: ``tutorial/add_one, strict, Python 3.11 [a==1]``."""
    return "%s, %s, Python %s%s" % (d.case, d.mode, d.python, " [%s]" % d.with_set if d.with_set else "")


def error(side: Mapping[str, Any]) -> str:
    """A cell's error as one line: ``RuntimeError: Expected all tensors to be on the same device``."""
    kind, message = str(side.get("error_type") or ""), str(side.get("error_message") or "")
    return ("%s: %s" % (kind, message) if kind and message else kind or message).strip()


def case_counts(found: CaseOnDevice) -> str:
    """``2 cells on cuda, 1 differs from its cell on cpu``."""
    c, differ = found.comparison, len(found.differences)
    differing = "none differs" if not differ else "1 differs" if differ == 1 else "%d differ" % differ
    return "%s on %s, %s from its cell on %s" % (d.plural(found.cells, "cell"), c.device, differing, c.main)


def case_section(found: Sequence[CaseOnDevice]) -> Optional[d.Section]:
    """A case page's section on the builds that also ran it on another device (None for none): per build, the case's
    cells there that differ from the main device's, and the checks that run each again there."""
    if not found:
        return None
    intro = d.phrase(
        "The cells above ran on %s. This case ran on another device too, in the builds below: a difference there is"
        " the device's, never a transition between releases. " % found[0].comparison.main,
        d.link("Every build's differences.", d.page(NAME)),
    )
    blocks: List[d.Block] = [d.Paragraph(intro)]
    for number, f in enumerate(found, 1):
        c = f.comparison
        said = _build(c, case_counts(f), f.differences, False)
        blocks.append(d.Section("device-%d" % number, "%s on %s" % (c.release, device_name(c)), said))
    return d.Section("on-other-devices", "On other devices", tuple(blocks))


def _cells(x: Difference) -> Tuple[d.Phrase, ...]:
    """A cell that differs, as a table row: its mode and Python, each device's outcome and error."""
    outcomes = tuple(
        d.phrase(d.Mark(side.get("status")), None if x.status_differs else ", graph ",
                 None if x.status_differs else d.Code((side.get("graph_hash") or "")[:12]))
        for side in (x.main, x.other)
    )  # fmt: skip
    errors = tuple(d.phrase(say.clip(error(side), ERROR_LIMIT)) for side in (x.main, x.other))
    return (d.phrase("%s, Python %s" % (x.mode, x.python)), *outcomes, *errors)
