"""The site's charts: the PNG files the report drew under ``charts/`` (``Findings.charts``, the saved-programs
heatmaps), shown where the report wrote them, one folder up from the site's front page: stored once.

The charts are drawn once, by the report (:mod:`matrix.report.charts`); the site only shows them.
"""

from __future__ import annotations

import posixpath
from typing import Dict, Iterable, List, Sequence

from matrix.report.charts import Chart
from matrix.report.site.markup import text

FOLDER = "charts"  # where earlier builds copied the charts, under the site's folder
# The front page's chart groups (Findings.charts' keys), in the order they are shown, with a heading each.
GROUPS = (
    ("overview", "Status at a glance"),
    ("summary", "Pass rate per release"),
    ("transitions", "Regressions and fixes per transition"),
    ("export-time", "Export time per release"),
    ("grid", "Status of every case"),
)


def target(chart: Chart) -> str:
    """A chart's path from the site's front page: the report's own file, ``../charts/pass-rate.png``."""
    return posixpath.join("..", chart.path)


def figures(charts: Iterable[Chart]) -> str:
    """The charts as figures: the image (loaded when scrolled to) with its title as caption and alternative text."""
    return "".join(
        '<figure class="chart"><a href="%s"><img src="%s" alt="%s" loading="lazy"></a><figcaption>%s</figcaption>'
        "</figure>" % (text(target(c)), text(target(c)), text(c.title), text(c.title))
        for c in charts
    )


def section(charts: Dict[str, List[Chart]]) -> str:
    """The front page's charts, group by group; "" when none was drawn (``--no-charts``)."""
    parts = ["<h3>%s</h3>%s" % (text(title), figures(charts[name])) for name, title in GROUPS if charts.get(name)]
    if not parts:
        return ""
    return '<section id="charts"><h2>Charts</h2>%s</section>' % "".join(parts)


def every(charts: Dict[str, List[Chart]], others: Sequence[Chart] = ()) -> List[Chart]:
    """Every chart the site shows, each once: the groups', then ``others`` (the saved programs' heatmaps)."""
    found: Dict[str, Chart] = {}
    for name, _ in GROUPS:
        for chart in charts.get(name, []):
            found.setdefault(chart.path, chart)
    for chart in others:
        found.setdefault(chart.path, chart)
    return list(found.values())
