"""The front page (matrix.report.index) of a large matrix: short, counted exactly, its words in a glossary."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List, Set

import pandas as pd
import pytest

from matrix.report import build as report

from .report_support import RELEASES, large_history, paragraphs
from .test_report import rendered
from conftest import make_load, report_cell, write_by_release

# The longest paragraph any page may hold; the detail goes into lists and tables.
LONGEST_PARAGRAPH = 600
# Words the front page uses that a reader new to the matrix needs defined.
VOCABULARY = (
    "case", "mode", "release", "build", "variant", "environment", "cell", "record", "status", "pass rate",
    "stage", "ˢ", "ᵈ", "claim", "documented to work", "unexpected failure", "failing with no claim", "real models",
    "failure signature",
    "flaky cell", "transition", "sample", "build change", "regression", "status regression", "now wrong numbers",
    "stage regression", "fix", "status fix", "stage fix", "graph change", "op drift", "slowdown", "speedup",
    "saved program", "epoch", "exception", "load regression", "previous report", "new cell", "vanished cell",
    "env-error", "load-error", "run-error", "pass", "mismatch", "fail", "crash", "timeout", "not-applicable",
    "case-error", "series", "build comparison", "incomplete build",
)  # fmt: skip


def saved_programs() -> List[Dict[str, Any]]:
    """Programs of three cases saved on every release and loaded on every one: each release reads those saved in
    its own group of five releases, and of those one case fails from the release after its saving one on."""
    rows = []
    for saved_at, saved in enumerate(RELEASES):
        for loaded_at, loaded in enumerate(RELEASES):
            for case in ("case_000", "case_001", "case_002"):
                status, error = "pass", {}
                if saved_at // 5 != loaded_at // 5:
                    status, error = (
                        "load-error",
                        {"error_type": "RuntimeError", "error_message": "schema %d" % saved_at},
                    )
                elif case == "case_002" and loaded_at > saved_at:
                    status, error = "run-error", {"error_type": "KeyError", "error_message": "input 0: s%d" % loaded_at}
                rows.append(make_load(saved, loaded, case, status, **error))
    return rows


def earlier(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The records of an earlier report: without the newest four releases, and on 2.4.0 every case passes."""
    kept = [dict(r) for r in rows if r.get("torch_version") not in RELEASES[-4:] and r.get("kind") != "load"]
    for row in kept:
        if row.get("torch_version") == "2.4.0" and row.get("status") == "fail":
            row["status"] = "pass"
    return kept


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of 15 releases × 130 cases × 2 modes with saved programs, compared with an earlier report."""
    folder = tmp_path_factory.mktemp("large")
    # Ten cases documented to work, so that the report writes its claims page.
    rows = [dict(r, expected="supported") if r.get("case", "").startswith("case_00") else r for r in large_history()]
    base = folder / "base"
    report.build_report([str(write_by_release(folder / "old", earlier(rows)))], str(base), charts=False)
    out = folder / "report"
    records = write_by_release(folder / "records", rows + saved_programs())
    report.build_report([str(records)], str(out), baseline=str(base), charts=False)
    return out


def section(page: str, heading: str) -> str:
    """A section of a page: from its heading to the next heading of its level, or the end."""
    start = page.index(heading + "\n")
    end = page.find("\n## ", start + len(heading))
    return page[start : end + 1 if end >= 0 else len(page)]


def test_the_front_page_of_a_large_matrix_stays_short_and_its_comparison_with_the_previous_report_too(built: Path):
    index = (built / "index.md").read_text(encoding="utf-8")
    assert len(index.splitlines()) <= 300
    since = section(index, "## Since the previous report")
    assert len(since.splitlines()) <= 20
    # The whole comparison is on its own page, which the section links; the front page holds none of its tables.
    page = (built / "baseline.md").read_text(encoding="utf-8")
    assert "[full comparison](baseline.md)" in since and "| kind | releases | case | mode |" not in index
    counted = re.search(r"## New regressions and fixes between releases \((\d+)\)\n", page)
    assert counted is not None and int(counted.group(1)) > 20
    table = section(page, "## New regressions and fixes between releases (%s)" % counted.group(1))
    assert len([line for line in table.splitlines() if line.startswith("| ")]) == int(counted.group(1)) + 2
    regressed = re.search(r"- Regressions new since then \((\d+)\):", since)
    assert regressed is not None and int(regressed.group(1)) > 5
    assert "  - … and %d more on the [full comparison](baseline.md)." % (int(regressed.group(1)) - 5) in since
    # The cells that got worse than in the previous report: on 2.4.0, where every case passed before.
    assert "cells changed status (" in since and " on 2.4.0: ✅ pass → ❌ fail since the previous report." in since


def test_no_page_of_the_report_holds_a_paragraph_longer_than_600_characters(built: Path):
    pages = sorted(built.rglob("*.md"))
    assert {"index.md", "artifacts.md", "baseline.md", "glossary.md", "claims.md"} <= {p.name for p in pages}
    for path in pages:
        found = paragraphs(path.read_text(encoding="utf-8"))
        longest = max(found, key=len, default="")
        assert len(longest) <= LONGEST_PARAGRAPH, (path.name, longest[:200])
    # Where each release's saved programs load is a table, one row per saving build.
    artifacts = (built / "artifacts.md").read_text(encoding="utf-8")
    assert "### Where each build's artifacts pass" in artifacts
    rows = [row for row in rendered(built / "artifacts.md").rows if row and row[0] in RELEASES]
    assert [row[0] for row in rows[: len(RELEASES)]] == RELEASES


def defined(glossary: Path) -> Set[str]:
    """The terms the glossary's tables define (``slowdown, speedup`` and ``ˢ and ᵈ`` each of theirs), and the
    statuses of its legends (symbol, status, meaning)."""
    terms = set()
    for row in rendered(glossary).rows:
        if len(row) == 2 and row[0] != "term":
            terms.update(re.split(r", | and ", row[0]))
        if len(row) >= 3 and row[1] != "status":
            terms.add(row[1])
    return terms


def test_the_first_screen_links_a_glossary_of_every_term_the_front_page_uses(built: Path):
    index = (built / "index.md").read_text(encoding="utf-8")
    assert "[glossary](glossary.md)" in "\n".join(index.splitlines()[:5])
    terms = defined(built / "glossary.md")
    used = [t for t in VOCABULARY if re.search(r"(?<!\w)%ss?(?!\w)" % re.escape(t), index, flags=re.IGNORECASE)]
    # The words of the issue that asked for it are all on this front page, and all defined.
    assert {"cell", "build", "release", "variant", "epoch", "stage regression", "op drift", "claim", "ˢ", "ᵈ"} <= set(
        used
    )
    assert [t for t in used if t not in terms] == []
    # Every status a grid shows, and every outcome of loading a saved program, has its meaning there.
    assert {"no record", "save/load fails", "decomposition fails", "untrusted"} <= terms


def test_op_drifts_are_counted_per_program_on_the_front_page(built: Path):
    index = (built / "index.md").read_text(encoding="utf-8")
    moves = pd.read_parquet(built / "transitions.parquet")
    drifts = moves[moves["kind"] == "op-drift"]
    exported, decomposed = int((drifts["stage"] == "exported").sum()), int((drifts["stage"] == "decomposed").sum())
    assert exported and decomposed
    assert (
        "%d op drifts (%d in the exported program, %d in the decomposed one; %d cells changed)"
        % (len(drifts), exported, decomposed, len(drifts.drop_duplicates(["case", "mode", "before", "after"])))
        in index
    )
    assert "| graph changes | op drift: exported | op drift: decomposed |" in index
    # Each transition's row counts them per program, under its header.
    rows = rendered(built / "index.md").rows
    header = next(row for row in rows if "op drift: exported" in row)
    steps = [row for row in rows if len(row) == len(header) and "→" in row[0]]
    assert len(steps) == len(RELEASES) - 1
    for row in steps:
        before, after = row[0].split(" → ")
        step = drifts[(drifts["before"] == before) & (drifts["after"] == after)]
        for stage in ("exported", "decomposed"):
            assert row[header.index("op drift: %s" % stage)].strip() == str((step["stage"] == stage).sum() or ""), row


def test_releases_and_builds_are_counted_apart_and_the_cells_product_is_stated(tmp_path: Path):
    rows = [
        report_cell("2.12.1", case, mode=mode, variant="pypi") for case in "ab" for mode in ("strict", "non-strict")
    ]
    rows += [
        report_cell("2.13.0", case, mode=mode, variant="pypi") for case in "ab" for mode in ("strict", "non-strict")
    ]
    rows += [report_cell("2.13.0+cpu", "a", mode=mode, variant="cpu") for mode in ("strict", "non-strict")]
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", rows))], str(out), charts=False)
    index = (out / "index.md").read_text(encoding="utf-8")
    # 2.13.0 and 2.13.0+cpu are two builds of one release.
    assert "| releases | 2 releases, 3 builds: 2.12.1, 2.13.0, 2.13.0+cpu |" in index
    # 2 cases × 2 modes × 3 builds, of which the cpu build did not run case b.
    assert "\n10 cells of 2 cases × 2 modes × 3 builds = 12 (2 without a record); 2 releases, 3 builds.\n" in index
    assert "| cells | 10 cells of 2 cases × 2 modes × 3 builds = 12 (2 without a record); from 10 cell records |" in (
        index
    )
    site = (out / "site" / "index.html").read_text(encoding="utf-8")
    assert "10 cells of 2 cases × 2 modes × 3 builds = 12 (2 without a record); 2 releases, 3 builds." in site


def test_the_run_says_where_cells_ran_and_no_cuda_build_reads_as_a_gpu_run() -> None:
    from matrix.report import citation

    cells = pd.DataFrame({"release": ["2.15.0+cu132", "2.13.0+cpu"], "device": ["cpu", "cpu"]})  # as tables name it
    cpu_only = citation.devices(pd.DataFrame({"device": ["cpu", "cpu"]}), cells)
    assert cpu_only == "cpu (the CUDA builds, +cu…, ran on the CPU: no cell ran on a GPU)"
    gpu = pd.DataFrame({"device": ["cuda", "cpu"], "gpu_name": ["NVIDIA H200", None]})
    assert citation.devices(gpu, cells) == "cpu, cuda (NVIDIA H200)"
    plain = pd.DataFrame({"release": ["2.13.0+cpu"], "device": ["cpu"]})
    assert citation.devices(pd.DataFrame({"device": ["cpu"]}), plain) == "cpu"
