"""Builds of one release compared (``builds.md``), and the builds that lack a dependency set.

The comparison is :mod:`matrix.records.builds`, the completeness :mod:`matrix.records.completeness`;
this module words them: one verdict line each for the front page, and the page that lists every
cell where another variant's build differs from PyPI's build of its release.
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

from matrix.records import transitions
from matrix.records.builds import BuildComparison
from matrix.records.completeness import MARK, IncompleteBuild, Missing
from matrix.report import document as d
from matrix.report import phrases as say

PAGE = "builds.md"
# Anchor of the front page's section on environments that failed to install.
INSTALL_SECTION = d.here("environments-that-failed-to-install")
# The longest installer message quoted in a verdict line.
CAUSE_LIMIT = 100
# What each kind of transition means between two builds of one release.
DIFFERENCE = {
    "regression": "worse on this build",
    "wrong-result": "wrong numbers on this build, an error on PyPI's",
    "fix": "better on this build",
    "stage-regression": "a stage fails on this build only",
    "stage-fix": "a stage works on this build only",
    "graph-change": "another graph",
    "op-drift": "other operators",
    "slowdown": "export slower",
    "speedup": "export faster",
}


def incomplete_line(builds: Sequence[IncompleteBuild]) -> Optional[d.Item]:
    """The front page's verdict on builds that lack a dependency set (None for none)."""
    if not builds:
        return None
    return d.Item(
        d.phrase(
            "marked %s wherever named and left out of every transition and verdict above (a dependency set of their"
            " cases could not be installed, so their cells say nothing of torch; " % MARK,
            d.link("installer errors", INSTALL_SECTION), "): ", d.joined((lacking(b) for b in builds), " · "), ".",
        ),
        "Incomplete builds",
    )  # fmt: skip


def lacking(build: IncompleteBuild) -> d.Phrase:
    """A build and the dependency sets it lacks, each with why: ``2.5.1 cpu lacks `vision`: no wheel``."""
    causes = d.joined((d.phrase(d.Code(m.dependency_set), ": " + say.clip(cause(m), CAUSE_LIMIT))
                       for m in build.missing), "; ")  # fmt: skip
    return d.phrase("%s %s lacks " % (build.release, build.variant), causes)


def cause(missing: Missing) -> str:
    """The installer's first line, else the error's class."""
    lines = missing.error_message.splitlines()
    # An installer's message opens with the command it ran; what went wrong follows.
    return lines[0].split(" failed: ", 1)[-1] if lines else missing.error_type


def line(comparisons: Sequence[BuildComparison]) -> Optional[d.Item]:
    """The front page's verdict on builds of one release compared (None for none)."""
    if not comparisons:
        return None
    said = " · ".join("%s vs %s: %s%s" % (c.build, c.reference, counts(c), _mark(c)) for c in comparisons)
    return d.Item(
        d.phrase(
            "another variant's build against PyPI's build of the release, never a transition between releases (",
            d.link("every difference", d.page(PAGE[: -len(".md")])), "): %s." % said,
        ),
        "Builds of one release",
    )  # fmt: skip


def _mark(c: BuildComparison) -> str:
    return " " + MARK if c.incomplete else ""


def counts(c: BuildComparison) -> str:
    found = [
        "%d cells compared" % c.compared,
        "%d worse" % c.worse,
        "%d better" % c.better,
        d.plural(c.count("graph-change"), "other graph"),
        d.plural(_cells(c, "op-drift"), "cell with other operators", "cells with other operators"),
    ]
    if c.unranked:
        # What the cells that cannot be compared hold on this build: ``8 case-error on this build``.
        held = Counter(str(row.get("status")) for row in c.unranked)
        said = ", ".join("%d %s on this build" % (n, status) for status, n in sorted(held.items()))
        found.append("%d not comparable (%s)" % (len(c.unranked), said))
    return ", ".join(found)


def _cells(c: BuildComparison, kind: str) -> int:
    """The cells with a difference of ``kind``: an op drift in both programs of one cell counts once."""
    return len({(d["case"], d["mode"], d.get("with_set") or "") for d in c.differences if d["kind"] == kind})


def build(comparisons: Sequence[BuildComparison]) -> d.Page:
    """The page: per build, every cell where it differs from PyPI's build of its release."""
    intro = (
        "Each build of another variant (the CPU index's, a CUDA index's) against PyPI's build of the same release,"
        " case by case and mode by mode, under the rules of a transition: statuses compared only where both ran"
        " torch.export, graphs only where both hashes come from one scheme, timings only on enough runs. A"
        " difference here is the build's, not the release's: these cells are never in a release transition."
    )
    blocks: List[d.Block] = [d.Paragraph(d.phrase(intro))]
    headers = ("case", "mode", "difference", "PyPI's → this build", "error")
    for i, c in enumerate(comparisons):
        rows = [_row(x, DIFFERENCE.get(str(x["kind"]), str(x["kind"])), _detail(x)) for x in _ordered(c.differences)]
        rows += [_row(row, "not comparable", "%s on this build" % row.get("status")) for row in c.unranked]
        table = d.Table(tuple(d.Column(h) for h in headers), tuple(rows), empty="No difference.")
        said = d.Paragraph(d.phrase("%s." % counts(c).capitalize()))
        heading = "%s vs %s%s" % (c.build, c.reference, _mark(c))
        blocks.append(d.Section("build-%d" % i, heading, (said, table)))
    return d.Page(PAGE[: -len(".md")], "Builds of one release compared", tuple(blocks), up=say.BACK)


def _row(cell: Dict[str, object], difference: str, detail: str) -> Tuple[d.Phrase, ...]:
    """A cell of the page's table: its case, mode, difference, detail and error."""
    return (
        say.case(cell["case"]),
        d.phrase(say.plain(cell["mode"])),
        d.phrase(difference),
        d.phrase(say.clip(detail, 160)),
        d.phrase(say.clip(cell.get("error_message") or "", 200)),
    )


def _detail(d: Dict[str, object]) -> str:
    if d["kind"] == "op-drift":
        return "%s program: %s" % (d.get("stage"), d.get("detail"))
    return str(d.get("detail") or "")


def _ordered(differences: Sequence[Dict[str, object]]) -> List[Dict[str, object]]:
    order = {kind: i for i, kind in enumerate(transitions.KINDS)}
    return sorted(differences, key=lambda d: (order.get(str(d["kind"]), len(order)), str(d["case"]), str(d["mode"])))
