"""The batch engine that `run` and `load` share: jobs, settings, resume and the journal's policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import pytest

from matrix.contract import records
from matrix.contract.case import CaseInfo
from matrix.contract.errors import UserError
from matrix.contract.requests import WARM_UP_FROM
from matrix.contract.schema import CELL_KEYS, SCHEMA_VERSION, STATUSES, Status
from matrix.worker import batch, cell_job, jobs, journal, load_job, messages


def _crossed(job: Any) -> Any:
    """A job as the isolated process rebuilds it from the message the runner sends."""
    message = json.loads(json.dumps(messages.message(job)))
    assert jobs.KINDS[message["job"]] is type(job)
    return jobs.KINDS[message["job"]].from_fields(message["fields"])


def test_jobs_cross_into_the_isolated_process_unchanged() -> None:
    info = CaseInfo(name="a/b", path="cases/a/b.py", description="d", tags=("torch.cond",), requires=("cond",))
    cell = cell_job.CellJob(info, "strict", "cpu", ("check", "serialize"), {"cond": True}, 1.5, "art", "cpu")
    assert _crossed(cell) == cell
    load = load_job.LoadJob(folder="/x/y", meta={"case": "a/b", "files": [{"name": "program.pt2"}]})
    assert _crossed(load) == load


@pytest.mark.parametrize(
    ("values", "option"),
    [({"isolation": "thread"}, "--isolation thread"), ({"warm_up": "later"}, "--warm-up later"),
     ({"progress": "loud"}, "--progress loud")],
)  # fmt: skip
def test_settings_name_the_option_at_fault(values: Dict[str, Any], option: str) -> None:
    with pytest.raises(UserError, match=option):
        batch.Settings(out="o", timeout=1.0, **values)


def test_lanes_never_outnumber_the_items_and_inline_runs_one_at_a_time() -> None:
    assert batch.Settings(out="o", timeout=1.0, jobs=8, max_memory=1).lanes(3) == 3
    assert batch.Settings(out="o", timeout=1.0, jobs=2, max_memory=1).lanes(5) == 2
    assert batch.Settings(out="o", timeout=1.0, jobs=8, isolation="inline").lanes(5) == 1


def test_the_warm_up_pays_only_over_enough_items_outside_fresh_interpreters() -> None:
    auto = batch.Settings(out="o", timeout=1.0, isolation="fork")
    assert not auto.warms_up(WARM_UP_FROM - 1) and auto.warms_up(WARM_UP_FROM)
    assert batch.Settings(out="o", timeout=1.0, isolation="fork", warm_up="always").warms_up(1)
    assert not batch.Settings(out="o", timeout=1.0, isolation="fork", warm_up="never").warms_up(100)
    assert not batch.Settings(out="o", timeout=1.0, isolation="spawn", warm_up="always").warms_up(100)


def test_the_summary_lists_statuses_in_display_order() -> None:
    assert batch.summary({"fail": 2, "pass": 1}, STATUSES, "nothing to run") == "done: pass 1, fail 2"
    assert batch.summary({}, STATUSES, "nothing to run") == "done: nothing to run"


class _Complete(batch.Batch):
    """A batch whose records are complete without running anything: the engine's bookkeeping alone."""

    noun, verb, doing = "cell", "run", "running"
    statuses = STATUSES
    record_keys = CELL_KEYS

    def __init__(self, keys: List[journal.Key]) -> None:
        self.keys = keys
        self.warmed = False

    def wanted(self) -> List[journal.Key]:
        return list(self.keys)

    def done(self, path: str) -> Tuple[Set[journal.Key], List[str]]:
        return records.done_keys(path)

    def set_up(self, settings: batch.Settings, run_id: str) -> Optional[Dict[str, Any]]:
        return {"schema_version": SCHEMA_VERSION, "kind": "environment", "run_id": run_id}

    def items(self, keys: Sequence[journal.Key]) -> List[batch.Item]:
        made = []
        for case, mode, run in keys:
            record = records.empty_cell(case=case, mode=mode, run=run, status=Status.NOT_APPLICABLE.value)
            made.append(batch.Item((case, mode, run), "%s/%s" % (mode, case), record))
        return made

    def died(self, item: batch.Item) -> None:
        item.record.update(status=Status.CRASH.value, reason="runner-killed")

    def warm_up(self) -> None:
        self.warmed = True


def test_the_engine_resumes_past_recorded_items_and_records_the_one_that_killed_the_runner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "records.jsonl")
    with records.Writer(path) as writer:
        writer.write(records.empty_cell(case="done", mode="strict", run=0, status=Status.PASS.value))
    with journal.Journal(path) as started:
        started.start(("done", "strict", 0), "r0", "t", alone=True)
        started.start(("killer", "strict", 0), "r0", "t", alone=True)
    keys = [("done", "strict", 0), ("killer", "strict", 0), ("fresh", "strict", 0)]
    settings = batch.Settings(out=path, timeout=5.0, isolation="inline", progress="none")

    counts = batch.execute(_Complete(keys), settings, "x", "cpu")

    assert counts == {Status.CRASH.value: 1, Status.NOT_APPLICABLE.value: 1}
    assert "torch x (cpu): 3 cells, 1 already recorded, 1 to run -> %s" % path in capsys.readouterr().err
    found, warnings = records.read(path)
    assert warnings == []
    cells = {r["case"]: r for r in found if r["kind"] == "cell"}
    assert cells["killer"]["status"] == Status.CRASH.value and cells["killer"]["reason"] == "runner-killed"
    assert cells["fresh"]["status"] == Status.NOT_APPLICABLE.value and cells["fresh"]["finished_at"]
    assert [r["kind"] for r in found].count("environment") == 1
    # A second run finds everything recorded and changes nothing.
    assert batch.execute(_Complete(keys), settings, "x", "cpu") == {}
    assert len(records.read(path)[0]) == len(found)


def test_a_fresh_load_decides_the_save_load_stage_and_the_record_keeps_both(tmp_path: Path) -> None:
    from matrix.worker.cell_job import merge_fresh_load

    kept = tmp_path / "program"
    kept.mkdir()
    cell = {"status": "pass", "serialize_status": "ok", "serialize_error": None}
    load = {"status": "load-error", "error_type": "SerializeError", "error_message": "no such op", "load_s": 0.25}
    merge_fresh_load(cell, load, {"folder": str(kept), "discard": False})
    assert cell["serialize_status"] == cell["serialize_fresh_status"] == "error"
    assert cell["serialize_error"] == "fresh process: load-error: SerializeError: no such op"
    assert (cell["serialize_in_process_status"], cell["serialize_in_process_error"]) == ("ok", None)
    assert cell["serialize_fresh_s"] == 0.25
    assert kept.exists()  # an artifact asked for stays

    cell = {"status": "pass", "serialize_status": "error", "serialize_error": "load: KeyError: x"}
    merge_fresh_load(cell, {"status": "mismatch", "error_type": "AssertionError", "error_message": "differs"}, {
        "folder": str(kept), "discard": True})  # fmt: skip
    assert (cell["serialize_status"], cell["serialize_in_process_status"]) == ("mismatch", "error")
    assert not kept.exists()  # a program kept for the fresh load alone is removed

    cell = {"status": "pass", "serialize_status": "error", "serialize_error": "load: KeyError: x"}
    merge_fresh_load(cell, {"status": "pass", "load_s": 0.1, "run_s": 0.05}, {"folder": str(kept), "discard": True})
    assert (cell["serialize_status"], cell["serialize_error"], cell["serialize_fresh_s"]) == ("ok", None, 0.15)
    assert cell["serialize_in_process_error"] == "load: KeyError: x"
