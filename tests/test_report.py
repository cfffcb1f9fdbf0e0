"""The report command: pages, tables, escaping of hostile record text, determinism, baseline, real records."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd
import pytest
from markdown_it import MarkdownIt

from matrix import cli, parallel
from matrix.records import store
from matrix.report import build as report
from matrix.report import markdown as md
from matrix.worker import records

from conftest import make_cell

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = "left | right `tick` <script>alert(1)</script> [x](http://evil) see http://evil.example.com\nsecond line"
HOSTILE_TRACEBACK = "Traceback:\n```\n</details><script>alert(2)</script>\n````\nRuntimeError: boom"


def cell(release: str, case: str, status: str = "pass", mode: str = "strict", **extra: Any) -> Dict[str, Any]:
    defaults: Dict[str, Any] = {"source": "cases", "tags": ["torch.cond"]}
    if status == "pass":
        defaults.update(graph_hash="1" * 16, ops=["aten.add.Tensor"], graph_text="add(x, 1)\n", export_s=0.1)
    return make_cell(release, case, status, mode, **{**defaults, **extra})


def environment(release: str, started_at: str) -> Dict[str, Any]:
    return {
        "kind": "environment",
        "schema_version": records.SCHEMA_VERSION,
        "torch_version": release,
        "variant": "cpu",
        "python": "3.11",
        "machine": "x86_64",
        "device": "cpu",
        "started_at": started_at,
    }


def write(folder: Path, rows: List[Dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    by_release: Dict[str, List[Dict[str, Any]]] = {}
    for row in rows:
        by_release.setdefault(row["torch_version"], []).append(row)
    for release, part in by_release.items():
        (folder / records.env_file_name(release, "cpu", "3.11")).write_text(
            "".join(json.dumps(r) + "\n" for r in part), encoding="utf-8"
        )
    return folder


def history() -> List[Dict[str, Any]]:
    """Three releases with a regression, a fix, a graph change and a hostile error."""
    return [
        environment("2.4.1", "2025-03-01T10:00:00+00:00"),
        cell("2.4.1", "steady"),
        cell("2.4.1", "steady", mode="non-strict"),
        cell("2.4.1", "breaks"),
        cell("2.4.1", "heals", "fail", error_type="torch._dynamo.exc.Unsupported", error_message="graph break"),
        cell("2.4.1", "nested/case", "not-applicable", missing=["cond"]),
        environment("2.5.0", "2025-03-02T10:00:00+00:00"),
        cell("2.5.0", "steady", graph_hash="2" * 16, graph_text="add(x, 1)\nmul(x, 2)\n"),
        cell("2.5.0", "steady", mode="non-strict"),
        cell(
            "2.5.0",
            "breaks",
            "fail",
            error_type="RuntimeError",
            error_message=HOSTILE,
            error_traceback=HOSTILE_TRACEBACK,
        ),
        cell("2.5.0", "heals"),
        cell("2.5.0", "nested/case", expected="supported"),
        environment("2.6.0", "2025-03-02T12:00:00+00:00"),
        cell("2.6.0", "steady", graph_hash="2" * 16, graph_text="add(x, 1)\nmul(x, 2)\n"),
        cell("2.6.0", "breaks", "fail", error_type="RuntimeError", error_message=HOSTILE),
        cell("2.6.0", "heals"),
    ]


@pytest.fixture()
def built(tmp_path: Path) -> Path:
    folder = write(tmp_path / "records", history())
    out = tmp_path / "report"
    report.build_report([str(folder)], str(out), title="Nightly <b>matrix</b>")
    return out


def test_writes_index_case_pages_tables_and_charts(built: Path):
    index = (built / "index.md").read_text(encoding="utf-8")
    assert index.startswith("# Nightly &lt;b&gt;matrix&lt;/b&gt;\n")
    assert "| releases | 2.4.1, 2.5.0, 2.6.0 |" in index
    assert "| run on | 2025-03-01 to 2025-03-02 (UTC, from the environment records) |" in index
    assert "### Regressions (1)" in index and "### Fixes (1)" in index
    assert "[breaks](cases/breaks.md)" in index
    assert "[nested/case](cases/nested__case.md)" in index
    assert "### Graph changes (1)" in index
    assert "![Pass rate per release](charts/pass-rate.png)" in index
    for name in ("cells", "transitions", "summary", "status", "modes", "claims", "environments", "env_errors"):
        assert (built / (name + ".parquet")).is_file(), name
    moves = pd.read_parquet(built / "transitions.parquet")
    assert sorted(moves["kind"]) == ["fix", "graph-change", "regression"]
    assert sorted(p.name for p in (built / "cases").iterdir()) == [
        "breaks.md",
        "heals.md",
        "nested__case.md",
        "steady.md",
    ]
    steady = (built / "cases" / "steady.md").read_text(encoding="utf-8")
    assert "### 2.4.1 → 2.5.0, strict" in steady
    assert "+mul(x, 2)" in steady
    assert all(p.stat().st_size > 0 for p in (built / "charts").iterdir())


class Cells(HTMLParser):
    """Collects each table's rows as lists of cell texts, <summary> texts, and every tag and link seen."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: List[List[str]] = []
        self.tags: List[str] = []
        self.links: List[str] = []
        self.summaries: List[str] = []
        self._cell: List[str] = []
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: List[Any]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self.links.extend(v for k, v in attrs if k == "href")
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th", "summary"):
            self._in_cell, self._cell = True, []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self.rows[-1].append("".join(self._cell))
            self._in_cell = False
        if tag == "summary":
            self.summaries.append("".join(self._cell))
            self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self._cell.append(data)


