"""What the site offers to download: each table of the report as gzipped CSV (``site/tables/``); its Parquet is the
report's own, beside the Markdown (``../cells.parquet`` from the front page), stored once.

A load table of 16 releases is 23 MB as plain text, 1.4 MB as Parquet and about as much as gzipped CSV.
"""

from __future__ import annotations

import json
import os
import posixpath
from typing import Any, Iterable, List, Set

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from matrix.report import files

TABLES = "tables"  # under the site's folder
CSV = ".csv.gz"  # the suffix of a table's CSV download


def names(parquet: Iterable[str]) -> List[str]:
    """The tables' names (``cells`` for ``cells.parquet``), sorted."""
    return sorted(posixpath.basename(p)[: -len(".parquet")] for p in parquet)


def write_tables(out: str, folder: str, parquet: Iterable[str]) -> Set[str]:
    """A gzipped CSV of each of the ``parquet`` tables of ``out``, in ``folder/tables/``.

    Lists and mappings (tags, ops, per-run times) become JSON text in the CSV. Returns the paths written.
    """
    written = set()
    for name in sorted(parquet):
        stem = posixpath.basename(name)[: -len(".parquet")]
        table = pq.read_table(files.target(out, name))
        nested = [f.name for f in table.schema if pa.types.is_nested(f.type)]
        frame = table.to_pandas()
        for column in nested:
            frame[column] = [_json(v) for v in frame[column]]
        csv = posixpath.join(folder, TABLES, stem + CSV)
        os.makedirs(os.path.dirname(files.target(out, csv)), exist_ok=True)
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
