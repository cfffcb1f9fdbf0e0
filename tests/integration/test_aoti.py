"""The aoti stage for real, on the installed torch: one AOTInductor compile, shared with test_aoti_loads.py.

A small case with a dynamic batch and an extra input, run once with the aoti stage for the whole test run
(tests/integration/aoti_package.py: the compile), runs again in one mode against a copy of that run's result
cache: without the stage (serialized all the same, so that only the stage differs), with it (reused), without it
again (reused), and once more with the stage on a machine whose C++ compiler is missing. The compile's own process
bounds (:mod:`matrix.worker.forked`) are checked on plain functions.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
import torch

from matrix.contract import layout
from matrix.contract.requests import KEY_VARIABLE
from matrix.contract.schema import AOTI_KEYS
from matrix.worker import aoti, aoti_stage, forked, signing

from .aoti_package import CASE, KEY, STAGES, copy_of, environ, leftovers
from conftest import ROOT, read_cells

pytestmark = pytest.mark.xdist_group("test_aoti")  # one worker, so that its module fixture is built once

PLAIN = "check,serialize"  # the shared run's stages less aoti: a run without the stage, as like it as can be


def _run(tmp: Path, name: str, stages: str, *options: str, **env: str) -> Dict[str, Any]:
    """Run the case in non-strict mode with ``stages``; returns its one cell record."""
    out = tmp / name
    env_ = environ(tmp, name)
    env_.update(TORCHINDUCTOR_CACHE_DIR=str(tmp / (name + "-inductor")), **env)
    command = [sys.executable, "-m", "matrix", "run", "--cases", CASE, "--mode", "non-strict", "--stages", stages,
               "--out", str(out), "--progress", "none", *options]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=env_, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    cells = read_cells(out)
    assert len(cells) == 1, cells
    left = leftovers(tmp, name)
    assert left == [], left  # no program, package or socket left behind
    return cells[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, aoti_package: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("aoti")
    # The shared run's cache and programs, copied: the runs here reuse and restore into them.
    cache, saved = str(copy_of(aoti_package, "cache", tmp)), copy_of(aoti_package, "saved", tmp)
    found: Dict[str, Any] = {"tmp": tmp, "saved": saved, "shared": aoti_package["folder"]}
    found["aoti"] = aoti_package["cell"]  # check,serialize,aoti with --cache and --artifacts: the compile
    found["aoti_wall_s"] = aoti_package["wall_s"]
    found["plain"] = _run(tmp, "plain", PLAIN, "--cache", cache)
    found["aoti_again"] = _run(tmp, "aoti_again", STAGES, "--cache", cache, "--artifacts", str(saved))
    found["plain_again"] = _run(tmp, "plain_again", PLAIN, "--cache", cache)
    found["no_compiler"] = _run(tmp, "no_compiler", "check,aoti", "--no-cache", CXX=str(tmp / "absent" / "g++"))
    yield found


def test_a_passing_cell_compiles_loads_and_matches_its_package(runs: Dict[str, Any]) -> None:
    cell = runs["aoti"]
    assert cell["status"] == "pass" and cell["check_status"] == "ok"
    assert cell["aoti_status"] == "ok", (cell["aoti_error_type"], cell["aoti_error"], cell["stderr_tail"])
    assert cell["aoti_error"] is None and cell["aoti_error_type"] is None
    assert cell["aoti_api"] == "aoti_compile_and_package"  # the 2.6+ API, found by what torch has
    assert cell["aoti_compile_s"] > 0 and cell["aoti_load_s"] > 0 and cell["aoti_run_s"] > 0
    folders = list(runs["saved"].glob("*/non-strict/dynamic_batch"))
    assert len(folders) == 1
    folder = folders[0]
    package = folder / aoti.AOTI_PACKAGE
    assert package.is_file() and package.stat().st_size == cell["aoti_package_bytes"] > 0
    meta = json.loads((folder / layout.META).read_text())
    assert meta["aoti"]["file"] == aoti.AOTI_PACKAGE and meta["aoti"]["api"] == cell["aoti_api"]
    assert meta["calls"] == 2  # the example input and the extra one, each run on the package
    # Listed like the program and signed with it: the signature covers the package's sha256.
    assert layout.verify(str(folder), meta) is None and aoti.AOTI_PACKAGE in {f["name"] for f in meta["files"]}
    assert signing.untrusted(str(folder), meta, KEY.encode()) is None
    print("\naoti stage: compile %.1f s, fresh load %.1f s, run %.4f s, package %d bytes, whole run %.1f s" % (
        cell["aoti_compile_s"], cell["aoti_load_s"], cell["aoti_run_s"], cell["aoti_package_bytes"],
        runs["aoti_wall_s"]))  # fmt: skip


def test_a_cell_run_without_the_stage_has_no_aoti_fields_and_compiles_nothing(runs: Dict[str, Any]) -> None:
    for name in ("plain", "plain_again"):
        cell = runs[name]
        assert cell["status"] == "pass"
        assert not [key for key in cell if key.startswith("aoti")], name
    # Nothing reached AOTInductor's compiler: no library or package in the run's compile cache.
    inductor = runs["tmp"] / "plain-inductor"
    compiled = [p.name for p in inductor.rglob("*") if p.suffix in (".so", ".pt2", ".cpp")] if inductor.exists() else []
    assert compiled == []


def test_results_with_and_without_the_stage_are_kept_apart(runs: Dict[str, Any]) -> None:
    plain, aoti, aoti_again, plain_again = (runs[n] for n in ("plain", "aoti", "aoti_again", "plain_again"))
    assert plain["reused_from"] is None and aoti["reused_from"] is None  # a run with the stage never reuses one without
    assert aoti_again["reused_from"] == aoti["run_id"]
    assert {k: aoti_again[k] for k in AOTI_KEYS} == {k: aoti[k] for k in AOTI_KEYS}
    assert plain_again["reused_from"] == plain["run_id"]  # nor one without it one with it
    # The reused result compiled nothing: its package is the one kept, restored where the run keeps programs.
    inductor = runs["tmp"] / "aoti_again-inductor"
    assert not inductor.exists() or not [p for p in inductor.rglob("*") if p.suffix in (".so", ".pt2")]


def test_without_a_compiler_the_stage_is_not_applicable_naming_it(runs: Dict[str, Any]) -> None:
    cell = runs["no_compiler"]
    assert cell["status"] == "pass"  # the export and its check do not depend on it
    assert cell["aoti_status"] == "not-applicable", cell["aoti_error"]
    assert cell["aoti_error_type"] == "torch._inductor.exc.InvalidCxxCompiler"
    assert cell["aoti_error"].startswith("compile: needs a C++ compiler (g++")
    assert str(runs["tmp"]) not in cell["aoti_error"]  # the record names the compiler, not this machine's paths
    assert cell["aoti_compile_s"] is None and cell["aoti_package_bytes"] is None


def test_the_kept_package_loads_again_in_this_process_and_refuses_another_key(
    runs: Dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = next(runs["saved"].glob("*/non-strict/dynamic_batch"))
    copy = tmp_path / folder.relative_to(runs["saved"])
    shutil.copytree(folder, copy)
    meta = json.loads((copy / layout.META).read_text())
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    loaded = aoti_stage.AotiLoadJob(folder=str(copy), meta=meta).run()
    assert loaded["status"] == "pass" and loaded["checked_inputs"] == 2, loaded
    monkeypatch.setenv(KEY_VARIABLE, "another-" + "7" * 32)
    refused = aoti_stage.AotiLoadJob(folder=str(copy), meta=meta).run()
    assert refused["status"] == "untrusted" and "load_s" not in refused


# --- the compile's own process ---------------------------------------------------------------------


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has ended)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[-1].split()[:1] != ["Z"]
    except OSError:
        return False


def test_a_compile_past_its_limit_is_killed_with_what_it_started(tmp_path: Path) -> None:
    noted = tmp_path / "helper.pid"

    def hang() -> Dict[str, Any]:
        helper = subprocess.Popen(["sleep", "60"])  # as the C++ compiler would be
        noted.write_text(str(helper.pid))
        time.sleep(60)
        return {"status": "compiled"}

    started = time.perf_counter()
    result = forked.run(hang, 2.0)
    assert result["status"] == "timeout" and "2 s limit" in result["error_message"]
    assert time.perf_counter() - started < 10
    helper = int(noted.read_text())
    deadline = time.monotonic() + 5
    while _running(helper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(helper)


def _out_of_memory() -> Dict[str, Any]:
    raise MemoryError("cannot allocate")


def _killed() -> Dict[str, Any]:
    os.kill(os.getpid(), signal.SIGKILL)
    return {}


def test_a_compile_that_dies_is_a_crash_and_one_that_returns_is_its_result() -> None:
    assert forked.run(lambda: {"status": "compiled", "compile_s": 1.5}, 30) == {"status": "compiled", "compile_s": 1.5}
    died = forked.run(_killed, 30)
    assert (died["status"], died["error_type"]) == ("crash", "signal.SIGKILL")
    assert died["error_message"] == "its process was killed by SIGKILL"
    raised = forked.run(_out_of_memory, 30)
    assert raised["status"] == "crash" and raised["error_type"] == "MemoryError"


# --- the compile API of releases before 2.6 ---------------------------------------------------------


class _WithKeyword(torch.nn.Module):
    def forward(self, x: Any, *, scale: Any) -> Any:
        return x * scale


def _fake_compile(calls: List[Any]) -> Dict[str, Any]:
    """torch._inductor.aot_compile as 2.3 and as 2.4–2.5 declare it, each recording how it was called."""

    def made(options: Dict[str, Any]) -> str:
        Path(options["aot_inductor.output_path"]).write_bytes(b"library")
        return options["aot_inductor.output_path"]

    def flat(gm: Any, example_inputs: List[Any], options: Any = None) -> str:  # 2.3
        calls.append(("flat", example_inputs))
        return made(options)

    def split(gm: Any, args: Any, kwargs: Any = None, *, options: Any = None) -> str:  # 2.4, 2.5
        calls.append(("split", args, kwargs))
        return made(options)

    return {"2.3": flat, "2.4": split}


def test_the_library_api_passes_the_inputs_as_each_release_takes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2.3's aot_compile takes the example inputs flat (as its torch._export.aot_compile flattens them); 2.4 and
    2.5 take args and kwargs apart. The program compiled is the cell's own, whatever the release."""
    import torch._inductor

    x, scale = torch.ones(2), torch.full((2,), 3.0)
    program = torch.export.export(_WithKeyword(), (x,), {"scale": scale})
    api = aoti.Api(aoti.LIBRARY_API, aoti.AOTI_LIBRARY)
    calls: List[Any] = []
    for release, fake in _fake_compile(calls).items():
        monkeypatch.setattr(torch._inductor, "aot_compile", fake)
        path = str(tmp_path / release / aoti.AOTI_LIBRARY)
        Path(path).parent.mkdir()
        assert aoti.compile_program(api, program, (x,), {"scale": scale}, path) == path
        assert Path(path).read_bytes() == b"library"
    (kind, flat), (other, args, kwargs) = calls
    assert kind == "flat" and [id(t) for t in flat] == [id(x), id(scale)]
    assert other == "split" and args == (x,) and list(kwargs) == ["scale"] and kwargs["scale"] is scale


