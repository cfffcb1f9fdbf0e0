"""The aoti stage's parts that need no compile: its options, its record fields, its package's trust and checks.

A real compile, load and run is in tests/integration/test_aoti.py.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from matrix import check_table
from matrix.check_table import Row
from matrix.commands import check
from matrix.commands.probe import Probed
from matrix.contract import layout, requests
from matrix.contract.errors import UserError
from matrix.contract.products import PACKAGE
from matrix.contract.requests import KEY_VARIABLE, RunRequest
from matrix.contract.schema import AOTI_KEYS, AOTI_STATUSES, LoadStatus
from matrix.worker import aoti, aoti_stage, cell_job, jobs, settings, signing, uses
from matrix.worker.messages import FOLLOW_UP

KEY = "a" * 40
OTHER_KEY = "b" * 40


# --- options ---------------------------------------------------------------------------------------


def test_the_stage_is_opt_in_and_its_limit_adds_to_the_cells() -> None:
    assert "aoti" not in requests.STAGES and "aoti" in requests.KNOWN_STAGES
    plain = RunRequest(out="o")
    assert "aoti" not in plain.stages and plain.cell_timeout == plain.timeout
    assert "--aoti-timeout" not in plain.argv() and "--stages" not in plain.argv()  # a default run's words as before
    chosen = RunRequest.from_argv(["--stages", "check,aoti", "--aoti-timeout", "90"], out="o")
    assert chosen.stages == ("check", "aoti") and chosen.cell_timeout == chosen.timeout + 90
    assert RunRequest.from_argv(chosen.argv()) == chosen
    chosen.validate()
    with pytest.raises(UserError, match="--aoti-timeout"):
        RunRequest(out="o", stages=("aoti",), aoti_timeout=0).validate()


def test_check_takes_the_stages_as_run_does() -> None:
    options = check.CheckOptions(case="c.py", stages="check, aoti", aoti_timeout=60)  # type: ignore[arg-type]
    assert options.stages == ("check", "aoti") and options.aoti_timeout == 60.0
    assert check.CheckOptions(case="c.py").stages == requests.STAGES
    with pytest.raises(check.CheckError, match="unknown stage"):
        check.CheckOptions(case="c.py", stages=("check", "aot"))


# --- the check table ---------------------------------------------------------------------------------


def _cell(mode: str, status: str, **values: Any) -> Dict[str, Any]:
    from matrix.contract import records

    fields: Dict[str, Any] = dict(torch_version="2.13.0+cpu", variant="cpu", python="3.11", case="mlp", run=0)
    record = records.empty_cell(mode=mode, status=status, **fields)
    record.update(values)
    return record


def test_the_check_table_shows_the_aoti_outcome_and_times_where_the_stage_ran() -> None:
    ran = {key: None for key in AOTI_KEYS}
    probed = Probed(
        cells={
            "strict": _cell("strict", "pass", **dict(ran, aoti_status="ok", aoti_compile_s=31.5, aoti_load_s=2.25)),
            "non-strict": _cell(
                "non-strict",
                "pass",
                **dict(
                    ran,
                    aoti_status="error",
                    aoti_compile_s=12.0,
                    aoti_error_type="torch._inductor.exc.InductorError",
                    aoti_error="compile: LoweringException: no lowering",
                ),
            ),  # fmt: skip
        }
    )
    rows = check.rows_for(probed, ["strict", "non-strict"], "2.13.0+cpu")
    assert rows[0].stages["aoti_status"] == "ok"
    text = check_table.format_rows(rows, "text").splitlines()
    # The stage's column is its declared label, under it its outcome; a failed stage's error is the error column's.
    assert text[0].split() == ["torch", "variant", "python", "mode", "status", "graph", "hash", "export", "s",
                               "aoti", "error"]  # fmt: skip
    assert text[2].split()[-1] == "ok"
    assert "aoti torch._inductor.exc.InductorError: compile: LoweringException" in text[3]
    assert [Row(**r) for r in json.loads(check_table.format_rows(rows, "json"))] == rows


def test_the_check_table_is_as_before_without_the_stage() -> None:
    rows = check.rows_for(Probed(cells={"strict": _cell("strict", "pass")}), ["strict"], "2.13.0+cpu")
    assert rows[0].stages == {}
    assert "aoti" not in check_table.format_rows(rows, "text").splitlines()[0]


# --- outcomes ------------------------------------------------------------------------------------------


def test_a_fresh_load_becomes_the_stages_outcome_and_the_cells_status_stays(tmp_path: Path) -> None:
    cell = {"status": "pass", **aoti_stage.blank(), "aoti_compile_s": 30.0}
    aoti_stage.merge_aoti_load(cell, {"status": "pass", "load_s": 2.5, "run_s": 0.01}, {"folder": str(tmp_path)})
    assert (cell["status"], cell["aoti_status"], cell["aoti_error"], cell["aoti_load_s"]) == ("pass", "ok", None, 2.5)
    assert tmp_path.exists()  # a folder asked for stays

    crashed = {"status": "crash", "error_type": "signal.SIGSEGV", "error_message": "killed by SIGSEGV"}
    aoti_stage.merge_aoti_load(cell, crashed, {"folder": str(tmp_path), "discard": True})
    assert (cell["status"], cell["aoti_status"], cell["aoti_error_type"]) == ("pass", "crash", "signal.SIGSEGV")
    assert cell["aoti_error"] == "load: killed by SIGSEGV"
    assert not tmp_path.exists()  # the last follow-up removes a folder kept for the follow-ups alone

    mismatch = {"status": "mismatch", "error_type": "AssertionError", "error_message": "input 1"}
    aoti_stage.merge_aoti_load(cell, mismatch, {})
    assert (cell["aoti_status"], cell["aoti_error"]) == ("mismatch", "run: input 1")
    for status in LoadStatus:
        aoti_stage.merge_aoti_load(cell, {"status": status.value}, {})
        assert cell["aoti_status"] in AOTI_STATUSES


def test_a_package_not_kept_with_its_program_is_skipped_saying_why(tmp_path: Path) -> None:
    def compiled() -> aoti_stage.Compiled:
        folder = tmp_path / ("c%d" % len(list(tmp_path.iterdir())))
        folder.mkdir()
        (folder / "aoti.pt2").write_bytes(b"pkg")
        return aoti_stage.Compiled(str(folder / "aoti.pt2"), {"file": "aoti.pt2"})

    for record, why in [
        ({"status": "mismatch"}, "the cell is mismatch"),
        ({"status": "pass", "artifact_error": "TypeError: input 0 leaf 0"}, "could not be kept: TypeError"),
        ({"status": "pass"}, "this run keeps no programs"),
    ]:
        package = compiled()
        aoti_stage.settle(record, dict(record), package, None)
        assert record["aoti_status"] == "skipped" and why in record["aoti_error"], record
        assert not Path(package.path).parent.exists()
    kept: Dict[str, Any] = {"status": "pass", "aoti_status": None}
    aoti_stage.settle(kept, dict(kept), compiled(), str(tmp_path))
    assert kept["aoti_status"] is None  # the fresh load decides


def test_no_compiler_is_named_however_torch_wraps_it() -> None:
    class InvalidCxxCompiler(RuntimeError):
        pass

    try:
        try:
            raise InvalidCxxCompiler("No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, 'g++')")
        except InvalidCxxCompiler as inner:
            raise RuntimeError("backend failed") from inner
    except RuntimeError as wrapped:
        message = aoti.no_compiler(wrapped)
    assert message is not None and message.startswith("needs a C++ compiler (g++")
    assert "(None, 'g++')" in message
    inductor_error = RuntimeError("InvalidCxxCompiler: No working C++ compiler found")  # InductorError's own text
    assert "No working C++ compiler found" in (aoti.no_compiler(inductor_error) or "")
    assert aoti.no_compiler(ValueError("no lowering")) is None


def test_the_compiler_in_a_results_key_says_when_there_is_none(tmp_path: Path) -> None:
    assert aoti.compiler_identity({"PATH": str(tmp_path)}) == "g++: absent"
    assert aoti.compiler_identity({"PATH": str(tmp_path), "CXX": "clang++-19"}) == "clang++-19: absent"


# --- follow-ups --------------------------------------------------------------------------------------


class _Recorded:
    """An isolation backend that returns what it is given to return, and notes what it ran."""

    def __init__(self, results: List[Dict[str, Any]]) -> None:
        self.results, self.ran = results, []  # type: ignore[var-annotated]

    def run(self, job: Dict[str, Any], timeout: float) -> Dict[str, Any]:
        self.ran.append(job["job"])
        return dict(self.results.pop(0))

    def close(self) -> None:
        pass


def test_a_cells_follow_ups_run_in_order_each_in_a_fresh_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "kept"
    folder.mkdir()
    package = uses.fresh_load(str(folder), discard=False, product=PACKAGE.name)
    program = cell_job.fresh_load(str(folder), discard=True)
    cell = {"status": "pass", FOLLOW_UP: [package, program], **aoti_stage.blank()}
    first = _Recorded([cell])
    fresh = _Recorded([{"status": "pass", "load_s": 1.5}, {"status": "pass", "load_s": 0.1}])
    result = settings.FollowUps(first, fresh).run({"job": "cell", "fields": {}}, 5.0)
    assert fresh.ran == ["aoti-load", "load"]
    assert result["aoti_status"] == "ok" and result["serialize_status"] == "ok"
    assert not folder.exists()  # removed by the last one, after both loaded it
    assert package["merge"] in jobs.MERGES and package["message"]["job"] in jobs.KINDS


# --- trust and checks, before anything of a package is loaded ----------------------------------------


def _folder(tmp_path: Path, key: str = KEY, package: bytes = b"compiled") -> Path:
    """An artifact folder as a cell that ran the aoti stage keeps it, signed with ``key`` (placeholder files)."""
    folder = tmp_path / "2.13.0+cpu_cpu_py3.11" / "non-strict" / "mlp"
    folder.mkdir(parents=True)
    files = {"program.pt2": b"program", "inputs.pt": b"inputs", "outputs.pt": b"outputs", "aoti.pt2": package}
    for name, data in files.items():
        (folder / name).write_bytes(data)
    meta = {
        "format_version": 2, "case": "mlp", "mode": "non-strict", "torch_version": "2.13.0+cpu", "variant": "cpu",
        "python": "3.11", "device": "cpu", "source": "cases", "case_file": "cases/mlp.py",
        "aoti": {"file": "aoti.pt2", "api": "aoti_compile_and_package", "in_spec": "[1, {}]", "device": "cpu"},
        "files": [{"name": n, "size": len(d), "sha256": hashlib.sha256(d).hexdigest()} for n, d in files.items()],
    }  # fmt: skip
    (folder / "meta.json").write_text(json.dumps(meta))
    signing.sign(str(folder / "meta.json"), key.encode())
    return folder


def _job(folder: Path) -> aoti_stage.AotiLoadJob:
    return aoti_stage.AotiLoadJob(folder=str(folder), meta=json.loads((folder / "meta.json").read_text()))


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """The packages the job hands to the release's loader (none is loaded for real)."""
    loaded: List[str] = []

    def load(path: str, kind: str, device: str) -> Any:
        loaded.append(path)
        raise RuntimeError("stop after the loader was reached")

    monkeypatch.setattr(aoti, "load", load)
    monkeypatch.setattr(aoti, "loader_for", lambda kind: (aoti.PACKAGE_LOADER, None))
    monkeypatch.setenv(KEY_VARIABLE, KEY)
    return loaded


