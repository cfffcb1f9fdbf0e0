"""A run whose every cell is known is answered from the result cache without importing torch: real runs.

The first run imports torch, runs its cells and keeps what it learnt of the environment. The
second is answered from the cache alone, and its records are those of a run that imported torch
and reused the same results (only the fields of the run itself differ). A damaged entry, or one
cell not known, means the ordinary run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence

from conftest import ROOT

KNOWN = "answered without importing torch"
IMPORTING = "\nimporting torch "  # the line the run says as it imports torch
# The fields that say which run wrote a record, not what it holds.
RUN_FIELDS = ("run_id", "started_at", "finished_at")


def case(body: str) -> str:
    """A case file whose model's forward is ``body``."""
    head = '"""A small case."""\nimport torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n'
    return head + "        %s\n\n\nmodel = Model()\nexample_args = (torch.ones(3),)\n" % body


def run(tmp: Path, out: str, *cases: Path, extra: Sequence[str] = ()) -> subprocess.CompletedProcess:
    environ = dict(os.environ, PYTHONPATH=str(ROOT))
    words = ["--cases", *map(str, cases), "--out", str(tmp / out), "--stages", "check", "--cache", str(tmp / "cache")]
    words += extra
    proc = subprocess.run(
        [sys.executable, "-m", "matrix", "run", *words], cwd=ROOT, env=environ, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    proc.stderr = "\n" + proc.stderr  # every line starts after a newline
    return proc


def records(folder: Path) -> List[Dict[str, Any]]:
    found = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            found.append({k: v for k, v in record.items() if k not in RUN_FIELDS})
    return found


def test_a_run_whose_every_cell_is_known_skips_torch_and_records_what_a_run_with_torch_records(
    tmp_path: Path,
) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "adds.py").write_text(case("return x + 1"))
    (cases / "fails.py").write_text(case("return torch.ones(int(x.sum().item()))"))
    both = (cases / "adds.py", cases / "fails.py")

    first = run(tmp_path, "one", *both)
    assert IMPORTING in first.stderr and KNOWN not in first.stderr, first.stderr
    measured = records(tmp_path / "one")
    assert {(r["case"], r["mode"]) for r in measured if r["kind"] == "cell"} == {
        (name, mode) for name in ("adds", "fails") for mode in ("strict", "non-strict")
    }

    second = run(tmp_path, "two", *both)
    assert KNOWN in second.stderr and IMPORTING not in second.stderr, second.stderr
    known = records(tmp_path / "two")
    assert [r["kind"] for r in known] == ["environment"] + ["cell"] * 4
    assert sorted((r["case"], r["mode"], r["status"]) for r in known if r["kind"] == "cell") == sorted(
        (r["case"], r["mode"], r["status"]) for r in measured if r["kind"] == "cell"
    )
    assert all(r["reused_from"] for r in known if r["kind"] == "cell")
    assert known[0] == measured[0]  # the environment record, as the run that imported torch wrote it

    # Without the environment's kept facts the run imports torch and reuses the same results: same records.
    for entry in (tmp_path / "cache" / "environment").rglob("*.json"):
        entry.write_text("{ damaged")
    third = run(tmp_path, "three", *both)
    assert IMPORTING in third.stderr and KNOWN not in third.stderr, third.stderr
    assert third.stderr.count("warning: result cache") == 1, third.stderr  # the damaged entry, said once
    assert "4 cells reused" in third.stderr, third.stderr
    assert records(tmp_path / "three") == known

    # One cell not known (its case edited): the whole run imports torch, and only that cell runs.
    (cases / "adds.py").write_text(case("return x + 2"))
    fourth = run(tmp_path, "four", *both)
    assert IMPORTING in fourth.stderr and KNOWN not in fourth.stderr, fourth.stderr
    cells = {(r["case"], r["mode"]): r for r in records(tmp_path / "four") if r["kind"] == "cell"}
    assert cells[("adds", "strict")]["reused_from"] is None and cells[("fails", "strict")]["reused_from"]


def load(tmp: Path, out: str, artifacts: Path) -> subprocess.CompletedProcess:
    environ = dict(os.environ, PYTHONPATH=str(ROOT))
    words = [str(artifacts), "--out", str(tmp / out), "--cache", str(tmp / "cache"), "--progress", "lines"]
    proc = subprocess.run(
        [sys.executable, "-m", "matrix", "load", *words], cwd=ROOT, env=environ, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    proc.stderr = "\n" + proc.stderr
    return proc


def test_a_load_whose_every_result_stands_skips_torch_and_records_what_a_load_with_torch_records(
    tmp_path: Path,
) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "adds.py").write_text(case("return x + 1"))
    art = tmp_path / "art"
    run(tmp_path, "run", cases / "adds.py", extra=["--artifacts", str(art)])
    first = load(tmp_path, "one", art)
    assert IMPORTING in first.stderr and KNOWN not in first.stderr, first.stderr
    measured = records(tmp_path / "one")
    assert sorted((r["mode"], r["status"]) for r in measured) == [("non-strict", "pass"), ("strict", "pass")]

    second = load(tmp_path, "two", art)
    assert KNOWN in second.stderr and IMPORTING not in second.stderr, second.stderr
    known = records(tmp_path / "two")
    assert all(r["reused_from"] for r in known)
    by_mode = sorted(measured, key=lambda r: r["mode"])  # the same records but for the run that measured them
    assert [dict(r, reused_from=None) for r in sorted(known, key=lambda r: r["mode"])] == by_mode

    # A program whose files are not what its meta.json lists: the ordinary load, which finds it damaged.
    program = next(art.rglob("strict/adds"))
    damaged = next(path for path in sorted(program.iterdir()) if path.suffix == ".pt2")
    damaged.write_bytes(damaged.read_bytes() + b"\0")
    third = load(tmp_path, "three", art)
    assert IMPORTING in third.stderr and KNOWN not in third.stderr, third.stderr
    again = {r["mode"]: r for r in records(tmp_path / "three")}
    assert again["strict"]["reused_from"] is None and again["strict"]["status"] != "pass"
    assert again["non-strict"]["reused_from"] and again["non-strict"]["status"] == "pass"
