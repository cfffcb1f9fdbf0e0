"""The report's site in a real browser: headless Chromium filters the grid and follows a case's link, as a reader would.

At a 1400 px window it also measures the layout a reader relies on: a case's saved × loaded grid and the real-model
table are grids (each cell under its column's header) and no release's label is cut, on the case page or in the front
page's grid; a link to a filtered view scrolls to it, and the back button restores the filter before it; the search
finds a case by its error text; every download is a file inside the site's folder; each square of a saved × loaded
grid shows its own pair and full error as a tooltip, though the page stores each error once.

Needs Chromium and its driver (Debian: ``apt-get install -y chromium chromium-driver``;
``.ci/run`` installs them) and selenium (the ``test`` extra). Without them the test fails
and says so: it is never skipped.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Dict, Iterator, List
from urllib.parse import unquote, urlsplit

import pytest

from matrix.contract import records, schema
from matrix.contract.schema import LoadStatus
from matrix.report import build as report

from conftest import history, report_cell, report_environment, write_by_release

pytestmark = pytest.mark.xdist_group("test_site_browser")  # one worker, so that its module fixture is built once

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
INSTALL = "apt-get install -y chromium chromium-driver"
WIDTH = 1400  # the window a reader's laptop gives the pages, in CSS pixels


def real_model_records(folder: Path) -> Path:
    """A case of the real-model pack on two releases with its library, with a load of one release's program on the
    other."""
    folder.mkdir(parents=True)
    with records.Writer(str(folder / "model.jsonl")) as writer:
        for release, version in (("2.5.0", "4.50.0"), ("2.6.0", "4.57.1")):
            run = "deps-%s" % release
            writer.write(
                {
                    "kind": "environment", "schema_version": schema.SCHEMA_VERSION, "run_id": run,
                    "torch_version": release, "variant": "cpu", "python": "3.11", "dependency_set": "transformers",
                    "added_packages": {"transformers": version}, "started_at": "2025-03-02T10:00:00+00:00",
                }
            )  # fmt: skip
            writer.write(
                report_cell(release, "real_models/hf_tiny", tags=["model"], dependency_set="transformers", run_id=run)
            )
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


# What each failing load of the wide grid says: one failure whose numbers differ from pair to pair.
SCHEMA_MISMATCH = "Serialized version ['8', '%d'] does not match our current schema version (8, %d)."


def wide_records(folder: Path) -> Path:
    """One case on every build of BUILDS, each build's program loaded on every build: a 16 × 16 grid; and a real
    model on every build."""
    folder.mkdir(parents=True)
    for number, loaded in enumerate(BUILDS):
        variant = loaded.split("+")[1]
        rows = [report_cell(loaded, "wide", variant=variant)]
        # A real model with its library, whose version each build resolved: a cell of the real-models table.
        run = "deps-%s" % loaded
        rows.append(
            {
                "kind": "environment", "schema_version": schema.SCHEMA_VERSION, "run_id": run, "torch_version": loaded,
                "variant": variant, "python": "3.11", "dependency_set": "transformers",
                "added_packages": {"transformers": "5.%d.0" % (10 + number)}, "started_at": "2025-03-02T10:00:00+00:00",
            }
        )  # fmt: skip
        for mode in ("strict", "non-strict"):
            rows.append(
                report_cell(
                    loaded,
                    "real_models/hf_model",
                    mode=mode,
                    variant=variant,
                    dependency_set="transformers",
                    run_id=run,
                )
            )
        for saved in BUILDS:
            newer = release_key(saved) > release_key(loaded)  # an older build cannot read a newer one's program
            load: Dict[str, Any] = {key: None for key in schema.LOAD_KEYS}
            load.update(
                schema_version=schema.SCHEMA_VERSION, kind="load", saved_torch_version=saved,
                saved_variant=saved.split("+")[1], saved_python="3.11", torch_version=loaded, variant=variant,
                python="3.11", case="wide", mode="strict", status="load-error" if newer else "pass",
                error_type="RuntimeError" if newer else None, finished_at="2025-01-01T00:00:00+00:00",
                error_message=SCHEMA_MISMATCH % (BUILDS.index(saved), number) if newer else None,
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

    name = browser.find_element(By.ID, "f-search")
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
    assert [cell.text for cell in row.find_elements(By.CLASS_NAME, "cell") if cell.is_displayed()] == ["❌", "·"]
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
    statuses = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "section#status tbody td:not(:first-child)")]
    passed, failed = schema.Status.PASS.symbol, schema.Status.FAIL.symbol
    assert statuses == [passed + " pass", failed + " fail RuntimeError", failed + " fail RuntimeError"]
    summary = browser.find_element(By.CSS_SELECTOR, "section#errors details summary")
    summary.click()
    assert "<script>alert(1)</script>" in summary.text  # the hostile error shows as text
    shown = [pre.text for pre in browser.find_elements(By.CSS_SELECTOR, "section#errors pre")]
    assert any("</details><script>alert(2)</script>" in text for text in shown)  # its traceback, as text
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


def in_view(chrome: Any, selector: str) -> bool:
    """Whether the top of the element is inside the window, as a reader sees it after a link scrolled."""
    return chrome.execute_script(
        "const r = document.querySelector(arguments[0]).getBoundingClientRect();"
        " return r.top >= 0 && r.top < window.innerHeight && r.bottom > 0;",
        selector,
    )


def top_of(chrome: Any, selector: str) -> float:
    """Where the element's top is, from the window's top edge, in CSS pixels."""
    return chrome.execute_script("return document.querySelector(arguments[0]).getBoundingClientRect().top", selector)


def value_of(chrome: Any, control: str) -> str:
    from selenium.webdriver.common.by import By

    return chrome.find_element(By.ID, control).get_attribute("value")


def visible_changes(chrome: Any) -> List[List[str]]:
    """The rows of the table of changes a reader sees: transition and case."""
    from selenium.webdriver.common.by import By

    rows = chrome.find_elements(By.CSS_SELECTOR, "#every-regression tbody tr")
    return [[td.text for td in row.find_elements(By.TAG_NAME, "td")[:2]] for row in rows if row.is_displayed()]


def test_a_link_scrolls_to_what_it_filters_and_back_restores_the_filter_before(
    site: Path, browser: Any, tmp_path: Path
):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def wait(condition: Any) -> None:
        WebDriverWait(browser, 10).until(lambda _: condition())

    open_page(browser, site / "index.html")
    everything = ["breaks", "heals", "nested/case", "real_models/hf_tiny", "steady"]
    choose(browser, "f-status", "fail")
    assert visible_cases(browser) == ["breaks", "heals"]
    browser.execute_script("window.scrollTo(0, 0)")
    assert top_of(browser, "#cases") > 300  # the grid's section starts below the verdicts

    browser.find_element(By.LINK_TEXT, "its failing cells").click()
    assert visible_cases(browser) == ["breaks"]
    wait(lambda: abs(top_of(browser, "#cases")) < 20)  # the link scrolled to the grid it filters: its section on top
    assert in_view(browser, ".grid-wrap") and in_view(browser, "#grid .row:not([hidden])")
    assert browser.current_url.endswith("#status=failing&release=2.6.0")
    browser.save_screenshot(str(tmp_path / "linked.png"))

    browser.back()  # the filter before the link
    wait(lambda: value_of(browser, "f-status") == "fail" and value_of(browser, "f-release") == "")
    assert visible_cases(browser) == ["breaks", "heals"] and browser.current_url.endswith("#status=fail")
    browser.back()  # the page as it opened
    wait(lambda: value_of(browser, "f-status") == "")
    assert visible_cases(browser) == everything
    browser.forward()
    wait(lambda: value_of(browser, "f-status") == "fail")
    assert visible_cases(browser) == ["breaks", "heals"]

    # The menus over the table of regressions filter it, each choice kept in the address; the grid stays as it is.
    browser.execute_script("window.scrollTo(0, 0)")
    assert len(visible_changes(browser)) == 1  # the one regression: breaks at 2.4.1 → 2.5.0
    other = [o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#c-into option")]
    other = [v for v in other if v not in ("", "2.5.0")][0]  # a transition without a regression
    choose(browser, "c-into", other)
    assert visible_changes(browser) == [] and browser.find_element(By.ID, "c-count").text == "0 of 1 changes"
    choose(browser, "c-into", "2.5.0")
    assert visible_changes(browser) == [["2.4.1 → 2.5.0", "breaks"]]
    assert browser.find_element(By.ID, "c-count").text == "1 of 1 changes"
    assert browser.current_url.endswith("#status=fail&into=2.5.0")
    assert visible_cases(browser) == ["breaks", "heals"]
    browser.back()
    wait(lambda: value_of(browser, "c-into") == other)
    browser.back()
    wait(lambda: value_of(browser, "c-into") == "")
    assert len(visible_changes(browser)) == 1


def test_the_search_finds_cases_by_name_tag_and_error_text(site: Path, browser: Any):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    open_page(browser, site / "index.html")
    search = browser.find_element(By.ID, "f-search")
    for words, found in (
        ("graph break", ["heals"]),  # heals' error on 2.4.1: torch._dynamo.exc.Unsupported: graph break
        ("EVIL.EXAMPLE.COM", ["breaks"]),  # the end of breaks' error message's first line, in any case
        ("torch.cond", ["breaks", "heals", "nested/case", "steady"]),  # a tag every case but the real model has
        ("hf_tiny", ["real_models/hf_tiny"]),
        ("no such text", []),
    ):
        search.send_keys(Keys.CONTROL, "a", Keys.DELETE)
        search.send_keys(words)
        assert visible_cases(browser) == found, words
    # A search typed is one history entry: back is the page before it.
    browser.back()
    WebDriverWait(browser, 10).until(lambda _: value_of(browser, "f-search") == "")
    assert len(visible_cases(browser)) == 5
    # A linked view opens as it was linked: the filters read from the address, the grid scrolled to.
    browser.get((site / "glossary.html").as_uri())  # another page first: the linked view is a fresh load
    linked = (site / "index.html").as_uri() + "#search=graph%20break&mode=strict"
    browser.get(linked)
    WebDriverWait(browser, 30).until(lambda _: value_of(browser, "f-search") == "graph break")
    assert visible_cases(browser) == ["heals"] and value_of(browser, "f-mode") == "strict"
    assert abs(top_of(browser, "#cases")) < 20


def test_every_download_is_a_file_inside_the_reports_folder(site: Path, browser: Any):
    from selenium.webdriver.common.by import By

    open_page(browser, site / "index.html")
    links = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "#tables a")]
    # The Parquet of each table a reader downloads (built without --csv, as the committed report is: no CSV), and
    # the badge; texts.parquet and graph_diffs.parquet, kept for rebuilding the report, are not offered.
    offered = [p for p in site.parent.glob("*.parquet") if p.name not in ("texts.parquet", "graph_diffs.parquet")]
    assert (site.parent / "texts.parquet").is_file() and len(links) == len(offered) + 1
    folder = site.parent.resolve()  # the Parquet the report wrote, one folder up
    for link in links:
        parts = urlsplit(link)
        assert parts.scheme == "file", link
        path = Path(unquote(parts.path)).resolve()
        assert path.is_relative_to(folder) and path.is_file(), link


# Every box the layout checks need, measured in one script: no element can go stale between two reads.
GRID_GEOMETRY = """
const box = (e) => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top}; };
const fits = (e) => e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight;
return [...document.querySelectorAll(arguments[0])].map((table) => ({
  heads: [...table.tHead.rows[0].cells].map((th) => ({...box(th), text: th.innerText, fits: fits(th)})),
  rows: [...table.tBodies[0].rows].map((tr) => [...tr.cells].map((cell) => ({...box(cell), tag: cell.tagName}))),
  right: box(table).right,
  room: document.documentElement.clientWidth,
}));
"""


GRID = "section#saved-loaded table.grid"


def test_the_saved_loaded_grid_is_a_grid_with_readable_headers(wide_site: Path, browser: Any, tmp_path: Path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    page = (wide_site / "cases" / "wide.html").as_uri()
    browser.get(page)
    WebDriverWait(browser, 30).until(
        lambda shown: shown.current_url == page and shown.find_elements(By.CSS_SELECTOR, GRID + " tbody tr")
    )
    assert browser.execute_script("return window.innerWidth") == WIDTH
    [grid] = browser.execute_script(GRID_GEOMETRY, GRID)
    browser.execute_script("document.querySelector(arguments[0]).scrollIntoView()", GRID)
    browser.save_screenshot(str(tmp_path / "loads.png"))

    assert len(grid["rows"]) == len(BUILDS)
    assert_grid(grid, len(BUILDS))
    # Each build's whole label shows, and no header cuts its text.
    heads = grid["heads"]
    assert [" ".join(h["text"].split()).replace(" +", "+") for h in heads[1:]] == sorted(BUILDS, key=release_key)
    # Under the grid, a click away, its failures: the one failure its pairs share, whatever their schema versions, in
    # one item that starts below the grid and fits the window.
    listed = browser.execute_script(
        "const section = document.querySelector('section#saved-loaded');"
        " const failures = section.querySelector('table.grid').closest('div').nextElementSibling;"
        " failures.open = true;"
        " return [...failures.querySelectorAll('li')].map(li => {"
        " const r = li.getBoundingClientRect(), t = section.querySelector('table.grid').getBoundingClientRect();"
        " return {text: li.textContent, below: r.top >= t.bottom, right: r.right, room: window.innerWidth}; })"
    )
    assert len(listed) == 1, [item["text"] for item in listed]
    [item] = listed
    said = "load-error: RuntimeError: Serialized version ['8', '…'] does not match our current schema version (8, …)."
    assert item["text"].startswith(said) and re.search(r" … \(\+\d+\)$", item["text"]), item["text"]
    assert item["below"] and item["right"] <= item["room"]


def test_each_saved_loaded_square_names_its_pair_in_its_tooltip(wide_site: Path, browser: Any):
    """The page gives a failing square its failure in a few words; its script puts the square's pair before it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    page = (wide_site / "cases" / "wide.html").as_uri()
    browser.get_log("browser")
    browser.get(page)
    WebDriverWait(browser, 30).until(
        lambda shown: shown.current_url == page and shown.find_elements(By.CSS_SELECTOR, GRID + " tbody td [title]")
    )
    squares = browser.execute_script(
        "const t = document.querySelector(arguments[0]);"
        "const heads = [...t.tHead.rows[0].cells].map(c => c.textContent);"
        "return [...t.tBodies[0].rows].flatMap(r => [...r.cells].slice(1).map((c, i) =>"
        " ({saved: r.cells[0].textContent, loaded: heads[i + 1], title: c.firstElementChild.title,"
        " glyph: c.textContent})));",
        GRID,
    )
    ordered = sorted(BUILDS, key=release_key)
    assert len(squares) == len(BUILDS) ** 2
    for square in squares:
        saved, loaded = square["saved"], square["loaded"]
        where = "saved on %s, loaded on %s" % (saved, loaded)
        if release_key(saved) > release_key(loaded):
            assert square["title"] == where + ": load-error: RuntimeError", square
            assert square["glyph"] == LoadStatus.LOAD_ERROR.symbol
        else:
            assert square["title"] == where, square
            assert square["glyph"] == LoadStatus.PASS.symbol
    assert {s["saved"] for s in squares} == {s["loaded"] for s in squares} == set(ordered)
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def assert_grid(grid: Dict[str, Any], columns: int, row_header: bool = True, fits: bool = True) -> None:
    """A table measured by GRID_GEOMETRY is a grid: each row's cells in distinct columns under their headers, every
    header's text whole, and the whole table inside the window."""
    heads = grid["heads"]
    lefts = [h["left"] for h in heads]
    assert lefts == sorted(set(lefts))  # the headers stand side by side, left to right
    assert len(heads) == columns + 1
    for row in grid["rows"]:
        # A row is its header cell, then one cell per column, each in its own column under its header.
        assert [cell["tag"] for cell in row] == ["TH" if row_header else "TD"] + ["TD"] * columns
        assert len({cell["left"] for cell in row}) == len(row)
        for cell, head in zip(row, heads):
            assert abs(cell["left"] - head["left"]) < 1 and abs(cell["right"] - head["right"]) < 1, (cell, head)
            assert cell["top"] > head["top"]
    assert [h["text"] for h in heads if not h["fits"]] == []
    if fits:
        assert grid["right"] <= grid["room"]  # sixteen builds fit a 1400 px window: no sideways scrolling


