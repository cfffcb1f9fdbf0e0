"""The candidate verdict: a nightly or a release candidate against the newest release."""

from __future__ import annotations

from typing import Any, Dict

import pandas as pd

from matrix.records import candidate, channel


def cell(release: str, variant: str, status: str = "pass", case: str = "c", mode: str = "strict", **extra: Any):
    row: Dict[str, Any] = {
        "release": release, "variant": variant, "python": "3.11", "with_set": "", "case": case, "mode": mode,
        "status": status, "error_type": None, "error_message": None, "graph_hash": "aaaa", "fingerprint_version": 1,
        "ops": ["aten.add.Tensor"], "decomposed_ops": ["aten.add.Tensor"],
    }  # fmt: skip
    row.update(extra)
    return row


def test_candidates_are_told_by_their_channel_or_their_version():
    assert channel.is_candidate("2.16.0.dev20260115+cpu", "cpu")
    assert channel.is_candidate("2.16.0rc1", "pypi")
    assert channel.is_candidate("2.7.1", "test-cu128")  # a candidate carries the final version number
    assert not channel.is_candidate("2.7.1", "pypi") and not channel.is_candidate("2.13.0+cpu", "cpu")
    assert (channel.family("nightly-cpu"), channel.family("rc"), channel.family("cpu")) == ("cpu", "pypi", "cpu")


def test_a_nightly_is_judged_against_the_newest_release_of_its_family():
    table = pd.DataFrame(
        [
            cell("2.14.1+cpu", "cpu"),
            cell("2.15.0+cpu", "cpu"),
            cell("2.15.0+cpu", "cpu", case="d"),
            cell("2.15.0+cpu", "cpu", "fail", case="e"),
            cell("2.15.0", "pypi", "fail"),  # another family: not the nightly's reference
            cell("2.16.0.dev20260115+cpu", "nightly-cpu", "fail", error_message="boom"),
            cell("2.16.0.dev20260115+cpu", "nightly-cpu", case="d", graph_hash="bbbb"),
            cell("2.16.0.dev20260115+cpu", "nightly-cpu", case="e"),
        ]
    )
    (found,) = candidate.judge(table)
    assert (found.candidate, found.reference, found.reference_variant, found.compared) == (
        "2.16.0.dev20260115+cpu", "2.15.0+cpu", "cpu", 3,
    )  # fmt: skip
    assert [(m["case"], m["kind"], m["error_message"]) for m in found.broken] == [("c", "regression", "boom")]
    assert [m["case"] for m in found.fixed] == ["e"] and [m["kind"] for m in found.changed] == ["graph-change"]
    assert found.regresses
    why = candidate.should_fail("regression", 2, (found,))
    assert (
        why
        == "2.16.0.dev20260115+cpu regresses against 2.15.0+cpu: 1 cell(s) broken, 0 saved program(s) no longer load"
    )
    assert candidate.should_fail("failing", 2, (found,)) == "2 failing cell(s)"
    assert candidate.should_fail("never", 2, (found,)) is None


def test_a_table_of_releases_has_no_candidate_and_never_fails_on_regression():
    table = pd.DataFrame([cell("2.14.1", "pypi"), cell("2.15.0", "pypi", "fail")])
    assert candidate.judge(table) == ()
    assert candidate.should_fail("regression", candidate.failing(table), ()) is None
    assert candidate.should_fail("failing", candidate.failing(table), ()) == "1 failing cell(s)"


def test_saved_programs_that_load_on_the_release_and_not_on_the_candidate_are_a_regression():
    table = pd.DataFrame([cell("2.15.0", "pypi"), cell("2.16.0", "rc")])
    program = {"saved_torch_version": "2.10.0", "saved_variant": "pypi", "saved_python": "3.11", "case": "c",
               "mode": "strict", "with_set": "", "error_message": None}  # fmt: skip
    loads = pd.DataFrame(
        [
            dict(program, torch_version="2.15.0", variant="pypi", status="pass"),
            dict(program, torch_version="2.16.0", variant="rc", status="load-error", error_message="bad"),
            dict(program, case="d", torch_version="2.15.0", variant="pypi", status="pass"),
            dict(program, case="d", torch_version="2.16.0", variant="rc", status="untrusted"),  # not tried
        ]
    )
    (found,) = candidate.judge(table, loads)
    assert not found.broken and [r["case"] for r in found.unloadable] == ["c"] and found.regresses
