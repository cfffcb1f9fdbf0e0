"""A published report folder read back as records, so that a report can be rebuilt where its records are gone.

``export-matrix report reports/latest --out reports/latest`` re-renders a published report with
the current pages: a folder that holds a report's tables (``cells.parquet`` beside the report's
manifest) and no record file is read as the records those tables came from:

- each cell becomes one record per run: its ``statuses`` (``pass×3 fail×1``) give the runs and
  their statuses, the runs that agree with the cell's status carry its measures and each its
  own export time (``export_s_runs``), so that the rebuilt cell table is the published one;
- ``environments``, ``env_errors``, ``loads``, ``aoti_loads`` and ``aoti_compiles`` become their records again;
- the bulky texts (graph, traceback, stderr tail, draft_export's problems) come from
  ``texts.parquet`` where the report wrote one; a report published without it is rebuilt
  without them, and the rebuild says so in a warning.

The tables hold no cell's ``finished_at`` or ``run_id``: a cell is given the run of its
environment's latest record (same build, Python and dependency set), which says what that
environment added to torch.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any, Dict, List, Optional, Tuple

import pandas as pd

from matrix.contract.products import PRODUCTS
from matrix.contract.schema import LOAD_KINDS, SCHEMA_VERSION
from matrix.records.columns import MEASURES, TEXT_COLUMNS
from matrix.records.devices import DEFAULT

CELLS = "cells.parquet"
TEXTS = "texts.parquet"
TABLES = {
    "environment": "environments.parquet",
    "env-error": "env_errors.parquet",
    **{product.kind: product.table for product in PRODUCTS},  # each where its records hold any
}
# What the report writes beside its tables: a folder with both is a published report.
MANIFEST = ".export-matrix-report.json"
# The cell table's columns a report computes from the records: not record fields.
COMPUTED = (
    "release", "runs", "flaky", "statuses", "export_s_runs", "serialize_outcome", "decompose_outcome",
    "diagnosis_summary", "incomplete",
)  # fmt: skip
# The load table's columns a report computes from the records.
LOAD_COMPUTED = ("saved", "loaded")
# The identity of a cell, as the text table keys it; a table without ``device`` holds the CPU's cells alone.
KEY = ("release", "variant", "python", "with_set", "case", "mode", "device")
_RUNS = re.compile(r"^(\S+)×(\d+)$")
NO_TEXTS = (
    "%s: a report published without %s: its cells are rebuilt without graphs, tracebacks, stderr tails and"
    " draft_export's problems"
)


def is_report(folder: str) -> bool:
    """Whether ``folder`` is a published report: its cell table beside the report's manifest."""
    return os.path.isfile(os.path.join(folder, CELLS)) and os.path.isfile(os.path.join(folder, MANIFEST))


def read(folder: str) -> Tuple[List[Dict[str, Any]], List[str]]:
    """The records of a published report folder, and warnings on what it could not give back."""
    warnings: List[str] = []
    texts = _texts(folder)
    if texts is None:
        warnings.append(NO_TEXTS % (folder, TEXTS))
    found: List[Dict[str, Any]] = []
    for kind, name in TABLES.items():
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            found.extend(_records(pd.read_parquet(path, dtype_backend="numpy_nullable"), kind))
    runs = _run_ids([r for r in found if r["kind"] == "environment"])
    for row in pd.read_parquet(os.path.join(folder, CELLS), dtype_backend="numpy_nullable").to_dict("records"):
        cell = {k: _plain(v) for k, v in row.items()}
        # The environment a cell ran in, by its build, Python and set: what it added comes from there.
        cell["run_id"] = runs.get(_environment(cell, "release"))
        found.extend(_runs(cell, texts or {}))
    return found, warnings


def _environment(row: Dict[str, Any], release: str = "torch_version") -> Tuple[str, ...]:
    return tuple(_text(row.get(k)) for k in (release, "variant", "python", "dependency_set"))


def _run_ids(environments: List[Dict[str, Any]]) -> Dict[Tuple[str, ...], str]:
    """Per build, Python and dependency set, the run of its latest environment record."""
    latest: Dict[Tuple[str, ...], Tuple[str, str]] = {}
    for row in environments:
        key, started = _environment(row), _text(row.get("started_at"))
        if isinstance(row.get("run_id"), str) and started >= latest.get(key, ("", ""))[0]:
            latest[key] = (started, row["run_id"])
    return {key: run for key, (_, run) in latest.items()}


