"""uv's unpacked wheels: which ones no environment links, and pruning them with the pointers that lead to them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict

import pytest

from matrix.envs import cache_archives

from .uv_cache_support import fake_archive, link_archive

pytestmark = pytest.mark.skipif(not hasattr(os, "link"), reason="needs hard links")


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """A uv cache with two torch wheels, a CUDA library, numpy and a package this project never installs.

    An environment links torch 2.7.1 and numpy; nothing links torch 2.5.1, the CUDA library or requests.
    """
    folder = tmp_path / "uv-cache"
    archives: Dict[str, Path] = {
        "torch-2.7.1": fake_archive(folder, "AAAAAAAAAAAAAAA1", "torch", "2.7.1", size=1000),
        "torch-2.5.1": fake_archive(folder, "-BBBBBBBBBBBBBB2", "torch", "2.5.1", size=2000),
        "cublas": fake_archive(folder, "CCCCCCCCCCCCCCC3", "nvidia-cublas-cu12", "12.8.4.1", size=300, local=True),
        "numpy": fake_archive(folder, "DDDDDDDDDDDDDDD4", "numpy", "2.2.0"),
        "requests": fake_archive(folder, "EEEEEEEEEEEEEEE5", "requests", "2.32.3"),
    }
    site = tmp_path / "envs" / "torch-2.7.1-py3.11" / "lib" / "python3.11" / "site-packages"
    for key in ("torch-2.7.1", "numpy"):
        link_archive(archives[key], site)
    return folder


def remaining(cache: Path) -> Dict[str, str]:
    """The archives still in the cache: id -> the distribution it holds."""
    return {path.name: "%s==%s" % cache_archives.distributions(path)[0] for path in (cache / "archive-v0").iterdir()}


def test_only_the_unlinked_archives_of_the_named_packages_go(cache: Path, tmp_path: Path) -> None:
    names = ["numpy", "nvidia-cublas-cu12", "torch"]
    pruned = cache_archives.prune(cache, tmp_path / "envs", names)
    assert pruned.dists == ("nvidia-cublas-cu12==12.8.4.1", "torch==2.5.1")
    # Each archive holds its dist-info's METADATA and a module of the given size.
    metadata = len("Name: torch\nVersion: 2.5.1\n") + len("Name: nvidia-cublas-cu12\nVersion: 12.8.4.1\n")
    assert pruned.freed == 2000 + 300 + metadata and pruned.skipped == ""
    # torch 2.7.1 and numpy are linked by an environment; requests is not this project's to remove.
    assert remaining(cache) == {
        "AAAAAAAAAAAAAAA1": "torch==2.7.1",
        "DDDDDDDDDDDDDDD4": "numpy==2.2.0",
        "EEEEEEEEEEEEEEE5": "requests==2.32.3",
    }
    site = tmp_path / "envs" / "torch-2.7.1-py3.11" / "lib" / "python3.11" / "site-packages"
    assert (site / "torch" / "__init__.py").read_text() == "#" * 1000


def test_a_pruned_archives_pointers_go_first_so_uv_fetches_it_again(cache: Path, tmp_path: Path) -> None:
    cache_archives.prune(cache, tmp_path / "envs", ["torch", "nvidia-cublas-cu12"])
    torch = cache / "wheels-v8" / "pypi" / "torch"
    assert sorted(p.name for p in torch.iterdir()) == [
        "2.5.1-py3-none-any.lock",  # uv's lock file names no archive
        "2.7.1-py3-none-any",
        "2.7.1-py3-none-any.http",
        "2.7.1-py3-none-any.lock",
    ]
    assert (torch / "2.7.1-py3-none-any" / "torch" / "__init__.py").is_file()  # still leads to its archive
    local = cache / "wheels-v8" / "index" / "13fc6a276e4c9afe" / "nvidia-cublas-cu12"
    assert sorted(p.name for p in local.iterdir()) == ["12.8.4.1-py3-none-any.lock"]  # the .rev uv would read


def test_an_archive_with_one_linked_file_is_in_use(tmp_path: Path) -> None:
    archive = fake_archive(tmp_path / "uv-cache", "FFFFFFFFFFFFFFF6", "triton", "3.3.1", size=50)
    os.link(archive / "triton" / "__init__.py", tmp_path / "linked")
    assert cache_archives.unlinked_size(archive) is None
    assert cache_archives.unused(tmp_path / "uv-cache", ["triton"]) == []
    (tmp_path / "linked").unlink()
    assert cache_archives.unlinked_size(archive) == 50 + len("Name: triton\nVersion: 3.3.1\n")


def test_a_cache_on_another_filesystem_is_left_as_it_is(cache: Path, tmp_path: Path) -> None:
    envs = tmp_path / "envs"
    # With copies instead of links every count is 1: nothing could be told apart.
    pruned = cache_archives.prune(cache, envs, ["torch"], device=lambda path: 1 if path == cache else 2)
    assert pruned.dists == () and pruned.freed == 0
    assert pruned.skipped == "%s is on another filesystem than %s: environments hold copies of its files, not links" % (
        cache,
        envs,
    )
    assert len(remaining(cache)) == 5 and (cache / "wheels-v8" / "pypi" / "torch" / "2.5.1-py3-none-any.http").exists()


def test_a_cache_without_archive_v0_is_another_layout_and_left_alone(tmp_path: Path) -> None:
    other = tmp_path / "uv-cache"
    (other / "archive-v1" / "AAAAAAAAAAAAAAA1").mkdir(parents=True)
    pruned = cache_archives.prune(other, tmp_path, ["torch"])
    assert pruned == cache_archives.Pruned(skipped="%s has no archive-v0 folder (another uv layout)" % other)
    assert (other / "archive-v1" / "AAAAAAAAAAAAAAA1").is_dir()
    assert cache_archives.prune(tmp_path / "never-made", tmp_path, ["torch"]).skipped.endswith("(another uv layout)")


def test_an_archives_distributions_are_read_from_its_dist_info_names(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    (archive / "Nvidia_CuDNN_cu12-9.10.2.21.dist-info").mkdir(parents=True)
    (archive / "torch-2.7.1+cpu.dist-info").mkdir()
    (archive / "torch").mkdir()
    assert cache_archives.distributions(archive) == [("nvidia-cudnn-cu12", "9.10.2.21"), ("torch", "2.7.1+cpu")]


def test_nothing_named_prunes_nothing(cache: Path, tmp_path: Path) -> None:
    assert cache_archives.prune(cache, tmp_path / "envs", []) == cache_archives.Pruned()
    assert len(remaining(cache)) == 5
    assert cache_archives.pointers(cache, set()) == []
