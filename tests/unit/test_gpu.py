"""The GPU seen without a CUDA context, the check before a fork, and the runner's faults told from torch's."""

from __future__ import annotations

import os
from typing import Any, Dict

import pandas as pd
import pytest

from matrix.contract.faults import harness_fault
from matrix.contract.schema import STATUSES, Status
from matrix.records import tables, transitions
from matrix.worker import batch, forked, gpu

from .test_transitions import cell, passing


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, None),
        ("", []),
        ("-1", []),
        ("1,0", ["1", "0"]),
        ("0, 2 ,x,1", ["0", "2"]),  # CUDA reads up to the first entry that is not a device
        ("GPU-8f6e,MIG-1", ["GPU-8f6e", "MIG-1"]),
    ],
)
def test_visible_reads_cuda_visible_devices_as_cuda_does(value: Any, expected: Any) -> None:
    environ = {} if value is None else {gpu.VISIBLE: value}
    assert gpu.visible(environ) == expected


def test_facts_without_nvidias_driver_name_no_gpu_and_cuda_is_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_library(name: str, *args: Any, **kwargs: Any) -> Any:
        raise OSError("%s: cannot open shared object file" % name)

    monkeypatch.setattr(gpu.ctypes, "CDLL", no_library)
    assert gpu.facts() == {"gpu_count": 0}

    class CudaBuild:
        class version:
            cuda = "13.0"

    assert gpu.available(CudaBuild) is False
    assert gpu.available(CudaBuild, {"gpu_count": 1}) is True


def test_a_process_that_imported_torch_holds_no_cuda_context() -> None:
    import torch

    torch.nn.Linear(2, 2)(torch.ones(1, 2))
    assert gpu.initialised() is None


def test_a_cuda_result_names_its_gpu_and_its_lanes_follow_free_memory() -> None:
    found = {"gpu_count": 1, "gpu_name": "NVIDIA H200", "gpu_capability": "9.0", "gpu_driver": "580.1"}
    assert gpu.label(found) == "NVIDIA H200, compute 9.0, driver 580.1"
    assert gpu.identity(found) == {"gpu_name": "NVIDIA H200", "gpu_capability": "9.0", "gpu_driver": "580.1"}
    assert gpu.label({"gpu_count": 0}) is None
    assert gpu.lanes({"gpu_free_mb": 140_000}, cores=16) == 16
    assert gpu.lanes({"gpu_free_mb": 10_000}, cores=16) == 10_000 // gpu.CELL_GPU_MB
    assert gpu.lanes({"gpu_free_mb": 100}, cores=16) == 1


def test_settings_size_cuda_lanes_by_the_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpu, "facts", lambda: {"gpu_count": 1, "gpu_free_mb": 2 * gpu.CELL_GPU_MB})
    monkeypatch.setattr("matrix.contract.resources.jobs", lambda requested, per_job_mb: requested or 8)
    assert batch.Settings(out="x", timeout=1, device="cuda").lanes(100) == 2
    assert batch.Settings(out="x", timeout=1, device="cuda", jobs=5).lanes(100) == 5  # as asked
    assert batch.Settings(out="x", timeout=1, device="cpu").lanes(100) == 8


def test_a_forked_compile_runs_in_this_process_where_it_holds_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    here = os.getpid()
    monkeypatch.setattr(gpu, "initialised", lambda: "torch initialised CUDA in this process")
    assert forked.run(lambda: {"pid": os.getpid()}, 30)["pid"] == here


def test_fork_safe_switches_to_spawn_only_where_this_process_holds_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = batch.Settings(out="x", timeout=1, isolation="fork")
    assert batch.fork_safe(settings) is settings
    monkeypatch.setattr(gpu, "initialised", lambda: "the CUDA driver was initialised in this process")
    assert batch.fork_safe(settings).isolation == "spawn"


