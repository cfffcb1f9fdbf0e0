"""What a lookup finds changed, the variables in the key, the cache command."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

import pytest

from matrix.contract.errors import UserError
from matrix.worker import cache as cache_command
from matrix.worker import cell_cache, reads, reuse


def test_a_lookup_names_each_file_changed_or_gone(tmp_path: Path) -> None:
    case = tmp_path / "case.py"
    (tmp_path / "pkg").mkdir()
    for name in ("pkg/blocks.py", "same.txt", "gone.txt"):
        (tmp_path / name).write_text(name)
    outside = tmp_path.parent / (tmp_path.name + "-outside.py")
    outside.write_text("x")
    manifest = [[p, reuse.file_hash(str(tmp_path / p)) or ""] for p in ("pkg/blocks.py", "same.txt", "gone.txt")]
    manifest.append([str(outside), reuse.file_hash(str(outside)) or ""])
    assert reads.changed(manifest, str(case)) == []
    (tmp_path / "pkg" / "blocks.py").write_text("edited")
    (tmp_path / "gone.txt").unlink()
    outside.write_text("y")
    assert reads.changed(manifest, str(case)) == [
        "pkg/blocks.py changed",
        "gone.txt is gone or unreadable",
        "%s changed" % outside,
    ]
    assert reads.shown(str(outside), str(tmp_path)) == str(outside)  # outside the case's folder: absolute
    assert not reads.valid([["a", 1]]) and not reads.valid({"a": "b"}) and reads.valid([])


def test_a_run_s_hash_memo_serves_an_unchanged_file_and_never_one_edited_during_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case, data = tmp_path / "case.py", tmp_path / "data.txt"
    data.write_text("one")
    memo: reads.Hashes = {}
    # Changed this instant: a rewrite within its times' resolution could keep them, so it is not kept.
    assert reads.hash_of(str(data), memo) == reuse.file_hash(str(data)) and str(data) not in memo
    assert reads.hash_of(str(tmp_path / "gone.txt"), memo) is None
    monkeypatch.setattr(reads, "RECENT_NS", 0)  # as if every file were older than that
    old = time.time() - 60
    os.utime(data, (old, old))
    manifest = [["data.txt", reuse.file_hash(str(data)) or ""]]
    assert reads.changed(manifest, str(case), memo) == [] and str(data) in memo  # kept for the next cell
    time.sleep(0.05)  # past the resolution of a change time
    data.write_text("two")  # the same size, and the same modification time as before: its change time differs
    os.utime(data, (old, old))
    assert reads.changed(manifest, str(case), memo) == ["data.txt changed"]


def test_a_forking_process_lists_its_modules_again_where_one_was_replaced_under_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules = []
    for name in ("first", "second"):
        (tmp_path / (name + ".py")).write_text("VALUE = 1\n")
        spec = importlib.util.spec_from_file_location("export_matrix_test_held", tmp_path / (name + ".py"))
        assert spec is not None
        modules.append(importlib.util.module_from_spec(spec))
    monkeypatch.setitem(sys.modules, "export_matrix_test_held", modules[0])
    reads._note_modules()  # what os.fork runs first
    listed = reads._inherited
    assert listed is not None and str(tmp_path / "first.py") in listed.files and listed.held(same_objects=True)
    monkeypatch.setitem(sys.modules, "export_matrix_test_held", modules[1])  # the same names, another module
    assert listed.held() and not listed.held(same_objects=True)
    reads._note_modules()
    again = reads._inherited
    assert again is not None and str(tmp_path / "second.py") in again.files
    assert str(tmp_path / "first.py") not in again.files


def test_the_variables_that_steer_torch_join_the_key_and_those_of_speed_or_the_runner_do_not() -> None:
    environ = {
        "TORCHDYNAMO_X": "1", "TORCHINDUCTOR_Y": "0", "PYTORCH_Z": "a", "TORCH_SHOW_CPP_STACKTRACES": "1",
        "CUDA_VISIBLE_DEVICES": "0", "TORCH_LOGS": "+dynamo", "TORCHINDUCTOR_CACHE_DIR": "/c",
        "TORCHINDUCTOR_COMPILE_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTORCH_NVML_BASED_CUDA_CHECK": "1",
        "HOME": "/h", "PATH": "/bin",
    }  # fmt: skip
    assert reuse.environment_fields(environ) == {
        "CUDA_VISIBLE_DEVICES": "0", "PYTORCH_Z": "a", "TORCHDYNAMO_X": "1", "TORCHINDUCTOR_Y": "0",
        "TORCH_SHOW_CPP_STACKTRACES": "1",
    }  # fmt: skip


def test_the_differences_between_two_keys_are_said_in_words() -> None:
    build = {"torch": "2.9.0", "git_version": "a", "packages": "p"}
    before = {"build": build, "environment": {"TORCH_A": "1", "TORCH_B": "1"}, "case_hash": "h", "mode": "strict"}
    now = dict(before, build=dict(build, git_version="b"), environment={"TORCH_B": "2", "TORCHDYNAMO_C": "1"})
    assert cell_cache.differences(before, now) == [
        "torch build differs",
        "TORCHDYNAMO_C set",
        "TORCH_A unset",
        "TORCH_B changed",
    ]
    assert cell_cache.differences(before, dict(before, build=dict(build, packages="q"), case_hash="i")) == [
        "installed packages differ",
        "the case's source changed",
    ]


def test_cache_stats_and_prune_by_age_then_by_size(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = tmp_path / "cache"
    cache = reuse.ResultCache(str(root), "cell")
    for number in range(4):
        cache.put("%064x" % number, {"status": "pass", "run_id": "r"}, {"pad": "x" * 1000}, index="%064x" % number)
    cache.hits, cache.misses = 3, 1
    cache.note_run("run1")
    old = time.time() - 10 * cache_command.DAY_S
    entries = sorted((root / "cell").glob("*/*.json"))
    os.utime(entries[0], (old, old))
    code = cache_command.main(cache_command.CacheOptions("stats", str(root)))
    shown = capsys.readouterr().out
    assert code == 0 and "entries: cell 4" in shown and "hit rate: 75% (3 hits, 1 misses)" in shown
    assert cache_command.prune(str(root), 5, None).startswith("removed 1 entries")
    assert not entries[0].exists() and all(p.exists() for p in entries[1:])
    size = sum(p.stat().st_size for p in entries[1:])
    os.utime(entries[1], (old + 1, old + 1))  # the least recently used of the three left
    assert cache_command.prune(str(root), None, (size - 1) / cache_command.MB).startswith("removed 1 entries")
    assert [p.exists() for p in entries] == [False, False, True, True]
    with pytest.raises(UserError):
        cache_command.OPTIONS.from_args(
            __import__("argparse").Namespace(action="prune", cache=None, older_than=None, max_size=None)
        )