def test_the_real_models_table_is_a_grid_with_readable_headers(wide_site: Path, browser: Any, tmp_path: Path):
    open_page(browser, wide_site / "index.html")
    [grid] = browser.execute_script(GRID_GEOMETRY, "#real-models table")
    browser.execute_script("document.getElementById('real-models').scrollIntoView()")
    browser.save_screenshot(str(tmp_path / "models.png"))
    assert len(grid["rows"]) == 2  # the model, then the count of passes
    # Sixteen builds' columns scroll sideways in the table's own box; the page itself stays as wide as the window.
    assert_grid(grid, len(BUILDS), row_header=False, fits=False)
    box = browser.execute_script(
        "const b = document.querySelector('#real-models div.wide').getBoundingClientRect();"
        " return [b.right, document.documentElement.clientWidth, document.documentElement.scrollWidth];"
    )
    assert box[0] <= box[1] and box[2] <= box[1]
    heads = [" ".join(h["text"].split()) for h in grid["heads"][1:]]
    assert [h.replace(" +", "+").split(" ")[0] for h in heads] == sorted(BUILDS, key=release_key)


def test_the_front_grid_shows_every_release_label_whole(wide_site: Path, browser: Any):
    open_page(browser, wide_site / "index.html")
    shown = browser.execute_script(
        """
        const fits = (e) => e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight;
        const heads = [...document.querySelectorAll('#grid .env')];
        const per = document.querySelectorAll('#grid .modes .mode').length / heads.length;  // a column per mode
        const cells = [...document.querySelector('#grid .row').querySelectorAll('.cell')];
        return heads.map((head, i) => {
          const h = head.getBoundingClientRect();
          const under = cells.slice(i * per, (i + 1) * per).every((cell) => {
            const c = cell.getBoundingClientRect();
            return c.left >= h.left - 1 && c.right <= h.right + 1;
          });
          return {text: head.innerText, fits: fits(head), under: under};
        });
        """
    )
    columns = browser.execute_script(
        """
        const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.right]; };
        const heads = [...document.querySelectorAll('#grid .modes .mode')].map(box);
        return {heads: heads, rows: [...document.querySelectorAll('#grid .row')].map(
          (row) => [...row.querySelectorAll('.cell')].map(box))};
        """
    )
    assert len(columns["rows"]) == 2 and len(columns["heads"]) == 2 * len(BUILDS)
    for row in columns["rows"]:  # every cell of every row exactly under its column's header, in its own column
        assert len({left for left, _ in row}) == len(row)
        for (left, right), (head_left, head_right) in zip(row, columns["heads"]):
            assert abs(left - head_left) < 0.5 and abs(right - head_right) < 0.5, (left, head_left)
    assert [h["text"] for h in shown if not h["fits"]] == []  # no label cut to "+cu12…"
    assert [h["text"].split()[0] for h in shown] == sorted(BUILDS, key=release_key)  # on one line, whole
    assert all(h["under"] for h in shown)  # each release's cells, one per mode, sit under its label


