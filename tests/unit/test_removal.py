"""Removing a build's environments: which folders go, what they measured, what leaves uv's cache."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from matrix.envs import cache_archives, environments, install, releases, removal
from matrix.envs.environments import Spec

from .uv_cache_support import fake_archive, link_archive
from conftest import CURRENT, ROOT, write

MATRIX = releases.default_matrix()
NEW = MATRIX.resolve("2.7.1")
OLD = MATRIX.resolve("2.5.1")
NEW_CPU = MATRIX.resolve("2.7.1+cpu")


def fake_env(envs: Path, spec: Spec, packages: Dict[str, str]) -> Path:
    """An environment folder as uv leaves it: one ``*.dist-info`` (and a module) per distribution."""
    path = envs / spec.name
    site = path / "lib" / ("python" + spec.python) / "site-packages"
    for name, version in packages.items():
        folder = name.replace("-", "_")
        write(site / ("%s-%s.dist-info" % (folder, version)) / "METADATA", "Name: %s\nVersion: %s\n" % (name, version))
        write(site / folder / "__init__.py", "VERSION = %r\n" % version)
    write(path / "bin" / "python", "")
    return path


def linked_env(envs: Path, spec: Spec, archives: List[Path]) -> Path:
    """An environment folder as uv leaves it: the files of its packages' unpacked wheels, hard-linked."""
    path = envs / spec.name
    for archive in archives:
        link_archive(archive, path / "lib" / ("python" + spec.python) / "site-packages")
    write(path / "bin" / "python", "")
    return path


class Cleaner:
    """Stands in for ``uv cache clean``: records the package names it is given."""

    def __init__(self) -> None:
        self.calls: List[List[str]] = []

    def __call__(self, names: List[str], log: removal.Log) -> None:
        self.calls.append(list(names))


class Pruner:
    """Stands in for pruning uv's cache: records what it is given, and prunes ``cache`` when there is one."""

    def __init__(self, cache: Optional[Path] = None) -> None:
        self.cache = cache
        self.calls: List[List[str]] = []

    def __call__(self, names: List[str], envs: Path, log: removal.Log) -> cache_archives.Pruned:
        self.calls.append(list(names))
        return cache_archives.prune(self.cache, envs, names) if self.cache else cache_archives.Pruned()


