"""The release matrix as data: the packaged facts, lookups, selections and validation."""

from __future__ import annotations

from pathlib import Path
from typing import Tuple

import pytest

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

from matrix.envs import releases
from matrix.envs.releases import ReleaseError, version_key

MATRIX = releases.default_matrix()
with open(releases.DATA, "rb") as _file:
    FILE = tomllib.load(_file)  # the file as written, to check what the matrix makes of it
SERIES = FILE["series"]
NEWEST = MATRIX.releases[-1]
PYPI = MATRIX.variant("pypi")


def minor_numbers(minor: str) -> Tuple[int, int]:
    major, number = minor.split(".")
    return int(major), int(number)


def after_newest(minors: int = 1) -> str:
    """A minor series newer than any the file knows: ``2.16`` while 2.15 is the newest."""
    major, number = minor_numbers(NEWEST.minor)
    return "%d.%d" % (major, number + minors)


# --- the releases ------------------------------------------------------------------------------


def test_the_releases_are_every_patch_of_the_file_oldest_first_each_once() -> None:
    versions = [r.version for r in MATRIX.releases]
    assert versions == [patch for series in SERIES for patch in series["patches"]]
    assert len(set(versions)) == len(versions)
    keys = [r.key for r in MATRIX.releases]
    assert all(older < newer for older, newer in zip(keys, keys[1:]))
    assert all(r.minor == releases.minor_of(r.version) for r in MATRIX.releases)
    assert versions[0] == "2.1.0"  # the matrix starts at the first release with torch.export


def test_every_minor_series_from_the_oldest_to_the_newest_is_there() -> None:
    minors = [series["minor"] for series in SERIES]
    assert minors == list(dict.fromkeys(r.minor for r in MATRIX.releases))  # one block per series, in order
    numbers = [minor_numbers(minor) for minor in minors]
    assert all(b == (a[0], a[1] + 1) for a, b in zip(numbers, numbers[1:])), minors  # no series left out


def test_latest_patches_are_the_newest_patch_of_each_series() -> None:
    latest = MATRIX.latest_patches()
    assert [r.minor for r in latest] == [series["minor"] for series in SERIES]
    assert [r.version for r in latest] == [series["patches"][-1] for series in SERIES]
    for release in latest:
        assert release == max(MATRIX.series(release.minor), key=lambda r: r.key)
    assert latest[-1] == NEWEST
    assert all(r in latest or MATRIX.series(r.minor)[-1].key > r.key for r in MATRIX.releases)


@pytest.mark.parametrize(
    "version, oldest, newest",
    [
        ("2.1.2", "3.8", "3.11"),
        ("2.4.0", "3.8", "3.12"),
        ("2.5.1", "3.9", "3.13"),
        ("2.8.0", "3.9", "3.13"),
        ("2.9.0", "3.10", "3.14"),
        ("2.14.1", "3.10", "3.14"),
        ("2.15.0", "3.11", "3.15"),
    ],
)
def test_python_ranges(version: str, oldest: str, newest: str) -> None:
    pythons = MATRIX.release(version).pythons
    assert (pythons[0], pythons[-1]) == (oldest, newest)


def test_each_release_takes_its_series_pythons_in_order_and_the_range_never_moves_back() -> None:
    for series in SERIES:
        for release in MATRIX.series(series["minor"]):
            assert release.pythons == tuple(series["pythons"])
    for release in MATRIX.releases:
        numbers = [releases.python_key(p) for p in release.pythons]
        assert all(b == (a[0], a[1] + 1) for a, b in zip(numbers, numbers[1:])), release  # consecutive
    oldest = [releases.python_key(r.pythons[0]) for r in MATRIX.releases]
    newest = [releases.python_key(r.pythons[-1]) for r in MATRIX.releases]
    assert oldest == sorted(oldest) and newest == sorted(newest)


