"""``load --aoti`` plans a compile of each program saved on an older release: which ones, their records, trust,
keys and resuming; how a package's fresh load folds into the compile's record.

Folders are hand-made (placeholder files, signed): nothing is compiled or loaded. A real compile of a saved
program, its package loaded in a fresh process, is in tests/integration/test_aoti_compiles.py.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from matrix.contract import layout, records
from matrix.contract.products import COMPILE, PRODUCTS
from matrix.contract.requests import LoadRequest, load_words
from matrix.contract.schema import AOTI_COMPILE_KEYS, AOTI_COMPILE_KIND, AOTI_LOAD_KIND, LoadStatus
from matrix.envs import releases
from matrix.worker import aoti, aoti_compiles, batch, loader, messages, reuse, settings, signing
from matrix.worker.aoti_compiles import AotiCompileJob, merge_aoti_compile

KEY = "c" * 40
OTHER_KEY = "d" * 40
HERE = "2.13.0+cpu"
API = aoti.Api(aoti.PACKAGE_API, aoti.AOTI_PACKAGE)


def _folder(
    root: Path, saved: str, case: str = "mlp", variant: str = "cpu", key: str = KEY, schema: Optional[str] = None
) -> Path:
    """An artifact folder as a cell of ``saved`` keeps it (no package); ``schema``: its serializer_version."""
    folder = root / ("%s_%s_py3.11" % (saved, variant)) / "strict" / case
    folder.mkdir(parents=True)
    files = {"program.pt2": b"program", "inputs.pt": b"inputs", "outputs.pt": b"outputs"}
    for name, data in files.items():
        (folder / name).write_bytes(data)
    meta: Dict[str, Any] = {
        "format_version": 2, "case": case, "mode": "strict", "torch_version": saved, "variant": variant,
        "python": "3.11", "device": "cpu", "source": "cases", "case_file": "cases/%s.py" % case,
        "files": [{"name": n, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()} for n, d in files.items()],
    }  # fmt: skip
    if schema is not None:
        meta["serializer_version"] = schema
    (folder / "meta.json").write_text(json.dumps(meta))
    signing.sign(str(folder / "meta.json"), key.encode())
    return folder


def _batch(root: Path, compile_older: bool = True, trust: bool = False, aoti_from: str = "all") -> loader.LoadBatch:
    """The load of everything under ``root`` on 2.13.0+cpu with --aoti, set up as ``set_up`` would (no torch)."""
    loads = loader.LoadBatch(layout.discover((str(root),)), HERE, "cpu", "3.11", KEY.encode(), trust,
                             dict(aoti=compile_older, aoti_timeout=45.0, aoti_from=aoti_from))  # fmt: skip
    loads.env.update(run_id="run1", serializer_version=None)
    loads.can_load = True
    loads.compiler = "g++ 14"
    loads.compile_api = (API, None)
    return loads


def _compiles(loads: loader.LoadBatch) -> List[batch.Item]:
    return [item for item in loads.items(loads.wanted()) if item.record["kind"] == AOTI_COMPILE_KIND]


# --- which programs -----------------------------------------------------------------------------------


VERSIONS = (
    "2.1.2", "2.6.0", "2.6.0+cpu", "2.9.1", "2.10.0.dev20251001+cpu", "2.10.0a1", "2.10.0rc1", "2.10.0",
    "2.10", "2.10.1", "2.13.0", "2.13.0+cpu", "2.16.0.dev20260115+cpu",
)  # fmt: skip


def test_release_order_is_pep_440s_without_the_local_tag() -> None:
    """The worker has no ``packaging``: its order must be the host's (matrix.envs.releases) for torch's versions."""
    for saved, loading in itertools.product(VERSIONS, repeat=2):
        expected = releases.version_key(saved) < releases.version_key(loading)
        assert aoti_compiles.older(saved, loading) is expected, (saved, loading)
    assert not aoti_compiles.older("nightly", HERE) and not aoti_compiles.older(HERE, "not a version")


def test_only_programs_saved_on_an_older_release_are_compiled_here_after_every_load(tmp_path: Path) -> None:
    for saved, variant in (("2.6.0", "pypi"), ("2.12.1", "cpu"), ("2.13.0", "pypi"), (HERE, "cpu"),
                           ("2.13.0.dev20250901+cpu", "cpu"), ("2.15.0", "pypi")):  # fmt: skip
        _folder(tmp_path, saved, variant=variant)
    loads = _batch(tmp_path)
    items = loads.items(loads.wanted())
    kinds = [item.record["kind"] for item in items]
    assert kinds == ["load"] * 6 + [AOTI_COMPILE_KIND] * 3  # every program loads; the compiles come last
    compiled = [item.record["saved_torch_version"] for item in items[6:]]
    # Older releases only: not this release's own programs (any build of it: the aoti stage of `run`), nor newer.
    assert compiled == ["2.12.1", "2.13.0.dev20250901+cpu", "2.6.0"]
    without = _batch(tmp_path, compile_older=False)
    assert all(item.record["kind"] == "load" for item in without.items(without.wanted()))
    assert not without.follow_ups and loads.follow_ups  # the engine starts its fresh-process server for compiles


def test_nearest_and_oldest_compiles_the_programs_of_the_newest_older_release_and_of_the_oldest(tmp_path: Path) -> None:
    for saved, variant in (("2.6.0", "pypi"), ("2.9.1", "pypi"), ("2.12.1", "cpu"), ("2.12.1", "pypi"),
                           ("2.11.0", "pypi"), (HERE, "cpu"), ("2.15.0", "pypi")):  # fmt: skip
        _folder(tmp_path, saved, variant=variant)
    chosen = {
        "all": ["2.11.0", "2.12.1", "2.12.1", "2.6.0", "2.9.1"],
        "nearest-and-oldest": ["2.12.1", "2.12.1", "2.6.0"],  # both builds of 2.12.1
    }
    for sources, expected in chosen.items():
        loads = _batch(tmp_path, aoti_from=sources)
        items = loads.items(loads.wanted())
        assert [item.record["kind"] for item in items].count("load") == 7  # every program still loads here
        assert sorted(item.record["saved_torch_version"] for item in _compiles(loads)) == expected, sources
    only = tmp_path / "only"
    _folder(only, "2.9.1")
    loads = _batch(only, aoti_from="nearest-and-oldest")
    assert [item.record["saved_torch_version"] for item in _compiles(loads)] == ["2.9.1"]  # nearest is oldest


def test_the_oldest_is_the_oldest_release_of_the_nearest_ones_serializer_epoch(tmp_path: Path) -> None:
    """Programs saved with another major schema version do not load here: the oldest is the epoch's own oldest."""
    saved = (("2.3.1", "5.1"), ("2.4.1", "5.3"), ("2.5.1", "7.3"), ("2.6.0", "8.2"), ("2.9.1", "8.14"))
    for version, schema in saved:
        _folder(tmp_path, version, variant="pypi", schema=schema)
    loads = _batch(tmp_path, aoti_from="nearest-and-oldest")
    assert sorted(item.record["saved_torch_version"] for item in _compiles(loads)) == ["2.6.0", "2.9.1"]
    everything = _batch(tmp_path)  # `all` tries every older program, whatever its epoch
    assert len(_compiles(everything)) == len(saved)
    # The first release of a new epoch: its nearest older release is of the one before, whose oldest is tried.
    before = tmp_path / "before"
    for version, schema in saved[:3]:
        _folder(before, version, variant="pypi", schema=schema)
    loads = _batch(before, aoti_from="nearest-and-oldest")
    assert [item.record["saved_torch_version"] for item in _compiles(loads)] == ["2.5.1"]
    # A program whose meta names no schema version is in every epoch.
    unknown = tmp_path / "unknown"
    _folder(unknown, "2.1.2")
    _folder(unknown, "2.9.1", variant="pypi", schema="8.14")
    loads = _batch(unknown, aoti_from="nearest-and-oldest")
    assert sorted(item.record["saved_torch_version"] for item in _compiles(loads)) == ["2.1.2", "2.9.1"]


