"""The report's site in a real browser: headless Chromium filters the grid and follows a case's link, as a reader would.

At a 1400 px window it also measures the layout a reader relies on: a case's saved × loaded grid is a grid (each
cell under its column's header) and no release's label is cut, on the case page or in the front page's grid.

Needs Chromium and its driver (Debian: ``apt-get install -y chromium chromium-driver``;
``.ci/run`` installs them) and selenium (the ``test`` extra). Without them the test fails
and says so: it is never skipped.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

from matrix.contract import records, schema
from matrix.report import build as report

from conftest import history, report_cell, write_by_release

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
INSTALL = "apt-get install -y chromium chromium-driver"
WIDTH = 1400  # the window a reader's laptop gives the pages, in CSS pixels


def real_model_records(folder: Path) -> Path:
    """A case of the real-model pack on two releases, with a load of one release's program on the other."""
    folder.mkdir(parents=True)
    with records.Writer(str(folder / "model.jsonl")) as writer:
        for release in ("2.5.0", "2.6.0"):
            writer.write(report_cell(release, "real_models/hf_tiny", tags=["model"]))
        for saved, loaded in (("2.5.0", "2.6.0"), ("2.6.0", "2.6.0")):
            load: Dict[str, Any] = {key: None for key in schema.LOAD_KEYS}
            load.update(
                schema_version=schema.SCHEMA_VERSION, kind="load", saved_torch_version=saved, saved_variant="cpu",
                saved_python="3.11", torch_version=loaded, variant="cpu", python="3.11", case="real_models/hf_tiny",
                mode="strict", status="pass", finished_at="2025-01-01T00:00:00+00:00",
            )  # fmt: skip
            writer.write(load)
    return folder


# Sixteen CUDA builds, as a nightly across four minors has them: long labels in many columns.
BUILDS = ["2.%d.%d+cu1%d" % (minor, patch, cuda) for minor in (9, 10, 11, 12) for patch, cuda in ((0, 26), (1, 30))]
BUILDS += ["2.%d.%d+cu1%d" % (minor, patch, cuda) for minor in (9, 10, 11, 12) for patch, cuda in ((0, 29), (1, 28))]


def wide_records(folder: Path) -> Path:
    """One case on every build of BUILDS, each build's program loaded on every build: a 16 × 16 grid."""
    folder.mkdir(parents=True)
    for loaded in BUILDS:
        variant = loaded.split("+")[1]
        rows = [report_cell(loaded, "wide", variant=variant)]
        for saved in BUILDS:
            newer = release_key(saved) > release_key(loaded)  # an older build cannot read a newer one's program
            load: Dict[str, Any] = {key: None for key in schema.LOAD_KEYS}
            load.update(
                schema_version=schema.SCHEMA_VERSION, kind="load", saved_torch_version=saved,
                saved_variant=saved.split("+")[1], saved_python="3.11", torch_version=loaded, variant=variant,
                python="3.11", case="wide", mode="strict", status="load-error" if newer else "pass",
                error_type="RuntimeError" if newer else None, finished_at="2025-01-01T00:00:00+00:00",
            )  # fmt: skip
            rows.append(load)
        path = folder / records.env_file_name(loaded, variant, "3.11")
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def wide_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report of one case across sixteen CUDA builds, with every saved × loaded pair."""
    root = tmp_path_factory.mktemp("wide")
    report.build_report([str(wide_records(root / "records"))], str(root / "report"), charts=False)
    return root / "report" / "site"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report built from hand-written records: three releases, a regression, a hostile error, a real model."""
    root = tmp_path_factory.mktemp("site")
    folders = [write_by_release(root / "records", history()), real_model_records(root / "model")]
    report.build_report([str(f) for f in folders], str(root / "report"), charts=False)
    return root / "report" / "site"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("selenium is not installed: install the project's `test` extra (pip install -e '.[test]')")
    binary = next((found for found in map(shutil.which, BROWSERS) if found), None)
    driver = shutil.which("chromedriver")
    if binary is None or driver is None:
        missing = " and ".join(n for n, f in (("Chromium", binary), ("chromedriver", driver)) if f is None)
        pytest.fail("%s not found: the site's browser test needs both (Debian: `%s`)" % (missing, INSTALL))
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=%d,1000" % WIDTH):
        options.add_argument(argument)
    # No name resolves: a page that reached for the network would show it in its resource list.
    options.add_argument("--host-resolver-rules=MAP * ~NOTFOUND")
    # The console (script errors) and the DevTools network events (every file a page asks for).
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    chrome = webdriver.Chrome(options=options, service=Service(driver))
    try:
        yield chrome
    finally:
        chrome.quit()


