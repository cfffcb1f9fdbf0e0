"""The cell table's identity and its groups of statuses, shared by the tables, the transitions and the baseline.

A module of constants only, so that :mod:`.tables`, :mod:`.transitions` and :mod:`.baseline`
can all build on it without importing one another in a circle.
"""

from __future__ import annotations

# A cell: its environment, the part of its dependency set that ``--with`` added ("" for none), case and mode.
KEY = ["release", "variant", "python", "with_set", "case", "mode"]
# Statuses whose cell holds an exported program, on which the later stages ran.
EXPORTED = ("pass", "mismatch")
# Statuses that are a failure of torch, ranked below pass.
FAILING = ("mismatch", "fail", "crash", "timeout")
