"""One build on two devices in the report: devices.md, the verdict line, the site's section, the rebuilt tables."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import List, Optional, Tuple

import pandas as pd

from matrix.commands import ci_summary
from matrix.records import baseline
from matrix.report import build as report

from conftest import history, report_cell, report_environment, write_by_release

GPU = "NVIDIA H200, compute 9.0, driver 580.1"


def on_two_devices() -> list:
    """history()'s records, and the newest release's cells run again on a GPU: one fails there, one has another graph,
    one fails alike."""
    cuda = dict(device="cuda", gpu=GPU, finished_at="2025-03-03T00:00:00+00:00")
    return [
        *history(),
        report_cell("2.6.0", "steady", graph_hash="9" * 16, **cuda),
        report_cell(
            "2.6.0",
            "heals",
            "fail",
            error_type="RuntimeError",
            error_message="Expected all tensors on cuda:0",
            case_file="cases/heals.py",
            **cuda,
        ),  # fmt: skip
        report_cell("2.6.0", "breaks", "fail", error_type="RuntimeError", error_message="another message", **cuda),
    ]


class Sections(HTMLParser):
    """The site's devices page: its first build's section's table, as header texts and rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.depth = 0
        self.headers: List[str] = []
        self.rows: List[List[str]] = []
        self.cell: Optional[List[str]] = None
        self.where = ""

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        if tag == "section":
            self.depth += 1
            if not self.headers:
                self.inside = True
        if not self.inside:
            return
        if tag in ("th", "td"):
            self.cell = []
            self.where = tag
        elif tag == "tr" and self.headers:
            self.rows.append([])

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.inside = False
        if self.inside and tag in ("th", "td") and self.cell is not None:
            value = "".join(self.cell).strip()
            if self.where == "th":
                self.headers.append(value)
            else:
                self.rows[-1].append(value)
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def test_a_build_on_two_devices_gets_a_page_of_the_cells_that_differ_and_is_never_a_transition(tmp_path: Path):
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", on_two_devices()))], str(out))
    page = (out / "devices.md").read_text(encoding="utf-8")
    assert "## 2.6.0: cuda (%s) vs cpu" % GPU in page
    rows = [line for line in page.splitlines() if line.startswith("| [")]
    assert len(rows) == 2, rows  # "breaks" fails on both devices: its message alone is no difference
    heals = next(r for r in rows if "[heals]" in r)
    assert "| ✅ pass | ❌ fail |" in heals and "RuntimeError: Expected all tensors on cuda:0" in heals
    steady = next(r for r in rows if "[steady]" in r)
    assert "| ✅ pass, graph `222222222222` | ✅ pass, graph `999999999999` |" in steady
    # Under the table, the command that runs the GPU's cell again, for the cells whose case has a file of ours.
    again = page.split("Run again on cuda, in the cell's own environment (export-matrix check, from a checkout):")
    assert len(again) == 2 and [line for line in again[1].splitlines() if line.startswith("- ")] == [
        "- heals, strict, Python 3.11: `export-matrix check cases/heals.py --torch 2.6.0+cpu --variant cpu"
        " --mode strict --python 3.11 --device cuda`"
    ]
    index = (out / "index.md").read_text(encoding="utf-8")
    verdict = next(line for line in index.splitlines() if line.startswith("- **Devices**"))
    assert "(devices.md)" in verdict
    assert "2.6.0 on cuda vs cpu: 3 cells on both, 1 other status, 1 other graph" in verdict
    # The header says which builds ran where, and counts the records of the cells it shows.
    assert (
        "| device | cpu: every build of the grid, the transitions and the verdicts; cuda (%s): 2.6.0 too, compared"
        " cell by cell with its cpu cells, never in the grid |" % GPU
    ) in index
    assert "from 13 cell records |" in index
    # The GPU's failure of "heals" is no regression of 2.6.0, whose CPU cell passes.
    transitions = pd.read_parquet(out / "transitions.parquet")
    heals_moves = transitions[(transitions["case"] == "heals") & (transitions["after"] == "2.6.0")]
    assert not heals_moves["kind"].isin(["regression", "wrong-result"]).any()
    cells = pd.read_parquet(out / "cells.parquet")
    assert sorted(cells.loc[cells["device"] == "cuda", "case"]) == ["breaks", "heals", "steady"]

    site = Sections()
    site.feed((out / "site" / "devices.html").read_text(encoding="utf-8"))
    assert site.headers == ["case", "mode", "cpu", "cuda", "error on cpu", "error on cuda"]
    # Each row's values sit under their headers: the case first, the GPU's error in the last column.
    by_case = {row[0]: dict(zip(site.headers, row)) for row in site.rows}
    assert sorted(by_case) == ["heals", "steady"]
    assert by_case["heals"]["cpu"].endswith("pass") and by_case["heals"]["cuda"].endswith("fail")
    assert by_case["heals"]["error on cuda"] == "RuntimeError: Expected all tensors on cuda:0"
    assert by_case["heals"]["error on cpu"] == ""
    devices = (out / "site" / "devices.html").read_text(encoding="utf-8")
    assert re.findall(r"<code>(export-matrix check [^<]*)</code>", devices) == [
        "export-matrix check cases/heals.py --torch 2.6.0+cpu --variant cpu --mode strict --python 3.11 --device cuda"
    ]


