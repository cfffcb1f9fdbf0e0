"""Companion libraries: the bounds a torch series puts on a library a case names without a version."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import pytest

from matrix.envs import companions, environments, releases

MATRIX = releases.default_matrix()
TABLE = {
    "transformers": companions.Companion("transformers", {"2.5": "<5.19", "2.1": companions.NONE}),
    "torchvision": companions.Companion("torchvision", compiled=True, offset=15),
}


def test_a_bare_name_gets_its_series_bound_and_newer_series_take_the_newest() -> None:
    assert companions.constraints(MATRIX.resolve("2.5.1"), ["transformers"], TABLE) == ("transformers<5.19",)
    assert companions.constraints(MATRIX.resolve("2.9.1"), ["transformers"], TABLE) == ()
    assert companions.constraints(MATRIX.resolve("2.5.1"), ["einops"], TABLE) == ()


def test_a_version_given_anywhere_in_the_set_is_used_as_written() -> None:
    # The case's bare name and a --with pin of the same library: the pin decides, even one the bound would refuse.
    assert companions.constraints(MATRIX.resolve("2.5.1"), ["transformers", "transformers==5.23.0"], TABLE) == ()
    assert companions.constraints(MATRIX.resolve("2.5.1"), ["Transformers >= 4.56"], TABLE) == ()


def test_a_series_no_version_works_on_is_refused_before_installing() -> None:
    found = companions.constraints(MATRIX.resolve("2.1.2"), ["transformers"], TABLE)
    assert companions.unavailable(found) == ["transformers"]


def test_a_compiled_library_comes_in_the_build_of_a_variant_with_its_own_index() -> None:
    assert companions.constraints(MATRIX.resolve("2.13.0+cpu"), ["torchvision"], TABLE) == ("torchvision==0.28.0+cpu",)
    assert companions.constraints(MATRIX.resolve("2.5.1"), ["torchvision"], TABLE) == ()  # PyPI's build pairs itself


def test_the_published_table_reads_and_reaches_the_environments_requirements() -> None:
    table = companions.load()
    assert table["transformers"].series["2.5"] == "<5.19" and table["torchvision"].compiled
    spec = environments.Spec(MATRIX.resolve("2.5.1"), "3.11", "transformers")
    assert spec.requirements[-2:] == ["transformers", "transformers<5.19"]


def test_a_malformed_table_names_the_library(tmp_path: Path) -> None:
    bad = tmp_path / "companions.toml"
    bad.write_text('[timm]\nseries = { "2.5" = 4 }\n')
    with pytest.raises(companions.CompanionError, match=r"\[timm\] series"):
        companions.load(bad)


@pytest.mark.parametrize("boundary", [None, 0, 3, 11, 19])
def test_the_search_finds_the_newest_version_that_works_in_few_tries(boundary: Optional[int]) -> None:
    versions = ["1.%d" % i for i in range(20)]
    tried: List[str] = []

    def works(version: str) -> bool:
        tried.append(version)
        return boundary is not None and int(version.split(".")[1]) <= boundary

    found = companions.newest_working(versions, works, limit=12)
    assert found == (None if boundary is None else versions[boundary])
    assert len(tried) == len(set(tried)) <= 12  # each version installed once at most
    assert len(tried) <= 2 * 5 + 1  # doubling back, then bisecting: about twice log2(20) tries


def test_the_search_stops_at_its_limit_with_the_best_it_saw() -> None:
    versions = ["1.%d" % i for i in range(20)]
    assert companions.newest_working(versions, lambda v: v == "1.0", limit=3) is None  # 1.19, 1.18, 1.16
    assert companions.newest_working(versions, lambda v: True, limit=1) == "1.19"
    assert companions.newest_working([], lambda v: True, limit=5) is None


def test_a_set_on_a_variant_with_its_own_index_is_constrained_to_its_compiled_builds() -> None:
    # timm pulls torchvision in without naming it: the set may only have the build made for this torch.
    assert companions.compiled_builds(MATRIX.resolve("2.13.0+cpu"), TABLE) == ("torchvision==0.28.0+cpu",)
    assert companions.compiled_builds(MATRIX.resolve("2.5.1"), TABLE) == ()  # PyPI's builds pair themselves
    timm = environments.Spec(MATRIX.resolve("2.13.0+cpu"), "3.11", "timm")
    assert timm.constraints == ["torchvision==0.28.0+cpu"] and "torchvision" not in " ".join(timm.requirements)
    assert environments.Spec(MATRIX.resolve("2.13.0+cpu"), "3.11").constraints == []  # the base stays torch alone
    assert environments.Spec(MATRIX.resolve("2.6.0"), "3.11", "timm").constraints == []
