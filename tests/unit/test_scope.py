"""What a matrix covers (matrix.records.scope): releases and builds counted apart, and the cells' product."""

from __future__ import annotations

from typing import Any, Dict, List

import pandas as pd

from matrix.records import scope, transitions

from conftest import cell_table, make_cell


def env_error(release: str, variant: str, dependency_set: Any = None) -> Dict[str, Any]:
    return {"torch_version": release, "variant": variant, "python": "3.11", "dependency_set": dependency_set}


def two_builds_of_one_release() -> List[Dict[str, Any]]:
    """2.13.0 from PyPI and from the cpu index, between 2.12.1 and 2.14.1; one cell of the cpu build is missing."""
    rows = []
    for release, variant in (("2.12.1", "pypi"), ("2.13.0", "pypi"), ("2.13.0+cpu", "cpu"), ("2.14.1", "pypi")):
        for case in ("a", "b"):
            for mode in ("strict", "non-strict"):
                if (release, case, mode) != ("2.13.0+cpu", "b", "non-strict"):
                    rows.append(make_cell(release, case, mode=mode, variant=variant))
    return rows


def test_the_builds_of_one_release_count_once_as_a_release() -> None:
    found = scope.of(cell_table(two_builds_of_one_release()), pd.DataFrame())
    assert found.releases == ("2.12.1", "2.13.0", "2.14.1")
    assert found.builds == (("2.12.1", "pypi"), ("2.13.0", "pypi"), ("2.13.0+cpu", "cpu"), ("2.14.1", "pypi"))
    # 2 cases × 2 modes × 4 builds, one of them without a record.
    assert (found.cases, found.modes, found.environments, found.cells) == (2, 2, 4, 15)
    assert (found.possible, found.unrecorded) == (16, 1) and found.one_environment_per_build


def test_a_build_that_failed_to_install_counts_and_a_failed_dependency_set_adds_nothing() -> None:
    errors = pd.DataFrame([env_error("2.15.0", "pypi"), env_error("2.14.1", "pypi", "torchvision")])
    found = scope.of(cell_table(two_builds_of_one_release()), errors)
    assert found.releases[-1] == "2.15.0" and found.builds[-1] == ("2.15.0", "pypi")
    # Its cells are the ones without a record: 2 cases × 2 modes more.
    assert (len(found.builds), found.environments, found.possible, found.unrecorded) == (5, 5, 20, 5)


def test_pythons_and_with_sets_are_environments_of_one_build() -> None:
    rows = [make_cell("2.6.0", "a", python=python) for python in ("3.10", "3.11")]
    rows.append(make_cell("2.6.0", "a", with_set="transformers==5.0.0"))
    found = scope.of(cell_table(rows), pd.DataFrame())
    assert (found.releases, len(found.builds), found.environments) == (("2.6.0",), 1, 3)
    assert not found.one_environment_per_build and (found.possible, found.unrecorded) == (3, 0)


def test_no_records_cover_nothing() -> None:
    assert scope.of(cell_table([]), pd.DataFrame()) == scope.NONE
    assert transitions.base("2.13.0+cpu") == "2.13.0" and transitions.base("2.10.0.dev20251001") == "2.10.0.dev20251001"