@pytest.fixture
def envs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two releases' environments, each with a dependency set, beside a CPU build and the worker's copy."""
    folder = tmp_path / "envs"
    monkeypatch.setenv(environments.ENV_DIR_VARIABLE, str(folder))
    fake_env(folder, Spec(NEW, CURRENT), {"torch": "2.7.1", "numpy": "2.2.0", "triton": "3.3.1"})
    fake_env(folder, Spec(NEW, CURRENT, "timm"), {"torch": "2.7.1", "timm": "1.0.15", "huggingface-hub": "0.30.0"})
    fake_env(folder, Spec(NEW, "3.10"), {"torch": "2.7.1", "Jinja2": "3.1.6"})
    fake_env(folder, Spec(OLD, CURRENT), {"torch": "2.5.1", "numpy": "1.26.4"})
    fake_env(folder, Spec(OLD, CURRENT, "timm"), {"torch": "2.5.1", "timm": "1.0.15"})
    fake_env(folder, Spec(NEW_CPU, CURRENT), {"torch": "2.7.1+cpu", "filelock": "3.18.0"})
    write(folder / ".worker" / "0123456789abcdef" / "matrix" / "worker" / "__main__.py", "")
    return folder


def test_removing_a_build_removes_its_environments_and_no_other(envs: Path) -> None:
    before = sorted(p.name for p in envs.iterdir())
    cleaner, pruner = Cleaner(), Pruner()
    lines: List[str] = []
    done = removal.remove(NEW, clean=cleaner, prune=pruner, log=lines.append)
    gone = {Spec(NEW, CURRENT).name, Spec(NEW, CURRENT, "timm").name, Spec(NEW, "3.10").name}
    assert set(done.removed) == gone
    assert sorted(p.name for p in envs.iterdir()) == sorted(set(before) - gone)
    for spec in (Spec(OLD, CURRENT), Spec(OLD, CURRENT, "timm"), Spec(NEW_CPU, CURRENT)):
        assert removal.installed(envs / spec.name)["torch"] == spec.build.torch_version  # untouched
    assert (envs / ".worker" / "0123456789abcdef" / "matrix" / "worker" / "__main__.py").is_file()
    # Another release or variant has torch, numpy and timm installed: uv's cache keeps them.
    assert cleaner.calls == [["huggingface-hub", "jinja2", "triton"]]
    assert done.cleaned == ("huggingface-hub", "jinja2", "triton")
    assert done.kept == ("numpy", "timm", "torch")
    assert done.size > 0
    assert any(all(name in line for name in gone) and removal.human_size(done.size) in line for line in lines)
    # Files written, not linked from uv's cache: link counts there would say nothing, so nothing is pruned.
    assert pruner.calls == [] and done.pruned == () and done.freed == 0
    assert lines[-1] == "not pruning uv's cache: the removed environments' files were not hard links into it"


def test_a_build_without_environments_is_one_line_and_cleans_nothing(envs: Path, tmp_path: Path) -> None:
    cleaner = Cleaner()
    lines: List[str] = []
    pruner = Pruner()
    absent = MATRIX.resolve("2.6.0")
    assert removal.remove(absent, clean=cleaner, prune=pruner, log=lines.append) == removal.Removal((), 0, (), ())
    assert removal.remove(absent, tmp_path / "never-made", clean=cleaner, prune=pruner, log=lines.append).removed == ()
    assert cleaner.calls == [] and pruner.calls == []
    assert len(lines) == 2 and all("torch 2.6.0 (pypi)" in line and "nothing to remove" in line for line in lines)


@pytest.mark.skipif(not hasattr(os, "link"), reason="needs hard links")
def test_the_removed_releases_unpacked_wheels_leave_uvs_cache_while_other_releases_stay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache, envs = tmp_path / "uv-cache", tmp_path / "envs"
    monkeypatch.setenv(environments.ENV_DIR_VARIABLE, str(envs))
    new_torch = fake_archive(cache, "AAAAAAAAAAAAAAA1", "torch", "2.7.1", size=5000)
    old_torch = fake_archive(cache, "BBBBBBBBBBBBBBB2", "torch", "2.5.1", size=4000)
    fake_archive(cache, "CCCCCCCCCCCCCCC3", "torch", "2.6.0", size=3000)  # left by a release removed earlier
    triton = fake_archive(cache, "DDDDDDDDDDDDDDD4", "triton", "3.3.1", size=700)
    numpy = fake_archive(cache, "EEEEEEEEEEEEEEE5", "numpy", "2.2.0")
    fake_archive(cache, "FFFFFFFFFFFFFFF6", "requests", "2.32.3")  # the user's, never installed here
    linked_env(envs, Spec(NEW, CURRENT), [new_torch, triton, numpy])
    linked_env(envs, Spec(NEW, CURRENT, "timm"), [new_torch, numpy])
    old = linked_env(envs, Spec(OLD, CURRENT), [old_torch, numpy])
    cleaner, pruner = Cleaner(), Pruner(cache)
    lines: List[str] = []

    done = removal.remove(NEW, clean=cleaner, prune=pruner, log=lines.append)

    assert done.removed == (Spec(NEW, CURRENT).name, Spec(NEW, CURRENT, "timm").name)
    assert cleaner.calls == [["triton"]] and done.kept == ("numpy", "torch")
    assert pruner.calls == [["numpy", "torch", "triton"]]  # every package of the removed environments
    # numpy 2.2.0 and torch 2.5.1 stay: the 2.5.1 environment links them.
    assert done.pruned == ("torch==2.6.0", "torch==2.7.1", "triton==3.3.1")
    assert sorted(path.name for path in (cache / "archive-v0").iterdir()) == [
        "BBBBBBBBBBBBBBB2",
        "EEEEEEEEEEEEEEE5",
        "FFFFFFFFFFFFFFF6",
    ]
    metadata = sum(
        len("Name: %s\nVersion: %s\n" % d) for d in (("torch", "2.6.0"), ("torch", "2.7.1"), ("triton", "3.3.1"))
    )
    assert done.freed == 3000 + 5000 + 700 + metadata
    assert removal.installed(old) == {"torch": "2.5.1", "numpy": "2.2.0"}
    assert lines[-1] == (
        "freed %s of uv's cache: the unpacked wheels no environment links any more "
        "(torch==2.6.0, torch==2.7.1, triton==3.3.1)" % removal.human_size(done.freed)
    )


def test_pruning_logs_one_line_whatever_it_did() -> None:
    lines: List[str] = []
    removal.log_pruned(cache_archives.Pruned(("torch==2.7.1",), 4_640_000_000), lines.append)
    removal.log_pruned(cache_archives.Pruned(), lines.append)
    removal.log_pruned(cache_archives.Pruned(skipped="/c has no archive-v0 folder (another uv layout)"), lines.append)
    assert lines == [
        "freed 4.6 GB of uv's cache: the unpacked wheels no environment links any more (torch==2.7.1)",
        "uv's cache holds no unpacked wheel of these packages that no environment links",
        "not pruning uv's cache: /c has no archive-v0 folder (another uv layout)",
    ]


def test_only_packages_no_remaining_environment_holds_leave_the_cache() -> None:
    removed = [{"torch": "2.7.1", "triton": "3.3.1"}, {"torch": "2.7.1", "timm": "1.0.15"}]
    # uv's cache clean drops every version of a name: a name installed anywhere else stays, whatever its version.
    remaining = [{"torch": "2.5.1"}, {"timm": "1.0.15", "numpy": "1.26.4"}]
    assert removal.to_clean(removed, remaining) == ["triton"]
    assert removal.to_clean(removed, []) == ["timm", "torch", "triton"]
    assert removal.to_clean([], remaining) == []


def test_an_environments_packages_come_from_its_dist_info_folders(tmp_path: Path) -> None:
    site = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    write(site / "pillow-11.2.1.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: Pillow\nVersion: 11.2.1\n\nbody")
    (site / "typing_extensions-4.12.2.dist-info").mkdir()  # no METADATA: the folder's name says it
    write(site / "torch" / "__init__.py", "")
    assert removal.installed(tmp_path / "env") == {"pillow": "11.2.1", "typing-extensions": "4.12.2"}
    assert removal.installed(tmp_path / "missing") == {}


@pytest.mark.skipif(not hasattr(os, "link"), reason="needs hard links")
def test_the_size_counts_a_hard_linked_file_once(tmp_path: Path) -> None:
    first = write(tmp_path / "a" / "torch.so", "x" * 1000)
    write(tmp_path / "a" / "small", "y" * 24)
    write(tmp_path / "c" / "copied.so", "z" * 10)
    (tmp_path / "b").mkdir()
    os.link(first, tmp_path / "b" / "torch.so")  # as uv links one cached file into two environments
    assert removal.footprint([tmp_path / "a", tmp_path / "b"]) == removal.Footprint(1024, linked=True)
    assert removal.footprint([tmp_path / "b"]).size == 1000
    assert removal.footprint([tmp_path / "c"]) == removal.Footprint(10, linked=False)


def test_sizes_read_as_disk_sizes() -> None:
    assert removal.human_size(4_640_000_000) == "4.6 GB"
    assert removal.human_size(212_000_000) == "212 MB"
    assert removal.human_size(999) == "999 bytes"


def test_environments_installed_with_pip_leave_uvs_cache_alone() -> None:
    lines: List[str] = []
    removal.uv_cache_clean(["triton"], lines.append, tool=install.PipInstaller())
    assert lines == ["environments are installed with pip here: uv's cache is left as it is"]
    pruned = removal.uv_cache_prune(["triton"], Path("envs"), lines.append, tool=install.PipInstaller())
    assert pruned == cache_archives.Pruned(skipped="environments are installed with pip here")


def test_the_remove_sessions_are_the_run_sessions_builds_without_their_tags() -> None:
    spec = importlib.util.spec_from_file_location("noxfile_under_test", ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    noxfile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(noxfile)
    run, remove = noxfile.run.parametrize, noxfile.remove.parametrize
    assert run and [p.call_spec for p in remove] == [p.call_spec for p in run]
    assert any(p.tags for p in run)
    # `nox -t cpu` and `nox -t all` select the run and load sessions: never one that removes environments.
    assert all(not p.tags for p in remove) and not noxfile.remove.tags


# --- keeping only a selection's environments ---------------------------------------------------------

NIGHTLY = MATRIX.resolve("nightly", "cpu")  # the word: whichever build the index offered when it was installed


@pytest.fixture
def nightlies(envs: Path) -> Path:
    """The fixture's environments, with the nightlies of two days (the newer one with a dependency set)."""
    for day in ("20260114", "20260115"):
        build = MATRIX.pinned(NIGHTLY, "9.9.0.dev%s+cpu" % day)
        fake_env(envs, Spec(build, CURRENT), {"torch": build.torch_version, "sympy": "1.%s" % day})
    fake_env(envs, Spec(MATRIX.pinned(NIGHTLY, "9.9.0.dev20260115+cpu"), CURRENT, "timm"), {"timm": "1.0.15"})
    write(envs / "notes" / "README", "not an environment")
    return envs


