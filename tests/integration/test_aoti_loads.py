"""``load`` of a kept AOTInductor package for real, on the installed torch: one compile, shared with test_aoti.py.

A small case with a dynamic batch runs once per test run with ``--stages check,serialize,aoti --artifacts``
(tests/integration/aoti_package.py: the compile, shared). ``load`` then
loads its program and its package, each in a process of its own: with a cache of its own (loaded), with the
run's cache (the run's fresh loads, reused), from an untrusted copy (refused, nothing loaded) and from a copy
whose package was changed (refused by the sha256 meta.json lists, never served from the cache). A loader that
kills its process is a crash of that package's load alone. A report built from the records shows the package.
"""

from __future__ import annotations

import faulthandler
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from matrix.contract import records
from matrix.contract.products import PACKAGE
from matrix.contract.requests import KEY_VARIABLE
from matrix.contract.schema import AOTI_LOAD_KEYS, AOTI_LOAD_KIND, LOAD_KEYS
from matrix.report import build as report
from matrix.worker import aoti, loader

from .aoti_package import KEY, copy_of, environ, leftovers
from conftest import ROOT

pytestmark = pytest.mark.xdist_group("test_aoti_loads")  # one worker, so that its module fixture is built once

OTHER_KEY = "aoti-loads-another-key-" + "8" * 32


def _command(tmp: Path, name: str, *argv: str, key: str = KEY) -> Dict[str, Any]:
    """Run ``export-matrix ARGV`` with its own temporary and compile folders; its wall time and output."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "matrix", *argv, "--progress", "none"], cwd=ROOT,
                          env=environ(tmp, name, key), capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    left = leftovers(tmp, name)
    assert left == [], left  # no copy of a package, no socket left behind
    return {"wall_s": time.perf_counter() - started, "stderr": done.stderr}


def _loads(folder: Path) -> Dict[str, Dict[str, Any]]:
    """The records of a load's folder by kind: ``load`` and ``aoti-load``, one each."""
    (path,) = folder.glob("load_*.jsonl")
    found, _ = records.read(str(path))
    by_kind = {record["kind"]: record for record in found}
    assert len(by_kind) == len(found) == 2, found
    return by_kind