@pytest.mark.parametrize(
    "message, reason",
    [
        ("Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, ...", "cuda-after-fork"),
        ("CUDA driver initialization failed, you might not have a CUDA gpu.", "cuda-driver"),
        ("CUDA error: initialization error\nCUDA kernel errors might be ...", "cuda-init"),
        ("Constraints violated (seq)!", None),
        ("CUDA out of memory. Tried to allocate 2.00 GiB", None),  # the cell's own outcome
    ],
)
def test_harness_faults_are_told_from_the_cases_own_errors(message: str, reason: Any) -> None:
    assert harness_fault({"error_type": "RuntimeError", "error_message": message}) == reason


def _finished(record: Dict[str, Any]) -> Dict[str, Any]:
    class Cells(batch.Batch):
        noun = "cell"
        statuses = STATUSES
        record_keys = ("status", "error_type", "error_message", "reason")

    item = batch.Item(("c", "strict", 0), "c", {"status": None, "reason": None, "error_message": None})
    progress = batch.Progress(1, "none")
    batch._finish(Cells(), item, record, 0.0, progress)
    return item.record


def test_a_cell_that_failed_for_the_runner_is_a_harness_error_with_its_reason() -> None:
    fault = _finished({"status": "fail", "error_type": "RuntimeError",
                       "error_message": "Cannot re-initialize CUDA in forked subprocess."})  # fmt: skip
    assert (fault["status"], fault["reason"]) == ("harness-error", "cuda-after-fork")
    own = _finished({"status": "fail", "error_type": "RuntimeError", "error_message": "Constraints violated"})
    assert own["status"] == "fail"


def test_a_harness_error_is_no_evidence_in_tables_or_transitions() -> None:
    assert Status.HARNESS_ERROR.rank is None and not Status.HARNESS_ERROR.applicable
    rows = [passing("2.3.0"), cell("2.4.0", "harness-error", error_message="Cannot re-initialize CUDA"),
            passing("2.5.0")]  # fmt: skip
    assert transitions.find(pd.DataFrame(rows)).empty
    assert transitions.find(pd.DataFrame([passing("2.3.0"), cell("2.4.0", "harness-error")])).empty
    assert transitions.find(pd.DataFrame([cell("2.3.0", "harness-error"), passing("2.4.0")])).empty
    broken = transitions.find(pd.DataFrame([passing("2.3.0"), cell("2.4.0", "fail")]))
    assert list(broken["kind"]) == ["regression"]  # the same pair with torch's own failure is one
    assert tables.applicable("harness-error") is False


@pytest.mark.parametrize(
    "source, device, message, status",
    [
        ("exportdb", "cuda", "Expected all tensors to be on the same device, but found at least two devices", "n/a"),
        ("cases", "cuda", "Expected all tensors to be on the same device, but found at least two devices", "err"),
        ("exportdb", "cpu", "Expected all tensors to be on the same device, but found at least two devices", "err"),
        ("exportdb", "cuda", "shape mismatch", "err"),
    ],
)
def test_only_torchs_bundled_examples_that_build_cpu_tensors_are_not_applicable_on_a_gpu(
    source: str, device: str, message: str, status: str
) -> None:
    from types import SimpleNamespace

    from matrix.worker.cell import _cpu_only

    record: Dict[str, Any] = {"status": "case-error", "error_message": message, "failed_stage": "eager"}
    _cpu_only(record, SimpleNamespace(source=source), device)  # type: ignore[arg-type]
    if status == "n/a":
        assert record["status"] == "not-applicable" and record["missing"] == ["device:cuda"]
        assert record["error_message"].startswith("torch's bundled example builds CPU tensors in forward")
    else:
        assert record["status"] == "case-error" and record["error_message"] == message


def test_torchs_bad_fork_mark_matters_only_where_a_gpu_is_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "_is_in_bad_fork", lambda: True)  # as a fork of a process that counted devices
    monkeypatch.setattr(gpu, "_gpu_visible", lambda: False)
    assert gpu.initialised() is None  # no child could use CUDA: forking is safe
    monkeypatch.setattr(gpu, "_gpu_visible", lambda: True)
    assert gpu.initialised() == "this process was forked from one that had initialised CUDA"
