"""Saved-program epochs from hand-written load records: ranges, exceptions, what breaks them, overlaps."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

import pandas as pd

from matrix.contract import schema
from matrix.records import artifacts as loads_table
from matrix.records import epochs
from matrix.records.artifacts import Failure

from conftest import make_load as load

SCHEMA_ERROR = {"error_type": "RuntimeError", "error_message": "Serialized version (5, 1) does not match (7, 3).\nmore"}


def table(rows: List[Dict[str, Any]]) -> pd.DataFrame:
    return loads_table.table(pd.DataFrame({k: [r.get(k) for r in rows] for k in schema.LOAD_KEYS}, dtype=object))


def grid(
    releases: Sequence[str], works: Any, cases: Sequence[str] = ("add", "cond"), **failure: Any
) -> List[Dict[str, Any]]:
    """Every case saved on each release and loaded on each; ``works(saved, loaded)`` says whether it passes."""
    rows = []
    for saved in releases:
        for loaded in releases:
            for case in cases:
                ok = works(saved, loaded)
                rows.append(load(saved, loaded, case, "pass" if ok else "load-error", **({} if ok else failure)))
    return rows


def spans(found: Sequence[epochs.Epoch]) -> List[tuple]:
    return [e.releases for e in found]


def test_a_schema_change_starts_an_epoch_and_names_its_cause() -> None:
    # 2.3 cannot read 2.1's programs; from 2.5 on every release reads its own and the older ones'.
    era = {"2.1.0": 0, "2.3.0": 1, "2.5.0": 1, "2.8.0": 1}
    rows = grid(list(era), lambda s, t: era[s] == era[t], **SCHEMA_ERROR)
    found = epochs.epochs(table(rows))
    assert spans(found) == [("2.1.0",), ("2.3.0", "2.5.0", "2.8.0")]
    first, second = found
    assert (first.programs, first.tried, first.passed, first.cut) == (2, 2, 2, None)
    assert second.cut_from == "2.1.0"
    assert second.cut == Failure("load-error", "RuntimeError", "Serialized version (5, 1) does not match (7, 3).")
    # 3 releases × 2 cases saved; 6 pairs saved ≤ loaded × 2 cases tried; older releases read newer programs too.
    assert (second.programs, second.tried, second.passed, second.backward) == (6, 12, 12, "all")
    assert second.exceptions == ()
    # 2.1's two programs were tried on 2.8, the range's newest release: none loads.
    assert (second.older_tried, second.older_passed) == (2, 0)


def test_a_case_failing_inside_an_epoch_is_an_exception_not_a_break() -> None:
    releases = ["2.5.0", "2.6.0", "2.7.0"]
    rows = grid(releases, lambda s, t: s <= t, cases=("add", "cond", "scan"))
    # "scan" saved on 2.5.0 fails to run on both newer releases, the others load: the pairs still hold.
    rows = [r for r in rows if not (r["case"] == "scan" and r["saved_torch_version"] == "2.5.0")]
    rows += [load("2.5.0", "2.5.0", "scan")]
    rows += [
        load("2.5.0", loaded, "scan", "run-error", error_type="TypeError", error_message="bad")
        for loaded in ("2.6.0", "2.7.0")
    ]
    (only,) = epochs.epochs(table(rows))
    assert only.releases == tuple(releases)
    assert only.backward == "none"  # older releases never read newer programs here
    (exception,) = only.exceptions
    assert (exception.case, exception.mode) == ("scan", "strict")
    assert exception.pairs == (("2.5.0", "2.6.0"), ("2.5.0", "2.7.0"))
    assert exception.failure == Failure("run-error", "TypeError", "bad")
    assert (only.tried, only.passed) == (18, 16)


def test_half_of_a_pairs_programs_is_enough_and_less_breaks_the_epoch() -> None:
    half = [load("2.5.0", "2.5.0", c) for c in "ab"] + [load("2.6.0", "2.6.0", c) for c in "ab"]
    half += [load("2.5.0", "2.6.0", "a"), load("2.5.0", "2.6.0", "b", "mismatch")]
    assert spans(epochs.epochs(table(half))) == [("2.5.0", "2.6.0")]
    less = [r for r in half if r["case"] == "a" or r["torch_version"] == r["saved_torch_version"]]
    less += [load("2.5.0", "2.6.0", "b", "mismatch"), load("2.5.0", "2.6.0", "c", "mismatch")]
    less += [load("2.5.0", "2.5.0", "c")]
    found = epochs.epochs(table(less))
    assert spans(found) == [("2.5.0",), ("2.6.0",)]
    # The cause is the most common failure, even where it is not the worst.
    assert found[1].cut == Failure("mismatch") and found[1].cut_from == "2.5.0"


def test_maximal_ranges_may_overlap() -> None:
    # B reads A's, C reads B's, C does not read A's: A–B and B–C.
    bad = {("2.1.0", "2.3.0")}
    rows = grid(["2.1.0", "2.2.0", "2.3.0"], lambda s, t: s <= t and (s, t) not in bad)
    assert spans(epochs.epochs(table(rows))) == [("2.1.0", "2.2.0"), ("2.2.0", "2.3.0")]


def test_no_load_tried_breaks_a_range_and_a_release_that_saved_nothing_does_not() -> None:
    rows = grid(["2.4.0", "2.5.0"], lambda s, t: s <= t)
    # 2.6.0 only loads, and reads 2.5.0's programs, not 2.4.0's: it joins 2.5.0's range.
    rows += [load("2.5.0", "2.6.0", c) for c in ("add", "cond")]
    rows += [load("2.4.0", "2.6.0", c, "load-error") for c in ("add", "cond")]
    # 2.3.0 has no torch.export.load, and a signature check refused the rest: neither is a load tried.
    rows += [load("2.3.0", "2.3.0", c) for c in ("add", "cond")]
    rows += [load("2.3.0", "2.4.0", c, "not-applicable") for c in ("add", "cond")]
    rows += [load("2.3.0", "2.5.0", c, "untrusted") for c in ("add", "cond")]
    # A program of 2.4.0 that no release would load (unsigned) is no evidence either way.
    rows += [load("2.4.0", loaded, "old", "untrusted") for loaded in ("2.4.0", "2.5.0")]
    found = epochs.epochs(table(rows))
    assert spans(found) == [("2.3.0",), ("2.4.0", "2.5.0"), ("2.5.0", "2.6.0")]
    assert (found[1].programs, found[1].untried, found[1].tried, found[1].passed) == (4, 1, 6, 6)
    assert found[1].cut is None  # 2.4.0 tried none of 2.3.0's: no failure to name
    assert found[2].backward == "untried" and found[2].programs == 2


def test_an_empty_table_has_no_epoch() -> None:
    assert epochs.epochs(table([])) == []


def test_releases_are_in_version_order_whichever_side_names_them() -> None:
    rows = [load("2.10.0", "2.10.0"), load("2.9.1", "2.10.0"), load("2.9.1", "2.9.1"), load("2.10.0", "2.11.0")]
    assert epochs.releases(table(rows)) == ["2.9.1", "2.10.0", "2.11.0"]
    # 2.11.0 never loaded 2.9.1's programs: no evidence that it reads them.
    assert spans(epochs.epochs(table(rows))) == [("2.9.1", "2.10.0"), ("2.10.0", "2.11.0")]
    rows.append(load("2.9.1", "2.11.0"))
    assert spans(epochs.epochs(table(rows))) == [("2.9.1", "2.10.0", "2.11.0")]
