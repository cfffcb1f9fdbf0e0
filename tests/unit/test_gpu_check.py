"""What the GPU check concludes from its three runs, on hand-written cells."""

from __future__ import annotations

from typing import Any, Dict, Tuple

from matrix.worker import gpu_check


def cells(*rows: Tuple[str, str, str, str]) -> Dict[Any, Dict[str, Any]]:
    return {(c, m, 0): {"case": c, "mode": m, "status": s, "error_message": e} for c, m, s, e in rows}


CPU = cells(("a", "strict", "pass", ""), ("b", "strict", "fail", "Unsupported"), ("c", "strict", "pass", ""))


def test_cpu_runs_that_agree_are_sound_and_cuda_differences_are_named_with_cudas_error() -> None:
    cuda = cells(
        ("a", "strict", "pass", ""),
        ("b", "strict", "fail", "Unsupported"),
        ("c", "strict", "fail", "Constraints violated (seq)!\nmore"),
    )
    found = gpu_check.compare({"cpu": CPU, "cpu-gpu-hidden": dict(CPU), "cuda": cuda})
    assert found.sound and found.same_on_cpu == found.cells == 3
    assert found.device_differs == ((("c", "strict", 0), "pass", "fail", "Constraints violated (seq)!"),)
    text = gpu_check.summary(found, {"cpu": 10.0, "cpu-gpu-hidden": 9.0, "cuda": 20.0}, {"gpu_name": "G"})
    assert "all cells have the same status" in text and "CUDA costs 2.00×" in text
    assert "| c | strict | pass | fail | Constraints violated (seq)! |" in text


def test_a_gpu_that_changes_a_cpu_result_or_a_harness_error_is_not_sound() -> None:
    visible = {**CPU, **cells(("c", "strict", "harness-error", "Cannot re-initialize CUDA in forked subprocess"))}
    found = gpu_check.compare({"cpu": visible, "cpu-gpu-hidden": CPU, "cuda": CPU})
    assert not found.sound
    assert found.cpu_differs == ((("c", "strict", 0), "harness-error", "pass"),)
    assert found.harness_errors == (("cpu", ("c", "strict", 0), "Cannot re-initialize CUDA in forked subprocess"),)
    assert "2 of 3 cells have the same status" in gpu_check.summary(found, {}, {})
