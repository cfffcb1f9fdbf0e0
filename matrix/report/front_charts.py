"""Which charts each section of the report's front page shows: status overview, pass rate, transitions, export time."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

import pandas as pd

from matrix.records.transitions import Step
from matrix.report import heatmaps, release_charts
from matrix.report.charts import Chart


def summary_charts(
    summary: pd.DataFrame,
    steps: Sequence[Step],
    table: pd.DataFrame,
    out: str,
    only: Optional[Sequence[str]] = None,
) -> Dict[str, List[Chart]]:
    """The charts of the report's front page, by section: status overview, pass rate, transitions, export time."""
    draw = {
        "overview": lambda: heatmaps.status_overview(table, out),
        "summary": lambda: release_charts.pass_rate(summary, out),
        "transitions": lambda: release_charts.transition_counts(steps, out),
        "export-time": lambda: release_charts.export_times(table, out),
    }
    return {name: make() for name, make in draw.items() if only is None or name in only}
