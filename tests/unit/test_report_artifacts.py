"""The saved-programs page's section of the saved programs (the generic section of a product, drawn from its
declaration): where each build's programs load, share heatmaps, load regressions and per-case grids, from
hand-written records."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pandas as pd
from markdown_it import MarkdownIt

from matrix.contract import records, schema
from matrix.contract.products import PROGRAM
from matrix.records import artifacts as loads_table
from matrix.records import product_uses, store
from matrix.report import artifacts as page
from matrix.report import build as report
from matrix.report import case_grids
from matrix.report import document as d
from matrix.report import files as report_files
from matrix.report.writers import html as html_writer
from matrix.report.writers import markdown as md_writer

from conftest import make_cell
from conftest import make_load as load

HOSTILE = "left | right <script>alert(1)</script> [x](http://evil) `tick`\nsecond line"


def loads() -> List[Dict[str, Any]]:
    """Artifacts of two cases saved on 2.5.1 and 2.6.0, loaded on both and on 2.7.0, which refuses 2.5.1's."""
    found = []
    for saved in ("2.5.1", "2.6.0"):
        for loaded in ("2.5.1", "2.6.0", "2.7.0"):
            for case in ("add", "cond"):
                for mode in schema.MODES:
                    status, extra = "pass", {}
                    if saved == "2.6.0" and loaded == "2.5.1":
                        status, extra = "load-error", {"error_type": "KeyError", "error_message": "no 'version'"}
                    if saved == "2.5.1" and loaded == "2.7.0":
                        status = "load-error"
                        extra = {"error_type": "RuntimeError", "error_message": "Serialized version (7, 3)"}
                    found.append(load(saved, loaded, case, status, mode, **extra))
    return found