def rendered(path: Path) -> Cells:
    html = MarkdownIt("commonmark").enable("table").render(path.read_text(encoding="utf-8"))
    parsed = Cells()
    parsed.feed(html)
    return parsed


def test_hostile_error_text_neither_breaks_tables_nor_injects(built: Path):
    for page in (built / "index.md", built / "cases" / "breaks.md"):
        parsed = rendered(page)
        assert "script" not in parsed.tags, page
        assert not [link for link in parsed.links if "evil" in link], page
        holding = [cell for row in parsed.rows for cell in row if "alert(1)" in cell]
        holding += [summary for summary in parsed.summaries if "alert(1)" in summary]
        assert holding, page
        for text in holding:
            # The whole message stayed in one cell: both sides of the "|" and of the line break.
            assert "left | right `tick` <script>alert(1)</script> [x](http://evil)" in text
            assert "second line" in text
    raw = (built / "index.md").read_text(encoding="utf-8")
    assert "<script>" not in raw


def test_hostile_traceback_stays_inside_its_code_block(built: Path):
    page = built / "cases" / "breaks.md"
    html = MarkdownIt("commonmark").enable("table").render(page.read_text(encoding="utf-8"))
    assert "<script>" not in html
    assert "&lt;/details&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert html.count("<details>") == html.count("</details>")


def test_escaping_helpers():
    assert md.text("a|b") == "a\\|b"
    assert md.text("x\ny") == "x ⏎ y"
    assert md.text("<b>&") == "&lt;b&gt;&amp;"
    assert md.text("[x](y)") == "\\[x\\](y)"
    assert md.text("snake_case _emph_") == "snake_case \\_emph\\_"
    assert "://" not in md.text("http://evil.example.com")
    assert md.code("a`b") == "`` a`b ``"
    assert md.fence("``` inside\n`````\n").startswith("``````\n")
    assert md.spans(["2.1", "2.2", "2.4"], ["2.1", "2.2", "2.3", "2.4"]) == "2.1–2.2, 2.4"


@pytest.mark.parametrize("side_processes", [False, True])
def test_two_builds_are_byte_identical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, side_processes: bool):
    folder = write(tmp_path / "records", history())
    outs = [tmp_path / "one", tmp_path / "two"]
    report.build_report([str(folder)], str(outs[0]))
    if side_processes:
        # The second build parses records and draws heatmaps in side processes, as large reports do.
        monkeypatch.setattr(store, "PARALLEL_FROM_BYTES", 0)
        monkeypatch.setattr(report, "SIDE_PROCESS_FROM_CELLS", 0)
        monkeypatch.setattr(parallel, "cores", lambda: 2)
        sizes: List[int] = []
        real = parallel.pool

        def counted(processes: int) -> Any:
            sizes.append(processes)
            return real(processes)

        monkeypatch.setattr(parallel, "pool", counted)
    report.build_report([str(folder)], str(outs[1]))
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert any(p.suffix == ".png" for p in files) and any(p.suffix == ".svg" for p in files)
    assert files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    for name in files:
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
    if side_processes:
        assert sizes[-1] == 1  # the heatmaps' side process
        assert sizes == [2, 1]  # before it, the load: one process per (monkeypatched) core