@pytest.fixture(scope="module")
def loads(tmp_path_factory: pytest.TempPathFactory, aoti_package: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("aoti-loads")
    # The shared run (its records, programs and result cache), copied: loads and reports write beside them.
    saved, cache = copy_of(aoti_package, "saved", tmp), str(copy_of(aoti_package, "cache", tmp))
    copy_of(aoti_package, "run", tmp)  # the report below reads it
    found: Dict[str, Any] = {"tmp": tmp, "saved": saved, "run": aoti_package, "cell": aoti_package["cell"]}
    found["fresh"] = _command(tmp, "fresh", "load", str(saved), "--out", str(tmp / "fresh"), "--cache",
                              str(tmp / "own-cache"))  # fmt: skip
    found["reused"] = _command(tmp, "reused", "load", str(saved), "--out", str(tmp / "reused"), "--cache", cache)
    shutil.copytree(saved, tmp / "untrusted")
    found["untrusted"] = _command(tmp, "untrusted", "load", str(tmp / "untrusted"), "--out",
                                  str(tmp / "untrusted-loads"), "--no-cache", key=OTHER_KEY)  # fmt: skip
    shutil.copytree(saved, tmp / "tampered")
    package = next((tmp / "tampered").rglob(aoti.AOTI_PACKAGE))
    data = bytearray(package.read_bytes())
    data[len(data) // 2] ^= 0xFF  # the same size, another content
    package.write_bytes(bytes(data))
    found["tampered"] = _command(tmp, "tampered", "load", str(tmp / "tampered"), "--out",
                                 str(tmp / "tampered-loads"), "--cache", str(tmp / "own-cache"))  # fmt: skip
    yield found


def test_load_loads_the_kept_package_in_a_process_of_its_own_and_records_it(loads: Dict[str, Any]) -> None:
    assert loads["cell"]["aoti_status"] == "ok", loads["cell"]["aoti_error"]
    found = _loads(loads["tmp"] / "fresh")
    program, package = found["load"], found[AOTI_LOAD_KIND]
    assert set(program) == set(LOAD_KEYS) and program["status"] == "pass"
    assert set(package) == set(AOTI_LOAD_KEYS)
    assert package["status"] == "pass", (package["error_type"], package["error_message"], package["stderr_tail"])
    assert package["saved_torch_version"] == package["torch_version"] == loads["cell"]["torch_version"]
    assert (package["case"], package["mode"], package["package"]) == ("dynamic_batch", "non-strict", "aoti.pt2")
    assert package["aoti_api"] == loads["cell"]["aoti_api"] and package["aoti_loader"] == aoti.PACKAGE_LOADER
    assert package["package_bytes"] == loads["cell"]["aoti_package_bytes"] > 0
    assert package["checked_inputs"] == 2 and package["load_s"] > 0 and package["reused_from"] is None
    assert "2 artifacts, 0 already recorded, 2 to load" in loads["fresh"]["stderr"]  # the program and its package
    print("\nload: program %.2f s, package %.2f s (load %.2f s), whole command %.1f s" % (
        program["total_s"], package["total_s"], package["load_s"], loads["fresh"]["wall_s"]))  # fmt: skip


def test_the_runs_fresh_loads_are_reused_by_load_on_the_build_that_made_them(loads: Dict[str, Any]) -> None:
    found = _loads(loads["tmp"] / "reused")
    for record in found.values():
        assert record["status"] == "pass" and record["reused_from"] == loads["cell"]["run_id"], record
    assert "2 artifacts reused" in loads["reused"]["stderr"]
    assert found[AOTI_LOAD_KIND]["aoti_loader"] == aoti.PACKAGE_LOADER and found[AOTI_LOAD_KIND]["load_s"] > 0


def test_a_package_from_an_untrusted_copy_is_refused_and_nothing_of_it_loads(loads: Dict[str, Any]) -> None:
    found = _loads(loads["tmp"] / "untrusted-loads")
    for record in found.values():
        assert record["status"] == "untrusted" and record["error_type"] == "UntrustedArtifact", record
        assert record["load_s"] is None and record["exit_code"] is None  # no process was started for it
    assert "not signed with this machine's signing key" in loads["untrusted"]["stderr"]


def test_a_changed_package_is_refused_even_where_its_result_is_kept(loads: Dict[str, Any]) -> None:
    found = _loads(loads["tmp"] / "tampered-loads")
    package = found[AOTI_LOAD_KIND]
    assert package["status"] == "load-error" and package["error_type"] == "IncompleteArtifact"
    assert package["error_message"] == "incomplete artifact: aoti.pt2's sha256 differs from meta.json's"
    assert package["reused_from"] is None  # the cache holds this key's result from the load above: not used
    assert package["load_s"] is None


def test_a_loader_that_kills_its_process_is_a_crash_of_that_load_alone(
    loads: Dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def crash(path: str, kind: str, device: str) -> Any:
        faulthandler.disable()  # pytest's dump of the dying process says nothing here
        os.kill(os.getpid(), signal.SIGSEGV)

    monkeypatch.setattr(aoti, "load", crash)  # inherited by the forked process of the package's load
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the engine sets it before forking; restored after the test
    monkeypatch.chdir(ROOT)
    out = tmp_path / "crash"
    options = loader.LoadOptions(artifacts=(str(loads["saved"]),), out=str(out), isolation="fork", jobs=1,
                                 progress="none", no_cache=True)  # fmt: skip
    assert loader.execute(options) == {"pass": 1, "crash": 1}
    found = _loads(out)
    assert found["load"]["status"] == "pass"  # the program of the same folder loads
    crashed = found[AOTI_LOAD_KIND]
    assert crashed["status"] == "crash" and crashed["error_type"] == "signal.SIGSEGV", crashed


def test_a_report_of_the_records_shows_the_package_beside_the_program(loads: Dict[str, Any]) -> None:
    tmp = loads["tmp"]
    out = tmp / "report"
    report.build_report([str(tmp / "run"), str(tmp / "fresh")], str(out), charts=False)
    assert (out / PACKAGE.table).is_file()
    page = (out / "artifacts.md").read_text(encoding="utf-8")
    section = page[page.index("## " + PACKAGE.title) :]
    release = loads["cell"]["torch_version"]
    assert "1 package compiled on 1 build of 1 release, loaded on 1 build of 1 release." in section
    assert "| %s | 1 | 1 of 1 | – | none | – |" % release in section
    # The case's grid is drawn once, on its page, which the section links.
    assert "- [dynamic_batch](cases/dynamic_batch.md#compiled-loaded)" in section
    case = (out / "cases" / "dynamic_batch.md").read_text(encoding="utf-8")
    assert case.index("## Saved × loaded") < case.index("## Compiled × loaded")
    assert "| %s | ✅ |" % release in case[case.index("## Compiled × loaded") :]
    lines: List[str] = section[: section.index("### Statuses")].splitlines()
    print("\n" + "\n".join(lines))
