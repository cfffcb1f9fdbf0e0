"""How large the report's site gets on a large synthetic record set, and how fast Chromium loads and filters it.

    python benchmarks/site_size.py [--releases 15] [--cases 160] [--runs 1] [--rounds 5] [--keep DIR]

Writes the synthetic records of ``benchmarks/report.py`` (a plausible history per case:
born, regressed, fixed, drifting), builds the report without charts, and measures the site:
its cells (case × release × mode), the size of the front page and of the grid's data
embedded in it, and the whole site. Then, in headless Chromium (``chromium`` and
``chromedriver`` on the PATH, selenium installed: the ``test`` extra), over ``--rounds``
fresh loads of ``site/index.html`` from ``file://``:

- load: from the start of navigation until the first frame painted after the grid was drawn;
- each filter a reader sets or clears, one control at a time (a case name typed, a status,
  a release, then each cleared): from the event until the next frame is painted, the grid
  re-filtered and laid out.

Medians are judged against the targets: a grid drawn within 1 s of navigation, and a filter
applied within 100 ms (the delay at which a reaction stops feeling immediate).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any, Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from matrix.report import build as report  # noqa: E402

TARGET_LOAD_MS = 1000.0
TARGET_FILTER_MS = 100.0
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# What a reader does, one control at a time: (what, the control, its new value, the event it fires).
FILTERS = (
    ("type a search", "f-search", "cond", "input"),
    ("pick a status", "f-status", "fail", "change"),
    ("pick a release", "f-release", None, "change"),  # None: the newest release
    ("clear the search", "f-search", "", "input"),
    ("clear the status", "f-status", "", "change"),
    ("clear the release", "f-release", "", "change"),  # the whole grid again
)
# In the page: change one control, then wait for the next painted frame.
_FILTER = """
var control = document.getElementById(arguments[0]), done = arguments[arguments.length - 1];
var started = performance.now();
control.value = arguments[1];
control.dispatchEvent(new Event(arguments[2]));
var shown = document.getElementById('f-count').textContent;
requestAnimationFrame(function () { setTimeout(function () { done([performance.now() - started, shown]); }, 0); });
"""


# In the page: the time from the start of navigation to the first frame painted after the grid was drawn.
_DRAWN = """
var done = arguments[arguments.length - 1];
if (!performance.getEntriesByName('grid-drawn').length) { return done(-1); }
requestAnimationFrame(function () { setTimeout(function () { done(performance.now()); }, 0); });
"""


def synthetic_writer() -> Any:
    """``benchmarks/report.py``'s record writer, loaded from its file."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "report.py")
    spec = importlib.util.spec_from_file_location("report_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.write


def chromium() -> Any:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        raise SystemExit("selenium is not installed: install the project's `test` extra")
    binary = next((found for found in map(shutil.which, BROWSERS) if found), None)
    driver = shutil.which("chromedriver")
    if binary is None or driver is None:
        raise SystemExit("Chromium and chromedriver are needed (Debian: apt-get install -y chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(argument)
    return webdriver.Chrome(options=options, service=Service(driver))


def folder_size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(path) for name in names)


def measure(index: str, rounds: int, newest: str) -> Dict[str, List[float]]:
    """Milliseconds per round: the load until the grid is drawn, then each filter until the next frame."""
    found: Dict[str, List[float]] = {"load": [], **{name: [] for name, *_ in FILTERS}}
    from selenium.webdriver.support.ui import WebDriverWait

    shown: Dict[str, str] = {}
    browser = chromium()
    try:
        browser.set_script_timeout(30)
        for _ in range(rounds):
            browser.get("about:blank")
            browser.get("file://" + os.path.abspath(index))
            # get() can return while the old document is still shown: wait for the new one's grid.
            WebDriverWait(browser, 30).until(
                lambda page: page.execute_script("return performance.getEntriesByName('grid-drawn').length") == 1
            )
            drawn = float(browser.execute_async_script(_DRAWN))
            if drawn < 0:
                raise SystemExit("%s: the page did not draw its grid" % index)
            found["load"].append(drawn)
            for name, control, value, kind in FILTERS:
                took, count = browser.execute_async_script(_FILTER, control, newest if value is None else value, kind)
                found[name].append(float(took))
                shown[name] = str(count)
    finally:
        browser.quit()
    for name, count in shown.items():
        print("  %s: %s" % (name, count))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", type=int, default=15)
    parser.add_argument("--cases", type=int, default=160)
    parser.add_argument("--runs", type=int, default=1, help="runs per cell (the site shows one status per cell)")
    parser.add_argument("--rounds", type=int, default=5, help="fresh page loads in the browser")
    parser.add_argument("--keep", metavar="DIR", help="write records and report here instead of a temporary folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        base = args.keep or scratch
        folder, out = os.path.join(base, "records"), os.path.join(base, "report")
        os.makedirs(folder, exist_ok=True)
        count = synthetic_writer()(folder, args.releases, args.cases, args.runs)
        print(
            "records: %d (%d releases × %d cases × 2 modes × %d runs)" % (count, args.releases, args.cases, args.runs)
        )
        started = time.perf_counter()
        built = report.build_report([folder], out, charts=False)
        print("report without charts (site included): %.1f s, %d cells" % (time.perf_counter() - started, built.cells))
        site = os.path.join(out, "site")
        index = os.path.join(site, "index.html")
        with open(index, encoding="utf-8") as f:
            page = f.read()
        data = page.split('id="grid-data">', 1)[1].split("</script>", 1)[0]
        pages = len(os.listdir(os.path.join(site, "cases")))
        print(
            "site: %d cells in the grid; index.html %.0f kB (grid data %.0f kB); %d case pages; %.1f MB in all"
            % (built.cells, len(page.encode()) / 1e3, len(data.encode()) / 1e3, pages, folder_size(site) / 1e6)
        )
        newest = "2.%d.0+cpu" % args.releases
        print("headless Chromium, %d rounds:" % args.rounds)
        found = measure(index, max(1, args.rounds), newest)
    medians = {name: statistics.median(values) for name, values in found.items()}
    for name, values in found.items():
        print("%-18s median %6.1f ms (min %.1f, max %.1f)" % (name, medians[name], min(values), max(values)))
    slowest = max(medians[name] for name, *_ in FILTERS)
    met_load, met_filter = medians["load"] <= TARGET_LOAD_MS, slowest <= TARGET_FILTER_MS
    print("target ≤ %.0f ms to draw the grid: %s" % (TARGET_LOAD_MS, "met" if met_load else "NOT met"))
    print(
        "target ≤ %.0f ms to apply a filter: %s (slowest median %.1f ms)"
        % (TARGET_FILTER_MS, "met" if met_filter else "NOT met", slowest)
    )
    return 0 if met_load and met_filter else 1


if __name__ == "__main__":
    sys.exit(main())
