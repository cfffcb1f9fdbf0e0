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
from matrix.worker import cell_cache, manifests, reads, reuse


def test_a_lookup_names_each_file_changed_or_gone(tmp_path: Path) -> None:
    case = tmp_path / "case.py"
    (tmp_path / "pkg").mkdir()
    for name in ("pkg/blocks.py", "same.txt", "gone.txt"):
        (tmp_path / name).write_text(name)
    outside = tmp_path.parent / (tmp_path.name + "-outside.py")
    outside.write_text("x")
    names = ("pkg/blocks.py", "same.txt", "gone.txt")
    manifest = [[manifests.FILE, p, reuse.file_hash(str(tmp_path / p)) or ""] for p in names]
    manifest.append([manifests.FILE, str(outside), reuse.file_hash(str(outside)) or ""])
    assert manifests.changed(manifest, str(case)) == []
    (tmp_path / "pkg" / "blocks.py").write_text("edited")
    (tmp_path / "gone.txt").unlink()
    outside.write_text("y")
    assert manifests.changed(manifest, str(case)) == [
        "pkg/blocks.py changed",
        "gone.txt is gone or unreadable",
        "%s changed" % outside,
    ]
    assert manifests.shown(str(outside), str(tmp_path)) == str(outside)  # outside the case's folder: absolute
    assert not manifests.valid([["a", "1"]]) and not manifests.valid({"a": "b"}) and manifests.valid([])
    assert not manifests.valid([["mystery", "a", "b"]]) and manifests.valid([[manifests.LISTING, "a/", "b"]])


def test_a_lookup_names_a_listing_a_variable_and_a_declared_input_that_changed(tmp_path: Path) -> None:
    case = tmp_path / "case.py"
    shards = tmp_path / "shards"
    shards.mkdir()
    for name in ("a.bin", "b.bin"):
        (shards / name).write_text(name)
    (shards / "__pycache__").mkdir()  # written by importing, never the user's: not in a listing
    (tmp_path / "weights").mkdir()
    (tmp_path / "weights" / "w1.safetensors").write_text("w")
    listing = manifests.listing_entries([str(shards)], str(tmp_path))
    assert listing == [[manifests.LISTING, "shards/", manifests.listing_hash(str(shards))]]
    pattern = "weights/*.safetensors"
    assert manifests.matched(pattern, str(tmp_path)) == [str(tmp_path / "weights" / "w1.safetensors")]
    manifest = listing + [
        [manifests.VARIABLE, "MY_SCALE", manifests.variable_hash("2")],
        [manifests.VARIABLE, "MY_ABSENT", manifests.UNSET],
        [manifests.INPUTS, pattern, manifests.inputs_hash(pattern, str(tmp_path))],
    ]
    environ = {"MY_SCALE": "2", "GITHUB_RUN_ID": "1"}
    assert manifests.changed(manifest, str(case), environ=environ) == []
    (shards / "__pycache__" / "x.pyc").write_text("")
    (shards / "a.bin").write_text("same names, other content")  # a listing is of names: a file's content is its own
    assert manifests.changed(manifest, str(case), environ=dict(environ, GITHUB_RUN_ID="2")) == []  # unread
    (shards / "b.bin").unlink()
    (tmp_path / "weights" / "w2.safetensors").write_text("w")
    assert manifests.changed(manifest, str(case), environ={"MY_SCALE": "3", "MY_ABSENT": ""}) == [
        "shards/ listing changed",
        "MY_SCALE changed",
        "MY_ABSENT set",
        "inputs weights/*.safetensors: the files it matches changed",
    ]
    assert manifests.changed(manifest[1:2], str(case), environ={}) == ["MY_SCALE unset"]
    never = [[manifests.NATIVE, "reader.so", ""]]
    assert manifests.changed(never, str(case)) == [
        "reader.so: native code from outside the installed distributions may read files unseen; "
        "declare the case's inputs"
    ]


def test_the_variables_a_case_reads_are_its_own_not_those_of_the_key_speed_or_the_runner() -> None:
    assert reuse.case_variable("MY_SCALE") and reuse.case_variable("HF_HOME")
    for name in ("TORCHDYNAMO_X", "CUDA_VISIBLE_DEVICES", "TORCH_LOGS", "OMP_NUM_THREADS", "TMPDIR"):
        assert not reuse.case_variable(name), name
    assert not reuse.case_variable("EXPORT_MATRIX_RECORD_READS")


def test_a_run_s_hash_memo_serves_an_unchanged_file_and_never_one_edited_during_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case, data = tmp_path / "case.py", tmp_path / "data.txt"
    data.write_text("one")
    memo: manifests.Hashes = {}
    # Changed this instant: a rewrite within its times' resolution could keep them, so it is not kept.
    assert manifests.hash_of(str(data), memo) == reuse.file_hash(str(data)) and str(data) not in memo
    assert manifests.hash_of(str(tmp_path / "gone.txt"), memo) is None
    monkeypatch.setattr(manifests, "RECENT_NS", 0)  # as if every file were older than that
    old = time.time() - 60
    os.utime(data, (old, old))
    manifest = [[manifests.FILE, "data.txt", reuse.file_hash(str(data)) or ""]]
    assert manifests.changed(manifest, str(case), memo) == [] and str(data) in memo  # kept for the next cell
    time.sleep(0.05)  # past the resolution of a change time
    data.write_text("two")  # the same size, and the same modification time as before: its change time differs
    os.utime(data, (old, old))
    assert manifests.changed(manifest, str(case), memo) == ["data.txt changed"]


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