def test_a_compile_is_an_isolated_job_with_the_compiles_own_time_on_top_of_the_timeout(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "2.6.0")
    (item,) = _compiles(_batch(tmp_path))
    assert isinstance(item.job, AotiCompileJob) and item.extra_s == item.job.timeout_s == 45.0
    assert item.job.folder == str(folder) and item.job.meta["case"] == "mlp"
    assert set(item.record) == set(AOTI_COMPILE_KEYS) and item.record["status"] is None  # the job decides
    record = item.record
    assert (record["saved_torch_version"], record["torch_version"], record["aoti_api"]) == ("2.6.0", HERE, API.name)
    assert item.label == "2.6.0_cpu_py3.11/strict/mlp (compiled here)"


@pytest.mark.parametrize("how", ["another key", "unsigned"])
def test_a_program_from_an_untrusted_folder_is_refused_by_the_parent_and_not_compiled(tmp_path: Path, how: str) -> None:
    folder = _folder(tmp_path, "2.6.0", key=OTHER_KEY if how == "another key" else KEY)
    if how == "unsigned":
        (folder / "meta.sig").unlink()
    (item,) = _compiles(_batch(tmp_path))
    assert item.job is None and item.record["status"] == LoadStatus.UNTRUSTED.value
    assert item.record["error_type"] == "UntrustedArtifact" and "pass --trust" in item.record["error_message"]
    (trusted,) = _compiles(_batch(tmp_path, trust=True))
    assert isinstance(trusted.job, AotiCompileJob)


