"""Cells of one build on two devices (matrix.records.devices) on hand-written tables and records."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pandas as pd

from matrix.records import devices, model, store, tables

from conftest import make_cell, make_load, report_cell, write_by_release


def cell(release: str, device: Any, status: str = "pass", case: str = "c", **extra: Any) -> Dict[str, Any]:
    """A row of the cell table (tables.cells' columns that matter here)."""
    row: Dict[str, Any] = dict(
        release=release, variant="pypi", python="3.12", with_set="", case=case, mode="strict", device=device,
        status=status, error_type=None, error_message=None, graph_hash=None, fingerprint_version=None,
    )  # fmt: skip
    row.update(extra)
    return row


def test_the_main_device_is_the_cpu_wherever_a_cell_ran_there_and_a_missing_device_is_the_cpu():
    mixed = pd.DataFrame([cell("2.11.0", "cuda"), cell("2.11.0", None, case="d")])
    assert devices.of(mixed).tolist() == ["cuda", "cpu"]
    assert devices.main(mixed) == "cpu"
    assert devices.main(pd.DataFrame([cell("2.11.0", "cuda")])) == "cuda"
    judged, elsewhere = devices.split(mixed)
    assert judged["case"].tolist() == ["d"] and elsewhere["case"].tolist() == ["c"]
    # A table written before cells had a device holds the CPU's cells.
    old = pd.DataFrame([cell("2.11.0", None)]).drop(columns="device")
    assert devices.of(old).tolist() == ["cpu"] and devices.split(old)[1].empty


def test_a_build_on_two_devices_lists_the_cells_whose_status_or_graph_differs_with_both_errors():
    main = pd.DataFrame(
        [
            cell("2.11.0", "cpu", case="same", graph_hash="a" * 16, fingerprint_version=2),
            cell("2.11.0", "cpu", case="other-graph", graph_hash="a" * 16, fingerprint_version=2),
            cell("2.11.0", "cpu", case="other-scheme", graph_hash="a" * 16, fingerprint_version=1),
            cell("2.11.0", "cpu", case="hf_bert"),
            cell("2.11.0", "cpu", case="builds_cpu_tensors"),
            cell("2.10.0", "cpu", case="hf_bert"),
        ]
    )
    others = pd.DataFrame(
        [
            cell("2.11.0", "cuda", case="same", graph_hash="a" * 16, fingerprint_version=2, gpu="NVIDIA H200"),
            cell("2.11.0", "cuda", case="other-graph", graph_hash="b" * 16, fingerprint_version=2),
            cell("2.11.0", "cuda", case="other-scheme", graph_hash="b" * 16, fingerprint_version=2),
            cell(
                "2.11.0", "cuda", "fail", case="hf_bert", error_type="UserError", error_message="Constraints violated"
            ),
            cell(
                "2.11.0",
                "cuda",
                "not-applicable",
                case="builds_cpu_tensors",
                error_message="builds CPU tensors inside forward",
            ),
            cell("2.11.0", "cuda", case="only_on_cuda"),
        ]
    )
    (found,) = devices.compare(main, others)
    assert (found.release, found.main, found.device, found.gpus) == ("2.11.0", "cpu", "cuda", ("NVIDIA H200",))
    assert found.compared == 5 and found.only_here == 1
    by_case = {d.case: d for d in found.differences}
    # Graphs of two fingerprint schemes say nothing; the same hash is no difference.
    assert sorted(by_case) == ["builds_cpu_tensors", "hf_bert", "other-graph"]
    bert = by_case["hf_bert"]
    assert bert.status_differs and bert.main["status"] == "pass" and bert.other["status"] == "fail"
    assert bert.other["error_message"] == "Constraints violated" and bert.other["error_type"] == "UserError"
    assert not by_case["other-graph"].status_differs
    assert (found.statuses, found.graphs) == (2, 1)
    # The other release's CPU cell has no CUDA cell: nothing of it is compared.
    assert all(d.case != "hf_bert" or d.main["status"] == "pass" for d in found.differences)


def test_a_cpu_only_table_has_no_comparison():
    judged, elsewhere = devices.split(pd.DataFrame([cell("2.11.0", "cpu"), cell("2.12.0", None)]))
    assert len(judged) == 2 and devices.compare(judged, elsewhere) == ()


def test_records_of_one_build_on_two_devices_are_two_cells_and_never_a_transition(tmp_path: Path):
    failing_on_cuda = dict(device="cuda", error_type="RuntimeError", error_message="Expected all tensors on cuda:0")
    folder = write_by_release(
        tmp_path / "records",
        [
            report_cell("2.10.0", "steady"),
            report_cell("2.11.0", "steady", finished_at="2025-01-02T00:00:00+00:00"),
            # Run later on the GPU: it must neither replace the CPU cell nor make 2.10.0 → 2.11.0 a regression.
            report_cell("2.11.0", "steady", "fail", finished_at="2025-01-03T00:00:00+00:00", **failing_on_cuda),
        ],
    )
    loaded = store.load([str(folder)])
    assert loaded.superseded == 0 and sorted(loaded.cells["device"]) == ["cpu", "cpu", "cuda"]
    assert sorted(tables.cells(loaded.cells)["device"]) == ["cpu", "cpu", "cuda"]
    built = model.build(loaded)
    assert set(built.cells["device"]) == {"cpu"} and built.main_device == "cpu"
    assert built.elsewhere["status"].tolist() == ["fail"]
    (step,) = built.steps
    assert (step.before, step.after, len(step.pairs), step.moves) == ("2.10.0", "2.11.0", 1, ())
    assert not set(built.moves.get("kind", pd.Series(dtype=object))) & {"regression", "wrong-result"}
    assert built.summary["cells"].sum() == 2 and built.verdicts.regressions.open == ()
    (compared,) = built.devices
    (difference,) = compared.differences
    assert (difference.case, difference.main["status"], difference.other["status"]) == ("steady", "pass", "fail")
    assert difference.other["error_message"] == "Expected all tensors on cuda:0"


def test_a_record_without_a_device_ran_on_the_cpu_and_a_later_one_of_that_cell_replaces_it(tmp_path: Path):
    # Records written before --device: one cell, the later record wins (the store's rule).
    folder = write_by_release(
        tmp_path / "records",
        [
            make_cell("2.11.0", "steady", finished_at="2025-01-02T00:00:00+00:00"),
            make_cell("2.11.0", "steady", "fail", finished_at="2025-01-03T00:00:00+00:00"),
        ],
    )
    loaded = store.load([str(folder)])
    assert loaded.superseded == 1 and loaded.cells["status"].tolist() == ["fail"]
    assert loaded.cells["device"].tolist() == ["cpu"]


def test_the_report_judges_the_loads_of_its_main_device_and_a_load_on_another_device_is_another_load(tmp_path: Path):
    # The same program loaded on the CPU (before --device, so no device) and, saved and loaded on a GPU, failing.
    on_cuda = dict(
        device="cuda", error_type="RuntimeError", error_message="CUDA error", finished_at="2025-01-02T00:00:00+00:00"
    )
    folder = write_by_release(
        tmp_path / "records",
        [
            report_cell("2.10.0", "steady"),
            report_cell("2.11.0", "steady"),
            make_load("2.10.0", "2.11.0", "steady"),
            make_load("2.10.0", "2.11.0", "steady", "load-error", **on_cuda),
        ],
    )
    loaded = store.load([str(folder)])
    assert sorted(devices.of(loaded.loads)) == ["cpu", "cuda"]  # two loads: neither replaces the other
    built = model.build(loaded)
    assert built.main_device == "cpu"
    assert built.loads["status"].tolist() == ["pass"]
    # Without CPU cells, the GPU is the main device, and its load the one judged.
    gpu_only = write_by_release(
        tmp_path / "gpu",
        [
            report_cell("2.11.0", "steady", device="cuda"),
            make_load("2.10.0", "2.11.0", "steady", "load-error", **on_cuda),
        ],
    )
    assert model.build(store.load([str(gpu_only)])).loads["status"].tolist() == ["load-error"]


def test_rows_on_one_device_a_missing_device_the_cpu():
    frame = pd.DataFrame([{"device": "cuda", "n": 1}, {"device": None, "n": 2}, {"device": "cpu", "n": 3}])
    assert devices.on(frame, "cpu")["n"].tolist() == [2, 3] and devices.on(frame, "cuda")["n"].tolist() == [1]
    assert devices.on(pd.DataFrame(), "cpu").empty
