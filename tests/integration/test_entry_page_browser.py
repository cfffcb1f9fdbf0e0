"""The site's entry page as a reader's screen shows it, in headless Chromium: a large report (15 releases, 130 cases,
hundreds of changes) reads in at most eight screens at 1,400 × 900, no table on it is wider than the window, and a
phone (390 px) sees case names that stay at the left edge beside several status cells.

The window is set through DevTools (``Emulation.setDeviceMetricsOverride``): a headless window cannot be made
narrower than about 500 px, and its outer size is not its page's size. Needs what test_site_browser needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from unit.report_support import large_history

from matrix.report import build as report
from matrix.report.site import changes

from .test_site_browser import browser, choose, open_page, real_model_records  # noqa: F401 (browser: a fixture)
from conftest import write_by_release

pytestmark = pytest.mark.xdist_group("test_site_browser")

SCREEN = (1400, 900)
SCREENS = 8  # the most screens the entry page may take at SCREEN
PHONE = (390, 844)


@pytest.fixture(scope="module")
def large_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of 15 releases × 130 cases, with a real model: hundreds of changes between releases."""
    root = tmp_path_factory.mktemp("large")
    folders = [write_by_release(root / "records", large_history()), real_model_records(root / "model")]
    report.build_report([str(f) for f in folders], str(root / "report"), charts=False)
    return root / "report" / "site"


@pytest.fixture
def screen(browser: Any) -> Iterator[Any]:  # noqa: F811 (the fixture imported above)
    """The browser, its page sized by DevTools until the test ends."""

    def size(width: int, height: int, phone: bool = False) -> None:
        browser.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": phone},
        )

    browser.size = size
    try:
        yield browser
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_the_entry_page_reads_in_at_most_eight_screens_with_its_long_table_paged(large_site: Path, screen: Any):
    from selenium.webdriver.common.by import By

    screen.size(*SCREEN)
    open_page(screen, large_site / "index.html")
    assert screen.execute_script("return [window.innerWidth, window.innerHeight]") == list(SCREEN)
    height = screen.execute_script("return document.documentElement.scrollHeight")
    assert height <= SCREENS * SCREEN[1], "the entry page is %.1f screens" % (height / SCREEN[1])
    # The table of regressions holds every one, a row per case and mode, and shows a page of them with a button for
    # the rest.
    rows = screen.find_elements(By.CSS_SELECTOR, "#every-regression tbody tr")
    assert len(rows) > 3 * changes.PAGE
    assert sum(row.is_displayed() for row in rows) == changes.PAGE
    count = screen.find_element(By.ID, "c-count").text
    assert count == "%d of %d changes (the first %d shown)" % (len(rows), len(rows), changes.PAGE)
    more = screen.find_element(By.ID, "c-more")
    assert more.text == "Show all %d" % len(rows)
    more.click()
    assert sum(row.is_displayed() for row in rows) == len(rows) and not more.is_displayed()
    # A link to a collapsed section opens it.
    assert not screen.execute_script("return document.querySelector('#tables > details').open")
    screen.execute_script("location.hash = '#tables'")
    assert screen.execute_script("return document.querySelector('#tables > details').open")
    # A filter starts on its first page again.
    choose(screen, "c-change", "regression")
    kept = [row for row in rows if "regression" in row.get_attribute("data-change").split()]
    assert sum(row.is_displayed() for row in rows) == min(len(kept), changes.PAGE)


NO_WIDER = """
const room = document.documentElement.clientWidth;
document.querySelectorAll('details').forEach((d) => { d.open = true; });
return [...document.querySelectorAll('table')].filter((t) => t.offsetParent !== null).map((t) => {
  const box = t.getBoundingClientRect(), holder = t.parentElement;
  return {table: t.className || t.id || t.closest('section').id, right: box.right, room: room,
          hidden: holder.scrollWidth - holder.clientWidth};
}).filter((t) => t.right > t.room + 0.5 || t.hidden > 0);
"""


def test_no_table_of_the_entry_page_is_wider_than_the_window(large_site: Path, screen: Any):
    screen.size(*SCREEN)
    open_page(screen, large_site / "index.html")
    assert screen.execute_script("return document.querySelectorAll('table').length") >= 5
    # Every table, the collapsed sections' too, shows all its columns: none overflows or scrolls sideways.
    assert screen.execute_script(NO_WIDER) == []
    assert screen.execute_script("return document.documentElement.scrollWidth") <= SCREEN[0]


PHONE_ROW = """
const room = document.documentElement.clientWidth;
const row = [...document.querySelectorAll('#grid .row')].find((r) => !r.hidden);
const name = row.querySelector('.name').getBoundingClientRect();
const cells = [...row.querySelectorAll('.cell')].filter((c) => c.offsetParent !== null)
  .map((c) => c.getBoundingClientRect());
return {room: room, nameLeft: name.left, nameRight: name.right, page: document.documentElement.scrollWidth,
        whole: cells.filter((c) => c.left >= name.right - 0.5 && c.right <= room).length, cells: cells.length};
"""


def test_the_grid_on_a_phone_keeps_case_names_beside_several_status_cells(large_site: Path, screen: Any):
    from selenium.webdriver.common.by import By

    screen.size(*PHONE, phone=True)
    open_page(screen, large_site / "index.html")
    screen.execute_script("document.getElementById('cases').scrollIntoView()")
    row = screen.execute_script(PHONE_ROW)
    assert row["room"] == PHONE[0] and row["page"] <= PHONE[0]  # the page itself does not scroll sideways
    assert row["nameRight"] <= 0.45 * PHONE[0]  # a name takes under half the width
    assert row["whole"] >= 8, row  # and the rest shows several status cells whole
    # Scrolled sideways, the grid keeps each case's name at its left edge, beside later releases' cells.
    wrap = screen.find_element(By.CSS_SELECTOR, ".grid-wrap")
    left = row["nameLeft"]
    screen.execute_script("arguments[0].scrollLeft = 400", wrap)
    moved = screen.execute_script(PHONE_ROW)
    assert abs(moved["nameLeft"] - left) < 1 and moved["whole"] >= 8
    # A release chosen in the filter: its two modes' cells sit beside the names.
    release = screen.execute_script("return JSON.parse(document.getElementById('grid-data').textContent).envs[3]")
    choose(screen, "f-release", release)
    chosen = screen.execute_script(PHONE_ROW)
    assert chosen["cells"] == 2 and chosen["whole"] == 2
