from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from matrix.contract import checkout

from conftest import FIXTURES, ROOT, by_cell, read_cells, run_matrix


def test_basic_cases_pass_and_fail_as_expected_in_each_mode(basic_run):
    cells = by_cell(basic_run)
    assert cells[("add_one", "strict")]["status"] == "pass"
    assert cells[("add_one", "non-strict")]["status"] == "pass"
    for mode in ("strict", "non-strict"):
        failed = cells[("data_branch", mode)]
        assert failed["status"] == "fail"
        assert failed["failed_stage"] == "export"
        assert failed["error_type"] and failed["error_message"] and failed["error_traceback"]
    assert cells[("graph_break", "strict")]["status"] == "fail"
    assert cells[("graph_break", "strict")]["error_type"] == "torch._dynamo.exc.Unsupported"
    assert cells[("graph_break", "non-strict")]["status"] == "pass"


def test_what_a_case_prints_is_kept_in_its_log_tail(basic_run):
    for mode in ("strict", "non-strict"):
        assert "add_one: loaded" in (by_cell(basic_run)[("add_one", mode)]["stderr_tail"] or "")


def test_passing_cell_records_every_stage(basic_run):
    cell = by_cell(basic_run)[("dynamic_batch", "strict")]
    assert cell["status"] == "pass"
    assert cell["check_status"] == "ok"
    assert cell["checked_inputs"] == 2  # example_args and one extra_args entry
    assert cell["decompose_status"] == "ok" and cell["decomposed_hash"]
    assert cell["serialize_status"] == "ok"
    assert "aten.linear.default" in cell["ops"]
    assert "aten.addmm.default" in cell["decomposed_ops"]
    for key in ("load_s", "eager_s", "export_s", "check_s", "decompose_s", "serialize_s", "total_s", "peak_rss_mb"):
        assert cell[key] > 0, key
    assert cell["strict_passed"] is True
    assert cell["cell_id"] == "torch-%s/strict/dynamic_batch" % cell["torch_version"]


def test_environment_record(tmp_path):
    run_matrix("run", "--cases", str(FIXTURES / "basic" / "add_one.py"), "--out", str(tmp_path), "--mode", "strict")
    (path,) = tmp_path.glob("*.jsonl")
    env = json.loads(path.read_text().splitlines()[0])
    assert env["kind"] == "environment" and env["schema_version"] == 1
    import torch

    assert env["torch_version"] == torch.__version__
    assert env["capabilities"]["export"] is True
    assert env["python"] == "%d.%d" % sys.version_info[:2]
    assert env["cores"] == os.cpu_count() and env["cpu"]  # the machine a report's header cites
    assert path.name == "torch-%s_%s_py%s.jsonl" % (env["torch_version"], env["variant"], env["python"])
    # The code that made the run, which a report joining these records cites: the host's checkout, handed to the
    # worker (which runs from a copy outside it).
    assert env["tool_commit"] == checkout.commit(str(ROOT))