def test_baseline_section_and_rebuilding_over_the_baseline(tmp_path: Path):
    old = write(tmp_path / "old", [r for r in history() if r.get("torch_version") != "2.6.0"])
    new = write(tmp_path / "new", history())
    out = tmp_path / "report"
    report.build_report([str(old)], str(out))
    report.build_report([str(new)], str(out), baseline=str(out))
    index = (out / "index.md").read_text(encoding="utf-8")
    baseline = index[index.index("## Since the baseline") :]
    assert "0 cells changed status (0 regressions, 0 fixes), 3 new cells, 0 vanished cells." in baseline
    assert "### New cells (3)" in baseline
    assert "| cpu | 3.11 | strict | 2.6.0 | 3 | breaks, heals, steady |" in baseline


def test_stale_case_pages_are_removed(tmp_path: Path):
    out = tmp_path / "report"
    report.build_report([str(write(tmp_path / "a", history()))], str(out), charts=False)
    assert (out / "cases" / "heals.md").exists()
    rows = [r for r in history() if r.get("case") != "heals"]
    report.build_report([str(write(tmp_path / "b", rows))], str(out), charts=False)
    assert not (out / "cases" / "heals.md").exists()
    assert (out / "cases" / "steady.md").exists()


def test_env_errors_are_listed_and_break_the_series(tmp_path: Path):
    rows = [
        cell("2.4.1", "x"),
        cell("2.6.0", "x", "fail"),
        {
            "kind": "env-error",
            "schema_version": records.SCHEMA_VERSION,
            "torch_version": "2.5.0",
            "variant": "cpu",
            "python": "3.11",
            "error_type": "InstallError",
            "error_message": "no wheel | for <this>",
            "installer_output": "resolver said no",
            "finished_at": "2025-01-01T00:00:00+00:00",
        },
    ]
    out = tmp_path / "report"
    result = report.build_report([str(write(tmp_path / "records", rows))], str(out), charts=False)
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "## Environments that failed to install" in index
    assert "no wheel \\| for &lt;this&gt;" in index
    assert "resolver said no" in index
    assert result.regressions == 0  # 2.4.1 and 2.6.0 are not consecutive: 2.5.0 failed to install


def test_cli_report_and_its_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    folder = write(tmp_path / "records", history())
    out = tmp_path / "report"
    assert cli.main(["report", str(folder), "--out", str(out), "--no-charts"]) == 0
    assert "4 case pages, 1 regressions, 1 fixes" in capsys.readouterr().out
    assert cli.main(["report", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "no such record folder" in capsys.readouterr().err
    assert cli.main(["report", str(folder), "--out", str(out), "--baseline", str(tmp_path)]) == 2
    assert "no cells.parquet" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "x.jsonl").write_text("", encoding="utf-8")
    assert cli.main(["report", str(empty), "--out", str(out)]) == 2
    assert "no cell or env-error records" in capsys.readouterr().err


def test_report_on_real_records(basic_run: List[Dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Records from the worker running real torch.export on the basic fixture cases."""
    monkeypatch.chdir(ROOT)  # case_file paths in the records are relative to the repository
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in basic_run), encoding="utf-8")
    out = tmp_path / "report"
    result = report.build_report([str(folder)], str(out))
    assert result.pages == len({c["case"] for c in basic_run})
    cells = pd.read_parquet(out / "cells.parquet")
    assert sorted(zip(cells["case"], cells["mode"], cells["status"])) == sorted(
        (c["case"], c["mode"], c["status"]) for c in basic_run
    )
    page = (out / "cases" / "graph_break.md").read_text(encoding="utf-8")
    assert "```python\n" in page and "graph_break()" in page  # the case's source
    assert re.search(r"^> .*graph break", page, re.MULTILINE | re.IGNORECASE)  # its docstring
    strict = next(c for c in basic_run if c["case"] == "graph_break" and c["mode"] == "strict")
    if strict["status"] == "fail":
        assert "<details><summary>strict · fail · %s" % strict["error_type"] in page


def test_a_matrix_where_every_environment_failed_still_reports(tmp_path: Path):
    error = {
        "kind": "env-error",
        "schema_version": records.SCHEMA_VERSION,
        "torch_version": "2.1.2",
        "variant": "cpu",
        "python": "3.11",
        "error_type": "InstallError",
        "error_message": "no wheel for this Python",
        "installer_output": "",
        "finished_at": "2025-01-01T00:00:00+00:00",
    }
    out = tmp_path / "report"
    result = report.build_report([str(write(tmp_path / "records", [error]))], str(out))
    index = (out / "index.md").read_text(encoding="utf-8")
    assert result.cells == 0 and result.pages == 0
    assert "| releases | 2.1.2 |" in index
    assert "no wheel for this Python" in index
