"""Every page of a built report says the same in its two forms: the Markdown page and the site's page.

Both are drawn from one document (matrix.report.document); these tests read each pair as a reader does
(forms_support) and compare what they carry: words, statuses and counts in order, link targets, tooltips.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest

from matrix.report.build import build_report

from .forms_support import differences, facts, markdown_facts
from .report_support import large_history
from conftest import write_by_release

ROOT = Path(__file__).resolve().parents[2]


def pairs(out: Path) -> List[Tuple[str, str]]:
    """Each page the report wrote in both forms: (``NAME.md``, ``site/NAME.html``), relative to ``out``."""
    site = out / "site"
    found = []
    for html in sorted(site.rglob("*.html")):
        name = html.relative_to(site).with_suffix("").as_posix()
        if (out / (name + ".md")).is_file():
            found.append((name + ".md", "site/%s.html" % name))
    return found


def disagreements(out: Path) -> List[str]:
    found = []
    for markdown, html in pairs(out):
        said = differences(
            markdown_facts((out / markdown).read_text(encoding="utf-8"), markdown),
            facts((out / html).read_text(encoding="utf-8"), html),
        )
        if said is not None:
            found.append("%s: %s" % (markdown, said))
    return found


def test_a_report_says_the_same_in_both_forms(tmp_path: Path) -> None:
    records = write_by_release(tmp_path / "records", large_history())
    out = tmp_path / "report"
    build_report([str(records)], str(out), charts=False)
    written = pairs(out)
    names = {markdown for markdown, _ in written}
    # The front page, a case page and a transition page are among the pages written in both forms.
    assert "index.md" in names and "cases/case_000.md" in names
    assert any(name.startswith("transition-") for name in names)
    assert disagreements(out) == []


@pytest.mark.slow
def test_the_published_report_says_the_same_in_both_forms(tmp_path: Path) -> None:
    out = tmp_path / "latest"
    build_report([str(ROOT / "reports" / "latest")], str(out), charts=False)
    assert len([m for m, _ in pairs(out) if m.startswith("cases/")]) == len(list((out / "cases").glob("*.md")))
    assert disagreements(out) == []


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "built_elsewhere" in metafunc.fixturenames:
        metafunc.parametrize("built_elsewhere", metafunc.config.getoption("--forms-report"))


def test_a_report_built_elsewhere_says_the_same_in_both_forms(built_elsewhere: str) -> None:
    """Each report named with ``--forms-report DIR``, as it was built: the README's main job's, for one
    (``pytest tests/unit/test_forms_report.py --forms-report reports/local``). Without the option, nothing to check."""
    out = Path(built_elsewhere)
    assert pairs(out), "%s: no page written in both forms" % out
    assert disagreements(out) == []
