"""Compiled packages loaded across releases, from hand-written ``aoti-load`` records of six releases: the table, its
epochs and upstream's promise (records/product_uses.py); their section of the saved-programs page, the case pages'
grids (Markdown and site)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Dict, List, Optional

import pandas as pd
from markdown_it import MarkdownIt

from matrix.contract import records, schema
from matrix.contract.products import COMPILE, PACKAGE, PROGRAM
from matrix.contract.schema import AOTI_LOAD_KEYS, AOTI_LOAD_KIND
from matrix.records import artifacts as loads_table
from matrix.records import model, product_uses, store
from matrix.report import artifacts as page
from matrix.report import build as report
from matrix.report import case_page
from matrix.report import files as report_files
from matrix.report.writers import html as html_writer
from matrix.report.writers import markdown as md_writer

from conftest import cell_table, make_cell
from conftest import make_load as program_load

RELEASES = ("2.1.2", "2.3.1", "2.5.1", "2.6.0", "2.8.0", "2.10.0")
# (case, mode) of each package compiled on every release that has a compiler API here.
PACKAGES = (("mlp", "strict"), ("mlp", "non-strict"), ("cond", "strict"))
COMPILED = ("2.3.1", "2.5.1", "2.6.0", "2.8.0", "2.10.0")
NO_SYMBOL = "RuntimeError: undefined symbol: aoti_torch_new_tensor_handle"


def package_load(compiled: str, loaded: str, case: str = "mlp", status: str = "pass", mode: str = "strict",
                 **extra: Any) -> Dict[str, Any]:  # fmt: skip
    """A hand-written ``aoti-load`` record: the package compiled on ``compiled`` loaded on ``loaded``."""
    record: Dict[str, Any] = {key: None for key in AOTI_LOAD_KEYS}
    record.update(
        schema_version=schema.SCHEMA_VERSION, kind=AOTI_LOAD_KIND, saved_torch_version=compiled, saved_variant="cpu",
        saved_python="3.11", torch_version=loaded, variant="cpu", python="3.11", case=case, mode=mode,
        status=status, finished_at="2025-01-01T00:00:00+00:00",
        package="aoti.so" if compiled < "2.5" else "aoti.pt2",
    )  # fmt: skip
    record.update(extra)
    return record


def _version(release: str) -> tuple:
    return tuple(int(part) for part in release.split("."))


def outcome(compiled: str, loaded: str, case: str, mode: str) -> Dict[str, Any]:
    """What each load gives, as upstream describes it: no loader before 2.3, no package loader before 2.5, each
    API's files read by its own releases, backward compatibility from 2.6 on; one package mismatches on 2.10."""
    made, used = _version(compiled), _version(loaded)
    if used < (2, 3) or (used < (2, 5) and made >= (2, 5)):
        return {"status": "not-applicable", "error_message": "torch %s has no Python loader for AOTInductor" % loaded}
    if made < (2, 5):
        return {"status": "pass"} if used < (2, 6) else {"status": "load-error", "error_type": "RuntimeError",
                                                         "error_message": "Error in dlopen: aoti.so"}  # fmt: skip
    if made < (2, 6):
        if used == made:
            return {"status": "pass"}
        return {"status": "load-error", "error_type": "RuntimeError", "error_message": "outdated pt2 file"}
    if used < made:
        return {"status": "load-error", "error_type": "RuntimeError", "error_message": NO_SYMBOL.split(": ", 1)[1]}
    if (compiled, loaded, case, mode) == ("2.6.0", "2.10.0", "cond", "strict"):
        return {"status": "mismatch", "error_type": "AssertionError", "error_message": "output 0 differs"}
    return {"status": "pass"}


def package_loads() -> List[Dict[str, Any]]:
    return [
        package_load(compiled, loaded, case, mode=mode, **outcome(compiled, loaded, case, mode))
        for compiled in COMPILED
        for loaded in RELEASES
        for case, mode in PACKAGES
    ]