def test_a_worker_started_from_a_copy_outside_the_checkout_records_the_hosts_commit(tmp_path):
    """The commit a run's environment record names is the code that made this run, also where the result cache
    answers the whole run without importing torch (its environment as an earlier run, at another commit, kept it)."""
    from matrix.envs.worker_copy import worker_copy, worker_environ

    copy = worker_copy(tmp_path / "envs")
    assert checkout.commit(str(copy)) == ""  # the copy is in no checkout of its own
    env = worker_environ(copy, {"PATH": os.environ["PATH"], checkout.VARIABLE: "stale"})
    assert env[checkout.VARIABLE] == checkout.commit(str(ROOT))
    later = "0123456789ab"  # the host's commit when it runs again
    (tmp_path / "cwd").mkdir()  # a folder whose listing the runs leave alone (the case lists its folder)
    for out, commit in (("first", env[checkout.VARIABLE]), ("again", later)):
        words = ["--cases", str(FIXTURES / "basic" / "add_one.py"), "--mode", "strict", "--stages", "check"]
        words += ["--progress", "none", "--out", str(tmp_path / out), "--cache", str(tmp_path / "cache")]
        done = subprocess.run(
            [sys.executable, "-m", "matrix.worker", "run", *words], env=dict(env, **{checkout.VARIABLE: commit}),
            cwd=str(tmp_path / "cwd"), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        (path,) = (tmp_path / out).glob("*.jsonl")
        assert json.loads(path.read_text().splitlines()[0])["tool_commit"] == commit
    assert "answered without importing torch" in done.stderr, done.stderr  # the second run: every cell known


def test_faults_are_contained_and_classified(tmp_path, monkeypatch):
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    run_matrix(
        "run", "--cases", str(FIXTURES / "faults"), str(FIXTURES / "basic" / "add_one.py"),
        "--out", str(tmp_path), "--timeout", "8", "--max-memory", "1024", "--progress", "none", "-j", "1",
    )  # fmt: skip
    cells = by_cell(read_cells(tmp_path))
    for mode in ("strict", "non-strict"):
        assert cells[("segv", mode)]["status"] == "crash"
        assert cells[("segv", mode)]["error_type"] == "signal.SIGSEGV"
        assert cells[("hang", mode)]["status"] == "timeout"
        assert cells[("exits", mode)]["status"] == "crash"
        assert cells[("exits", mode)]["exit_code"] == 3
        assert cells[("raises", mode)]["status"] == "case-error"
        assert "this case fails at import" in cells[("raises", mode)]["error_message"]
        assert cells[("syntax", mode)]["status"] == "case-error"
        assert "syntax.py" in cells[("syntax", mode)]["error_message"]
        assert cells[("memory_hog", mode)]["status"] == "crash"
        assert cells[("memory_hog", mode)]["error_type"] == "MemoryError"
        # the state changed by state_a_leaks must not be seen by state_b_clean
        assert cells[("state_b_clean", mode)]["status"] == "pass", cells[("state_b_clean", mode)]["error_message"]
        assert cells[("add_one", mode)]["status"] == "pass"
    assert len(cells) == 2 * 9
    # What the killed, crashed and hung cells left in their temporary folder went with the run's.
    assert list(temporary.iterdir()) == []


def test_missing_capability_is_not_applicable(tmp_path):
    run_matrix(
        "run", "--cases", str(FIXTURES / "basic" / "needs_cond.py"), "--out", str(tmp_path),
        "--hide-capability", "cond", "export.strict",
    )  # fmt: skip
    cells = by_cell(read_cells(tmp_path))
    assert cells[("needs_cond", "strict")]["status"] == "not-applicable"
    assert cells[("needs_cond", "strict")]["missing"] == ["cond"]
    assert cells[("needs_cond", "non-strict")]["missing"] == ["cond", "export.strict"]


def test_select_and_tag_filter_cells(tmp_path):
    run_matrix(
        "run", "--cases", str(FIXTURES / "basic"), "--out", str(tmp_path), "--select", "*/strict/add_*", "data_*"
    )
    run_matrix(
        "run", "--cases", str(FIXTURES / "basic"), "--out", str(tmp_path), "--tag", "torch.cond", "--mode", "strict"
    )
    got = sorted((c["case"], c["mode"]) for c in read_cells(tmp_path))
    expected = [
        ("add_one", "strict"),
        ("data_branch", "non-strict"),
        ("data_branch", "strict"),
        ("needs_cond", "strict"),
    ]
    assert got == expected


def test_resume_after_sigkill_records_every_cell_once(tmp_path, monkeypatch):
    cases = [str(FIXTURES / "basic"), str(FIXTURES / "faults" / "hang.py")]
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "matrix", "run", "--cases", *cases, "--out", str(tmp_path), "--timeout", "3"]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(read_cells_safe(tmp_path)) < 3:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = read_cells_safe(tmp_path)
    assert 3 <= len(before) < 12
    # a record cut in the middle of its line, as a kill during a write leaves it
    (path,) = tmp_path.glob("*.jsonl")
    with open(path, "a") as f:
        f.write('{"schema_version": 1, "kind": "cell", "case": "trunc')
    resumed = run_matrix("run", "--cases", *cases, "--out", str(tmp_path), "--timeout", "3")
    assert "unreadable line" in resumed.stderr
    cells = read_cells_safe(tmp_path)
    keys = [(c["case"], c["mode"]) for c in cells]
    assert len(keys) == len(set(keys)) == 12
    assert {c["case"] for c in before} <= {c["case"] for c in cells}
    assert list(temporary.iterdir()) == []  # the killed run's temporary folder went with the resumed run


def read_cells_safe(folder: Path):
    cells = []
    for path in folder.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("kind") == "cell":
                cells.append(record)
    return cells


@pytest.mark.slow
def test_rerun_skips_recorded_cells_unless_forced(tmp_path):
    case = str(FIXTURES / "basic" / "add_one.py")
    run_matrix("run", "--cases", case, "--out", str(tmp_path))
    again = run_matrix("run", "--cases", case, "--out", str(tmp_path))
    assert "2 already recorded, 0 to run" in again.stderr
    assert len(read_cells(tmp_path)) == 2
    run_matrix("run", "--cases", case, "--out", str(tmp_path), "--force", "--runs", "2")
    assert len(read_cells(tmp_path)) == 6
    assert sorted(c["run"] for c in read_cells(tmp_path))[-2:] == [1, 1]


def test_spawn_isolation_gives_the_same_results(tmp_path):
    run_matrix(
        "run", "--cases", str(FIXTURES / "basic" / "add_one.py"), str(FIXTURES / "faults" / "exits.py"),
        "--out", str(tmp_path), "--isolation", "spawn", "--mode", "strict",
    )  # fmt: skip
    cells = by_cell(read_cells(tmp_path))
    assert cells[("add_one", "strict")]["status"] == "pass"
    assert cells[("exits", "strict")]["status"] == "crash"
    assert cells[("exits", "strict")]["exit_code"] == 3


def test_bad_options_name_the_problem(tmp_path):
    proc = run_matrix("run", "--cases", str(tmp_path / "nowhere"), "--out", str(tmp_path), check=False)
    assert proc.returncode == 2
    assert "nowhere" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_matrix(
        "run", "--cases", str(FIXTURES / "basic"), "--out", str(tmp_path), "--stages", "check,bogus", check=False
    )
    assert proc.returncode == 2 and "bogus" in proc.stderr
    proc = run_matrix(
        "run", "--cases", str(FIXTURES / "basic"), "--out", str(tmp_path), "--hide-capability", "nope", check=False
    )
    assert proc.returncode == 2 and "nope" in proc.stderr