def test_the_devices_survive_a_rebuild_from_the_tables_and_old_tables_read_as_cpu(tmp_path: Path):
    first, again = tmp_path / "first", tmp_path / "again"
    report.build_report([str(write_by_release(tmp_path / "records", on_two_devices()))], str(first))
    report.build_report([str(first)], str(again))
    assert (again / "devices.md").read_text(encoding="utf-8") == (first / "devices.md").read_text(encoding="utf-8")
    # A table written before cells had a device: every cell ran on the CPU, and no device is compared.
    cpu_only = tmp_path / "cpu-only"
    report.build_report([str(write_by_release(tmp_path / "cpu-records", history()))], str(cpu_only))
    table = pd.read_parquet(cpu_only / "cells.parquet")
    assert set(table["device"]) == {"cpu"}
    table.drop(columns=["device", "gpu"]).to_parquet(cpu_only / "cells.parquet", index=False)
    rebuilt = tmp_path / "rebuilt"
    report.build_report([str(cpu_only)], str(rebuilt))
    assert set(pd.read_parquet(rebuilt / "cells.parquet")["device"]) == {"cpu"}


def test_a_cpu_only_report_has_no_devices_page_and_says_it_ran_on_the_cpu(tmp_path: Path):
    rows = [report_environment("2.6.0+cu126", "2025-03-01T10:00:00+00:00"), report_cell("2.6.0+cu126", "steady")]
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", [*history(), *rows]))], str(out))
    assert not (out / "devices.md").exists()
    index = (out / "index.md").read_text(encoding="utf-8")
    assert "**Devices**" not in index and "devices.md" not in index
    # A CUDA build's name is no GPU run: the header says so.
    assert "| device | cpu (the CUDA builds, +cu…, ran on the CPU: no cell ran on a GPU) |" in index
    assert 'id="devices"' not in (out / "site" / "index.html").read_text(encoding="utf-8")
    for page in (*out.glob("cases/*.md"), *out.glob("site/cases/*.html")):
        assert "On other devices" not in page.read_text(encoding="utf-8"), page


def test_a_report_on_two_devices_as_a_baseline_compares_the_main_devices_cells(tmp_path: Path):
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", on_two_devices()))], str(out))
    base, _ = baseline.read_baseline(str(out))
    assert set(base["device"]) == {"cpu"} and len(base) == 13
    # Against itself nothing is new, though "heals" fails on the GPU where it passes on the CPU.
    found = ci_summary.verdict(str(out), str(out))
    assert len(found.cells) == 13 and found.new_regressions == 0
    earlier = tmp_path / "earlier"
    report.build_report([str(write_by_release(tmp_path / "cpu-records", history()))], str(earlier))
    assert ci_summary.verdict(str(out), str(earlier)).new_regressions == 0


