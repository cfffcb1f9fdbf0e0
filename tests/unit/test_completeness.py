"""Incomplete builds: a build with cells that lacks a dependency set, found from env-errors and environments."""

from __future__ import annotations

from typing import Any, Dict, List

import pandas as pd

from matrix.records import completeness, tables


def cells(*builds: tuple) -> pd.DataFrame:
    rows = [
        {"release": release, "variant": variant, "python": "3.11", "with_set": "", "case": "c", "mode": "strict"}
        for release, variant in builds
    ]
    return pd.DataFrame(rows)


def env_error(release: str, variant: str, dependency_set: str, finished: str = "2026-01-01T10:00:00") -> Dict[str, Any]:
    return {
        "torch_version": release, "variant": variant, "python": "3.11", "dependency_set": dependency_set,
        "error_type": "matrix.envs.install.InstallError", "finished_at": finished,
        "error_message": "uv pip install torch torchvision==0.28.0+cpu failed: error: No solution found",
    }  # fmt: skip


def environment(release: str, variant: str, dependency_set: str, started: str) -> Dict[str, Any]:
    return {
        "torch_version": release, "variant": variant, "python": "3.11", "dependency_set": dependency_set,
        "started_at": started,
    }  # fmt: skip


def find(table: pd.DataFrame, errors: List[Dict[str, Any]], envs: List[Dict[str, Any]] = ()) -> List[tuple]:  # type: ignore[assignment]
    found = completeness.find(table, pd.DataFrame(errors), pd.DataFrame(list(envs)))
    return [(b.release, b.variant, b.sets) for b in found]


def test_a_build_with_cells_and_a_set_that_failed_to_install_is_incomplete():
    table = cells(("2.13.0+cpu", "cpu"), ("2.13.0", "pypi"))
    assert find(table, [env_error("2.13.0+cpu", "cpu", "torchvision")]) == [("2.13.0+cpu", "cpu", ("torchvision",))]


def test_a_build_whose_torch_failed_to_install_is_not_incomplete_but_absent():
    table = cells(("2.13.0", "pypi"))
    # torch alone failed (no dependency set), or the build has no cell: nothing is marked incomplete.
    assert find(table, [env_error("2.13.0", "pypi", ""), env_error("2.14.0", "pypi", "timm")]) == []


def test_a_set_that_installed_on_a_later_try_is_not_missing():
    table = cells(("2.13.0+cpu", "cpu"))
    errors = [env_error("2.13.0+cpu", "cpu", "timm", finished="2026-01-01T10:00:00")]
    later = [environment("2.13.0+cpu", "cpu", "timm", "2026-01-02T08:00:00")]
    earlier = [environment("2.13.0+cpu", "cpu", "timm", "2025-12-31T08:00:00")]
    assert find(table, errors, later) == []
    assert find(table, errors, earlier) == [("2.13.0+cpu", "cpu", ("timm",))]


def test_marked_cells_name_their_build_incomplete_in_every_label_and_are_left_out_of_complete():
    table = cells(("2.12.0", "pypi"), ("2.13.0+cpu", "cpu"))
    lacking = completeness.find(table, pd.DataFrame([env_error("2.13.0+cpu", "cpu", "torchvision")]), pd.DataFrame())
    marked = completeness.mark(table, lacking)
    assert list(marked[completeness.COLUMN]) == [False, True]
    assert list(tables.environment_labels(marked)) == ["2.12.0 pypi", "2.13.0+cpu cpu (incomplete)"]
    assert list(completeness.complete(marked)["release"]) == ["2.12.0"]
    summary = tables.summary(marked.assign(status="pass"))
    assert list(tables.environment_labels(summary)) == ["2.12.0 pypi", "2.13.0+cpu cpu (incomplete)"]


def set_cells() -> pd.DataFrame:
    rows = [
        {"release": release, "variant": variant, "python": "3.11", "dependency_set": dependency_set, "with_set": "",
         "case": case, "mode": "strict", "status": status}
        for release, variant, dependency_set, case, status in [
            ("2.13.0+cpu", "cpu", "", "add", "pass"),
            ("2.13.0+cpu", "cpu", "timm", "timm_vit", "case-error"),
            ("2.13.0+cpu", "cpu", "transformers", "hf_bert", "pass"),
            ("2.13.0", "pypi", "timm", "timm_vit", "pass"),
        ]
    ]  # fmt: skip
    return pd.DataFrame(rows)


def superseded(errors: List[Dict[str, Any]], envs: List[Dict[str, Any]]) -> List[tuple]:
    table = set_cells()
    found = completeness.find(table, pd.DataFrame(errors), pd.DataFrame(envs))
    kept = completeness.superseded(table, found)
    return sorted(zip(kept["release"], kept["case"]))


def test_the_cells_of_a_set_whose_latest_install_failed_give_way_to_its_env_error():
    # The timm set ran on the 1st (another resolution), and failed to install on the 2nd: its cells are not
    # what installing the set gives now. The build's other sets, and the same set of another build, stay.
    ran = [environment("2.13.0+cpu", "cpu", "timm", "2026-01-01T08:00:00")]
    failed = [env_error("2.13.0+cpu", "cpu", "timm", finished="2026-01-02T08:00:00")]
    assert superseded(failed, ran) == [("2.13.0", "timm_vit"), ("2.13.0+cpu", "add"), ("2.13.0+cpu", "hf_bert")]
    # Installed again after the failure: its cells are the latest word and stay.
    again = ran + [environment("2.13.0+cpu", "cpu", "timm", "2026-01-03T08:00:00")]
    assert len(superseded(failed, again)) == 4
    # An env-error of another set takes nothing from the timm set.
    assert len(superseded([env_error("2.13.0+cpu", "cpu", "torchvision")], ran)) == 4


def test_an_env_error_that_names_no_python_stands_for_every_python_of_its_set():
    failed = [dict(env_error("2.13.0+cpu", "cpu", "timm", finished="2026-01-02T08:00:00"), python="")]
    assert ("2.13.0+cpu", "timm_vit") not in superseded(failed, [])


def test_the_loads_of_a_set_whose_latest_install_failed_give_way_too():
    loads = pd.DataFrame(
        [
            {"torch_version": "2.13.0+cpu", "variant": "cpu", "python": "3.11", "dependency_set": s, "case": c}
            for s, c in (("timm", "timm_vit"), ("", "add"))
        ]
    )
    failed = completeness.find(
        set_cells(),
        pd.DataFrame([env_error("2.13.0+cpu", "cpu", "timm", finished="2026-01-02T08:00:00")]),
        pd.DataFrame([environment("2.13.0+cpu", "cpu", "timm", "2026-01-01T08:00:00")]),
    )
    assert completeness.superseded(loads, failed, release="torch_version")["case"].tolist() == ["add"]
