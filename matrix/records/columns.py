"""The cell table's identity, its groups of statuses and of columns, shared by the tables, the transitions, the
baseline and the published tables read back.

A module of constants only, so that :mod:`.tables`, :mod:`.transitions`, :mod:`.baseline` and :mod:`.published`
can all build on it without importing one another in a circle.
"""

from __future__ import annotations

# A cell: its environment, the part of its dependency set that ``--with`` added ("" for none), case and mode.
KEY = ["release", "variant", "python", "with_set", "case", "mode"]
# Statuses whose cell holds an exported program, on which the later stages ran.
EXPORTED = ("pass", "mismatch")
# Statuses that are a failure of torch, ranked below pass.
FAILING = ("mismatch", "fail", "crash", "timeout")
# What a record measures of its run: a cell's are the medians over its runs.
MEASURES = ["load_s", "eager_s", "export_s", "check_s", "decompose_s", "serialize_s", "total_s", "peak_rss_mb"]
# A cell's bulky texts, kept out of cells.parquet (a report writes them to texts.parquet).
TEXT_COLUMNS = ["graph_text", "error_traceback", "stderr_tail", "diagnosis"]
