"""The repros a report writes beside each case page, and how both case pages show them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from matrix.report import build as report
from matrix.report import files

from conftest import report_cell

SOURCE = '''"""A case whose export fails."""

import torch

model = torch.nn.Linear(2, 2)
example_args = (torch.randn(3, 2),)
'''
SCRIPTS = "cases/m.repro"


def failing(release: str, mode: str = "strict", message: str = "boom", **extra: Any) -> Dict[str, Any]:
    values: Dict[str, Any] = dict(
        case_file="cases/m.py", failed_stage="export", error_type="RuntimeError", error_message=message
    )
    values.update(extra)
    return report_cell(release, "m", "fail", mode, **values)


def build(tmp_path: Path, rows: List[Dict[str, Any]]) -> Path:
    folder = tmp_path / "records"
    folder.mkdir(exist_ok=True)
    (folder / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report.build_report([str(folder)], str(tmp_path / "out"), charts=False)
    return tmp_path / "out"


@pytest.fixture()
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the case file ``cases/m.py``, made the current one: the report reads sources from its cases/."""
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "m.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_each_distinct_failure_gets_one_script_on_its_newest_release(here: Path):
    out = build(
        here,
        [
            failing("2.4.1"),
            failing("2.5.0"),
            failing("2.6.0", message="other"),
            failing("2.6.0", "non-strict"),
            report_cell("2.6.0", "fine", case_file="cases/m.py"),
        ],
    )
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.py") if "site" not in p.parts)
    assert written == [
        SCRIPTS + "/torch-2.5.0_py3.11_strict.py",
        SCRIPTS + "/torch-2.6.0_py3.11_non-strict.py",
        SCRIPTS + "/torch-2.6.0_py3.11_strict.py",
    ]
    script = (out / SCRIPTS / "torch-2.5.0_py3.11_strict.py").read_text(encoding="utf-8")
    compile(script, "repro.py", "exec")
    assert "#   torch-2.5.0/strict/m\n" in script and "model = torch.nn.Linear(2, 2)" in script
    manifest = json.loads((out / files.MANIFEST).read_text(encoding="utf-8"))["files"]
    assert set(written) <= set(manifest)


def test_the_markdown_page_shows_where_each_failure_shows_its_command_and_its_script(here: Path):
    out = build(here, [failing("2.4.1"), failing("2.5.0")])
    page = (out / "cases" / "m.md").read_text(encoding="utf-8")
    section = page.split("## Reproduce\n", 1)[1].split("\n## ", 1)[0]
    assert "### strict · fail at export\n\n- fail at export: RuntimeError: boom\n" in section
    assert "Shows on 2.4.1–2.5.0; the newest cell: `torch-2.5.0/strict/m`." in section
    assert (
        "```sh\nexport-matrix check cases/m.py --torch 2.5.0+cpu --variant cpu --mode strict --python 3.11\n```"
        in section
    )
    link = "[torch-2.5.0_py3.11_strict.py](m.repro/torch-2.5.0_py3.11_strict.py)"
    assert "Without this tool: %s" % link in section
    assert page.index("## Errors") < page.index("## Reproduce") < page.index("## Source")


def test_the_site_page_shows_the_same_and_links_the_script_beside_the_markdown_page(here: Path):
    out = build(here, [failing("2.4.1"), failing("2.5.0")])
    page = (out / "site" / "cases" / "m.html").read_text(encoding="utf-8")
    assert "<h2>Reproduce</h2>" in page and "<h3>strict · fail at export</h3>" in page
    assert (
        '<pre><code class="language-sh">export-matrix check cases/m.py --torch 2.5.0+cpu --variant cpu --mode strict'
        " --python 3.11</code></pre>" in page
    )
    # The site links the one script the report wrote beside the Markdown page: no copy under site/.
    href = "../../cases/m.repro/torch-2.5.0_py3.11_strict.py"
    assert '<a href="%s"' % href in page
    linked = (out / "site" / "cases" / href).resolve()
    assert linked == (out / SCRIPTS / "torch-2.5.0_py3.11_strict.py").resolve() and linked.is_file()
    assert not list((out / "site").rglob("*.py"))


def test_a_failure_whose_case_file_is_not_found_shows_the_command_and_writes_no_script(here: Path):
    out = build(here, [failing("2.5.0", case_file="cases/gone.py")])
    page = (out / "cases" / "m.md").read_text(encoding="utf-8")
    assert "export-matrix check cases/gone.py" in page and "No standalone script: the case file cases/gone.py" in page
    assert not list(out.rglob("*.py"))
    assert "No standalone script" in (out / "site" / "cases" / "m.html").read_text(encoding="utf-8")


def test_a_case_file_that_cannot_be_read_is_said_so_and_no_script_is_linked(here: Path):
    (here / "cases" / "m.py").write_bytes(b"\xff\xfe not text")
    out = build(here, [failing("2.5.0")])
    page = (out / "cases" / "m.md").read_text(encoding="utf-8")
    assert "No standalone script: the case file cases/m.py, or a module of its folder it imports, could not be" in page
    assert "Without this tool" not in page and not list(out.rglob("*.py"))


def test_a_case_that_passes_everywhere_has_no_section(here: Path):
    out = build(here, [report_cell("2.5.0", "m", case_file="cases/m.py")])
    assert "## Reproduce" not in (out / "cases" / "m.md").read_text(encoding="utf-8")
    assert "Reproduce" not in (out / "site" / "cases" / "m.html").read_text(encoding="utf-8")


def test_a_script_no_longer_written_is_removed_with_its_emptied_folder(here: Path):
    out = build(here, [failing("2.5.0")])
    assert (out / SCRIPTS).is_dir()
    (out / "cases" / "notes.repro").mkdir()
    (out / "cases" / "notes.repro" / "mine.py").write_text("# kept: the report did not write it\n", encoding="utf-8")
    build(here, [report_cell("2.5.0", "m", case_file="cases/m.py")])
    assert not (out / SCRIPTS).exists()
    assert (out / "cases" / "notes.repro" / "mine.py").is_file()


def test_two_builds_write_the_same_scripts(here: Path):
    first = build(here, [failing("2.5.0"), failing("2.5.0", "non-strict")])
    before = {p: p.read_bytes() for p in first.rglob("*.py")}
    build(here, [failing("2.5.0"), failing("2.5.0", "non-strict")])
    # Two scripts, each once: beside the Markdown page, linked from the site's page.
    assert {p: p.read_bytes() for p in first.rglob("*.py")} == before and len(before) == 2
