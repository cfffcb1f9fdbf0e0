"""The entry page's layout in its HTML: the sections a reader opens on a click, the paged table of changes, the line
a citation needs. How they look in a browser: tests/integration/test_entry_page_browser.py."""

from __future__ import annotations

import re
from pathlib import Path

from matrix.report import build as report
from matrix.report.site import changes

from conftest import history, write_by_release


def test_collapsed_sections_open_on_their_heading_and_the_table_of_changes_is_paged(tmp_path: Path) -> None:
    records = write_by_release(tmp_path / "records", history())
    report.build_report([str(records)], str(tmp_path / "out"))
    page = (tmp_path / "out" / "site" / "index.html").read_text(encoding="utf-8")
    # This report has no install error to list: the tables and the commands open on a click.
    for anchor, level in (("tables", 2), ("run-it-again", 3)):
        # The section keeps its anchor and heading; its body is inside the <details> the heading opens.
        found = re.search(r'<section id="%s"><details><summary><h%d>[^<]+</h%d></summary>(.*?)</details></section>'
                          % (anchor, level, level), page, flags=re.S)  # fmt: skip
        assert found and found.group(1).strip(), anchor
    for anchor in ("verdicts", "cases", "changes"):
        assert re.search(r'<section id="%s"><h2>' % anchor, page), anchor  # never collapsed
    # The regressions' and fixes' tables are paged by the widget's keys: PAGE rows at a time.
    assert '<script type="application/json" id="change-keys">{"page":%d,' % changes.PAGE in page
    assert '<section id="every-regression">' in page and '<section id="every-fix">' in page
    assert '<button type="button" id="c-more" hidden>' in page
    # What a citation needs, under the title, before the verdicts.
    head = page[page.index("</header>") : page.index('<section id="verdicts">')]
    assert re.search(r"<p>Built \d{4}-\d\d-\d\d by export-matrix [^<]*GPU: [^<]*device per build: ", head)
