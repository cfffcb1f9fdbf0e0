"""Programs exported on one release and compiled with AOTInductor on a newer one: the grid, its shares and failures.

Pure functions over ``Store.aoti_compiles`` (one row per ``aoti-compile`` record, columns
``schema.AOTI_COMPILE_KEYS``, written by ``export-matrix load --aoti``). A record names the release that
exported and saved the program (``saved_*``) and the one that compiled it and loaded the package
(``torch_version``, ...), as a load names its saving and loading releases: the table has the load table's
shape (:func:`matrix.records.artifacts.table`, the latest record winning), ``saved`` labelling the exporting
build and ``loaded`` the compiling one.

Each pair (exported on, compiled on) of a mode is counted by how far its programs got: ``tried`` (the program
loaded and a compile was started: ``schema.AOTI_TRIED``), then ``compiled``, ``loaded`` (the package, in a
fresh process) and ``matched`` (ran on the saved inputs and reproduced the saved outputs). A program that did
not load on the compiling release (``skipped``), a release without AOTInductor or a machine without a C++
compiler (``not-applicable``) and an unsigned folder (``untrusted``) were not tried: counted apart, never as
a failure. Where a tried compile stopped is its record's ``failed_step``; a process that died where no step
says is counted as not compiled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List, Mapping, Sequence, Tuple

import pandas as pd

from matrix.contract.products import COMPILE
from matrix.contract.schema import (
    AOTI_TRIED,
    STAGE_MISMATCH,
    STAGE_OK,
    STAGE_SKIPPED,
    LoadStatus,
    Status,
)
from matrix.records import artifacts

SHARE_COLUMNS = [
    "mode", "saved", "loaded", "tried", "compiled", "loads", "passed", "total", "skipped", "not_applicable",
    "untrusted", "share",
]  # fmt: skip
# Per compiling build: what its compiles cost (records that ran now or were reused alike).
COST_COLUMNS = ["loaded", "compiles", "compile_s_median", "compile_s_max", "load_s_median", "package_mb_median"]


@dataclass(frozen=True)
class Compiles(artifacts.Uses):
    """The compiles of programs saved on older releases: made is exported-on, used compiled-on."""

    cost: pd.DataFrame  # :func:`cost` of the table


def judge(records: pd.DataFrame) -> Compiles:
    """The compiles of ``Store.aoti_compiles``: the table, its orders, shares and cost."""
    found, exported, compiled = artifacts.product_table(records, COMPILE)
    return Compiles(found, tuple(exported), tuple(compiled), shares(found), cost(found))


def reached(row: Mapping[str, Any]) -> Tuple[bool, bool, bool, bool]:
    """How far one compile got: (tried, compiled, loaded, matched); see the module docstring."""
    status, step = row.get("status"), row.get("failed_step")
    if status not in AOTI_TRIED:
        return False, False, False, False
    if status == STAGE_OK:
        return True, True, True, True
    return True, step in ("load", "run") or status == STAGE_MISMATCH, step == "run" or status == STAGE_MISMATCH, False


def shares(found: pd.DataFrame) -> pd.DataFrame:
    """Per mode, exported-on × compiled-on of a :func:`.artifacts.table`: the programs tried, compiled, whose
    package loaded (``loads``) and that matched (``passed``, of ``total`` = tried), those not tried by why, and
    ``share`` = passed / total (NaN where none was tried). Rows in mode, exported, compiled order."""
    status = found["status"]
    reach = [reached(row) for row in found.to_dict("records")]
    flags = pd.DataFrame(reach, index=found.index, columns=["tried", "compiled", "loads", "passed"], dtype=int)
    flags["total"] = flags["tried"]
    flags["skipped"] = (status == STAGE_SKIPPED).astype(int)
    flags["not_applicable"] = (status == Status.NOT_APPLICABLE.value).astype(int)
    flags["untrusted"] = (status == LoadStatus.UNTRUSTED.value).astype(int)
    return artifacts.counts(found, flags, SHARE_COLUMNS)


def failures(
    found: pd.DataFrame, where: Sequence[str] = ("case", "mode", "saved", "loaded")
) -> List[Tuple[artifacts.Failure, List[Tuple[str, ...]]]]:
    """The failures of a :func:`.artifacts.table` (or part of one) grouped as :func:`.artifacts.errors` does (the
    status with the step where a compile stopped), the most common first: each with the ``where`` of its rows
    (case, mode, exported-on, compiled-on). A compile not tried is no failure."""
    groups = artifacts.errors(found, COMPILE, where)
    return sorted(groups, key=lambda item: -len(item[1]))


def common_failure(rows: pd.DataFrame) -> str:
    """The text of the most common of :func:`failures` of ``rows``."""
    return failures(rows)[0][0].text


def cost(found: pd.DataFrame) -> pd.DataFrame:
    """Per compiling build of a :func:`.artifacts.table`, in version order: the compiles that finished (compiled or
    failed with a time), the median and longest compile in seconds, the median load of a package and its median
    size."""
    if found.empty:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in COST_COLUMNS})
    _, compiled = artifacts.orders(found)
    rows = []
    for label in compiled:
        mine = found[found["loaded"] == label]
        seconds = pd.to_numeric(mine["compile_s"], errors="coerce").dropna()
        loads = pd.to_numeric(mine["load_s"], errors="coerce").dropna()
        sizes = pd.to_numeric(mine["package_bytes"], errors="coerce").dropna()
        if seconds.empty:
            continue
        rows.append([
            label, len(seconds), float(seconds.median()), float(seconds.max()),
            float(loads.median()) if not loads.empty else math.nan,
            float(sizes.median()) / 1e6 if not sizes.empty else math.nan,
        ])  # fmt: skip
    return pd.DataFrame(rows, columns=COST_COLUMNS)
