"""The parse cache beside record files: reused while nothing changed, never trusted when foreign or stale."""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import List

import pytest

from matrix.records import cache


@pytest.fixture(autouse=True)
def own_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    monkeypatch.delenv(cache.DISABLE_VARIABLE, raising=False)


def counting_parse(calls: List[str]):
    def parse(path: str) -> dict:
        calls.append(path)
        return {"lines": Path(path).read_text().splitlines()}

    return parse


def test_a_second_read_comes_from_the_cache_until_the_file_or_the_code_changes(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("a\nb\n")
    calls: List[str] = []
    parse = counting_parse(calls)
    assert cache.cached(str(path), parse, b"v1") == {"lines": ["a", "b"]}
    assert cache.cached(str(path), parse, b"v1") == {"lines": ["a", "b"]}
    assert len(calls) == 1
    assert cache.cached(str(path), parse, b"v2") == {"lines": ["a", "b"]} and len(calls) == 2  # new parser code
    with open(path, "a") as f:
        f.write("c\n")
    assert cache.cached(str(path), parse, b"v2") == {"lines": ["a", "b", "c"]} and len(calls) == 3


def test_a_cache_file_written_by_someone_else_is_never_unpickled(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("a\n")
    calls: List[str] = []
    cache.cached(str(path), counting_parse(calls), b"v1")
    key = cache.file_key(str(path), b"v1")
    forged = pickle.dumps(os.system)  # would run on unpickling, were it trusted
    Path(cache.cache_path(str(path))).write_bytes(b"\0" * 32 + key + forged)
    assert cache.cached(str(path), counting_parse(calls), b"v1") == {"lines": ["a"]} and len(calls) == 2


def test_an_unwritable_folder_just_goes_without(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("a\n")
    (tmp_path / cache.FOLDER).write_text("a file where the cache folder would go")
    calls: List[str] = []
    for _ in range(2):
        assert cache.cached(str(path), counting_parse(calls), b"v1") == {"lines": ["a"]}
    assert len(calls) == 2
    monkeypatch.setenv(cache.DISABLE_VARIABLE, "1")
    assert cache.load(str(path), b"v1")[0] is None


def test_is_cached_follows_the_file_and_the_code(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("a\n")
    assert not cache.is_cached(str(path), b"v1")
    cache.cached(str(path), counting_parse([]), b"v1")
    assert cache.is_cached(str(path), b"v1") and not cache.is_cached(str(path), b"v2")
    path.write_text("a\nb\n")
    assert not cache.is_cached(str(path), b"v1")