def release_key(build: str) -> List[int]:
    return [int(part) for part in build.replace("+cu", ".").split(".")]


# What 2.10's AOTInductor says when it loads a package in a fresh process (pytorch/pytorch#173706).
CODECACHE = "load: module 'torch._inductor' has no attribute 'codecache'"


def staged_records(folder: Path) -> Path:
    """Two releases where every cell exports: on the newer one a program fails save/load, a package fails to load
    (a known upstream issue), and a graph changes with its ops; the other cells stay as they were."""
    rows: List[Dict[str, Any]] = []
    for release, started in (("2.9.1", "2025-03-01T10:00:00+00:00"), ("2.10.0", "2025-03-02T10:00:00+00:00")):
        newer = release == "2.10.0"
        rows.append(report_environment(release, started))
        rows.append(report_cell(release, "plain", serialize_status="ok"))
        rows.append(
            report_cell(
                release,
                "saves",
                serialize_status="error" if newer else "ok",
                serialize_error="load: TypeError: forward() got an unexpected keyword argument 'x'" if newer else None,
            )
        )
        # The aoti stage's fields, which only a run that selected the stage writes.
        aoti = {"aoti_status": "error", "aoti_error_type": "AttributeError", "aoti_error": CODECACHE}
        rows.append({**report_cell(release, "packaged"), **(aoti if newer else {"aoti_status": "ok"})})
        rows.append(
            report_cell(
                release,
                "drifts",
                graph_hash=("2" if newer else "1") * 16,
                ops=["aten.add.Tensor", "aten.mul.Tensor"] if newer else ["aten.add.Tensor"],
                graph_text="add(x, 1)\nmul(x, 2)\n" if newer else "add(x, 1)\n",
            )
        )
    return write_by_release(folder, rows)


