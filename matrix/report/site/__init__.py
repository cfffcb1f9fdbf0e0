"""The report as a static site beside the Markdown: ``site/index.html``, a page per case, a badge, CSV tables.

Written by ``export-matrix report`` from the same tables as the Markdown pages:

- ``site/index.html`` (:mod:`.front`): the verdicts and the grid of case × release × mode,
  filtered in the page by case name, tag, status, release, mode and the real-model pack;
- ``site/cases/NAME.html`` (:mod:`.case`), NAME as the case's Markdown page's: its history
  across releases, errors, graph diffs, packages beside torch, repros (linking the scripts
  beside the Markdown page), saved × loaded grid;
- ``site/badge.svg`` (:mod:`.badge`): the newest release's pass rate;
- ``NAME.csv.gz`` beside each ``NAME.parquet`` table of the report: the same rows as CSV, gzipped
  (a load table of 16 releases is 23 MB as plain text, 1.4 MB as Parquet).

The pages load nothing but their own style sheet and script (``assets/``): the grid's data is
embedded in the page, so the site works from ``file://``, where a page may not fetch a file,
as from a web server, with no network. Like every file of the report, these are listed in
the report's manifest, and a later build removes those it does not write again.
"""

from __future__ import annotations

import json
import os
import posixpath
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from matrix.records.repro import Failure
from matrix.report import files
from matrix.report import markdown as md
from matrix.report.findings import Findings
from matrix.report.site import badge, case, front

FOLDER = "site"
ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")
COPIED = ("site.css", "site.js")  # copied as they are; badge.svg is a template
# What a build writes in the site's folder, and so what a later build may remove from it.
_SUFFIXES = (".html", ".css", ".js", ".svg")
CSV = ".csv.gz"  # the suffix of a table's CSV download


def write(
    out: str,
    f: Findings,
    parquet: Iterable[str] = (),
    roots: Optional[Sequence[str]] = None,
) -> Set[str]:
    """Write the site under ``out/site`` and a CSV beside each ``parquet`` table of ``out``; returns the paths.

    The pages render ``f``'s model (:mod:`matrix.records.model`), as the Markdown pages do; paths are relative
    to ``out``, as the manifest lists them.
    ``roots``: the folders case pages read sources from (default: the project's ``cases/``).
    """
    listed = files.previous(out)
    tables = sorted(parquet)
    written = write_csv(out, tables)
    pages = {name: "cases/%s.html" % md.page_file(name) for name in sorted(set(map(str, f.cells["case"])))}
    downloads = [name[: -len(".parquet")] for name in tables]
    written |= _write(out, "index.html", front.render(f, pages, downloads))
    for name in COPIED:
        with open(os.path.join(ASSETS, name), encoding="utf-8") as source:
            written |= _write(out, name, source.read())
    written |= _write(out, "badge.svg", badge.render(*f.model.newest_pass_rate))
    shown = f.cells[[c for c in case.COLUMNS if c in f.cells.columns]]
    rows = _by_case(shown.assign(environment=f.labels.to_numpy()))
    moves = _by_case(f.moves)
    saved = _by_case(f.loads)
    failures: Dict[str, List[Failure]] = {}
    for failure in f.model.repros:
        failures.setdefault(failure.case, []).append(failure)
    for name, target in pages.items():
        text = case.render(
            name, rows[name], moves.get(name, []), saved.get(name, []), f.load_orders, roots, failures.get(name, [])
        )
        written |= _write(out, target, text)
    _remove_stale(out, listed, written)
    return written


def _write(out: str, relative: str, content: str) -> Set[str]:
    path = posixpath.join(FOLDER, relative)
    files.write_text(out, path, content)
    return {path}


def _by_case(frame: pd.DataFrame) -> Dict[str, List[Dict[str, Any]]]:
    found: Dict[str, List[Dict[str, Any]]] = {}
    if frame.empty:
        return found
    for row in frame.to_dict("records"):
        found.setdefault(str(row["case"]), []).append(row)
    return found


def write_csv(out: str, parquet: Iterable[str]) -> Set[str]:
    """A gzipped CSV beside each of the ``parquet`` tables of ``out`` (``cells.parquet`` → ``cells.csv.gz``).

    Lists and mappings (tags, ops, per-run times) become JSON text.
    """
    written = set()
    for name in sorted(parquet):
        table = pq.read_table(files.target(out, name))
        nested = [f.name for f in table.schema if pa.types.is_nested(f.type)]
        frame = table.to_pandas()
        for column in nested:
            frame[column] = [_json(v) for v in frame[column]]
        csv = name[: -len(".parquet")] + CSV
        # No time in the gzip header: the same tables give the same bytes.
        gzip = {"method": "gzip", "mtime": 0}
        frame.to_csv(files.target(out, csv), index=False, lineterminator="\n", compression=gzip)
        written.add(csv)
    return written


def _json(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, sort_keys=True, default=str)
    return value


def ours(entry: str) -> bool:
    """Whether a manifest entry names a file of the site or a CSV table: what :func:`write` may remove."""
    if "\0" in entry or "\\" in entry or entry.startswith("/") or posixpath.normpath(entry) != entry:
        return False
    if ".." in entry.split("/") or posixpath.basename(entry).startswith("."):
        return False
    if entry.startswith(FOLDER + "/"):
        return entry.endswith(_SUFFIXES)
    return "/" not in entry and entry.endswith((CSV, ".csv"))  # .csv: what earlier builds wrote


def _remove_stale(out: str, listed: Set[str], written: Set[str]) -> None:
    """Remove the site's files and CSV tables that the last build listed and this one did not write."""
    for entry in sorted(listed - written):
        if not ours(entry):
            continue
        path = os.path.join(out, *entry.split("/"))
        if os.path.islink(path) or not os.path.isfile(path):
            continue  # a link or folder there now was put by someone else: the report writes plain files
        os.remove(files.target(out, entry))
