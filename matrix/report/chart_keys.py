"""Reusing charts whose data did not change: a key per chart group, and the file that keeps them between builds.

A chart group's key hashes its name, its input tables, the code that draws the charts and
matplotlib's version; a rebuild whose key matches the last build's, with every file still
there, keeps that build's charts instead of drawing them again.
"""

from __future__ import annotations

import inspect
import json
import os
from typing import Any, Dict, List, Optional, Tuple

import pandas as pd

from matrix.report import charts, heatmaps, release_charts
from matrix.report import files as report_files
from matrix.report.charts import Chart

# The code that draws the charts: a change to any of it draws every chart group again.
DRAWING = (charts, heatmaps, release_charts)
KEYS = "charts/.chart-keys.json"


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


def previous_keys(out: str) -> Dict[str, Any]:
    """The chart groups the last build drew: key and charts per group name, or nothing."""
    try:
        with open(report_files.target(out, KEYS), encoding="utf-8") as f:
            stored = json.load(f)
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def reusable(out: str, previous: Dict[str, Any], name: str, key: str) -> Optional[List[Chart]]:
    """The charts a previous build drew from the same data, when every file is still there."""
    entry = previous.get(name)
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    try:
        kept = [Chart(str(c["path"]), str(c["title"]), tuple(str(f) for f in c["files"])) for c in entry["charts"]]
    except (KeyError, TypeError):
        return None
    files = [path for chart in kept for path in chart.files]
    if not all(os.path.isfile(report_files.target(out, path)) for path in files):
        return None
    return kept


def write_keys(out: str, groups: Dict[str, Tuple[str, List[Chart]]]) -> str:
    """Record each group's key and charts for the next build; returns the file's path in the report."""
    stored = {
        name: {"key": key, "charts": [{"path": c.path, "title": c.title, "files": list(c.files)} for c in drawn]}
        for name, (key, drawn) in sorted(groups.items())
    }
    report_files.write_text(out, KEYS, json.dumps(stored, indent=1, sort_keys=True) + "\n")
    return KEYS
