"""The site's upgrade page in headless Chromium: a reader picks a pair of releases and reads, per case, whether it
exports, whether a saved program and a compiled package of the older release load on the newer one, each answer in
the column its header names; the address keeps the pair, and the front page links the page with the newest pair.

The report is built from hand-written records, its AOTInductor packages from a second folder (``--stages-from``). Needs
Chromium, its driver and selenium, as ``test_site_browser.py`` does; never skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List
from urllib.parse import unquote

import pytest

from integration.test_site_browser import browser  # noqa: F401 (the fixture)
from matrix.contract import records, schema
from matrix.report import build as report

from conftest import report_cell, report_environment

pytestmark = pytest.mark.xdist_group("test_site_browser")

RELEASES = ("2.4.1", "2.5.0", "2.6.0")


def load(saved: str, loaded: str, case: str, status: str, kind: str = "load", **extra: Any) -> Dict[str, Any]:
    keys = schema.AOTI_LOAD_KEYS if kind == schema.AOTI_LOAD_KIND else schema.LOAD_KEYS
    row: Dict[str, Any] = {key: None for key in keys}
    row.update(
        schema_version=schema.SCHEMA_VERSION, kind=kind, saved_torch_version=saved, saved_variant="cpu",
        saved_python="3.11", torch_version=loaded, variant="cpu", python="3.11", case=case, mode="non-strict",
        status=status, finished_at="2025-01-01T00:00:00+00:00", **extra,
    )  # fmt: skip
    return row


def write(folder: Path, rows: List[Dict[str, Any]]) -> Path:
    folder.mkdir(parents=True)
    with records.Writer(str(folder / "records.jsonl")) as writer:
        for row in rows:
            writer.write(row)
    return folder


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two real models and a case on three releases; the programs of 2.4.1 loaded on 2.6.0, and a package of one
    model compiled on 2.4.1 loaded on 2.6.0, kept in a folder of its own."""
    root = tmp_path_factory.mktemp("upgrade")
    rows: List[Dict[str, Any]] = []
    for at, release in enumerate(RELEASES):
        rows.append(report_environment(release, "2025-03-0%dT10:00:00+00:00" % (at + 1)))
        for mode in ("strict", "non-strict"):
            # llama fails on 2.4.1 and exports from 2.5.0 on; resnet exports everywhere.
            failing = {"error_type": "Unsupported", "error_message": "co_varnames"} if release == "2.4.1" else {}
            rows.append(report_cell(release, "real_models/llama", "fail" if failing else "pass", mode, **failing))
            rows.append(report_cell(release, "real_models/resnet", mode=mode))
            rows.append(report_cell(release, "steady", mode=mode))
    rows.append(
        load("2.4.1", "2.6.0", "real_models/resnet", "load-error", error_type="RuntimeError",
             error_message="Serialized version ['7', '3'] does not match")
    )  # fmt: skip
    rows.append(load("2.4.1", "2.4.1", "real_models/resnet", "pass"))  # it loaded on its own release: 2.6.0 breaks it
    rows.append(load("2.4.1", "2.6.0", "steady", "pass"))
    rows.append(load("2.5.0", "2.6.0", "real_models/resnet", "pass"))
    main = write(root / "records", rows)
    packages = write(
        root / "aoti",
        [load("2.4.1", "2.6.0", "real_models/resnet", "pass", kind=schema.AOTI_LOAD_KIND, package="model.pt2")],
    )
    report.build_report([str(main)], str(root / "report"), charts=False, stages_from=[str(packages)])
    return root / "report" / "site"


