"""The run journal: started cells, and which of them were interrupted."""

from __future__ import annotations

from pathlib import Path

from matrix.worker import journal


def test_started_cells_without_a_record_are_the_interrupted_ones(tmp_path: Path) -> None:
    with journal.Journal(str(tmp_path / "t.jsonl")) as log:
        log.start(("a", "strict", 0), "run1", "2025-01-01T00:00:00+00:00")
        log.start(("b", "strict", 0), "run1", "2025-01-01T00:00:01+00:00")
        with open(log.path, "a", encoding="utf-8") as f:
            f.write('{"case": "c", "mo')  # a line cut by a kill says nothing
        started = log.started()
    assert list(started) == [("a", "strict", 0), ("b", "strict", 0)]
    assert journal.interrupted(started, {("a", "strict", 0)}) == [("b", "strict", 0)]
    assert journal.interrupted(started, set(), wanted=[("a", "strict", 0)]) == [("a", "strict", 0)]
