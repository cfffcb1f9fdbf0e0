"""Known upstream issues on a report built from hand-written records: the verdicts (Markdown and site), a case's
errors and its compiled × loaded grid name the issue a failure matches, and the failure is still counted."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List

import pytest

from matrix.contract import records, schema
from matrix.contract.products import PACKAGE
from matrix.contract.schema import AOTI_LOAD_KEYS, AOTI_LOAD_KIND
from matrix.report import artifacts
from matrix.report import build as report

from conftest import report_cell

CODECACHE = "module 'torch._inductor' has no attribute 'codecache'"
ISSUE = "https://github.com/pytorch/pytorch/issues/173706"


def package_load(compiled: str, loaded: str, status: str, **extra: Any) -> Dict[str, Any]:
    record: Dict[str, Any] = {key: None for key in AOTI_LOAD_KEYS}
    record.update(
        schema_version=schema.SCHEMA_VERSION, kind=AOTI_LOAD_KIND, saved_torch_version=compiled, saved_variant="cpu",
        saved_python="3.11", torch_version=loaded, variant="cpu", python="3.11", case="packaged", mode="strict",
        status=status, finished_at="2025-01-01T00:00:00+00:00", package="aoti.pt2",
    )  # fmt: skip
    record.update(extra)
    return record


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2.9.1 and 2.10.0: on 2.10.0 the cell's package fails to load as pytorch/pytorch#173706 says, and 2.10.0
    cannot load its own package; 2.9.1's loads everywhere. Another case fails to export, with no known issue."""
    root = tmp_path_factory.mktemp("known")
    folder = root / "records"
    folder.mkdir()
    for release in ("2.9.1", "2.10.0"):
        newer = release == "2.10.0"
        aoti = {"aoti_status": "error", "aoti_error_type": "AttributeError", "aoti_error": "load: " + CODECACHE}
        rows: List[Dict[str, Any]] = [
            {**report_cell(release, "packaged"), **(aoti if newer else {"aoti_status": "ok"})},
            report_cell(release, "broken", "fail", error_type="RuntimeError", error_message="boom"),
        ]
        for compiled in ("2.9.1", "2.10.0"):
            if compiled == "2.10.0" and not newer:
                continue
            fails = compiled == release == "2.10.0"
            rows.append(
                package_load(compiled, release, "load-error", error_type="AttributeError", error_message=CODECACHE)
                if fails
                else package_load(compiled, release, "pass")
            )
        path = folder / records.env_file_name(release, "cpu", "3.11")
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    report.build_report([str(folder)], str(root / "report"), charts=False)
    return root / "report"


def test_the_verdicts_name_the_issue_its_releases_and_what_it_labels_in_markdown_and_on_the_site(built: Path):
    index = (built / "index.md").read_text(encoding="utf-8")
    lines = [line for line in index.splitlines() if line.startswith("- **Known upstream issue**")]
    assert len(lines) == 1  # the export failure of "broken" matches no issue
    assert "2.10.0 cannot load AOTInductor packages" in lines[0]
    assert "[pytorch/pytorch#173706](%s)" % ISSUE in lines[0]
    assert lines[0].endswith("still counted as failures: 1 cell, 1 package load.")
    site = (built / "site" / "index.html").read_text(encoding="utf-8")
    verdicts = re.search(r'<section id="verdicts">(.*?)</section>', site, re.S)
    assert verdicts is not None
    assert '<a href="%s">pytorch/pytorch#173706</a>' % ISSUE in verdicts.group(1)
    # Still counted: the newest release's cells are one pass of two, as without the label.
    assert "(1 of 2, every mode;" in verdicts.group(1)
    # In the compiled packages' section of the saved-programs page, where their failures are counted, the same issue.
    saved = (built / "site" / "artifacts.html").read_text(encoding="utf-8")
    section = saved[saved.index('id="%s"' % artifacts.anchor(PACKAGE)) :]
    assert section.index("Known issues behind these failures") > section.index(
        'id="%s-epochs"' % artifacts.anchor(PACKAGE)
    )
    assert '<a href="%s">pytorch/pytorch#173706</a>' % ISSUE in section


def test_a_case_page_names_the_issue_beside_the_failure_it_labels(built: Path):
    markdown = (built / "cases" / "packaged.md").read_text(encoding="utf-8")
    errors = [line for line in markdown.splitlines() if "aoti fails" in line]
    assert len(errors) == 1 and "known upstream issue pytorch/pytorch#173706" in errors[0]
    grid_lines = [line for line in markdown.splitlines() if line.startswith("- load-error")]
    assert grid_lines == [
        "- load-error: AttributeError: module 'torch.\\_inductor' has no attribute 'codecache' (known upstream issue"
        " pytorch/pytorch#173706) — 2.10.0 → 2.10.0"
    ]
    page = (built / "site" / "cases" / "packaged.html").read_text(encoding="utf-8")
    # The error's summary names the issue; behind it, the issue's link and what it says.
    summary = re.search(r"<summary>([^<]*aoti fails[^<]*)</summary><p>(.*?)</p>", page, re.S)
    assert summary is not None and "known upstream issue pytorch/pytorch#173706" in summary.group(1)
    assert '<a href="%s">known upstream issue pytorch/pytorch#173706</a>' % ISSUE in summary.group(2)
    assert "(known upstream issue pytorch/pytorch#173706) — 2.10.0 → 2.10.0" in page  # under the compiled × loaded grid
    broken = (built / "cases" / "broken.md").read_text(encoding="utf-8")
    assert "known upstream" not in broken