def test_what_the_release_or_machine_lacks_is_not_applicable_without_a_process(tmp_path: Path) -> None:
    _folder(tmp_path, "2.6.0")
    lacking = {
        "no API": ((None, "torch 2.2.2 has no Python loader for AOTInductor"), None),
        "no compiler": ((None, "needs a C++ compiler (g++, or the one $CXX names), which this machine lacks: g++"),
                        aoti.NO_COMPILER_TYPE),
    }  # fmt: skip
    for api, error_type in lacking.values():
        loads = _batch(tmp_path)
        loads.compile_api = api
        (item,) = _compiles(loads)
        assert item.job is None and item.record["status"] == "not-applicable"
        assert (item.record["error_message"], item.record["error_type"]) == (api[1], error_type)
    loads = _batch(tmp_path)
    loads.can_load = False
    (item,) = _compiles(loads)
    assert item.job is None and item.record["error_message"] == "torch %s has no torch.export.load" % HERE


def test_a_damaged_folder_is_skipped_not_compiled(tmp_path: Path) -> None:
    (_folder(tmp_path, "2.6.0") / "meta.json").write_text("{")
    loads = _batch(tmp_path)
    program, (item,) = loads.items(loads.wanted())[0], _compiles(loads)
    assert program.record["status"] == LoadStatus.LOAD_ERROR.value  # its load says why
    assert item.job is None and item.record["status"] == "skipped"
    assert item.record["error_message"].startswith("not compiled: incomplete artifact: meta.json cannot be read")


# --- resuming and reuse --------------------------------------------------------------------------------


def test_resuming_tells_a_compile_from_the_programs_load_and_an_untrusted_one_is_not_done(tmp_path: Path) -> None:
    _folder(tmp_path, "2.6.0")
    loads = _batch(tmp_path)
    program, compile_item = loads.items(loads.wanted())
    path = str(tmp_path / "load.jsonl")
    with records.Writer(path) as writer:
        writer.write(dict(compile_item.record, status="ok"))
    assert loads.done(path) == ({compile_item.key}, [])  # the program is still to load
    with records.Writer(path) as writer:
        writer.write(dict(program.record, status=LoadStatus.PASS.value))
    assert loads.done(path)[0] == {compile_item.key, program.key}
    untrusted = str(tmp_path / "untrusted.jsonl")
    with records.Writer(untrusted) as writer:
        writer.write(dict(compile_item.record, status=LoadStatus.UNTRUSTED.value))
    assert loads.done(untrusted) == (set(), [])  # a later `load --trust --aoti` compiles it


