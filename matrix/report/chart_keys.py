"""The report's chart groups, each drawn from its tables; and reusing those whose tables did not change: a key per
group, and the file that keeps them between builds.

A chart group's key hashes its name, its input tables, the code that draws the charts and
matplotlib's version; a rebuild whose key matches the last build's, with every file still
there, keeps that build's charts instead of drawing them again.
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Any, Callable, Dict, List, Sequence, Tuple

import pandas as pd

from matrix.records.transitions import Step
from matrix.report import charts, heatmaps, release_charts
from matrix.report import files as report_files
from matrix.report.charts import Chart

# The code that draws the charts: a change to any of it draws every chart group again.
DRAWING = (charts, heatmaps, release_charts)
KEYS = "charts/.chart-keys.json"


def plan(
    cells: pd.DataFrame, labels: pd.Series, summary: pd.DataFrame, steps: Sequence[Step]
) -> Dict[str, Tuple[Callable[..., List[Chart]], Tuple[Any, ...]]]:
    """Each chart group by name: the function that draws and writes it, and the tables it is drawn from (its key's
    inputs, so that a group is drawn again exactly when what it shows changed). ``labels``: the cells' environment
    labels (tables.environment_labels); the front page shows the overview, the pass rate, the transitions and the
    export time, the status grid page the grid."""
    heat = cells[[c for c in heatmaps.HEATMAP_COLUMNS if c in cells.columns]]
    return {
        "grid": (heatmaps.status_heatmaps, (heat, labels)),
        "overview": (heatmaps.status_overview, (heat, labels)),
        "summary": (release_charts.pass_rate, (summary,)),
        "transitions": (release_charts.transition_counts, (release_charts.step_counts(steps),)),
        "export-time": (release_charts.export_times, (cells,)),
    }


def chart_key(name: str, *inputs: Any) -> str:
    """What a chart group depends on: its name, its input tables, the charts' code and matplotlib's version."""
    import hashlib
    from importlib import metadata

    digest = hashlib.sha256(("%s\0%s\0" % (name, metadata.version("matplotlib"))).encode())
    for module in DRAWING:
        with open(inspect.getfile(module), "rb") as f:
            digest.update(f.read())
    for value in inputs:
        if isinstance(value, (pd.DataFrame, pd.Series)):
            digest.update(value.to_csv().encode())
        else:
            digest.update(repr(value).encode())
    return digest.hexdigest()


def reusable(out: str, keys: Dict[str, str]) -> Dict[str, List[Chart]]:
    """The chart groups of ``keys`` (name -> key) that the last build drew from the same data, with every file still
    there: their charts by name."""
    stored = report_files.read_json(report_files.target(out, KEYS))
    found = {}
    for name, key in keys.items():
        entry = stored.get(name) if isinstance(stored, dict) else None  # a file of another shape keeps nothing
        if not isinstance(entry, dict) or entry.get("key") != key:
            continue
        try:
            kept = [Chart(str(c["path"]), str(c["title"]), tuple(str(f) for f in c["files"])) for c in entry["charts"]]
        except (KeyError, TypeError):
            continue
        if all(os.path.isfile(report_files.target(out, path)) for chart in kept for path in chart.files):
            found[name] = kept
    return found


def write_keys(out: str, groups: Dict[str, Tuple[str, List[Chart]]]) -> str:
    """Record each group's key and charts for the next build; returns the file's path in the report."""
    stored = {
        name: {"key": key, "charts": [{"path": c.path, "title": c.title, "files": list(c.files)} for c in drawn]}
        for name, (key, drawn) in sorted(groups.items())
    }
    report_files.write_text(out, KEYS, json.dumps(stored, indent=1, sort_keys=True) + "\n")
    return KEYS