def test_old_releases_pin_numpy_1_and_2_1_pins_setuptools() -> None:
    assert MATRIX.release("2.2.2").requirements == ("numpy<2", "setuptools")
    assert MATRIX.release("2.1.0").requirements == ("numpy<2", "setuptools<81")
    assert MATRIX.release("2.3.0").requirements == ("numpy", "setuptools")  # numpy is always installed
    assert MATRIX.release("2.8.0").requirements == ("numpy",)  # 2.8 declares setuptools itself
    for series in SERIES:
        for release in MATRIX.series(series["minor"]):
            assert release.requirements == (series.get("numpy", "numpy"), *series.get("pins", []))
            assert release.requirements[0].startswith("numpy")


# --- the variants -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "variant, builds, not_builds",
    [
        ("cpu", "2.1.0", None),
        ("cu118", "2.7.1", "2.8.0"),
        ("cu121", "2.5.1", "2.6.0"),
        ("cu124", "2.4.0", "2.7.0"),
        ("cu126", "2.6.0", "2.5.1"),
        ("cu128", "2.7.0", "2.12.0"),
        ("cu130", "2.9.0", "2.8.0"),
        ("cu132", "2.12.0", "2.11.0"),
    ],
)
def test_variants_cover_their_documented_range(variant: str, builds: str, not_builds: str) -> None:
    chosen = MATRIX.variant(variant)
    assert chosen.builds(MATRIX.release(builds))
    if not_builds:
        assert not chosen.builds(MATRIX.release(not_builds))


def test_each_variant_builds_the_series_from_its_since_to_its_until() -> None:
    assert sorted(v.name for v in MATRIX.variants) == sorted(FILE["variants"])
    assert MATRIX.variants[0] == PYPI  # the default comes first
    for variant in MATRIX.variants:
        table = FILE["variants"][variant.name]
        low = minor_numbers(table.get("since", "2.1"))
        high = minor_numbers(table["until"]) if "until" in table else None
        in_range = [
            low <= minor_numbers(r.minor) and (high is None or minor_numbers(r.minor) <= high) for r in MATRIX.releases
        ]
        covered = [r for r, inside in zip(MATRIX.releases, in_range) if inside]
        built = [r for r in MATRIX.releases if variant.builds(r)]
        assert built == covered, variant.name
        assert built, "%s builds none of the releases" % variant.name
    # PyPI and the CPU index build every release; the newest has a CUDA build from the PyTorch index too.
    assert all(PYPI.builds(r) and MATRIX.variant("cpu").builds(r) for r in MATRIX.releases)
    assert any(v.family == "cuda" and v.local_tag and v.builds(NEWEST) for v in MATRIX.variants)


def test_variant_index_urls_and_their_override_variables() -> None:
    cpu = MATRIX.variant("cpu")
    mirror = {"EXPORT_MATRIX_INDEX_URL_CPU": "https://mirror/cpu"}
    assert cpu.index({}) == "https://download.pytorch.org/whl/cpu" and not cpu.overridden({})
    assert cpu.index(mirror) == "https://mirror/cpu" and cpu.overridden(mirror)
    assert MATRIX.variant("pypi").index({}) == "https://pypi.org/simple"
    assert MATRIX.variant("pypi").env == "EXPORT_MATRIX_PYPI_INDEX_URL"
    assert {v.env for v in MATRIX.variants} == {"EXPORT_MATRIX_PYPI_INDEX_URL"} | {
        "EXPORT_MATRIX_INDEX_URL_" + v.name.upper() for v in MATRIX.variants if v.local_tag
    }
    assert [v.family for v in (MATRIX.variant("pypi"), cpu, MATRIX.variant("cu126"))] == ["pypi", "cpu", "cuda"]


# --- resolving and selecting ------------------------------------------------------------------


