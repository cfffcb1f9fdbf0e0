"""The report's tables: one row per cell, a status pivot, disagreements (matrix.records.baseline: since a baseline).

A cell run several times (``run`` 0..N-1) is summarised into one row:

- ``status`` is the most common status among its runs, ties going to the worse status.
  The worst status would let one timeout on a loaded machine out of thirty runs mark a
  regression; the most common one reports what users will usually see, and ``flaky``
  (with ``statuses``, e.g. ``pass×28 timeout×2``) says that the runs disagreed.
- the other outcome fields (error, hashes, ops, the later stages' outcomes) come from the
  first run with that status;
- timings are the median over the runs with that status, and ``export_s_runs`` keeps each of
  those runs' export time (sorted), the evidence a claimed slowdown or speedup rests on.

Each stage run on an exported program (save/load, decomposition) gets a derived column
``<stage>_outcome``: the stage's status (``ok``, ``error``, ``skipped``) where the cell exported
(pass or mismatch), else None, since a stage that never ran says nothing.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import pandas as pd

from matrix.contract import stages
from matrix.contract.case import exportdb_example
from matrix.contract.schema import (
    APPLICABLE,
    MODES,
    STAGE_ERROR,
    STAGES,
    STATUSES,
    WORST_FIRST,
    first_line,
    rank,
)
from matrix.records import completeness, devices, store
from matrix.records.columns import EXPORTED, FAILING, KEY, MEASURES, TEXT_COLUMNS

# The cell table's columns of times and memory, which differ between two runs of the same cells by nature.
TIMES = [*MEASURES, "export_s_runs"]
OUTCOMES = [stage + "_outcome" for stage, _ in STAGES]


# The long table saved as cells.parquet. Bulky texts (graph, traceback, stderr) stay out of it:
# they are on the case pages.
CELL_COLUMNS = [
    # Where the cell ran (devices.of), and the GPU it names where it ran on one.
    *KEY, "device", "gpu",
    "source", "tags", "requires", "expected", "exportdb_claim", "case_file", "dependency_set", "added_packages",
    "status", "runs", "flaky", "statuses", "failed_stage", "missing",
    "error_type", "error_message", "gb_type", "error_case_name", "strict_passed",
    "graph_hash", "fingerprint_version", "node_count", "ops",
    "decompose_status", "decomposed_hash", "decomposed_ops", "decompose_error",
    "check_status", "check_detail", "checked_inputs", "serialize_status", "serialize_error",
    "serialize_in_process_status", "serialize_fresh_status", "artifact", "artifact_error", "exit_code",
    "diagnosis_status", "diagnosis_summary",
    *OUTCOMES, *TIMES,
    # What each stage that writes fields of its own wrote (the opt-in aoti stage's outcome, times and package size):
    # None where the run did not select it.
    *stages.keys_of(stages.KNOWN),
]  # fmt: skip


def cells(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per cell (KEY: release, variant, python, ``--with`` set, case, mode) and device, from store.load's
    records; a record without a device ran on the CPU (:mod:`.devices` keeps the devices apart).

    Keeps CELL_COLUMNS plus TEXT_COLUMNS; see the module docstring for how runs are summarised.
    """
    columns = CELL_COLUMNS + TEXT_COLUMNS
    if raw.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    runs = raw.rename(columns={"torch_version": "release"})
    runs = runs.assign(**{t: pd.to_numeric(runs[t], errors="coerce").astype(float) for t in MEASURES})
    runs["device"] = devices.of(runs)
    # One integer per cell: the text key columns are hashed once, everything after works on ints.
    runs["_cell"] = runs.groupby([*KEY, "device"], sort=False).ngroup()
    runs["_worse"] = runs["status"].map({s: i for i, s in enumerate(WORST_FIRST)})
    counts = runs.groupby(["_cell", "_worse"], sort=False).size().rename("n").reset_index()
    counts = counts.sort_values(["_cell", "n", "_worse"], ascending=[True, False, True], kind="stable")
    chosen = counts.drop_duplicates("_cell", keep="first").set_index("_cell")["_worse"]

    summary: Dict[int, List[str]] = {}
    for cell, worse, n in zip(counts["_cell"], counts["_worse"], counts["n"]):
        summary.setdefault(int(cell), []).append("%s×%d" % (WORST_FIRST[worse], n))
    agreeing = runs[runs["_worse"].to_numpy() == chosen.reindex(runs["_cell"]).to_numpy()]
    medians = agreeing.groupby("_cell", sort=False)[MEASURES].median()
    first = agreeing.sort_values("run", kind="stable").drop_duplicates("_cell", keep="first")
    first = first.drop(columns=MEASURES).join(medians, on="_cell")
    timed = agreeing[["_cell", "export_s"]].dropna().sort_values(["_cell", "export_s"], kind="stable")
    samples = timed.groupby("_cell", sort=False)["export_s"].agg(list).to_dict()
    first["export_s_runs"] = [samples.get(cell, []) for cell in first["_cell"]]
    exported = first["status"].isin(EXPORTED).tolist()
    for stage, _ in STAGES:
        first[stage + "_outcome"] = pd.Series(
            [v if done and isinstance(v, str) else None for v, done in zip(first[stage + "_status"], exported)],
            index=first.index,
            dtype=object,
        )
    first["diagnosis_summary"] = [diagnosis_summary(problems) for problems in first["diagnosis"]]
    first["runs"] = first["_cell"].map(runs["_cell"].value_counts())
    first["statuses"] = [" ".join(summary[int(c)]) for c in first["_cell"]]
    first["flaky"] = [len(summary[int(c)]) > 1 for c in first["_cell"]]
    table = store.sort_cells(first, release="release", extra=["case", "mode", "device"])
    return table[columns]