def frame(rows: List[Dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame({key: [r.get(key) for r in rows] for key in AOTI_LOAD_KEYS}, dtype=object)


def judged() -> product_uses.ProductUses:
    return product_uses.judge(PACKAGE, frame(package_loads()))


class _Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: List[List[str]] = []
        self._cell: Optional[List[str]] = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def html_rows(html: str) -> List[List[str]]:
    parser = _Rows()
    parser.feed(html)
    return parser.rows


def table_rows(text: str) -> List[List[str]]:
    return html_rows(MarkdownIt("commonmark").enable("table").render(text))


# --- the judgement -----------------------------------------------------------------------------------


def test_the_package_table_has_one_row_per_pair_case_and_mode_with_the_latest_record() -> None:
    rows = package_loads()
    rows.append(package_load("2.8.0", "2.10.0", status="crash", finished_at="2024-01-01T00:00:00+00:00"))
    found = loads_table.table(frame(rows), PACKAGE)
    assert len(found) == len(COMPILED) * len(RELEASES) * len(PACKAGES)
    assert list(found.columns) == ["saved", "loaded", *AOTI_LOAD_KEYS]
    older = found[(found["saved"] == "2.8.0") & (found["loaded"] == "2.10.0") & (found["case"] == "mlp")]
    assert set(older["status"]) == {"pass"}  # the record that finished last wins


def test_epochs_follow_the_programs_rule_and_name_where_packages_stop_loading() -> None:
    p = judged()
    assert p.orders == (list(COMPILED), list(RELEASES))
    spans = [(e.first, e.last) for e in p.epochs]
    # 2.1.2 compiles nothing and loads nothing (no loader): it puts no condition on its range; a 2.3 library
    # loads on 2.5.1, nothing compiled before 2.6 loads on 2.6.0, and from 2.6 on newer releases load older packages.
    assert spans == [("2.1.2", "2.5.1"), ("2.6.0", "2.10.0")]
    old, new = p.epochs
    assert (old.programs, old.tried, old.passed, old.backward) == (6, 9, 9, "untried")
    assert (new.programs, new.tried, new.passed, new.backward) == (9, 18, 17, "none")  # older never read newer
    assert new.cut_from == "2.5.1" and new.cut is not None and new.cut.message == "outdated pt2 file"
    assert [(x.case, x.mode, x.pairs) for x in new.exceptions] == [("cond", "strict", (("2.6.0", "2.10.0"),))]


def test_the_promise_is_checked_on_every_pair_it_covers_and_forward_loads_are_counted_apart() -> None:
    promise = judged().promise
    covered = len(promise.covered)
    assert covered == 3 and covered - len(promise.broken) == 2  # 2.6.0 → 2.8.0, 2.6.0 → 2.10.0, 2.8.0 → 2.10.0
    (broken,) = promise.broken
    assert (broken.made, broken.used, broken.tried - broken.passed, broken.tried) == ("2.6.0", "2.10.0", 1, 3)
    assert broken.failure == "mismatch: AssertionError: output 0 differs"
    # Loaded on an older release than compiled it: 2.5.1, 2.6.0 and 2.8.0 tried newer packages, and none loaded.
    assert (len(promise.older), sum(p.kept for p in promise.older)) == (6, 0)
    nothing = product_uses.judge(PACKAGE, frame([]))
    assert nothing.promise is None and nothing.epochs == () and nothing.empty


def test_the_store_reads_package_loads_apart_from_program_loads(tmp_path: Path) -> None:
    folder = tmp_path / "records"
    folder.mkdir()
    with records.Writer(str(folder / "load_torch-2.10.0_cpu_py3.11.jsonl")) as writer:
        writer.write(program_load("2.6.0", "2.10.0"))
        writer.write(package_load("2.6.0", "2.10.0", status="load-error", error_message="in /home/me/x/aoti.pt2"))
    (folder / "cells.jsonl").write_text(json.dumps(make_cell("2.10.0", "mlp")) + "\n")
    loaded = store.load([str(folder)])
    assert not loaded.warnings
    packages = loaded.products[PACKAGE.name]
    assert list(loaded.loads["kind"]) == ["load"] and list(packages["kind"]) == [AOTI_LOAD_KIND]
    assert list(packages.columns) == list(AOTI_LOAD_KEYS)
    assert packages["error_message"].iloc[0] == "in aoti.pt2"  # no path of the machine that loaded it
    # The saved-program table is what it was: a package's load is never a program's.
    assert list(loads_table.table(loaded.loads)["status"]) == ["pass"]
    # The report's model judges the packages once, for the Markdown pages and the site alike.
    judged_model = model.build(loaded)
    held = judged_model.uses_of(PACKAGE)
    assert list(held.table["status"]) == ["load-error"] and judged_model.uses_of(COMPILE).empty
    assert held.orders == (["2.6.0"], ["2.10.0"])


# --- artifacts.md --------------------------------------------------------------------------------------


def programs_and_packages() -> List[product_uses.ProductUses]:
    loaded = [program_load("2.6.0", "2.8.0")]
    one = pd.DataFrame({k: [r.get(k) for r in loaded] for k in schema.LOAD_KEYS}, dtype=object)
    return [product_uses.judge(PROGRAM, one), judged()]


def test_the_saved_programs_page_ends_with_the_packages_epochs_promise_shares_and_grids(tmp_path: Path) -> None:
    uses = programs_and_packages()
    written = page.write(str(tmp_path), uses)
    assert {"loads.parquet", PACKAGE.table, "charts/aoti-loads-strict.png",
            "charts/aoti-loads-non-strict.png"} <= written.files  # fmt: skip
    text = md_writer.write(page.page(uses, written.charts))
    assert text.index("# Saved programs loaded on other releases") < text.index("## " + PACKAGE.title)
    section = text[text.index("## " + PACKAGE.title) :]
    assert "15 packages compiled on 5 builds of 5 releases, loaded on 6 builds of 6 releases." in section
    assert "![AOTInductor packages that load and match: strict](charts/aoti-loads-strict.png)" in section
    rows = table_rows(section)
    assert rows[0] == ["epoch", "packages loaded", "loads that match", "older read newer", "exceptions",
                       "older packages fail"]  # fmt: skip
    assert rows[1] == ["2.1.2–2.5.1", "6", "9 of 9", "–", "none", "–"]
    assert rows[2] == ["2.6.0–2.10.0", "9", "17 of 18", "no", "1 case: cond (strict)",
                       "2.5.1 → 2.6.0: load-error: RuntimeError: outdated pt2 file"]  # fmt: skip
    # The promise said by the front page's verdict lines: the broken pair named, with its error.
    assert (
        "broken on 1 of the 3 pairs tried (a package compiled on 2.6 or later loads and matches on every newer"
        " release): 2.6.0 → 2.10.0: 2 of 3 pass (mismatch: AssertionError: output 0 differs); kept: 2.6.0 → 2.8.0;"
        " 2.8.0 → 2.10.0." in section
    )
    assert "Loaded on an older release (not promised): kept on 0 of 6 pairs." in section
    # The strict shares: two packages per square, not tried where the release has no loader for the file.
    strict = rows[3:]
    assert strict[0] == ["compiled on ↓ / loaded on →", *RELEASES]
    assert strict[1] == ["2.3.1", "➖", "2/2", "2/2", "0/2", "0/2", "0/2"]
    assert strict[3] == ["2.6.0", "➖", "➖", "0/2", "2/2", "2/2", "1/2"]
    # Each case's grids per mode are drawn once, on its own page: the section links them.
    assert "- [cond](cases/cond.md#compiled-loaded)\n- [mlp](cases/mlp.md#compiled-loaded)" in section
    assert ["strict: compiled on ↓ loaded on →", *RELEASES] not in rows
    assert "no loader for this kind of package" in section  # the legend says what a status means for a package
    stored = pd.read_parquet(tmp_path / PACKAGE.table)
    assert len(stored) == 90 and set(stored["kind"]) == {AOTI_LOAD_KIND} and "error_traceback" not in stored.columns


def test_packages_alone_make_the_page_and_a_second_write_is_byte_identical(tmp_path: Path) -> None:
    uses = [product_uses.judge(PROGRAM, pd.DataFrame()), judged()]
    one = page.write(str(tmp_path / "one"), uses, charts=False)
    two = page.write(str(tmp_path / "two"), uses, charts=False)
    assert one.files == two.files == {PACKAGE.table}
    for name in one.files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    text = md_writer.write(page.page(uses))
    assert text == md_writer.write(page.page(uses)) and "## " + PROGRAM.title + "\n" not in text
    assert page.write(str(tmp_path / "none"), [product_uses.judge(PACKAGE, frame([]))]).files == set()


# --- the report and the case pages ------------------------------------------------------------------


def _records(folder: Path, with_packages: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cells = [make_cell(release, case, mode=mode) for release in RELEASES for case, mode in PACKAGES]
    (folder / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells), encoding="utf-8")
    programs = [program_load(s, l, case, mode=mode) for s in COMPILED for l in RELEASES for case, mode in PACKAGES]  # noqa: E741
    with records.Writer(str(folder / "load.jsonl")) as writer:
        for row in programs + (package_loads() if with_packages else []):
            writer.write(row)
    return folder


def test_the_report_writes_the_package_table_and_each_case_page_shows_its_grid_under_its_programs(
    tmp_path: Path,
) -> None:
    out = tmp_path / "report"
    report.build_report([str(_records(tmp_path / "records"))], str(out), charts=False)
    listed = json.loads((out / report_files.MANIFEST).read_text(encoding="utf-8"))["files"]
    assert {"artifacts.md", "site/artifacts.html", "loads.parquet", PACKAGE.table} <= set(listed)
    case = (out / "cases" / "cond.md").read_text(encoding="utf-8")
    assert case.index("## Saved × loaded") < case.index("## Compiled × loaded")
    grid = table_rows(case[case.index("## Compiled × loaded") :])
    assert grid[0] == ["strict: compiled on ↓ loaded on →", *RELEASES]
    assert grid[1:6] == [
        ["2.3.1", "➖", "✅", "✅", "🚫", "🚫", "🚫"],
        ["2.5.1", "➖", "➖", "✅", "🚫", "🚫", "🚫"],
        ["2.6.0", "➖", "➖", "🚫", "✅", "✅", "⚠️"],
        ["2.8.0", "➖", "➖", "🚫", "🚫", "✅", "✅"],
        ["2.10.0", "➖", "➖", "🚫", "🚫", "🚫", "✅"],
    ]
    # The site's saved-programs page: the packages' epochs after the programs' section.
    saved = (out / "site" / "artifacts.html").read_text(encoding="utf-8")
    epochs_id = 'id="%s-epochs"' % page.anchor(PACKAGE)
    assert saved.index('id="%s"' % page.anchor(PROGRAM)) < saved.index(epochs_id)
    epochs = html_rows(saved[saved.index(epochs_id) :])
    assert epochs[0][:2] == ["epoch", "packages loaded"] and epochs[2][:3] == ["2.6.0–2.10.0", "9", "17 of 18"]
    assert "broken on 1 of the 3 pairs tried" in saved

    # Records without package loads: no section, and the table an earlier build wrote goes.
    report.build_report([str(_records(tmp_path / "plain", with_packages=False))], str(out), charts=False)
    assert not (out / PACKAGE.table).exists()
    assert PACKAGE.title not in (out / "artifacts.md").read_text(encoding="utf-8")
    assert "Compiled × loaded" not in (out / "cases" / "cond.md").read_text(encoding="utf-8")
    assert epochs_id not in (out / "site" / "artifacts.html").read_text(encoding="utf-8")


def test_the_case_page_draws_the_package_grid_under_the_saved_program_grid() -> None:
    packages = judged()
    cell = dict(cell_table([make_cell("2.10.0", "cond")]).to_dict("records")[0], environment="2.10.0")
    saved = pd.DataFrame([dict(program_load("2.6.0", "2.10.0", "cond"), saved="2.6.0", loaded="2.10.0", with_set="")])
    uses = ((PROGRAM, saved, (["2.6.0"], ["2.10.0"])), (PACKAGE, packages.of_case("cond"), packages.orders))
    html = html_writer.write(case_page.build("cond", [cell], uses=uses), {"index"})
    assert html.index('<section id="saved-loaded">') < html.index('<section id="compiled-loaded"><h2>Compiled × loaded')
    grid = html_rows(html[html.index('id="compiled-loaded"') :])
    assert grid[0] == ["strict: compiled on ↓ loaded on →", *RELEASES]
    assert grid[3] == ["2.6.0", "➖", "➖", "🚫", "✅", "✅", "⚠️"]  # every glyph under its release's header
    assert 'title="mismatch: AssertionError">⚠️</span>' in html  # the square's failure, in a few words
    assert "<li>mismatch: AssertionError: output 0 differs — 2.6.0 → 2.10.0</li>" in html
    without = html_writer.write(case_page.build("cond", [cell], uses=uses[:1]), {"index"})
    assert "Compiled × loaded" not in without