def test_run_it_again_names_each_device_with_the_builds_that_ran_there(tmp_path: Path):
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", on_two_devices()))], str(out))
    index = (out / "site" / "index.html").read_text(encoding="utf-8")
    run = index[index.index('<section id="run-it-again">') :]
    run = run[: run.index("</section>")]
    commands = [line for line in re.findall(r"<code>([^<]*)</code>", html.unescape(run)) if "nox -s run" in line]
    # The CPU, where every build ran, comes first; CUDA's command names the one build that ran there.
    assert commands[0] == 'EXPORT_MATRIX_TORCH="2.4.1+cpu 2.5.0+cpu 2.6.0+cpu" nox -s run -- --device cpu'
    assert commands[1] == 'EXPORT_MATRIX_TORCH="2.6.0+cpu" nox -s run -- --device cuda'
    assert "on CUDA (a machine with an NVIDIA GPU)" in run and len(commands) == 2


class CaseDevices(HTMLParser):
    """A site case page's section on other devices: its headings, each table's headers and rows, its commands."""

    def __init__(self) -> None:
        super().__init__()
        self.inside, self.tag = False, ""
        self.headings: List[str] = []
        self.headers: List[str] = []
        self.rows: List[List[str]] = []
        self.commands: List[str] = []
        self.text: List[str] = []

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        self.tag, self.text = tag, []
        if tag == "tr" and self.inside and self.headers:
            self.rows.append([])

    def handle_endtag(self, tag: str) -> None:
        value = "".join(self.text).strip()
        if tag == "h2":
            self.inside = value == "On other devices"
        elif not self.inside:
            return
        elif tag == "h3":
            self.headings.append(value)
        elif tag == "th":
            self.headers.append(value)
        elif tag == "td":
            self.rows[-1].append(value)
        elif tag == "code":
            self.commands.append(value)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_a_case_page_says_where_the_case_ran_on_another_device_and_how_it_differs(tmp_path: Path):
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", on_two_devices()))], str(out))
    heals = (out / "cases" / "heals.md").read_text(encoding="utf-8")
    section = heals.split("## On other devices\n", 1)[1].split("\n## ", 1)[0]
    # After the case's own repros, before its source.
    assert heals.index("## On other devices") < heals.index("## Source")
    assert "### 2.6.0 on cuda (%s)\n\n1 cell on cuda, 1 differs from its cell on cpu." % GPU in section
    assert "| strict, Python 3.11 | ✅ pass | ❌ fail |   | RuntimeError: Expected all tensors on cuda:0 |" in section
    assert "- heals, strict, Python 3.11: `export-matrix check cases/heals.py --torch 2.6.0+cpu" in section
    assert "[Every build's differences.](../devices.md)" in section
    # A case that fails alike on both devices: counted, no table.
    breaks = (out / "cases" / "breaks.md").read_text(encoding="utf-8")
    assert "1 cell on cuda, none differs from its cell on cpu." in breaks and "error on cuda" not in breaks
    # A case that never ran on the GPU has no such section.
    assert "On other devices" not in (out / "cases" / "nested__case.md").read_text(encoding="utf-8")

    site = CaseDevices()
    site.feed((out / "site" / "cases" / "heals.html").read_text(encoding="utf-8"))
    assert site.headings == ["2.6.0 on cuda (%s)" % GPU]
    assert site.headers == ["mode", "cpu", "cuda", "error on cpu", "error on cuda"]
    # The row's values sit under their headers: the GPU's failure under cuda, its error in the last column.
    (row,) = site.rows
    assert dict(zip(site.headers, row)) == {
        "mode": "strict, Python 3.11", "cpu": "✅ pass", "cuda": "❌ fail", "error on cpu": "",
        "error on cuda": "RuntimeError: Expected all tensors on cuda:0",
    }  # fmt: skip
    assert site.commands == [
        "export-matrix check cases/heals.py --torch 2.6.0+cpu --variant cpu --mode strict --python 3.11 --device cuda"
    ]