@pytest.fixture(scope="module")
def staged_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report whose newest release has cells that pass but fail a later stage, and a changed graph."""
    root = tmp_path_factory.mktemp("staged")
    report.build_report([str(staged_records(root / "records"))], str(root / "report"), charts=False)
    return root / "report" / "site"


def cell_of(chrome: Any, case: str, column: str) -> Any:
    """The grid's cell of a case in a column (``2.10.0 · strict``), by its row's name and its tooltip."""
    from selenium.webdriver.common.by import By

    for row in chrome.find_elements(By.CSS_SELECTOR, "#grid .row"):
        if row.find_element(By.CSS_SELECTOR, "a.name").text == case:
            for cell in row.find_elements(By.CLASS_NAME, "cell"):
                if cell.get_attribute("title").startswith(column + ":"):
                    return cell
    raise AssertionError("no cell of %s in %s" % (case, column))


def test_a_stage_failing_cell_is_marked_and_found_by_failing(staged_site: Path, browser: Any, tmp_path: Path):
    from selenium.webdriver.common.by import By

    open_page(browser, staged_site / "index.html")
    assert visible_cases(browser) == ["drifts", "packaged", "plain", "saves"]
    saves, plain = cell_of(browser, "saves", "2.10.0 · strict"), cell_of(browser, "plain", "2.10.0 · strict")
    # Both passed their export: the same glyph, but the one whose program failed a later stage is outlined.
    assert saves.text == plain.text == "✅"  # the schema's glyph, as on every page
    assert plain.value_of_css_property("box-shadow") == "none"
    assert "inset" in saves.value_of_css_property("box-shadow")
    assert saves.get_attribute("title").endswith("pass — save/load fails")
    assert cell_of(browser, "saves", "2.9.1 · strict").value_of_css_property("box-shadow") == "none"
    packaged = cell_of(browser, "packaged", "2.10.0 · strict")
    assert "inset" in packaged.value_of_css_property("box-shadow")
    assert "aoti fails (known upstream issue pytorch/pytorch#173706)" in packaged.get_attribute("title")

    choose(browser, "f-status", "failing")
    assert visible_cases(browser) == ["packaged", "saves"]
    assert float(saves.value_of_css_property("opacity")) == 1.0  # what the filter found stands out
    assert float(plain.value_of_css_property("opacity")) < 0.5 or not plain.is_displayed()
    browser.execute_script("document.getElementById('cases').scrollIntoView()")
    browser.save_screenshot(str(tmp_path / "staged.png"))
    choose(browser, "f-release", "2.9.1")
    assert visible_cases(browser) == []  # nothing failed on 2.9.1
    choose(browser, "f-release", "")
    choose(browser, "f-status", "stage-failure")
    assert visible_cases(browser) == ["packaged", "saves"]
    choose(browser, "f-status", "fail")
    assert visible_cases(browser) == []  # no export failed: a status filter does not pick later stages

    # Graph changes and op drifts are filters of their own, on the release they changed in.
    for kind in ("graph-change", "op-drift"):
        choose(browser, "f-status", kind)
        assert visible_cases(browser) == ["drifts"]
        drifts = cell_of(browser, "drifts", "2.10.0 · strict")
        assert float(drifts.value_of_css_property("opacity")) == 1.0
        assert float(cell_of(browser, "drifts", "2.9.1 · strict").value_of_css_property("opacity")) < 0.5
        assert browser.current_url.endswith("#status=" + kind)

    # The grid's own words explain the outline.
    assert "a cell outlined in red exported but failed a later stage" in browser.find_element(By.ID, "cases").text


def test_the_search_finds_a_case_by_its_packages(site: Path, browser: Any):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    open_page(browser, site / "index.html")
    search = browser.find_element(By.ID, "f-search")
    search.send_keys("transformers")  # in no case's name, tag or error: the package real_models/hf_tiny ran with
    assert visible_cases(browser) == ["real_models/hf_tiny"]
    search.send_keys(Keys.CONTROL, "a", Keys.DELETE)
    assert len(visible_cases(browser)) == 5


@pytest.fixture(scope="module")
def published_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The published report rebuilt from its own tables, with its charts: long errors, wide tables, 16 builds."""
    out = tmp_path_factory.mktemp("published") / "report"
    report.build_report([str(Path(__file__).resolve().parents[2] / "reports" / "latest")], str(out))
    return out / "site"


