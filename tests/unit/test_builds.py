"""Builds of one release compared: another variant's build against PyPI's build of that release."""

from __future__ import annotations

from typing import Any, Dict

import pandas as pd

from matrix.records import builds


def cell(release: str, variant: str, status: str = "pass", case: str = "c", **extra: Any) -> Dict[str, Any]:
    row: Dict[str, Any] = {
        "release": release, "variant": variant, "python": "3.11", "with_set": "", "case": case, "mode": "strict",
        "status": status, "error_type": None, "error_message": None, "graph_hash": "aaaa", "fingerprint_version": 1,
        "ops": ["aten.add.Tensor"], "decomposed_ops": ["aten.add.Tensor"],
    }  # fmt: skip
    row.update(extra)
    return row


def test_a_cpu_build_is_compared_with_pypis_build_of_its_release_only():
    table = pd.DataFrame(
        [
            cell("2.12.1+cu130", "pypi"),
            cell("2.13.0+cu130", "pypi"),
            cell("2.13.0+cpu", "cpu", "fail", error_message="boom"),
            cell("2.13.0+cu130", "pypi", case="d"),
            cell("2.13.0+cpu", "cpu", case="d", graph_hash="bbbb", ops=["aten.mul.Tensor"]),
            cell("2.13.0+cu130", "pypi", case="e"),
            cell("2.13.0+cpu", "cpu", "case-error", case="e", error_message="operator torchvision::nms does not exist"),
            cell("2.14.1+cpu", "cpu"),  # no PyPI build of 2.14.1: nothing to compare with
        ]
    )
    (found,) = builds.compare(table)
    assert (found.release, found.reference, found.build, found.variant, found.compared) == (
        "2.13.0", "2.13.0+cu130", "2.13.0+cpu", "cpu", 3,
    )  # fmt: skip
    kinds = sorted((d["case"], d["kind"], d.get("stage") or "") for d in found.differences)
    assert kinds == [
        ("c", "regression", ""),
        ("d", "graph-change", ""),
        ("d", "op-drift", "exported"),
    ]
    assert (found.worse, found.better) == (1, 0)
    # A status without a rank on one side is not a difference, but it is counted as not comparable.
    assert [row["case"] for row in found.unranked] == ["e"]


def test_builds_of_one_variant_only_are_not_compared():
    table = pd.DataFrame([cell("2.12.1+cu130", "pypi"), cell("2.13.0+cu130", "pypi"), cell("2.13.0+cpu", "cpu")])
    assert [c.build for c in builds.compare(table)] == ["2.13.0+cpu"]
    assert builds.compare(table[table["variant"] == "pypi"]) == ()