def open_upgrade(chrome: Any, url: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    chrome.get(url)
    WebDriverWait(chrome, 30).until(
        lambda page: page.execute_script("return !!document.getElementById('upgrade-table')")
    )


def cell_under(chrome: Any, case: str, header: str, mode: str) -> Any:
    """The status drawn in a case's row under a question's header and mode, and whether it sits under both."""
    script = """
    var table = document.getElementById('upgrade-table'), name = arguments[0], header = arguments[1];
    var mode = arguments[2];
    var top = Array.from(table.tHead.rows[0].cells).find(c => c.textContent.startsWith(header));
    var row = Array.from(table.tBodies[0].rows).find(r => r.dataset.case === name);
    if (!top || !row) { return null; }
    var outer = top.getBoundingClientRect();
    var sub = Array.from(table.tHead.rows[1].cells).find(function (c) {
      var box = c.getBoundingClientRect();
      return c.textContent === mode && box.left >= outer.left - 1 && box.right <= outer.right + 1;
    });
    var head = sub.getBoundingClientRect();
    var cell = Array.from(row.cells).find(function (c) {
      var box = c.getBoundingClientRect();
      return Math.abs(box.left - head.left) < 2 && Math.abs(box.right - head.right) < 2;
    });
    return cell ? Array.from(cell.querySelectorAll('span')).map(s => s.dataset.status) : [];
    """
    return chrome.execute_script(script, case, header, mode)


def test_the_upgrade_answer_for_a_chosen_pair(site: Path, browser: Any) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    # The front page's verdicts link the page, which opens on the newest pair.
    browser.get((site / "index.html").as_uri())
    link = browser.find_element(By.CSS_SELECTOR, "#verdicts a[href^='upgrade.html']")
    assert unquote(link.get_attribute("href")).endswith("upgrade.html")
    open_upgrade(browser, unquote(link.get_attribute("href")))
    assert Select(browser.find_element(By.ID, "upgrade-before")).first_selected_option.text == "2.5.0"
    assert Select(browser.find_element(By.ID, "upgrade-after")).first_selected_option.text == "2.6.0"
    open_upgrade(browser, (site / "upgrade.html").as_uri() + "#upgrade=2.4.1..2.6.0&scope=pack&case=llama%20resnet")
    assert Select(browser.find_element(By.ID, "upgrade-before")).first_selected_option.text == "2.4.1"
    assert Select(browser.find_element(By.ID, "upgrade-after")).first_selected_option.text == "2.6.0"
    rows = browser.find_elements(By.CSS_SELECTOR, "#upgrade-table tbody tr")
    verdicts = {r.get_attribute("data-case"): r.find_elements(By.TAG_NAME, "td")[0].text for r in rows}
    # The pack only: the case "steady" is not one of the real models.
    assert verdicts == {"real_models/llama": "fixed", "real_models/resnet": "breaks"}
    # Each answer under its own header: llama fails on 2.4.1 and passes on 2.6.0; resnet's program of 2.4.1 does
    # not load on 2.6.0, its package does, in non-strict mode, and no program was saved in strict mode.
    assert cell_under(browser, "real_models/llama", "export", "strict") == ["fail", "pass"]
    assert cell_under(browser, "real_models/resnet", "saved program", "non-strict") == ["load-error"]
    assert cell_under(browser, "real_models/resnet", "saved program", "strict") == [""]
    assert cell_under(browser, "real_models/resnet", "AOTInductor package", "non-strict") == ["pass"]
    tallies = browser.find_element(By.CSS_SELECTOR, ".upgrade-tallies").text
    assert "saved programs, non-strict: 0 of 1 load and match" in tallies
    assert "The upgrade breaks 1 of the 2 real models." in tallies
    assert "compile: not run for this pair" in tallies and "0 of 0" not in tallies
    # Another pair, chosen in the form, is kept in the address and answered from its own rows.
    Select(browser.find_element(By.ID, "upgrade-before")).select_by_value("2.5.0")
    assert unquote(browser.current_url).endswith("#upgrade=2.5.0..2.6.0&scope=pack&case=llama resnet")
    assert cell_under(browser, "real_models/resnet", "saved program", "non-strict") == ["pass"]
    # Back restores the pair before.
    browser.back()
    assert Select(browser.find_element(By.ID, "upgrade-before")).first_selected_option.text == "2.4.1"
    assert cell_under(browser, "real_models/resnet", "saved program", "non-strict") == ["load-error"]
    # Every case, not only the pack.
    open_upgrade(browser, (site / "upgrade.html").as_uri() + "#upgrade=2.4.1..2.6.0&scope=all")
    shown = [r.get_attribute("data-case") for r in browser.find_elements(By.CSS_SELECTOR, "#upgrade-table tbody tr")]
    assert shown == ["real_models/llama", "real_models/resnet", "steady"]
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