# The tallest a row of a table of four columns or more may be, in CSS pixels: about a dozen lines of text.
TALLEST_ROW = 260
# The tallest row shown of a page's tables of four columns or more: its height and the start of its text.
TALLEST_ROW_SCRIPT = """
var tallest = [0, ""];
document.querySelectorAll(".wide > table").forEach(function (table) {
  if (table.querySelectorAll("thead th").length < 4) return;
  table.querySelectorAll("tbody tr").forEach(function (row) {
    var height = row.getBoundingClientRect().height;
    if (height > tallest[0]) tallest = [height, row.textContent.slice(0, 60)];
  });
});
return tallest;
"""


@pytest.mark.parametrize("width", [390, WIDTH])
def test_no_page_is_wider_than_a_phone_or_a_laptop(published_site: Path, browser: Any, width: int):
    """At 390 px (a phone) and at 1,400 px, no page of the published site scrolls sideways: a wide table scrolls in
    its own box, a chart shrinks to the window and a long word (a case's path, an error without spaces) breaks. A
    table of four columns or more keeps its rows a dozen lines tall at most: squeezed into a phone's width, its
    columns of words would wrap a word a line (the saved programs' reach table, rows a screen tall)."""
    from selenium.webdriver.support.ui import WebDriverWait

    wide_site = published_site
    loaded = "return document.URL === arguments[0] && document.readyState === 'complete'"
    pages = sorted(wide_site.rglob("*.html"))
    assert len(pages) > 100
    browser.set_window_size(width, 900)
    try:
        wider, tall = [], []
        for path in pages:
            if path.name == "index.html":
                open_page(browser, path)  # its grid is drawn by its script
            else:
                uri = path.as_uri()
                browser.get(uri)
                # get() may return before the new page is laid out: measure that page, not the one before.
                WebDriverWait(browser, 30).until(lambda page, uri=uri: page.execute_script(loaded, uri))
            scrolled, window = browser.execute_script(
                "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            if scrolled > window:
                wider.append((str(path.relative_to(wide_site)), scrolled, window))
            height, text = browser.execute_script(TALLEST_ROW_SCRIPT)
            if height > TALLEST_ROW:
                tall.append((str(path.relative_to(wide_site)), round(height), text))
        assert wider == []
        assert tall == []
    finally:
        browser.set_window_size(WIDTH, 1000)