@pytest.mark.parametrize("how", ["unsigned", "another key"])
def test_a_package_from_an_untrusted_folder_is_refused_like_an_unsigned_program(
    tmp_path: Path, loads: List[str], how: str
) -> None:
    folder = _folder(tmp_path, key=OTHER_KEY if how == "another key" else KEY)
    if how == "unsigned":
        (folder / "meta.sig").unlink()
    result = _job(folder).run()
    assert result["status"] == LoadStatus.UNTRUSTED.value and result["error_type"] == "UntrustedArtifact"
    assert result["error_message"].startswith("untrusted package: ")
    assert loads == []  # nothing of it reached the loader
    cell = dict(aoti_stage.blank())
    aoti_stage.merge_aoti_load(cell, result, {})
    assert cell["aoti_status"] == "untrusted" and cell["aoti_error"].startswith("load: untrusted package")


def test_a_changed_package_in_a_signed_folder_is_not_loaded(tmp_path: Path, loads: List[str]) -> None:
    folder = _folder(tmp_path)
    (folder / "aoti.pt2").write_bytes(b"compiled by someone else")
    result = _job(folder).run()
    assert result["status"] == LoadStatus.LOAD_ERROR.value and result["error_type"] == "IncompleteArtifact"
    assert "aoti.pt2 has" in result["error_message"] and loads == []