def test_a_compiles_result_is_keyed_by_the_program_the_build_the_worker_and_the_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reuse, "build_fields", lambda: {"torch": HERE})
    folder = _folder(tmp_path, "2.6.0")
    loads = _batch(tmp_path)
    program, compile_item = loads.items(loads.wanted())
    key = loads.cache_key(compile_item)
    assert key is not None and key != loads.cache_key(program)
    loads.compiler = "clang++ 19"
    assert loads.cache_key(compile_item) not in (key, None)
    loads.compiler = "g++ 14"
    monkeypatch.setattr(reuse, "build_fields", lambda: {"torch": "2.13.0+cu130"})
    loads._build = None  # a batch learns its build once: another build is another batch
    assert loads.cache_key(compile_item) != key  # another compiling build
    monkeypatch.setattr(reuse, "build_fields", lambda: {"torch": HERE})
    loads._build = None
    assert loads.cache_key(compile_item) == key
    monkeypatch.setattr(reuse, "worker_fingerprint", lambda: "another worker")
    assert loads.cache_key(compile_item) != key
    monkeypatch.undo()
    monkeypatch.setattr(reuse, "build_fields", lambda: {"torch": HERE})
    # Another program in the same place: meta.json lists its sha256, so the key changes with it.
    (folder / "program.pt2").write_bytes(b"other program")
    meta = json.loads((folder / "meta.json").read_text())
    meta["files"][0].update(size=13, sha256=hashlib.sha256(b"other program").hexdigest())
    (folder / "meta.json").write_text(json.dumps(meta))
    signing.sign(str(folder / "meta.json"), KEY.encode())
    again = _batch(tmp_path)
    changed = _compiles(again)[0]
    assert again.cache_key(changed) != key
    assert again.reusable(changed, {}, None)  # type: ignore[arg-type]
    (folder / "program.pt2").write_bytes(b"changed after the fact")
    assert not again.reusable(changed, {}, None)  # type: ignore[arg-type]


def test_a_compile_counts_apart_in_the_summary_and_keeps_its_own_keys(tmp_path: Path) -> None:
    _folder(tmp_path, "2.6.0")
    loads = _batch(tmp_path)
    program, compile_item = loads.items(loads.wanted())
    result = {"status": "ok", "compile_s": 11.2, "load_s": 1.6, "serializer_version": "8.1", "package": "aoti.pt2"}
    batch.fill(loads, compile_item.record, result)
    loads.finished(compile_item, result)
    assert set(compile_item.record) == set(AOTI_COMPILE_KEYS) and compile_item.record["compile_s"] == 11.2
    assert (
        loads.tally(compile_item.record) == "compiled ok" and loads.tally(dict(program.record, status="pass")) == "pass"
    )
    line = batch.summary({"pass": 2, "compiled ok": 1, "compiled skipped": 1}, loader.TALLIES, "nothing")
    assert line == "done: pass 2, compiled ok 1, compiled skipped 1"
    loads.died(compile_item)
    assert (
        compile_item.record["status"] == "crash"
        and "while this program compiled" in compile_item.record["error_message"]
    )


# --- the package's fresh load, folded into the compile's record ------------------------------------------


@pytest.mark.parametrize(
    "load, outcome, step",
    [
        ({"status": "pass", "load_s": 1.5, "run_s": 0.01, "checked_inputs": 2}, "ok", None),
        (
            {"status": "mismatch", "error_type": "AssertionError", "error_message": "output 0 differs"},
            "mismatch",
            "run",
        ),
        ({"status": "run-error", "error_type": "RuntimeError", "error_message": "bad"}, "error", "run"),
        ({"status": "load-error", "error_type": "RuntimeError", "error_message": "dlopen"}, "error", "load"),
        ({"status": "crash", "error_type": "signal.SIGSEGV", "error_message": "killed"}, "crash", "load"),
        ({"status": "timeout", "error_message": "ran past"}, "timeout", "load"),
        ({"status": "not-applicable", "error_message": "needs a C++ compiler"}, "not-applicable", None),
    ],
)
def test_the_packages_load_decides_the_outcome_and_the_step_then_its_folder_goes(
    tmp_path: Path, load: Dict[str, Any], outcome: str, step: Any
) -> None:
    folder = tmp_path / "package"
    folder.mkdir()
    compiled: Dict[str, Any] = {"status": "compiled?", "compile_s": 9.0, "package_bytes": 10, "aoti_api": API.name}
    merge_aoti_compile(compiled, dict(load, aoti_loader="aoti_load_package"), {"folder": str(folder)})
    assert (compiled["status"], compiled["failed_step"]) == (outcome, step)
    assert compiled["compile_s"] == 9.0 and compiled["aoti_loader"] == "aoti_load_package"
    assert compiled["error_message"] == (None if outcome == "ok" else load.get("error_message"))
    assert not folder.exists()