def test_keeping_a_selection_removes_every_other_environment_and_older_nightlies(nightlies: Path) -> None:
    cleaner, pruner = Cleaner(), Pruner()
    lines: List[str] = []
    done = removal.keep_only([NEW_CPU, NIGHTLY], clean=cleaner, prune=pruner, log=lines.append)
    newest = MATRIX.pinned(NIGHTLY, "9.9.0.dev20260115+cpu")
    kept = [Spec(NEW_CPU, CURRENT).name, Spec(newest, CURRENT).name, Spec(newest, CURRENT, "timm").name]
    assert sorted(p.name for p in nightlies.iterdir()) == sorted([*kept, ".worker", "notes"])
    assert set(done.removed) == {
        Spec(spec_build, python, dependency_set).name
        for spec_build, python, dependency_set in [
            (NEW, CURRENT, ""), (NEW, CURRENT, "timm"), (NEW, "3.10", ""), (OLD, CURRENT, ""), (OLD, CURRENT, "timm"),
            (MATRIX.pinned(NIGHTLY, "9.9.0.dev20260114+cpu"), CURRENT, ""),
        ]
    }  # fmt: skip
    # What only the removed environments had leaves uv's cache; sympy, timm and torch stay: the kept ones have them.
    assert cleaner.calls == [["huggingface-hub", "jinja2", "numpy", "triton"]]
    assert lines[0] == "keeping %s" % ", ".join(sorted(kept))


def test_a_selection_that_uses_every_environment_removes_nothing(envs: Path) -> None:
    cleaner = Cleaner()
    lines: List[str] = []
    selection = MATRIX.select(["2.7.1", "2.5.1", "2.7.1+cpu"])
    assert removal.keep_only(selection, clean=cleaner, prune=Pruner(), log=lines.append).removed == ()
    assert cleaner.calls == [] and len(lines) == 1 and lines[0].endswith(": nothing to remove")
    assert len(removal.environment_folders(envs)) == 6


def test_the_command_takes_checks_words_and_names_what_would_go(nightlies: Path, capsys) -> None:
    assert removal.main(["--keep", "current", "2.7.1", "nightly", "--variant", "cpu", "--dry-run"]) == 0
    shown = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [name for verdict, name in shown if verdict == "keep"] == sorted(
        [Spec(NEW_CPU, CURRENT).name, *(p.name for p in removal.used([NIGHTLY], nightlies))]
    )
    assert len(shown) == len(removal.environment_folders(nightlies)) == 9  # nothing removed
    assert removal.main(["--keep", "2.99"]) == 2
    assert "unknown torch minor series 2.99" in capsys.readouterr().err