def diagnosis_summary(problems: object) -> Optional[str]:
    """draft_export's problems in one line, a kind at a time: ``data-dependent-error ×2: cannot decide u0 > 2``."""
    if not isinstance(problems, (list, tuple)) or not problems:
        return None
    kinds: Dict[str, List[Dict[str, Any]]] = {}
    for problem in problems:
        if isinstance(problem, dict):
            kinds.setdefault(str(problem.get("kind")), []).append(problem)
    parts = []
    for kind, found in sorted(kinds.items()):
        count = sum(p["count"] if isinstance(p.get("count"), int) else 1 for p in found)
        first = found[0]
        where = " at %s" % first["frame"] if first.get("frame") else ""
        parts.append("%s ×%d: %s%s" % (kind, count, first.get("message"), where))
    return "; ".join(parts) or None


def parquet_frame(table: pd.DataFrame) -> pd.DataFrame:
    """The cell table as saved: without the bulky texts, every identity column as text."""
    frame = table.drop(columns=[c for c in TEXT_COLUMNS if c in table.columns])
    return storable(frame)


def storable(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy Parquet accepts: list columns as lists of text, columns of mixed values as text."""
    frame = frame.copy()
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object:
            continue
        kinds = {type(v) for v in values if v is not None and not (isinstance(v, float) and v != v)}
        if kinds <= {list, tuple}:
            lists = [v for v in values if isinstance(v, (list, tuple))]
            # Lists of numbers (per-run times) stay numbers; any other list becomes a list of text.
            convert = float if all(_number(x) for v in lists for x in v) and any(lists) else str
            frame[column] = [None if not isinstance(v, (list, tuple)) else [convert(x) for x in v] for v in values]
        elif kinds and not kinds <= {str} and not kinds <= {int, float, bool}:
            # Mixed values (e.g. a number in a text field) would make Parquet refuse the column.
            frame[column] = [_as_text(v) for v in values]
    return frame


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_text(value: object) -> Optional[str]:
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def applicable(status: object) -> bool:
    return rank(status) is not None


def pivot(table: pd.DataFrame) -> pd.DataFrame:
    """Status per case (rows) and environment and mode (columns, in release order)."""
    if table.empty:
        return pd.DataFrame()
    labelled = table.assign(column=environment_labels(table) + "/" + table["mode"])
    order = list(dict.fromkeys(store.sort_cells(labelled, release="release", extra=["mode"])["column"]))
    grid = labelled.pivot(index="case", columns="column", values="status")
    return grid.reindex(columns=order).sort_index()


def environment_labels(table: pd.DataFrame) -> pd.Series:
    """A short name per row's environment: the release, plus variant and Python only where they vary,
    plus the ``--with`` set in brackets wherever a cell ran with one (``2.9.1 [transformers==4.57.1]``).

    A case's own PEP 723 dependencies are the same on every release and are not part of the name.
    """
    label = table["release"].astype(str)
    if table["variant"].nunique() > 1:
        label = label + " " + table["variant"].astype(str)
    if table.groupby(["release", "variant"])["python"].nunique().max() > 1:
        label = label + " py" + table["python"].astype(str)
    if "with_set" in table.columns:
        requested = table["with_set"].map(lambda v: " [%s]" % v if isinstance(v, str) and v else "")
        label = label + requested
    if completeness.COLUMN in table.columns:
        # A build some of whose dependency sets could not be had says so wherever it is named.
        flags = table[completeness.COLUMN].fillna(False).astype(bool)
        marks = flags.map({True: " " + completeness.MARK, False: ""})
        label = label + marks
    return label


def mode_disagreements(table: pd.DataFrame) -> pd.DataFrame:
    """Cells where strict and non-strict export disagree within one environment (both applicable)."""
    env = ["release", "variant", "python", "with_set", "case"]
    columns = [*env, "strict", "non-strict", "strict_error", "non-strict_error"]
    usable = table[table["status"].isin(APPLICABLE)]
    if usable.empty:
        return pd.DataFrame(columns=columns)
    error = _error_line(usable)
    sides = []
    for mode in MODES:
        part = usable[usable["mode"] == mode]
        sides.append(
            pd.DataFrame({**{k: part[k] for k in env}, mode: part["status"], mode + "_error": error[part.index]})
        )
    both = sides[0].merge(sides[1], on=env, how="inner")
    both = both[both["strict"] != both["non-strict"]]
    return store.sort_cells(both, release="release", extra=["case"])[columns]


MODE_COUNT_COLUMNS = [
    "release", "variant", "python", "with_set", "both_modes", "disagree", "strict_only", "non_strict_only", "other",
]  # fmt: skip


def mode_counts(table: pd.DataFrame, disagreements: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """Per environment, the cases run in both modes (both applicable) and how their modes compare.

    ``disagree`` counts the cases whose modes end differently: ``strict_only`` where only strict
    passes, ``non_strict_only`` where only non-strict passes, ``other`` where neither does.
    ``disagreements`` is :func:`mode_disagreements` of ``table``, where it is at hand.
    Environments without a case in both modes are left out; rows in report order.
    """
    env = ["release", "variant", "python", "with_set"]
    usable = table[table["status"].isin(APPLICABLE)]
    both = usable.groupby([*env, "case"]).size()
    both = both[both == len(MODES)].reset_index()
    if both.empty:
        return pd.DataFrame(columns=MODE_COUNT_COLUMNS)
    found = mode_disagreements(table) if disagreements is None else disagreements
    cases = both.groupby(env).size()
    envs = store.sort_cells(both[env].drop_duplicates(), release="release")
    rows = []
    for key in envs.itertuples(index=False, name=None):
        mine = found[(found[env] == pd.Series(key, index=env)).all(axis=1)]
        strict_only = int(((mine["strict"] == "pass") & (mine["non-strict"] != "pass")).sum())
        loose_only = int(((mine["non-strict"] == "pass") & (mine["strict"] != "pass")).sum())
        other = len(mine) - strict_only - loose_only
        rows.append([*key, int(cases[key]), len(mine), strict_only, loose_only, other])
    return pd.DataFrame(rows, columns=MODE_COUNT_COLUMNS)


def stage_failures(table: pd.DataFrame) -> pd.DataFrame:
    """Passing cells whose exported program fails a later stage: one row per cell and failing stage.

    Such a pass is not a clean one: the program exports and reproduces eager, but e.g.
    cannot be saved and loaded back, or decomposed to core ATen.
    """
    columns = [*KEY, "stage", "error"]
    parts = []
    for stage, _ in STAGES:
        failed = table[(table["status"] == "pass") & (table[stage + "_outcome"] == STAGE_ERROR)]
        parts.append(failed.assign(stage=stage, error=failed[stage + "_error"])[columns])
    found = pd.concat(parts, ignore_index=True) if any(len(p) for p in parts) else pd.DataFrame(columns=columns)
    return store.sort_cells(found, release="release", extra=["case", "mode", "stage"])


def signatures(table: pd.DataFrame) -> pd.DataFrame:
    """Failures grouped by signature, the error class and the first line of its message; most cells first.

    Counts the cells that failed (mismatch, fail, crash, timeout), with their cases, statuses,
    modes and releases (in version order). A crash or timeout without an error has an empty
    signature and is told apart by its status.
    """
    columns = ["error_type", "first_line", "cells", "cases", "statuses", "modes", "releases"]
    failing = table[table["status"].isin(FAILING)]
    if failing.empty:
        return pd.DataFrame(columns=columns)
    kind = failing["error_type"].map(lambda v: v if isinstance(v, str) else "")
    line = failing["error_message"].map(lambda message: first_line(message, limit=None))
    keyed = failing.assign(_type=kind, _line=line)
    rows = []
    for (error_type, message), group in keyed.groupby(["_type", "_line"], sort=False):
        rows.append(
            {
                "error_type": error_type,
                "first_line": message,
                "cells": len(group),
                "cases": group["case"].nunique(),
                "statuses": sorted(set(group["status"]), key=FAILING.index),
                "modes": [m for m in MODES if m in set(group["mode"])],
                "releases": store.ordered(group["release"]),
            }
        )
    found = pd.DataFrame(rows, columns=columns)
    found = found.sort_values(["cells", "error_type", "first_line"], ascending=[False, True, True], kind="stable")
    return found.reset_index(drop=True)


def _error_line(table: pd.DataFrame) -> pd.Series:
    kind = table["error_type"].map(lambda v: v if isinstance(v, str) else "")
    message = table["error_message"].map(lambda v: v if isinstance(v, str) else "")
    return (kind + ": " + message).str.strip(": ")


def claim_holds(expected: str, mode: str, status: str) -> Optional[bool]:
    """Whether an observed status agrees with a case's documented claim; None when it says nothing.

    A claim covers every mode unless it names one: ``supported`` means passes in both,
    ``not-supported-yet`` and ``fails`` mean does not pass in either, ``strict-only`` means
    passes in strict mode and not in non-strict (and the reverse for ``non-strict-only``).
    """
    if not applicable(status):
        return None
    passed = status == "pass"
    if expected == "supported":
        return passed
    if expected in ("not-supported-yet", "fails"):
        return not passed
    if expected == "strict-only":
        return passed == (mode == "strict")
    if expected == "non-strict-only":
        return passed == (mode == "non-strict")
    return None


# Who made the claim a cell is judged against (``claimed_by``): the release's own ExportDB, the case file's
# ``expected`` standing in for an ExportDB case whose release names no claim of its own, or the case file.
BY_RELEASE = "release"
BY_CASE_FOR_RELEASE = "case-for-release"
BY_CASE = "case"


def documented_claims(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell of ``table`` (same index): the claim it is judged against (``claim``) and who made it (``claimed_by``).

    A case that stands for an ExportDB example (its file lies in an ``exportdb`` folder, or it is one of
    the examples bundled with torch) is judged against the support level of that release's own ExportDB
    (``exportdb_claim``), as ExportDB's documented levels change between releases; where the release's
    record names none (no example of that name, or a record from before the field), the case's
    ``expected`` stands in. Any other case: its ``expected``. None where nothing is claimed.
    """
    own = table["exportdb_claim"] if "exportdb_claim" in table.columns else pd.Series(None, index=table.index)
    claim: List[Optional[str]] = []
    by: List[Optional[str]] = []
    cases = zip(table["case"], table["case_file"], table["source"])
    for release_claim, expected, (case, case_file, source) in zip(own, table["expected"], cases):
        if isinstance(release_claim, str):
            claim.append(release_claim)
            by.append(BY_RELEASE)
        elif isinstance(expected, str):
            claim.append(expected)
            stands_for_example = exportdb_example(str(case), case_file, source) is not None
            by.append(BY_CASE_FOR_RELEASE if stands_for_example else BY_CASE)
        else:
            claim.append(None)
            by.append(None)
    return pd.DataFrame({"claim": claim, "claimed_by": by}, index=table.index, dtype=object)


def claims(table: pd.DataFrame) -> pd.DataFrame:
    """Cells whose observed status contradicts their documented claim (see :func:`documented_claims`)."""
    columns = [*KEY, "expected", "claim", "claimed_by", "status", "error"]
    judged = table.join(documented_claims(table))
    claimed = judged[judged["claim"].map(lambda v: isinstance(v, str))]
    if claimed.empty:
        return pd.DataFrame(columns=columns)
    holds = [claim_holds(c, m, s) for c, m, s in zip(claimed["claim"], claimed["mode"], claimed["status"])]
    wrong = claimed[[h is False for h in holds]]
    return wrong.assign(error=_error_line(wrong))[columns].reset_index(drop=True)


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Counts per status and pass rate per environment and mode; pass rate = pass / applicable cells."""
    env = ["release", "variant", "python", "with_set", "mode"]
    if completeness.COLUMN in table.columns:
        env.insert(4, completeness.COLUMN)  # one value per build: kept for the environment's label
    if table.empty:
        return pd.DataFrame(columns=[*env, *STATUSES, "cells", "pass_rate"])
    counts = table.groupby(env)["status"].value_counts().unstack(fill_value=0)
    counts = counts.reindex(columns=list(STATUSES), fill_value=0).reset_index()
    counts.columns.name = None
    counts["cells"] = counts[list(STATUSES)].sum(axis=1)
    judged = counts[list(APPLICABLE)].sum(axis=1)
    counts["pass_rate"] = (counts["pass"] / judged.where(judged > 0)).astype(float)
    return store.sort_cells(counts, release="release", extra=["mode"])


def flaky(table: pd.DataFrame) -> pd.DataFrame:
    """Cells whose runs did not all end with the same status."""
    return table[table["flaky"].fillna(False).astype(bool)][[*KEY, "status", "statuses"]].reset_index(drop=True)