def test_resolve_minor_version_tag_and_latest() -> None:
    for minor in {r.minor for r in MATRIX.releases}:
        assert MATRIX.resolve(minor).release == MATRIX.series(minor)[-1]  # a minor: its latest patch
    for release in MATRIX.releases:
        build = MATRIX.resolve(release.version)
        assert (build.release, build.variant, build.torch_version) == (release, PYPI, release.version)
        cpu = MATRIX.resolve(release.version + "+cpu")
        assert (cpu.release, cpu.variant.name, cpu.torch_version) == (release, "cpu", release.version + "+cpu")
    assert MATRIX.resolve("2.5", variant="cu124").torch_version == "2.5.1+cu124"
    assert MATRIX.resolve("latest").release == NEWEST
    for variant in MATRIX.variants:  # latest: the newest release the variant builds
        newest_built = [r for r in MATRIX.releases if variant.builds(r)][-1]
        assert MATRIX.resolve("latest", variant=variant.name).release == newest_built
    assert MATRIX.resolve("latest", variant="cu121").torch_version == "2.5.1+cu121"


@pytest.mark.parametrize(
    "spec, variant, message",
    [
        (after_newest() + ".0", None, "unknown torch release %s.0" % after_newest()),
        (after_newest(), None, "unknown torch minor series %s" % after_newest()),
        ("3.0", None, "unknown torch minor series 3.0"),
        ("2.4.1+rocm", None, r"unknown local version tag \+rocm"),
        ("2.9.1", "cu121", "cu121 has no build of torch 2.9.1"),
        ("2.4.1+cpu", "cu121", "is a cpu build"),
        ("banana", None, "unknown torch selection word 'banana'; known words: quick, aoti, all, latest, nightly"),
        ("2.4.1.banana", None, "not a torch version"),
        ("2.4", "nope", "unknown variant"),
    ],
)
def test_resolve_errors_say_what_is_wrong(spec: str, variant: str, message: str) -> None:
    with pytest.raises(ReleaseError, match=message):
        MATRIX.resolve(spec, variant)


def test_quick_runs_latest_patches_from_the_oldest_series_to_the_newest_release() -> None:
    quick = MATRIX.select(["quick"])
    assert [b.label for b in quick] == FILE["selections"]["quick"] == list(MATRIX.selection("quick"))
    assert len({b.label for b in quick}) == len(quick)
    pypi = [b.release for b in quick if b.variant == PYPI]
    latest = MATRIX.latest_patches()
    assert pypi == sorted(pypi, key=lambda r: r.key)
    # The whole range, ends included: a new release joins the quick selection when it joins the file.
    assert pypi[0] == latest[0], "quick must start at the oldest series' latest patch, %s" % latest[0].version
    assert pypi[-1] == NEWEST, "quick must run the newest release, %s: add it to [selections] quick" % NEWEST.version
    assert all(release in latest for release in pypi)  # a series' newest patch, never one it fixed


def test_all_is_the_latest_patch_of_every_series_then_the_matrix_entries() -> None:
    full = [b.label for b in MATRIX.select(["all"])]
    latest = [r.version for r in MATRIX.latest_patches()]
    assert full[: len(latest)] == latest
    assert full[len(latest) :] == [e for e in dict.fromkeys(FILE["selections"]["matrix"]) if e not in latest]
    assert len(set(full)) == len(full)
    assert {b.label for b in MATRIX.select(["quick"])} <= set(full)  # the full matrix covers the quick one


def test_selection_words_resolve_in_order_without_duplicates() -> None:
    chosen = MATRIX.select(["2.4", "2.4.1", "latest"], variant="cpu")
    assert [b.label for b in chosen] == ["2.4.1+cpu", NEWEST.version + "+cpu"]
    assert releases.words(" 2.4, 2.5.1+cpu  latest") == ["2.4", "2.5.1+cpu", "latest"]


def test_between_lists_every_patch_the_variant_builds_for_the_python() -> None:
    pypi = MATRIX.variant("pypi")
    assert [r.version for r in MATRIX.between("2.5.1", "2.9.1", pypi)] == [
        "2.5.1", "2.6.0", "2.7.0", "2.7.1", "2.8.0", "2.9.0", "2.9.1",
    ]  # fmt: skip
    assert [r.version for r in MATRIX.between("2.5.1", "2.9.1", pypi, "3.9")][-1] == "2.8.0"
    assert [r.version for r in MATRIX.between("2.4.0", "2.9.1", MATRIX.variant("cu121"))] == [
        "2.4.0",
        "2.4.1",
        "2.5.0",
        "2.5.1",
    ]
    assert MATRIX.between(MATRIX.releases[0].version, NEWEST.version, pypi) == list(MATRIX.releases)
    with pytest.raises(ReleaseError, match="must be older"):
        MATRIX.between("2.9.1", "2.5.1", pypi)