# --- the option and the engine -------------------------------------------------------------------------


def test_the_option_reads_and_writes_and_the_load_sessions_take_it() -> None:
    request = LoadRequest.from_argv(["saved", "--out", "o", "--aoti", "--aoti-timeout", "90"])
    assert request.aoti and request.aoti_timeout == 90.0 and request.aoti_from == "all"
    assert LoadRequest.from_argv(request.argv()) == request
    picked = LoadRequest.from_argv(["saved", "--out", "o", "--aoti", "--aoti-from", "nearest-and-oldest"])
    assert picked.aoti_from == "nearest-and-oldest" and LoadRequest.from_argv(picked.argv()) == picked
    assert load_words(["--aoti-from", "nearest-and-oldest", "--tag", "t"]) == ["--aoti-from", "nearest-and-oldest"]
    with pytest.raises(Exception, match="--aoti-from"):
        LoadRequest(artifacts=("saved",), out="o", aoti_from="newest").validate()
    assert "--aoti" not in LoadRequest(artifacts=("saved",), out="o").argv()
    assert load_words(["--mode", "strict", "--aoti", "--aoti-timeout", "90"]) == ["--aoti", "--aoti-timeout", "90"]
    with pytest.raises(Exception, match="--aoti-timeout"):
        LoadRequest(artifacts=("saved",), out="o", aoti_timeout=0).validate()


def test_a_message_with_a_time_limit_of_its_own_runs_under_it_and_its_follow_up_under_the_batchs() -> None:
    seen: List[Tuple[str, float]] = []

    class Recording:
        def run(self, job: Dict[str, Any], timeout: float) -> Dict[str, Any]:
            seen.append((job["job"], timeout))
            if job["job"] == "first":
                return {"status": "ok", messages.FOLLOW_UP: {"message": {"job": "second"}, "merge": "noop"}}
            return {"status": "pass"}

        def close(self) -> None:
            pass

    merged: List[Dict[str, Any]] = []
    isolation = settings.FollowUps(Recording())  # type: ignore[arg-type]
    original = settings.merge
    try:
        settings.merge = lambda name, result, second, follow: merged.append(second)  # type: ignore[assignment]
        isolation.run({"job": "first", messages.TIME_LIMIT: 165.0}, 120.0)
        isolation.run({"job": "plain"}, 120.0)
    finally:
        settings.merge = original  # type: ignore[assignment]
    assert seen == [("first", 165.0), ("second", 120.0), ("plain", 120.0)]
    assert merged == [{"status": "pass", "total_s": merged[0]["total_s"]}]


def test_the_load_record_files_kinds_are_read_by_the_store_apart(tmp_path: Path) -> None:
    """A load record file holding all three kinds: each reader gets its own (see records/product_uses)."""
    from matrix.records import store

    _folder(tmp_path / "saved", "2.6.0")
    loads = _batch(tmp_path / "saved")
    program, compile_item = loads.items(loads.wanted())
    folder = tmp_path / "records"
    folder.mkdir()
    with records.Writer(str(folder / "load_torch-2.13.0+cpu_cpu_py3.11.jsonl")) as writer:
        writer.write(dict(program.record, status="pass", finished_at="2025-01-01T00:00:00+00:00"))
        writer.write(dict(program.record, kind=AOTI_LOAD_KIND, status="pass", finished_at="2025-01-01T00:00:00+00:00"))
        writer.write(dict(compile_item.record, status="ok", finished_at="2025-01-01T00:00:00+00:00"))
    read = store.load([str(folder)], workers=0)
    assert not read.warnings
    assert [len(read.products[p.name]) for p in PRODUCTS] == [1, 1, 1]
    assert list(read.products[COMPILE.name].columns) == list(AOTI_COMPILE_KEYS)
