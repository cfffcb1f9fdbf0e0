"""``load`` plans a load of every kept AOTInductor package beside its program's: its record, trust, loader, key.

Folders are hand-made (placeholder files, signed): nothing is compiled. A real package loaded by
``load`` is in tests/integration/test_aoti_loads.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from matrix.contract import layout, records
from matrix.contract.products import PACKAGE
from matrix.contract.requests import KEY_VARIABLE
from matrix.contract.schema import AOTI_LOAD_KEYS, AOTI_LOAD_KIND, LOAD_KEYS, LoadStatus
from matrix.worker import aoti, batch, loader, reuse, signing, uses
from matrix.worker.aoti_stage import AotiLoadJob
from matrix.worker.load_job import LoadJob

KEY = "c" * 40
OTHER_KEY = "d" * 40
LOADERS = {aoti.AOTI_PACKAGE: (aoti.PACKAGE_LOADER, None), aoti.AOTI_LIBRARY: (aoti.LIBRARY_LOADER, None)}


def _folder(root: Path, case: str = "mlp", package: Optional[str] = aoti.AOTI_PACKAGE, key: str = KEY) -> Path:
    """An artifact folder as a cell of 2.6.0+cpu keeps it, with its package unless ``package`` is None."""
    folder = root / "2.6.0+cpu_cpu_py3.11" / "non-strict" / case
    folder.mkdir(parents=True)
    files = {"program.pt2": b"program", "inputs.pt": b"inputs", "outputs.pt": b"outputs"}
    if package is not None:
        files[package] = b"compiled package"
    for name, data in files.items():
        (folder / name).write_bytes(data)
    meta: Dict[str, Any] = {
        "format_version": 2, "case": case, "mode": "non-strict", "torch_version": "2.6.0+cpu", "variant": "cpu",
        "python": "3.11", "device": "cpu", "source": "cases", "case_file": "cases/%s.py" % case,
        "files": [{"name": n, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()} for n, d in files.items()],
    }  # fmt: skip
    if package is not None:
        meta["aoti"] = {"file": package, "api": "aoti_compile_and_package", "in_spec": "[1, {}]", "device": "cpu"}
    (folder / "meta.json").write_text(json.dumps(meta))
    signing.sign(str(folder / "meta.json"), key.encode())
    return folder


def _batch(root: Path, key: str = KEY, trust: bool = False) -> loader.LoadBatch:
    """The load of everything under ``root`` on 2.13.0+cpu, set up as ``set_up`` would (no torch needed)."""
    found = layout.discover((str(root),))
    loads = loader.LoadBatch(found, "2.13.0+cpu", "cpu", "3.11", key.encode(), trust)
    loads.env.update(run_id="run1", serializer_version=None)
    loads.can_load = True
    loads.loaders = dict(LOADERS)
    loads.compiler = "g++ 14"
    return loads


def test_a_kept_package_is_loaded_after_its_program_as_a_record_of_its_own_kind(tmp_path: Path) -> None:
    _folder(tmp_path, "mlp")
    _folder(tmp_path, "plain", package=None)
    loads = _batch(tmp_path)
    items = loads.items(loads.wanted())
    assert [(i.record["kind"], i.record["case"]) for i in items] == [
        ("load", "mlp"), (AOTI_LOAD_KIND, "mlp"), ("load", "plain"),
    ]  # fmt: skip
    program, package = items[0], items[1]
    assert isinstance(program.job, LoadJob) and set(program.record) == set(LOAD_KEYS)
    assert isinstance(package.job, AotiLoadJob) and not package.job.trust
    assert set(package.record) == set(AOTI_LOAD_KEYS)
    assert package.label == "2.6.0+cpu_cpu_py3.11/non-strict/mlp/aoti.pt2" and package.key != program.key
    record = package.record
    assert (record["saved_torch_version"], record["torch_version"]) == ("2.6.0+cpu", "2.13.0+cpu")
    assert (record["package"], record["package_bytes"]) == ("aoti.pt2", 16)
    assert record["aoti_api"] == "aoti_compile_and_package" and record["mode"] == "non-strict"
    assert record["status"] is None  # the load decides


@pytest.mark.parametrize("how", ["another key", "unsigned"])
def test_a_package_from_an_untrusted_folder_is_refused_by_the_parent_like_its_program(tmp_path: Path, how: str) -> None:
    folder = _folder(tmp_path, key=OTHER_KEY if how == "another key" else KEY)
    if how == "unsigned":
        (folder / "meta.sig").unlink()
    loads = _batch(tmp_path)
    program, package = loads.items(loads.wanted())
    for item in (program, package):
        assert item.job is None, item.record  # no process is started for it
        assert item.record["status"] == LoadStatus.UNTRUSTED.value and item.record["error_type"] == "UntrustedArtifact"
    assert "pass --trust" in package.record["error_message"]
    trusted = _batch(tmp_path, trust=True).items(loads.wanted())[1]
    assert isinstance(trusted.job, AotiLoadJob) and trusted.job.trust  # --trust reaches the package's process


def test_a_release_without_a_loader_for_the_file_is_not_applicable_naming_what_it_lacks(tmp_path: Path) -> None:
    _folder(tmp_path, "new", package=aoti.AOTI_PACKAGE)
    _folder(tmp_path, "old", package=aoti.AOTI_LIBRARY)
    loads = _batch(tmp_path)
    loads.loaders[aoti.AOTI_PACKAGE] = (None, "torch 2.4.1 has no Python loader for AOTInductor packages")
    items = {(i.record["kind"], i.record["case"]): i for i in loads.items(loads.wanted())}
    lacking = items[(AOTI_LOAD_KIND, "new")]
    assert lacking.job is None and lacking.record["status"] == LoadStatus.NOT_APPLICABLE.value
    assert lacking.record["error_message"] == "torch 2.4.1 has no Python loader for AOTInductor packages"
    assert isinstance(items[(AOTI_LOAD_KIND, "old")].job, AotiLoadJob)  # a library where aot_load is: loaded
    assert isinstance(items[("load", "new")].job, LoadJob)  # the program is loaded whatever its package


def test_a_package_meta_json_does_not_describe_is_incomplete_without_a_process(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    meta["aoti"]["file"] = "../program.pt2"
    (folder / "meta.json").write_text(json.dumps(meta))
    signing.sign(str(folder / "meta.json"), KEY.encode())
    loads = _batch(tmp_path)
    package = loads.items(loads.wanted())[1]
    assert package.job is None and package.record["error_type"] == "IncompleteArtifact"
    assert "describes no AOTInductor package" in package.record["error_message"]


def test_resuming_tells_a_packages_load_from_its_programs(tmp_path: Path) -> None:
    _folder(tmp_path)
    loads = _batch(tmp_path)
    program, package = loads.items(loads.wanted())
    path = str(tmp_path / "load.jsonl")
    with records.Writer(path) as writer:
        writer.write(dict(package.record, status=LoadStatus.PASS.value))
    done, warnings = loads.done(path)
    assert done == {package.key} and not warnings  # the program is still to load
    with records.Writer(path) as writer:
        writer.write(dict(program.record, status=LoadStatus.PASS.value))
        writer.write(dict(package.record, saved_torch_version=None, status=LoadStatus.PASS.value))
    done, warnings = loads.done(path)
    assert done == {package.key, program.key}
    assert warnings == ["%s: skipped a aoti-load record without a usable saving release, case and mode" % path]


def test_an_untrusted_package_load_is_not_done_a_later_trusted_load_tries_it(tmp_path: Path) -> None:
    _folder(tmp_path)
    loads = _batch(tmp_path)
    package = loads.items(loads.wanted())[1]
    path = str(tmp_path / "load.jsonl")
    with records.Writer(path) as writer:
        writer.write(dict(package.record, status=LoadStatus.UNTRUSTED.value))
    assert loads.done(path) == (set(), [])


def test_a_package_loads_result_is_keyed_by_its_own_hash_and_the_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reuse, "build_fields", lambda: {"torch": "2.13.0+cpu"})
    folder = _folder(tmp_path)
    loads = _batch(tmp_path)
    program, package = loads.items(loads.wanted())
    keys = {loads.cache_key(program), loads.cache_key(package)}
    assert len(keys) == 2 and None not in keys
    loads.compiler = "clang++ 19"  # a package's loader compiles (2.5) or checks the device (2.10 on) with it
    assert loads.cache_key(package) not in keys and loads.cache_key(program) in keys
    # Another package in the same place: meta.json lists its sha256, so the key changes with it.
    (folder / "aoti.pt2").write_bytes(b"compiled other")
    meta = json.loads((folder / "meta.json").read_text())
    meta["files"][-1].update(size=14, sha256=hashlib.sha256(b"compiled other").hexdigest())
    (folder / "meta.json").write_text(json.dumps(meta))
    signing.sign(str(folder / "meta.json"), KEY.encode())
    again = _batch(tmp_path)
    assert again.cache_key(again.items(again.wanted())[1]) not in keys
    # A kept result stands only while the folder is whole.
    assert again.reusable(again.items(again.wanted())[1], {}, None)  # type: ignore[arg-type]
    (folder / "aoti.pt2").write_bytes(b"changed after the fact")
    assert not again.reusable(again.items(again.wanted())[1], {}, None)  # type: ignore[arg-type]


def test_a_record_keeps_its_own_kinds_keys_whatever_the_result_holds(tmp_path: Path) -> None:
    _folder(tmp_path)
    loads = _batch(tmp_path)
    program, package = loads.items(loads.wanted())
    result = {"status": "pass", "load_s": 1.5, "serializer_version": "8.1", "aoti_loader": "aoti_load_package"}
    for item in (program, package):
        batch.fill(loads, item.record, result)
        loads.finished(item, result)
    assert set(program.record) == set(LOAD_KEYS) and program.record["serializer_version"] == "8.1"
    assert set(package.record) == set(AOTI_LOAD_KEYS) and package.record["aoti_loader"] == "aoti_load_package"


def test_a_runs_fresh_load_of_its_package_is_kept_as_this_builds_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reuse, "build_fields", lambda: {"torch": "2.6.0+cpu"})
    folder = _folder(tmp_path)
    cache = reuse.ResultCache(str(tmp_path / "cache"), loader.LoadBatch.noun)
    env = {"torch_version": "2.6.0+cpu", "variant": "cpu", "python": "3.11", "run_id": "run0"}
    result = {"status": "pass", "load_s": 2.0, "run_s": 0.1, "aoti_loader": "aoti_load_package", "checked_inputs": 2}
    assert uses.keep_fresh_load(str(folder), result, env, cache, PACKAGE, "g++ 14")
    loads = loader.LoadBatch(layout.discover((str(tmp_path),)), "2.6.0+cpu", "cpu", "3.11", KEY.encode())
    loads.env.update(run_id="run1", serializer_version=None)
    loads.compiler = "g++ 14"
    entry = cache.get(loads.cache_key(loads.items(loads.wanted())[1]) or "")
    assert entry is not None and entry["record"]["kind"] == AOTI_LOAD_KIND
    assert entry["record"]["reused_from"] == "run0" and entry["record"]["checked_inputs"] == 2
    # Not tried, or the machine's doing: kept by nobody.
    for status in ("not-applicable", "crash", "timeout"):
        assert not uses.keep_fresh_load(str(folder), {"status": status}, env, cache, PACKAGE, "g++ 14")


def test_load_records_both_kinds_once_and_resumes_past_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine, inline (no process): a program that does not load, a package whose loader is reached."""
    _folder(tmp_path / "saved")
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    monkeypatch.setattr(aoti, "compiler_identity", lambda environ=None: "g++ 14")
    monkeypatch.setattr(aoti, "loader_for", lambda kind: (aoti.PACKAGE_LOADER, None))
    reached: List[str] = []

    def load(path: str, kind: str, device: str) -> Any:
        reached.append(kind)
        raise RuntimeError("the package is a placeholder")

    monkeypatch.setattr(aoti, "load", load)
    out = tmp_path / "records"
    options = loader.LoadOptions(artifacts=(str(tmp_path / "saved"),), out=str(out), isolation="inline",
                                 progress="none", no_cache=True)  # fmt: skip
    counts = loader.execute(options)
    assert counts == {"load-error": 2} and reached == ["aoti.pt2"]
    written, _ = records.read(str(next(out.glob("load_*.jsonl"))))
    kinds = {r["kind"]: r for r in written}
    assert set(kinds) == {"load", AOTI_LOAD_KIND} and len(written) == 2
    assert set(kinds[AOTI_LOAD_KIND]) == set(AOTI_LOAD_KEYS)
    assert kinds[AOTI_LOAD_KIND]["error_message"] == "the package is a placeholder"
    assert loader.execute(options) == {} and reached == ["aoti.pt2"]  # both recorded: nothing loads again
