"""The result cache: where it lives, what a key covers, and an entry that is damaged, foreign or cannot be written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from matrix.worker import reuse


def test_the_options_win_over_the_variable_which_wins_over_the_default(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert reuse.root(None, False, env) == str(tmp_path / "xdg" / "torch-export-matrix" / "results")
    assert reuse.root(None, False, dict(env, EXPORT_MATRIX_RESULT_CACHE="/c")) == "/c"
    assert reuse.root(None, False, dict(env, EXPORT_MATRIX_RESULT_CACHE="off")) is None
    assert reuse.root("/d", False, dict(env, EXPORT_MATRIX_RESULT_CACHE="off")) == "/d"  # --cache DIR
    assert reuse.root("/d", True, env) is None  # --no-cache


def test_a_key_is_the_same_for_the_same_fields_in_any_order_and_differs_for_any_change() -> None:
    fields = {"case": "a", "mode": "strict", "stages": ["check"]}
    assert reuse.digest(fields) == reuse.digest(dict(reversed(list(fields.items()))))
    assert reuse.digest(fields) != reuse.digest(dict(fields, mode="non-strict"))


def test_a_case_key_covers_the_modules_beside_it_that_it_imports(tmp_path: Path) -> None:
    case = tmp_path / "case.py"
    case.write_text("import torch\nfrom helper import SCALE\nimport os\n")
    (tmp_path / "helper.py").write_text("from deeper import X\nSCALE = 2\n")
    (tmp_path / "deeper.py").write_text("X = 1\n")
    (tmp_path / "unrelated.py").write_text("Y = 1\n")
    first = reuse.case_fingerprint(str(case))
    (tmp_path / "unrelated.py").write_text("Y = 2\n")
    assert reuse.case_fingerprint(str(case)) == first  # a file it does not import decides nothing
    (tmp_path / "deeper.py").write_text("X = 2\n")
    second = reuse.case_fingerprint(str(case))
    assert second != first  # a module imported by a module it imports does
    case.write_text("import torch\nfrom helper import SCALE\nimport os\n# edited\n")
    assert reuse.case_fingerprint(str(case)) not in (first, second)
    assert reuse.case_fingerprint(str(tmp_path / "missing.py")) is None


def test_an_edit_to_a_worker_or_contract_module_changes_the_key_and_one_elsewhere_does_not(tmp_path: Path) -> None:
    package = Path(reuse.__file__).resolve().parent.parent
    copy = tmp_path / "matrix"
    for folder in ("worker", "contract"):
        shutil.copytree(package / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "report.py").write_text("X = 1\n")
    assert reuse.sources_hash(str(copy)) == reuse.worker_fingerprint()  # the key's field is this hash
    (copy / "report.py").write_text("X = 2\n")  # the host side's code decides no result
    assert reuse.sources_hash(str(copy)) == reuse.worker_fingerprint()
    for edited in ("worker/reads.py", "contract/case.py"):
        source = copy / edited
        kept = source.read_text()
        source.write_text(kept + "# edited\n")
        assert reuse.sources_hash(str(copy)) != reuse.worker_fingerprint(), edited
        source.write_text(kept)
    (copy / "worker" / "added.py").write_text("")  # a new module
    assert reuse.sources_hash(str(copy)) != reuse.worker_fingerprint()


def test_a_kept_result_comes_back_with_the_run_that_measured_it(tmp_path: Path) -> None:
    cache = reuse.ResultCache(str(tmp_path), "cell")
    record = {"run_id": "r1", "env_id": "e", "case": "a", "status": "pass", "graph_hash": "h", "finished_at": "t"}
    cache.put("ab" * 32, record, {"meta_sha256": "m"})
    entry = cache.get("ab" * 32)
    assert entry is not None and entry["extra"] == {"meta_sha256": "m"}
    assert entry["record"]["reused_from"] == "r1" and "run_id" not in entry["record"]
    fresh = {"run_id": "r2", "env_id": "e2", "case": "a", "status": None, "graph_hash": None, "finished_at": None}
    fresh["reused_from"] = None
    again = reuse.reused(entry, fresh)
    assert again == {
        "run_id": "r2", "env_id": "e2", "case": "a", "status": "pass", "graph_hash": "h", "finished_at": None,
        "reused_from": "r1",
    }  # fmt: skip
    # Kept again from a reused record, it still names the run that measured it.
    cache.put("cd" * 32, dict(again, run_id="r3"))
    assert cache.get("cd" * 32)["record"]["reused_from"] == "r1"  # type: ignore[index]


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"\xff\xfe", json.dumps({"format": 999, "key": "x"}).encode(), json.dumps([1, 2]).encode()],
    ids=["truncated", "not-utf8", "another-format", "not-an-object"],
)
def test_a_damaged_or_foreign_entry_is_ignored_with_one_warning(
    tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = reuse.ResultCache(str(tmp_path), "cell")
    for key in ("ab" * 32, "ac" * 32):
        path = tmp_path / "cell" / key[:2] / (key + ".json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        assert cache.get(key) is None
    lines = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("warning: result cache ") and "runs again" in lines[0]


def test_an_entry_kept_under_another_key_is_not_taken_for_this_one(tmp_path: Path) -> None:
    cache = reuse.ResultCache(str(tmp_path), "cell")
    cache.put("ab" * 32, {"run_id": "r", "status": "pass"})
    moved = tmp_path / "cell" / "ab" / ("ab" * 32 + ".json")
    other = tmp_path / "cell" / "ab" / ("ab" * 31 + "cd.json")
    moved.rename(other)
    assert cache.get("ab" * 31 + "cd") is None


def test_a_folder_that_cannot_be_written_turns_keeping_off_with_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    cache = reuse.ResultCache(str(blocker / "cache"), "cell")  # under a file: no folder can be made
    cache.put("ab" * 32, {"run_id": "r", "status": "pass"})
    cache.put("cd" * 32, {"run_id": "r", "status": "pass"})
    assert cache.writable is False and cache.get("ab" * 32) is None
    lines = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(lines) == 1 and "cannot keep results here" in lines[0]


def test_outcomes_of_the_machine_are_not_kept() -> None:
    assert reuse.machine_dependent({"status": "timeout"})
    assert reuse.machine_dependent({"status": "crash"})
    assert reuse.machine_dependent({"status": "fail", "reason": "out-of-memory"})
    assert reuse.machine_dependent({"status": "fail", "diagnosis_status": "timeout"})
    assert reuse.machine_dependent({"status": "pass", "serialize_fresh_status": "crash"})
    assert not reuse.machine_dependent({"status": "fail", "diagnosis_status": "done", "reason": None})
    assert not reuse.machine_dependent({"status": "mismatch", "check_status": "mismatch"})


def test_the_packages_hash_is_the_environments_not_what_this_process_put_on_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # setuptools puts its vendored packages (with their dist-info) on sys.path once imported:
    # a run that exported and a load that did not must still agree on the environment.
    from matrix.worker.environment import packages_hash

    before = packages_hash()
    vendored = tmp_path / "_vendor" / "vendored_thing-1.0.dist-info"
    vendored.mkdir(parents=True)
    (vendored / "METADATA").write_text("Metadata-Version: 2.1\nName: vendored-thing\nVersion: 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path / "_vendor"))
    assert packages_hash() == before
