"""The release matrix as data: the packaged facts, lookups, selections and validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from matrix.envs import releases
from matrix.envs.releases import ReleaseError, version_key

MATRIX = releases.default_matrix()

ALL_PATCHES = (
    "2.1.0 2.1.1 2.1.2 2.2.0 2.2.1 2.2.2 2.3.0 2.3.1 2.4.0 2.4.1 2.5.0 2.5.1 2.6.0 2.7.0 2.7.1 2.8.0 "
    "2.9.0 2.9.1 2.10.0 2.11.0 2.12.0 2.12.1 2.13.0 2.14.0 2.14.1 2.15.0"
).split()


def test_every_patch_release_from_2_1_to_2_15_is_known_in_order() -> None:
    assert [r.version for r in MATRIX.releases] == ALL_PATCHES
    assert [r.version for r in MATRIX.latest_patches()] == [
        "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0",
        "2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0",
    ]  # fmt: skip


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
    assert list(pythons) == sorted(pythons, key=releases.python_key)


def test_old_releases_pin_numpy_1_and_2_1_pins_setuptools() -> None:
    assert MATRIX.release("2.2.2").requirements == ("numpy<2", "setuptools")
    assert MATRIX.release("2.1.0").requirements == ("numpy<2", "setuptools<81")
    assert MATRIX.release("2.3.0").requirements == ("numpy", "setuptools")  # numpy is always installed
    assert MATRIX.release("2.8.0").requirements == ("numpy",)  # 2.8 declares setuptools itself


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


def test_resolve_minor_version_tag_and_latest() -> None:
    assert MATRIX.resolve("2.4").torch_version == "2.4.1"
    assert MATRIX.resolve("2.4.0").release.version == "2.4.0"
    cpu = MATRIX.resolve("2.13.0+cpu")
    assert (cpu.variant.name, cpu.torch_version) == ("cpu", "2.13.0+cpu")
    assert MATRIX.resolve("2.5", variant="cu124").torch_version == "2.5.1+cu124"
    assert MATRIX.resolve("latest").torch_version == "2.15.0"
    assert MATRIX.resolve("latest", variant="cu121").torch_version == "2.5.1+cu121"


@pytest.mark.parametrize(
    "spec, variant, message",
    [
        ("2.16.0", None, "unknown torch release 2.16.0"),
        ("3.0", None, "unknown torch minor series 3.0"),
        ("2.4.1+rocm", None, r"unknown local version tag \+rocm"),
        ("2.9.1", "cu121", "cu121 has no build of torch 2.9.1"),
        ("2.4.1+cpu", "cu121", "is a cpu build"),
        ("banana", None, "not a torch version"),
        ("2.4", "nope", "unknown variant"),
    ],
)
def test_resolve_errors_say_what_is_wrong(spec: str, variant: str, message: str) -> None:
    with pytest.raises(ReleaseError, match=message):
        MATRIX.resolve(spec, variant)


def test_selections() -> None:
    quick = MATRIX.select(["quick"])
    assert [b.label for b in quick] == ["2.1.2", "2.5.1", "2.6.0", "2.7.1", "2.9.1", "2.15.0", "2.13.0+cpu"]
    full = MATRIX.select(["all"])
    assert [b.label for b in full[:15]] == [r.version for r in MATRIX.latest_patches()]
    assert "2.13.0+cpu" in [b.label for b in full[15:]]
    assert len({b.label for b in full}) == len(full)
    assert [b.label for b in MATRIX.select(["2.4", "2.4.1", "latest"], variant="cpu")] == ["2.4.1+cpu", "2.15.0+cpu"]
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
    with pytest.raises(ReleaseError, match="must be older"):
        MATRIX.between("2.9.1", "2.5.1", pypi)


def test_version_order_follows_pep_440() -> None:
    ordered = ["2.9.1", "2.10.0.dev20251001", "2.10.0.dev20251002+cpu", "2.10.0rc1", "2.10.0", "2.10.0.post1", "2.10.1"]
    assert sorted(reversed(ordered), key=version_key) == ordered
    assert version_key("2.4.1+cpu") == version_key("2.4.1")
    assert version_key("2.10") == version_key("2.10.0")


def test_release_like_borrows_facts_for_unknown_versions() -> None:
    nightly = MATRIX.release_like("2.16.0.dev20261201+cpu")
    assert (nightly.version, nightly.minor) == ("2.16.0.dev20261201", "2.16")
    assert nightly.pythons == MATRIX.release("2.15.0").pythons
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