def frame(rows: List[Dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame({key: [r.get(key) for r in rows] for key in schema.LOAD_KEYS}, dtype=object)


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


def table_rows(text: str) -> List[List[str]]:
    """The cells of every table row of a page, as rendered text."""
    parser = _Rows()
    parser.feed(MarkdownIt("commonmark").enable("table").render(text))
    return parser.rows


def written(out: Path, rows: List[Dict[str, Any]], charts: bool = True) -> Tuple[page.Written, str]:
    """What the page's build writes for the program loads ``rows``, and the page in Markdown."""
    uses = [product_uses.judge(PROGRAM, frame(rows))]
    files = page.write(str(out), uses, charts=charts)
    return files, md_writer.write(page.page(uses, files.charts))


REACH = ["saved on", "artifacts", "all pass on", "some pass on", "none passes on"]


def test_page_has_the_reach_share_tables_regressions_and_case_grids(tmp_path: Path) -> None:
    files, text = written(tmp_path, loads())
    assert files.files == {"loads.parquet", "charts/loads-strict.png", "charts/loads-non-strict.png"}
    for path in files.files:
        assert (tmp_path / path).stat().st_size > 0
    assert "8 artifacts saved on 2 builds of 2 releases, loaded on 3 builds of 3 releases." in text
    assert "![Saved programs that load and match: strict](charts/loads-strict.png)" in text
    rows = table_rows(text)
    # Where each build's programs load: one row per saving build.
    assert rows[0] == REACH
    assert rows[1] == ["2.5.1", "4", "2.5.1–2.6.0", "–", "2.7.0 (load-error: RuntimeError: Serialized version (7, 3))"]
    assert rows[2] == ["2.6.0", "4", "2.6.0–2.7.0", "–", "2.5.1 (load-error: KeyError: no 'version')"]
    rows = rows[3:]
    # The share table of each mode: 2 cases per square.
    assert rows[0] == ["saved on ↓ / loaded on →", "2.5.1", "2.6.0", "2.7.0"]
    assert rows[1] == ["2.5.1", "2/2", "2/2", "0/2"]
    assert rows[2] == ["2.6.0", "0/2", "2/2", "2/2"]
    # 2.7.0 stops loading what 2.6.0 loaded of 2.5.1's programs: one load regression, affecting all four...
    assert "1 load regression, affecting 4 artifacts." in text
    assert [
        "2.5.1",
        "2.6.0 → 2.7.0",
        "all 4 that 2.6.0 loaded",
        "load-error: RuntimeError: Serialized version (7, 3)",
    ] in rows
    # ...each listed under it.
    assert text.index("### Regressions") < text.index("#### Artifacts affected") < text.index("### Statuses")
    regressions = [row for row in rows if len(row) == 6 and "→" in row[3]]
    assert len(regressions) == 4
    assert regressions[0][:4] == ["2.5.1", "add", "strict", "2.6.0 → 2.7.0"]
    assert "pass → 🚫 load-error" in regressions[0][4]
    # Each case has a grid per mode, on its own page: this page points there.
    assert "Each case's own grids" in text and "### cond\n" not in text
    table = loads_table.table(frame(loads()))
    saved_order, loaded_order = loads_table.orders(table)
    add = case_section(table[table["case"] == "add"], saved_order, loaded_order)
    assert "\n## Saved × loaded\n" in add
    add_rows = table_rows(add)
    assert ["strict: saved on ↓ loaded on →", "2.5.1", "2.6.0", "2.7.0"] in add_rows
    assert ["2.6.0", "🚫", "✅", "✅"] in add_rows
    assert "<li>load-error: KeyError: no 'version' — 2.6.0 → 2.5.1</li>" in MarkdownIt("commonmark").render(add)
    stored = pd.read_parquet(tmp_path / "loads.parquet")
    assert len(stored) == 24 and "error_traceback" not in stored.columns


def case_section(
    table: pd.DataFrame, saved_order: List[str], loaded_order: List[str], write: Any = md_writer.write
) -> str:
    """A case page's saved × loaded section alone, in a form."""
    section = case_grids.section(PROGRAM, table, (saved_order, loaded_order))
    if section is None:
        return ""
    page = d.Page("cases/x", "x", (section,))
    return write(page) if write is md_writer.write else write(page, {"index"})


def test_a_case_saved_under_two_with_sets_has_a_grid_row_per_set_on_both_its_pages() -> None:
    rows = [
        load("2.5.1", "2.5.1"),
        load("2.5.1", "2.6.0", status="load-error", error_type="KeyError", error_message="no 'version'"),
        load("2.5.1", "2.5.1", with_set="packaging"),
        load("2.5.1", "2.6.0", with_set="packaging"),
    ]
    table = loads_table.table(frame(rows))
    saved_order, loaded_order = loads_table.orders(table)
    assert saved_order == ["2.5.1"]
    grid = table_rows(case_section(table, saved_order, loaded_order))
    assert grid[1:3] == [["2.5.1", "✅", "🚫"], ["2.5.1 [packaging]", "✅", "✅"]]
    html = case_section(table, saved_order, loaded_order, html_writer.write)
    parser = _Rows()
    parser.feed(html)
    assert [row[0] for row in parser.rows[1:3]] == ["2.5.1", "2.5.1 [packaging]"]
    # A failing square's tooltip says it in a few words (the site's tips.js adds its row and column); a pass says
    # nothing its glyph does not.
    assert html.count(' title="load-error: KeyError">') == 1 and 'title="pass"' not in html


def test_failures_that_read_alike_once_cut_are_one_line_on_a_case_page() -> None:
    long = "no item named version " * 15  # past the 300 characters a line shows
    rows = [
        load("2.5.1", "2.5.1"),
        load("2.5.1", "2.6.0", status="load-error", error_type="KeyError", error_message=long + "[loader 1]"),
        load("2.5.1", "2.7.0", status="load-error", error_type="KeyError", error_message=long + "[loader (5, 1)]"),
        load("2.6.0", "2.7.0", status="load-error", error_type="KeyError", error_message=long + "[loader 2]"),
    ]
    table = loads_table.table(frame(rows))
    section = MarkdownIt("commonmark").render(case_section(table, *loads_table.orders(table)))
    listed = [line for line in section.splitlines() if line.startswith("<li>")]
    assert len(listed) == 1, listed
    # The two shapes' pairs together, in the grid's order.
    assert listed[0].endswith("— 2.5.1 → 2.6.0, 2.5.1 → 2.7.0, 2.6.0 → 2.7.0</li>"), listed


def test_record_text_stays_inert(tmp_path: Path) -> None:
    rows = loads() + [load("2.5.1", "2.8.0", status="run-error", error_type="Bad|Type", error_message=HOSTILE)]
    _, shown = written(tmp_path, rows, charts=False)
    table = loads_table.table(frame(rows))
    sections = [case_section(group, *loads_table.orders(table)) for _, group in table.groupby("case")]
    text = "\n".join([shown, *sections])
    html = MarkdownIt("commonmark").enable("table").render(text)
    assert "<script>" not in html and 'href="http://evil"' not in html
    assert "left | right &lt;script&gt;alert(1)&lt;/script&gt; [x](http://evil)" in html
    assert html.count("<details>") == html.count("</details>")


def test_two_writes_are_byte_identical(tmp_path: Path) -> None:
    found = []
    for name in ("one", "two"):
        _, text = written(tmp_path / name, loads())
        folder = tmp_path / name
        found.append({path.relative_to(folder): path.read_bytes() for path in folder.rglob("*") if path.is_file()})
        found[-1][Path("page")] = text.encode()
    one, two = found
    assert {"page", "loads.parquet"} <= {path.as_posix() for path in one}
    assert one.keys() == two.keys()
    for path, data in one.items():
        assert data == two[path], path


def test_without_charts_or_usable_records(tmp_path: Path) -> None:
    files, text = written(tmp_path / "plain", loads(), charts=False)
    assert files.files == {"loads.parquet"} and "![" not in text
    odd = [load("2.5.1", "2.6.0", status="exploded")]
    files, text = written(tmp_path / "none", odd)
    assert files.files == set() and not (tmp_path / "none").exists()
    assert "##" not in text  # no section without a use


def write_records(folder: Path, rows: List[Dict[str, Any]], name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with records.Writer(str(folder / name)) as writer:
        for row in rows:
            writer.write(row)


def reach(*rows: Dict[str, Any]) -> List[List[str]]:
    """The rows of the saved programs' reach table, as a reader sees them."""
    uses = product_uses.judge(PROGRAM, frame(list(rows)))
    if uses.empty:
        return []
    (part,) = page.PARTS["reach"](uses, ())
    return table_rows(md_writer.write(d.Page("x", "x", (part,))))[1:]


def test_each_saving_build_says_where_its_programs_load_and_from_where_they_fail() -> None:
    records = [load("2.5.1", loaded, case=case) for loaded in ("2.5.1", "2.6.0", "2.9.1") for case in "ab"]
    records += [
        load("2.5.1", loaded, case=case, status="load-error", error_type="RuntimeError",
             error_message="Serialized version (7, 3) does not match our current schema version (8, 1).\nmore")
        for loaded in ("2.10.0", "2.11.0") for case in "ab"
    ]  # fmt: skip
    assert reach(*records) == [
        [
            "2.5.1",
            "2",
            "2.5.1–2.9.1",
            "–",
            "from 2.10.0 on (load-error: RuntimeError: Serialized version (7, 3) does not match our current schema"
            " version (8, 1).)",
        ]
    ]


def test_untrusted_loads_are_named_as_not_tried_never_as_failures(tmp_path: Path) -> None:
    unsigned = dict(status="untrusted", error_type="UntrustedArtifact", error_message="no signature (meta.sig)")
    rows = [load("2.5.1", "2.5.1"), load("2.5.1", "2.5.1", case="b", **unsigned)]
    rows += [load("2.5.1", "2.6.0", case=case, **unsigned) for case in ("add", "b")]
    assert reach(*rows) == [
        [
            "2.5.1",
            "2",
            "2.5.1",
            "–",
            "–",
            "3 uses untrusted (no signature, or one that does not match: load --trust), none tried on 2.6.0",
        ]
    ]
    _, text = written(tmp_path, rows, charts=False)
    table = table_rows(text)
    # The reach table names the untrusted loads in a column of their own...
    assert table[0] == REACH + ["not tried"]
    # ...and 2.6.0 tried nothing: the square says why, and counts no failure.
    assert table[3] == ["2.5.1", "1/1", "🔒"]
    assert "failing loads" not in text and "UntrustedArtifact" not in text
    loaded = loads_table.table(frame(rows))
    sections = "\n".join(case_section(g, *loads_table.orders(loaded)) for _, g in loaded.groupby("case"))
    assert "🔒" in sections and "<summary>strict:" not in sections and "UntrustedArtifact" not in sections
    assert "strict, not tried (no failure): 🔒 untrusted: 2 uses" in sections
    grids = table_rows(sections)
    assert ["2.5.1", "✅", "🔒"] in grids and ["2.5.1", "🔒", "🔒"] in grids


def test_the_reach_table_names_partial_loads_untried_releases_and_each_saving_release() -> None:
    found = reach(
        load("2.4.0", "2.3.0", status="not-applicable"),
        load("2.4.0", "2.4.0"),
        load("2.4.0", "2.4.0", case="b"),
        load("2.4.0", "2.5.0"),
        load("2.4.0", "2.5.0", case="b", status="run-error", error_type="TypeError", error_message="bad"),
        load("2.5.0", "2.4.0", status="load-error", error_type="KeyError", error_message="no version"),
        load("2.5.0", "2.5.0"),
    )
    assert found == [
        ["2.4.0", "2", "2.4.0", "1 of 2 on 2.5.0 (the others most often run-error: TypeError: bad)", "–",
         "2.3.0: the loading release has no torch.export.load"],
        ["2.5.0", "1", "2.5.0", "–", "2.4.0 (load-error: KeyError: no version)", "–"],
    ]  # fmt: skip
    assert reach() == []


def test_loading_builds_that_load_as_many_programs_are_named_together() -> None:
    rows = [load("2.5.0", loaded, case) for loaded in ("2.5.0", "2.6.0", "2.7.0", "2.8.0") for case in "abc"]
    rows = [r for r in rows if r["case"] != "c" or r["torch_version"] == "2.5.0"]
    rows += [load("2.5.0", loaded, "c", "run-error", error_type="TypeError", error_message="bad")
             for loaded in ("2.6.0", "2.8.0")]  # fmt: skip
    rows += [load("2.5.0", "2.7.0", "c", "load-error", error_type="KeyError", error_message="gone")]
    # 2.6.0 and 2.8.0 load 2 of the 3 programs, as 2.7.0 does, whatever each of them failed with.
    assert reach(*rows)[0][3] == "2 of 3 on 2.6.0–2.8.0 (the others most often run-error: TypeError: bad)"


def test_the_reach_table_names_runs_of_releases_and_cuts_a_long_failure() -> None:
    rows = [load("2.1.0", loaded) for loaded in ("2.1.0", "2.2.0", "2.4.0")]
    rows += [
        load("2.1.0", loaded, status="load-error", error_type="KeyError", error_message="x" * 300)
        for loaded in ("2.3.0", "2.5.0")
    ]
    (found,) = reach(*rows)
    assert found[2] == "2.1.0–2.2.0, 2.4.0" and found[4].startswith("2.3.0, 2.5.0 (")
    cause = found[4][found[4].index("(load-error") + 1 : -1]
    assert cause == "load-error: KeyError: " + "x" * 137 + "…" and len(cause) == 160


def test_failure_names_status_class_and_first_line_of_what_is_there() -> None:
    assert loads_table.Failure("load-error", "KeyError", "no 'version'").text == "load-error: KeyError: no 'version'"
    assert loads_table.Failure("crash").text == "crash"
    assert loads_table.Failure("run-error", "", "bad").text == "run-error: bad"


def test_the_report_writes_the_page_only_with_load_records(tmp_path: Path) -> None:
    cells = [make_cell(release, case) for release in ("2.5.1", "2.6.0") for case in ("add", "cond")]
    write_records(tmp_path / "cells", cells, "cells.jsonl")
    write_records(tmp_path / "loads", loads(), "load_torch-2.6.0_cpu_py3.11.jsonl")
    out = tmp_path / "report"

    report.build_report([str(tmp_path / "cells"), str(tmp_path / "loads")], str(out), charts=False)
    listed = json.loads((out / report_files.MANIFEST).read_text(encoding="utf-8"))["files"]
    assert {"artifacts.md", "site/artifacts.html", "loads.parquet"} <= set(listed)
    assert "Each case's own grids" in (out / "artifacts.md").read_text(encoding="utf-8")
    # The case's page holds its saved × loaded grid.
    assert "## Saved × loaded" in (out / "cases" / "add.md").read_text(encoding="utf-8")
    # The store reads load records into their own table instead of warning about them.
    loaded = store.load([str(tmp_path / "cells"), str(tmp_path / "loads")])
    assert len(loaded.loads) == 24 and not loaded.warnings and len(loaded.cells) == 4

    # Without load records the page is not written, and the one an earlier build wrote goes.
    report.build_report([str(tmp_path / "cells")], str(out), charts=False)
    assert not (out / "artifacts.md").exists() and not (out / "loads.parquet").exists()


def test_the_front_page_summarises_saved_programs_and_links_their_page(tmp_path: Path) -> None:
    from matrix.report import build

    folder = tmp_path / "records"
    folder.mkdir()
    rows = [make_cell("2.5.1", "add", "pass"), make_cell("2.6.0", "add", "pass")]
    (folder / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with records.Writer(str(folder / "loads.jsonl")) as writer:
        for row in loads():
            writer.write(row)
    build.build_report([str(folder)], str(tmp_path / "out"), charts=False)
    index = (tmp_path / "out" / "index.md").read_text(encoding="utf-8")
    assert "## Saved programs across releases" in index
    # The front page shows the epochs (2.7.0 reads 2.6.0's programs, not 2.5.1's); the prose is on artifacts.md.
    assert "| 2.5.1–2.6.0 | 8 | 12 of 12 | no | none | – |" in index and "[saved programs](artifacts.md)" in index
    assert "## Where each build's programs load" not in index
    # One load regression (2.7.0 stops loading 2.5.1's programs), however many programs it affects.
    assert "**1 load regression**, affecting 4 saved programs" in index
    assert "- saved on 2.5.1, loaded on 2.7.0 after 2.6.0: all 4 that 2.6.0 loaded; load-error: RuntimeError:" in index
    assert "- Saved programs: 1 load regression, affecting 4 programs" in index


def test_the_share_heatmap_uses_the_colour_blind_safe_scale_of_the_other_charts() -> None:
    from matplotlib import colormaps

    from matrix.report import charts

    uses = product_uses.judge(PROGRAM, frame(loads()))
    grid = uses.shares
    figure = page._heatmap(grid[grid["mode"] == "strict"], list(uses.made), list(uses.used), "title", "rows", "cols")
    scale = figure.axes[0].images[0].get_cmap()
    # cividis from no share to all, a grey where nothing was tried: no red against green.
    for share in (0.0, 0.5, 1.0):
        assert scale(share) == colormaps[charts.SCALE](share)
    assert charts.SCALE == "cividis"
