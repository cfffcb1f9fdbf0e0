"""The report model's pure parts (matrix.records.model) on small hand-written tables."""

from __future__ import annotations

import math

import pandas as pd

from matrix.contract.schema import STATUSES
from matrix.records import model, tables


def summary_of(rows):
    """A summary table (tables.summary's columns) from (release, with_set, mode, {status: count})."""
    records = []
    for release, with_set, mode, counts in rows:
        record = {"release": release, "variant": "cpu", "python": "3.11", "with_set": with_set, "mode": mode}
        record.update({s: counts.get(s, 0) for s in STATUSES})
        record["cells"] = sum(counts.values())
        judged = sum(counts.get(s, 0) for s in ("pass", "mismatch", "fail", "crash", "timeout"))
        record["pass_rate"] = counts.get("pass", 0) / judged if judged else float("nan")
        records.append(record)
    return pd.DataFrame(records)


def test_a_pass_rate_counts_only_applicable_cells_and_keeps_the_summary_order():
    found = model.pass_rates(
        summary_of(
            [
                ("2.5.1", "", "strict", {"pass": 1, "fail": 1, "not-applicable": 3}),
                ("2.6.0", "", "strict", {"pass": 2}),
                ("2.6.0", "", "non-strict", {"not-applicable": 1}),
            ]
        )
    )
    assert [(r.label, r.mode, r.cells, r.passed, r.judged) for r in found] == [
        ("2.5.1", "strict", 5, 1, 2),
        ("2.6.0", "strict", 2, 2, 2),
        ("2.6.0", "non-strict", 1, 0, 0),
    ]
    assert found[0].rate == 0.5 and math.isnan(found[2].rate)
    assert found[0].environment == ("2.5.1", "cpu", "3.11", "")


def test_an_empty_summary_has_no_pass_rate_and_no_newest_release():
    assert model.pass_rates(tables.summary(pd.DataFrame())) == ()
    assert model.newest_pass_rate(()) == ("", 0, 0)


def test_the_newest_release_sums_its_modes_and_is_rated_on_torch_alone():
    found = model.pass_rates(
        summary_of(
            [
                ("2.5.1", "", "strict", {"pass": 1}),
                ("2.6.0", "", "strict", {"pass": 1, "fail": 1}),
                ("2.6.0", "", "non-strict", {"mismatch": 1, "case-error": 4}),
                ("2.6.0", "transformers==5.0.0", "strict", {"pass": 3}),
            ]
        )
    )
    assert found[-1].label == "2.6.0 [transformers==5.0.0]"
    assert model.newest_pass_rate(found) == ("2.6.0", 1, 3)
    # With only a --with set on the newest release, that set stands for it.
    assert model.newest_pass_rate(found[-1:]) == ("2.6.0 [transformers==5.0.0]", 3, 3)


def test_environment_keys_give_a_missing_with_set_as_none():
    row = {"release": "2.6.0", "variant": "cpu", "python": "3.11", "with_set": None}
    assert model.environment_key(row) == ("2.6.0", "cpu", "3.11", "")
    assert model.environment_key({**row, "with_set": "x==1"})[3] == "x==1"