def open_page(chrome: Any, path: Path) -> None:
    """Open the front page and wait until its script drew the grid (get() may return before the new page runs)."""
    from selenium.webdriver.support.ui import WebDriverWait

    chrome.get(path.as_uri())
    drawn = "return document.URL.startsWith(arguments[0]) && performance.getEntriesByName('grid-drawn').length"
    WebDriverWait(chrome, 30).until(lambda page: page.execute_script(drawn, path.as_uri()) == 1)


def visible_cases(chrome: Any) -> List[str]:
    """The case names of the grid's rows a reader sees."""
    from selenium.webdriver.common.by import By

    return [
        row.find_element(By.CSS_SELECTOR, "a.name").text
        for row in chrome.find_elements(By.CSS_SELECTOR, "#grid .row")
        if row.is_displayed()
    ]


def requests(chrome: Any) -> List[str]:
    """The URLs the browser asked for since the last call (DevTools' network events)."""
    found = []
    for entry in chrome.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            found.append(message["params"]["request"]["url"])
    return found


def choose(chrome: Any, control: str, value: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(chrome.find_element(By.ID, control)).select_by_value(value)


def test_a_reader_filters_the_grid_and_opens_a_case(site: Path, browser: Any, tmp_path: Path):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    open_page(browser, site / "index.html")
    everything = ["breaks", "heals", "nested/case", "real_models/hf_tiny", "steady"]
    assert visible_cases(browser) == everything
    assert browser.find_element(By.ID, "f-count").text == "5 of 5 cases"

    name = browser.find_element(By.ID, "f-name")
    name.send_keys("HEAL")  # any case
    assert visible_cases(browser) == ["heals"]
    assert browser.find_element(By.ID, "f-count").text == "1 of 5 cases"
    name.send_keys(Keys.CONTROL, "a", Keys.DELETE)
    assert visible_cases(browser) == everything

    choose(browser, "f-status", "fail")
    assert visible_cases(browser) == ["breaks", "heals"]
    heals = browser.find_elements(By.CSS_SELECTOR, "#grid .row")[1]
    shown = {cell.get_attribute("title").split(":")[0]: cell for cell in heals.find_elements(By.CLASS_NAME, "cell")}
    assert float(shown["2.4.1 · strict"].value_of_css_property("opacity")) == 1.0  # the failing cell stands out
    assert float(shown["2.5.0 · strict"].value_of_css_property("opacity")) < 0.5  # the others fade
    assert "RuntimeError" not in shown["2.4.1 · strict"].get_attribute("title")
    assert "torch._dynamo.exc.Unsupported: graph break" in shown["2.4.1 · strict"].get_attribute("title")

    choose(browser, "f-release", "2.6.0")
    assert visible_cases(browser) == ["breaks"]  # heals failed on 2.4.1 only
    heads = [head.text for head in browser.find_elements(By.CSS_SELECTOR, "#grid .env") if head.is_displayed()]
    assert heads == ["2.6.0"]
    row = browser.find_elements(By.CSS_SELECTOR, "#grid .row")[0]
    assert [cell.text for cell in row.find_elements(By.CLASS_NAME, "cell") if cell.is_displayed()] == ["✗", "·"]
    assert browser.current_url.endswith("#status=fail&release=2.6.0")  # the view can be linked

    choose(browser, "f-status", "")
    choose(browser, "f-release", "")
    choose(browser, "f-pack", "real")
    assert visible_cases(browser) == ["real_models/hf_tiny"]
    browser.execute_script("document.getElementById('cases').scrollIntoView()")
    browser.save_screenshot(str(tmp_path / "grid.png"))
    choose(browser, "f-pack", "")

    # The verdicts link the newest release's failing cells.
    browser.find_element(By.LINK_TEXT, "its failing cells").click()
    assert visible_cases(browser) == ["breaks"]
    assert browser.find_element(By.ID, "f-release").get_attribute("value") == "2.6.0"

    browser.find_element(By.CSS_SELECTOR, "#grid a.name").click()
    page = (site / "cases" / "breaks.html").as_uri()
    WebDriverWait(browser, 30).until(lambda shown: shown.current_url == page and shown.find_elements(By.TAG_NAME, "h1"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "breaks"
    statuses = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "table.status tbody td")]
    assert statuses == ["✓ pass", "✗ fail RuntimeError", "✗ fail RuntimeError"]
    summary = browser.find_element(By.CSS_SELECTOR, "details summary")
    summary.click()
    assert "<script>alert(1)</script>" in summary.text  # the hostile error shows as text
    assert "</details><script>alert(2)</script>" in browser.find_element(By.CSS_SELECTOR, "details pre").text
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.text  # noqa: B018 (no script of the record ran)
    browser.save_screenshot(str(tmp_path / "case.png"))
    assert (tmp_path / "grid.png").stat().st_size > 10_000 and (tmp_path / "case.png").stat().st_size > 10_000

    # Everything the pages asked for was the site's own files, and no script failed.
    browser.get_log("performance")
    open_page(browser, site / "index.html")
    asked = set(requests(browser))
    assert asked == {(site / name).as_uri() for name in ("index.html", "site.css", "site.js", "badge.svg")}
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []


# Every box the layout checks need, measured in one script: no element can go stale between two reads.
GRID_GEOMETRY = """
const box = (e) => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top}; };
const fits = (e) => e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight;
return [...document.querySelectorAll('table.loads')].map((table) => ({
  heads: [...table.tHead.rows[0].cells].map((th) => ({...box(th), text: th.innerText, fits: fits(th)})),
  rows: [...table.tBodies[0].rows].map((tr) => [...tr.cells].map((cell) => ({...box(cell), tag: cell.tagName}))),
  right: box(table).right,
  room: document.documentElement.clientWidth,
}));
"""


def test_the_saved_loaded_grid_is_a_grid_with_readable_headers(wide_site: Path, browser: Any, tmp_path: Path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    page = (wide_site / "cases" / "wide.html").as_uri()
    browser.get(page)
    WebDriverWait(browser, 30).until(
        lambda shown: shown.current_url == page and shown.find_elements(By.CSS_SELECTOR, "table.loads tbody tr")
    )
    assert browser.execute_script("return window.innerWidth") == WIDTH
    [grid] = browser.execute_script(GRID_GEOMETRY)
    browser.execute_script("document.querySelector('table.loads').scrollIntoView()")
    browser.save_screenshot(str(tmp_path / "loads.png"))

    heads = grid["heads"]
    lefts = [h["left"] for h in heads]
    assert lefts == sorted(set(lefts))  # the headers stand side by side, left to right
    assert len(grid["rows"]) == len(BUILDS)
    for row in grid["rows"]:
        # A row is its saving build, then one cell per loading build, each in its own column under its header.
        assert [cell["tag"] for cell in row] == ["TH"] + ["TD"] * len(BUILDS)
        assert len({cell["left"] for cell in row}) == len(row)
        for cell, head in zip(row, heads):
            assert abs(cell["left"] - head["left"]) < 1 and abs(cell["right"] - head["right"]) < 1, (cell, head)
            assert cell["top"] > head["top"]
    # Each build's whole label shows (wrapped before its "+" at most), and no header cuts its text.
    assert [" ".join(h["text"].split()).replace(" +", "+") for h in heads[1:]] == sorted(BUILDS, key=release_key)
    assert [h["text"] for h in heads if not h["fits"]] == []
    assert grid["right"] <= grid["room"]  # sixteen builds fit a 1400 px window: no sideways scrolling


def test_the_front_grid_shows_every_release_label_whole(wide_site: Path, browser: Any):
    open_page(browser, wide_site / "index.html")
    shown = browser.execute_script(
        """
        const fits = (e) => e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight;
        const heads = [...document.querySelectorAll('#grid .env')];
        const cells = [...document.querySelectorAll('#grid .row .cell')];
        return heads.map((head, i) => {
          const h = head.getBoundingClientRect(), c = cells[i].getBoundingClientRect();
          return {text: head.innerText, fits: fits(head), under: c.left >= h.left - 1 && c.right <= h.right + 1};
        });
        """
    )
    assert [h["text"] for h in shown if not h["fits"]] == []  # no label cut to "+cu12…"
    assert [h["text"].split()[0] for h in shown] == sorted(BUILDS, key=release_key)  # on one line, whole
    assert all(h["under"] for h in shown)  # each release's cell sits under its label


def release_key(build: str) -> List[int]:
    return [int(part) for part in build.replace("+cu", ".").split(".")]