class _Writer:
    """A PT2 archive writer with 2.5's interface (the installed torch has it no more), on zipfile."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> _Writer:
        self.zip = zipfile.ZipFile(self.path, "w")
        self.zip.writestr("archive_format", "pt2")
        return self

    def __exit__(self, *exc: Any) -> None:
        self.zip.close()

    def write_file(self, name: str, path: str) -> None:
        self.zip.write(path, name)


def test_2_5s_package_is_built_in_a_folder_of_its_own_and_archived_as_2_5_archives_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2.5 archives every file in the folder of its output path: were the archive there, it would archive itself."""
    import torch._inductor

    calls: List[Any] = []

    def packaging(gm: Any, args: Any, kwargs: Any = None, *, options: Any = None) -> str:  # 2.5's, packaging
        calls.append(options)
        folder = Path(options["aot_inductor.output_path"])
        assert options["aot_inductor.package"] is True and folder.is_dir() and not any(folder.iterdir())
        for name in ("model.cpp", "model.o", "model_compile_flags.json"):
            (folder / name).write_text(name)
        (folder / "constants").mkdir()
        (folder / "constants" / "weights.o").write_text("weights")  # where 2.5 puts the constants' object file
        return str(folder)

    monkeypatch.setattr(torch._inductor, "aot_compile", packaging)
    monkeypatch.setattr(aoti, "package_writer", lambda: (_Writer, "data/aotinductor/"))
    x = torch.ones(2)
    program = torch.export.export(_WithKeyword(), (x,), {"scale": x})
    path = tmp_path / "private" / aoti.AOTI_PACKAGE
    path.parent.mkdir()
    api = aoti.Api(aoti.PACKAGE_OPTION_API, aoti.AOTI_PACKAGE)
    assert aoti.compile_program(api, program, (x,), {"scale": x}, str(path)) == str(path)
    (options,) = calls
    assert Path(options["aot_inductor.output_path"]).parent == path.parent  # beside the archive, not holding it
    with zipfile.ZipFile(path) as archived:
        names = archived.namelist()
    built = ("model.cpp", "model.o", "model_compile_flags.json", "constants/weights.o")
    assert names == ["archive_format"] + ["data/aotinductor/" + name for name in built]  # not the archive itself
    # 2.5 loads it from a folder, as its compile left it (from a .pt2 it links into a folder it never makes).
    loaded: List[Any] = []

    def load_package(where: str, device: str) -> Any:  # 2.5's
        loaded.append((where, device))
        return len

    monkeypatch.setattr(aoti, "loader_for", lambda kind: (aoti.PACKAGE_OPTION_LOADER, None))
    monkeypatch.setattr(aoti, "_package_loader", lambda: load_package)
    assert aoti.load(str(path), aoti.AOTI_PACKAGE, "cpu") is len
    ((folder, device),) = loaded
    found = sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*") if p.is_file())
    assert device == "cpu" and found == sorted(built) and (Path(folder) / "model.cpp").read_text() == "model.cpp"
    # A package of another layout (2.6 on keeps a folder per model) has nothing 2.5 could build.
    other = tmp_path / "other.pt2"
    with zipfile.ZipFile(other, "w") as archived:
        archived.writestr("package/data/aotinductor/model/model.cpp", "x")
    with pytest.raises(RuntimeError, match="no file under data/aotinductor/, where 2.5 keeps"):
        aoti.unpack(str(other))
    # A package that names a file outside its folder is refused before anything is written there.
    hostile = tmp_path / "hostile.pt2"
    with zipfile.ZipFile(hostile, "w") as archived:
        archived.writestr("data/aotinductor/../../escaped", "x")
    with pytest.raises(ValueError, match="outside its folder"):
        aoti.unpack(str(hostile))
    assert not (tmp_path / "escaped").exists()