def test_version_order_follows_pep_440() -> None:
    ordered = ["2.9.1", "2.10.0.dev20251001", "2.10.0.dev20251002+cpu", "2.10.0rc1", "2.10.0", "2.10.0.post1", "2.10.1"]
    assert sorted(reversed(ordered), key=version_key) == ordered
    assert version_key("2.4.1+cpu") == version_key("2.4.1")
    assert version_key("2.10") == version_key("2.10.0")


def test_release_like_borrows_facts_for_unknown_versions() -> None:
    nightly = MATRIX.release_like(after_newest() + ".0.dev20261201+cpu")
    assert (nightly.version, nightly.minor) == (after_newest() + ".0.dev20261201", after_newest())
    assert nightly.pythons == NEWEST.pythons  # the newest series' facts
    assert MATRIX.release_like("2.1.1") == MATRIX.release("2.1.1")
    assert MATRIX.release_like("2.1.3.dev1").extra_pins == ("setuptools<81",)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "releases.toml"
    path.write_text(text)
    return path


GOOD = """
[[series]]
minor = "2.1"
patches = ["2.1.0", "2.1.1"]
pythons = ["3.8", "3.11"]

[variants.pypi]
index_url = "https://pypi.org/simple"
env = "X_PYPI"

[selections]
quick = ["2.1"]
matrix = []
"""


def test_a_small_file_loads(tmp_path: Path) -> None:
    matrix = releases.load(write(tmp_path, GOOD))
    assert [r.version for r in matrix.releases] == ["2.1.0", "2.1.1"]
    assert matrix.select(["quick"])[0].release.numpy_pin == "numpy"


def test_a_selection_the_file_names_is_a_word_of_its_own_with_no_code(tmp_path: Path) -> None:
    matrix = releases.load(write(tmp_path, GOOD + 'oldest = ["2.1.0"]\n'))
    assert matrix.named == ("quick", "oldest")  # in the file's order; `matrix` is what `all` adds
    assert [b.torch_version for b in matrix.select(["oldest"])] == ["2.1.0"]
    with pytest.raises(releases.ReleaseError, match="known words: quick, oldest, all, latest"):
        matrix.resolve("x")
    with pytest.raises(releases.ReleaseError, match="selection oldest, entry '2.9'"):
        releases.load(write(tmp_path, GOOD + 'oldest = ["2.9"]\n'))


@pytest.mark.parametrize(
    "change, message",
    [
        (('"2.1.0", "2.1.1"', '"2.1.1", "2.1.0"'), "oldest first"),
        (('"2.1.0", ', '"2.2.0", '), "not in series 2.1"),
        (('quick = ["2.1"]', 'quick = ["2.7"]'), "unknown torch minor series 2.7"),
        (('env = "X_PYPI"', 'env = "X_PYPI"\nmirror = 1'), r"unknown keys \['mirror'\]"),
        (("[variants.pypi]", "[variants.other]"), "the pypi variant is missing"),
        (('pythons = ["3.8", "3.11"]', 'pythons = "3.8"'), "`pythons` must be a list"),
        (('minor = "2.1"', 'minor = "2.1.0"'), "`minor` must look like 2.4"),
        (("[[series]]", "[[series"), "not valid TOML"),
    ],
)
def test_malformed_files_are_refused_naming_file_and_entry(tmp_path: Path, change: tuple, message: str) -> None:
    path = write(tmp_path, GOOD.replace(*change))
    with pytest.raises(ReleaseError, match=message) as caught:
        releases.load(path)
    assert str(path) in str(caught.value)


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="cannot read"):
        releases.load(tmp_path / "absent.toml")
