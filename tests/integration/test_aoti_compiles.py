"""A saved program compiled with AOTInductor by ``load --aoti``'s job, for real, on the installed torch.

``load --aoti`` compiles only programs saved on an older release, and one torch is installed here: which
programs it picks is tests/unit/test_aoti_compile_planning.py's. This module runs the job itself on a program
this torch saved (``run --artifacts``), as the engine runs it: the item the planner makes, sent with its own time
limit to a process forked from this one, the package's load sent to a fresh process of a server forked before any
compile (:mod:`matrix.worker.pristine`). One real compile, shared; a compile past its limit; a program that does
not load (nothing compiled); the command itself, which compiles nothing saved on its own release; a report.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from matrix.contract import layout, records
from matrix.contract.layout import Artifact
from matrix.contract.products import COMPILE
from matrix.contract.requests import KEY_VARIABLE
from matrix.contract.schema import AOTI_COMPILE_KEYS, AOTI_COMPILE_KIND
from matrix.report import build as report
from matrix.worker import aoti, batch, loader, messages
from matrix.worker.pristine import Server

from conftest import ROOT

# slow: a compile of its own (load --aoti's job), 20-36 s cold; one worker, so that its module fixture is built once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("test_aoti_compiles")]

CASE = "tests/fixtures/basic/dynamic_batch.py"  # relative: the job imports the case module inside the checkout
KEY = "aoti-compiles-integration-" + "7" * 32
# The batch's --timeout for these jobs, where a package's load (1-2 s seen) fits with room on a busy machine. The
# compile runs under the time limit its message carries (--timeout plus --aoti-timeout); that a message's own
# limit is the one its job runs under, and its follow-up under the batch's, is test_aoti_compile_planning's to check.
BATCH_TIMEOUT_S = 10.0


def _leftovers(scratch: Path) -> List[str]:
    return sorted(p.name for p in scratch.iterdir() if p.name.startswith("export-matrix-"))


def compile_here(artifact: Artifact, scratch: Path, timeout_s: float) -> Dict[str, Any]:
    """The compile of ``artifact`` on this build as ``load --aoti`` plans and runs it; its record and wall time."""
    import torch

    api, missing = aoti.find_api()
    assert api is not None, missing
    loads = loader.LoadBatch([], torch.__version__, "cpu", "3.11", trust=True, given=dict(aoti_timeout=timeout_s))
    loads.env["run_id"], loads.can_load, loads.compile_api = "test", True, (api, None)
    (item,) = loads.items([loads.plan(COMPILE, artifact)])
    key = item.key
    assert item.job is not None and item.extra_s == timeout_s
    settings = batch.Settings(out=str(scratch / "unused.jsonl"), timeout=BATCH_TIMEOUT_S, isolation="fork")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the engine's parent does before it forks (OpenMP in a forked child)
    server = Server(settings.memory_mb)  # before any compile here: where the package's load runs
    started = time.perf_counter()
    try:
        runner = batch.backend(settings, 1, server.addresses)
        sent = dict(messages.message(item.job), **{messages.TIME_LIMIT: settings.timeout + item.extra_s})
        ((_, result),) = list(runner.run([(key, sent)], settings.timeout))
        runner.close()
    finally:
        server.stop()
        torch.set_num_threads(threads)
    batch.fill(loader.LoadBatch, item.record, result)  # type: ignore[arg-type]
    loader.own_keys(item.record)
    return {"record": item.record, "wall_s": time.perf_counter() - started}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("aoti-compiles")
    scratch = tmp / "scratch"
    scratch.mkdir()
    environ = dict(os.environ, PYTHONPATH=str(ROOT), TORCHINDUCTOR_CACHE_DIR=str(tmp / "inductor"), TMPDIR=str(scratch))
    environ[KEY_VARIABLE] = KEY
    command = [sys.executable, "-m", "matrix", "run", "--cases", CASE, "--mode", "non-strict", "--artifacts",
               str(tmp / "saved"), "--out", str(tmp / "run"), "--progress", "none", "--no-cache"]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (artifact,) = layout.discover((str(tmp / "saved"),))
    found: Dict[str, Any] = {"tmp": tmp, "scratch": scratch, "environ": environ, "artifact": artifact}
    patch = pytest.MonkeyPatch()
    try:
        # The forked job and the server inherit these: a cold inductor cache, temporary folders to check.
        patch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp / "inductor"))
        patch.setattr(tempfile, "tempdir", str(scratch))
        patch.chdir(ROOT)
        found["ok"] = compile_here(artifact, scratch, 300.0)
        found["ok_leftovers"] = _leftovers(scratch)
        found["limited"] = compile_here(artifact, scratch, 1.0)
        found["limited_leftovers"] = _leftovers(scratch)
        found["broken"] = compile_here(_unloadable_copy(artifact, tmp / "broken"), scratch, 300.0)
    finally:
        patch.undo()
    yield found


def _unloadable_copy(artifact: Artifact, root: Path) -> Artifact:
    """A copy of the artifact whose program.pt2 no torch loads, listed as it is in its meta.json."""
    folder = root / Path(artifact.relative)
    shutil.copytree(artifact.folder, folder)
    junk = b"not a saved program" * 10
    (folder / layout.PROGRAM).write_bytes(junk)
    meta = json.loads((folder / layout.META).read_text())
    entry = next(e for e in meta["files"] if e["name"] == layout.PROGRAM)
    entry.update(size=len(junk), sha256=hashlib.sha256(junk).hexdigest())
    (folder / layout.META).write_text(json.dumps(meta))
    (copy,) = layout.discover((str(root),))
    return copy


def test_a_saved_program_compiles_in_a_process_of_its_own_and_its_package_loads_in_a_fresh_one(
    compiled: Dict[str, Any],
) -> None:
    record = compiled["ok"]["record"]
    assert set(record) == set(AOTI_COMPILE_KEYS) and record["kind"] == AOTI_COMPILE_KIND
    assert record["status"] == "ok", (record["failed_step"], record["error_type"], record["error_message"])
    assert record["failed_step"] is None and record["error_message"] is None
    assert record["aoti_api"] == aoti.PACKAGE_API and record["aoti_loader"] == aoti.PACKAGE_LOADER
    assert (record["case"], record["mode"], record["case_module"]) == ("dynamic_batch", "non-strict", "imported")
    assert record["checked_inputs"] == 2  # the example input and the extra one, through the dynamic batch
    assert record["package_bytes"] > 100_000 and record["load_s"] > 0 and record["run_s"] > 0
    assert compiled["ok_leftovers"] == []  # the package's folder went with its load
    print("\ncompile %.1f s, package %.2f MB, load %.2f s, run %.4f s, whole job %.1f s" % (
        record["compile_s"], record["package_bytes"] / 1e6, record["load_s"], record["run_s"],
        compiled["ok"]["wall_s"]))  # fmt: skip


def test_a_compile_past_its_limit_is_that_programs_timeout_and_leaves_nothing(compiled: Dict[str, Any]) -> None:
    record = compiled["limited"]["record"]
    assert (record["status"], record["failed_step"]) == ("timeout", "compile")
    assert record["error_message"] == "ran past the compile's 1 s limit (--aoti-timeout) and was killed"
    assert record["package_bytes"] is None and record["load_s"] is None
    assert compiled["limited"]["wall_s"] < 30 and compiled["limited_leftovers"] == []


def test_a_program_that_does_not_load_here_is_skipped_and_nothing_is_compiled(compiled: Dict[str, Any]) -> None:
    record = compiled["broken"]["record"]
    assert record["status"] == "skipped" and record["failed_step"] is None
    assert record["error_message"].startswith("not compiled: the program does not load on this release: ")
    assert record["compile_s"] is None and record["package_bytes"] is None and record["error_type"]


def test_load_with_aoti_compiles_nothing_saved_on_its_own_release(compiled: Dict[str, Any]) -> None:
    tmp = compiled["tmp"]
    command = [sys.executable, "-m", "matrix", "load", str(tmp / "saved"), "--out", str(tmp / "loads"), "--aoti",
               "--progress", "none", "--no-cache"]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=compiled["environ"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (path,) = (tmp / "loads").glob("load_*.jsonl")
    found, _ = records.read(str(path))
    assert [r["kind"] for r in found] == ["load"] and found[0]["status"] == "pass"
    assert "1 artifacts, 0 already recorded, 1 to load" in done.stderr and "done: pass 1\n" in done.stderr


def test_a_report_of_the_compile_shows_it_in_the_packages_section(compiled: Dict[str, Any]) -> None:
    tmp = compiled["tmp"]
    folder = tmp / "records"
    shutil.copytree(tmp / "run", folder)
    record = dict(compiled["ok"]["record"], finished_at="2025-01-01T00:00:00+00:00")
    with records.Writer(str(folder / "load_compiles.jsonl")) as writer:
        writer.write(record)
    out = tmp / "report"
    report.build_report([str(folder)], str(out), charts=False)
    page = (out / "artifacts.md").read_text(encoding="utf-8")
    section = page[page.index("## " + COMPILE.title) :]
    release = record["torch_version"]
    assert "| %s | 1/1/1 of 1 |" % release in section
    assert "None: every program tried passed." in section
    assert (out / COMPILE.table).is_file()