def texts_frame(cells: pd.DataFrame) -> pd.DataFrame:
    """What a report writes as ``texts.parquet``: each cell's key and its bulky texts, draft_export's problems as
    JSON; only the cells that hold any."""
    columns = [c for c in TEXT_COLUMNS if c in cells.columns]
    if cells.empty or not columns:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in (*KEY, *TEXT_COLUMNS)})
    frame = cells[[k for k in KEY if k in cells.columns] + columns].copy()
    if "diagnosis" in frame.columns:
        frame["diagnosis"] = [
            json.dumps(v, sort_keys=True) if isinstance(v, list) and v else None for v in frame["diagnosis"]
        ]
    held = frame[columns].map(lambda v: isinstance(v, str) and bool(v)).any(axis=1)
    frame = frame[held]
    for column in columns:
        frame[column] = [v if isinstance(v, str) and v else None for v in frame[column]]
    return frame.reset_index(drop=True)


def _texts(folder: str) -> Optional[Dict[Tuple[str, ...], Dict[str, Any]]]:
    path = os.path.join(folder, TEXTS)
    if not os.path.isfile(path):
        return None
    found = {}
    for row in pd.read_parquet(path, dtype_backend="numpy_nullable").to_dict("records"):
        values = {c: row.get(c) for c in TEXT_COLUMNS if isinstance(row.get(c), str)}
        if isinstance(values.get("diagnosis"), str):
            values["diagnosis"] = json.loads(values["diagnosis"])
        found[_key(row)] = values
    return found


def _records(frame: pd.DataFrame, kind: str) -> List[Dict[str, Any]]:
    rows = []
    for row in frame.to_dict("records"):
        record = {k: _plain(v) for k, v in row.items() if k not in LOAD_COMPUTED or kind not in LOAD_KINDS}
        for key in ("capabilities", "added_packages") if kind == "environment" else ():
            if isinstance(record.get(key), str):
                record[key] = json.loads(record[key])  # a mapping, kept as JSON text in the table
        record.update(kind=kind, schema_version=SCHEMA_VERSION)
        rows.append(record)
    return rows


def _runs(row: Dict[str, Any], texts: Dict[Tuple[str, ...], Dict[str, Any]]) -> List[Dict[str, Any]]:
    """One record per run of a cell of the table, the runs that agree with its status first."""
    base = {k: v for k, v in row.items() if k not in COMPUTED}
    base.update(kind="cell", schema_version=SCHEMA_VERSION, torch_version=row["release"])
    base.update(texts.get(_key(row), {}))
    status = row.get("status")
    counts = _statuses(row.get("statuses"), status, row.get("runs"))
    times = [t for t in row.get("export_s_runs") or [] if isinstance(t, (int, float))]
    agreeing = counts.pop(str(status), 1)
    found = []
    for run in range(agreeing):
        record = dict(base, run=run)
        if times:
            record["export_s"] = times[run] if run < len(times) else None
        found.append(record)
    # Runs that ended otherwise: their status alone (a cell's fields come from the runs that agree).
    for other, count in counts.items():
        for _ in range(count):
            blank = {m: None for m in MEASURES}
            found.append(dict(base, **blank, run=len(found), status=other, error_type=None, error_message=None))
    return found


def _statuses(text: Any, status: Any, runs: Any) -> Dict[str, int]:
    """``pass×3 fail×1`` as counts; one run of the cell's status where the table says nothing else."""
    counts: Dict[str, int] = {}
    for part in str(text or "").split():
        match = _RUNS.match(part)
        if match:
            counts[match.group(1)] = counts.get(match.group(1), 0) + int(match.group(2))
    if not counts:
        number = int(runs) if isinstance(runs, (int, float)) and not math.isnan(runs) and runs >= 1 else 1
        counts[str(status)] = number
    return counts


def _plain(value: Any) -> Any:
    """A Parquet value as a record holds it: arrays as lists, NaN and NA as None (tables are read with nullable
    types, so that a column of integers with gaps comes back as integers)."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _key(row: Dict[str, Any]) -> Tuple[str, ...]:
    """A cell's key in the text table; a row without a device ran on the CPU."""
    return tuple(_text(row.get(k)) or (DEFAULT if k == "device" else "") for k in KEY)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