def test_a_trusted_package_is_loaded_from_a_checked_copy_not_from_its_folder(tmp_path: Path, loads: List[str]) -> None:
    folder = _folder(tmp_path)
    result = _job(folder).run()
    assert len(loads) == 1 and Path(loads[0]).name == "aoti.pt2" and Path(loads[0]).parent != folder
    assert not Path(loads[0]).exists()  # the job's own copy is gone with it
    assert result["status"] == LoadStatus.LOAD_ERROR.value and "the loader was reached" in result["error_message"]
    assert result["load_s"] >= 0


def test_meta_json_chooses_no_file_outside_the_list(tmp_path: Path, loads: List[str]) -> None:
    folder = _folder(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    meta["aoti"]["file"] = "../program.pt2"
    (folder / "meta.json").write_text(json.dumps(meta))
    signing.sign(str(folder / "meta.json"), KEY.encode())
    result = _job(folder).run()
    assert result["status"] == LoadStatus.LOAD_ERROR.value
    assert "describes no AOTInductor package" in result["error_message"]
    assert loads == []


def test_every_file_meta_json_lists_must_be_whole(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    meta = json.loads((folder / "meta.json").read_text())
    assert layout.verify(str(folder), meta) is None
    (folder / "aoti.pt2").write_bytes(b"x")
    assert layout.verify(str(folder), meta) == "aoti.pt2 has 1 bytes, meta.json says 8"
    meta["files"].append({"name": "../elsewhere", "size": 1, "sha256": "0"})
    assert "not a file in its folder" in (layout.verify_file(str(folder), meta, "../elsewhere") or "")


def test_a_loader_that_finds_no_compiler_is_not_applicable_naming_it(
    tmp_path: Path, loads: List[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def load(path: str, kind: str, device: str) -> Any:
        loads.append(path)
        raise RuntimeError("InvalidCxxCompiler: No working C++ compiler found in cpp.cxx: (None, 'g++')")

    monkeypatch.setattr(aoti, "load", load)
    result = _job(_folder(tmp_path)).run()
    assert result["status"] == LoadStatus.NOT_APPLICABLE.value and result["error_type"] == aoti.NO_COMPILER_TYPE
    assert result["error_message"].startswith("needs a C++ compiler") and result["aoti_loader"] == "aoti_load_package"


def test_a_release_without_a_loader_for_the_file_is_not_applicable_before_loading(
    tmp_path: Path, loads: List[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(aoti, "loader_for", lambda kind: (None, "torch 2.2.2 has no Python loader for AOTInductor"))
    result = _job(_folder(tmp_path)).run()
    assert result["status"] == LoadStatus.NOT_APPLICABLE.value
    assert "2.2.2 has no Python loader" in result["error_message"]
    assert loads == [] and "load_s" not in result
