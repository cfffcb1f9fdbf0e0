"""The static site beside the Markdown: the data its grid embeds, escaping, the badge, case pages, CSV tables."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd
import pytest

from matrix.contract import records, schema
from matrix.records import model, store, tables, transitions
from matrix.report import build as report
from matrix.report import files as report_files
from matrix.report import site, writers
from matrix.report.site import badge, front, markup

from . import links_support
from conftest import history, make_cell, report_cell, write_by_release
from conftest import make_load as load

HOSTILE = "<script>alert(3)</script> & \"quoted\" 'single' \x1b[31mred\x1b[0m"


def records_with_everything(folder: Path) -> List[Path]:
    """The three-release history, plus a real-model case with packages beside torch, and loads of saved programs."""
    cells = write_by_release(folder / "cells", history())
    model = folder / "model"
    model.mkdir(parents=True)
    rows: List[Dict[str, Any]] = []
    for release, version in (("2.5.0", "4.50.0"), ("2.6.0", "4.57.1")):
        run = "deps-%s" % release
        rows.append(
            {
                "kind": "environment",
                "schema_version": schema.SCHEMA_VERSION,
                "run_id": run,
                "torch_version": release,
                "variant": "cpu",
                "python": "3.11",
                "dependency_set": "transformers",
                "added_packages": {"transformers": version, "tokenizers": "0.22.1"},
                "started_at": "2025-03-02T10:00:00+00:00",
            }
        )
        rows.append(
            report_cell(release, "real_models/hf_tiny", dependency_set="transformers", tags=["model"], run_id=run)
        )
    with records.Writer(str(model / "deps.jsonl")) as writer:
        for row in rows:
            writer.write(row)
    saved = folder / "loads"
    saved.mkdir()
    with records.Writer(str(saved / "load_torch-2.6.0_cpu_py3.11.jsonl")) as writer:
        for source in ("2.5.0", "2.6.0"):
            for target in ("2.5.0", "2.6.0"):
                bad = source == "2.6.0" and target == "2.5.0"
                extra = {"error_type": "KeyError", "error_message": HOSTILE} if bad else {}
                writer.write(load(source, target, "steady", "load-error" if bad else "pass", **extra))
    return [cells, model, saved]


@pytest.fixture()
def built(tmp_path: Path) -> Path:
    out = tmp_path / "report"
    folders = records_with_everything(tmp_path / "records")
    report.build_report([str(f) for f in folders], str(out), title="Nightly <b>matrix</b>", charts=False, csv=True)
    return out


def embedded(page: str) -> Dict[str, Any]:
    found = re.search(r'<script type="application/json" id="grid-data">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))


class Elements(HTMLParser):
    """Every start tag, and the text of the whole page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: List[str] = []
        self.text: List[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(page: str) -> Elements:
    found = Elements()
    found.feed(page)
    return found


# --- escaping ---------------------------------------------------------------------------------------


def test_text_escapes_markup_and_drops_terminal_codes():
    assert (
        markup.text(HOSTILE) == "&lt;script&gt;alert(3)&lt;/script&gt; &amp; &quot;quoted&quot; &#x27;single&#x27; red"
    )
    assert markup.text(None) == "" and markup.text(float("nan")) == ""


def test_script_json_cannot_close_its_script_element_and_reads_back_the_same():
    data = {"note": "</script><!-- <b>x</b> & \u2028", "n": [1, None]}
    encoded = markup.script_json(data)
    assert not set("<>&") & set(encoded)
    assert "\u2028" not in encoded
    assert json.loads(encoded) == data


# --- the grid's data --------------------------------------------------------------------------------


def cells_of(folder: Path, rows: List[Dict[str, Any]]) -> pd.DataFrame:
    """The cell table of these records, read back as a report reads them."""
    return tables.cells(store.load([str(write_by_release(folder, rows))]).cells)


def grid_of(folder: Path, rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    cells = cells_of(folder, rows)
    labels = tables.environment_labels(cells)
    pages = {case: "cases/%s.html" % case.replace("/", "__") for case in set(cells["case"])}
    return front.grid_data(cells, labels, pages)


def test_grid_data_holds_each_case_status_per_release_and_mode_with_its_error(tmp_path: Path):
    data = grid_of(
        tmp_path,
        [
            make_cell("2.5.1", "real_models/bert", tags=["model", "hf"]),
            make_cell(
                "2.5.1",
                "real_models/bert",
                "fail",
                "non-strict",
                error_type="RuntimeError",
                error_message="boom\nsecond line",
            ),  # fmt: skip
            make_cell("2.4.1", "cond", "not-applicable", missing=["cond"], tags=["torch.cond"]),
        ],
    )
    assert data["envs"] == ["2.4.1", "2.5.1"] and data["modes"] == ["strict", "non-strict"]
    assert data["columns"] == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert data["tags"] == ["hf", "model", "torch.cond"]
    cond, bert = data["cases"]
    status = data["statuses"]
    assert (cond["name"], cond["real"], cond["page"]) == ("cond", False, "cases/cond.html")
    assert [status[i] if i is not None else None for i in cond["cells"]] == ["not-applicable", None, None, None]
    assert cond["notes"] == {"0": "lacks cond"}
    assert bert["real"] is True and bert["tags"] == ["hf", "model"]
    assert [status[i] if i is not None else None for i in bert["cells"]] == [None, None, "pass", "fail"]
    assert bert["notes"] == {"3": "RuntimeError: boom"}
    assert [status[i] for i in data["failing"]] == ["mismatch", "fail", "crash", "timeout"]
    assert data["glyphs"][status.index("fail")] == schema.Status.FAIL.symbol  # the schema's, as on every page


def test_a_cell_note_is_one_line_cut_to_its_limit_and_names_failed_stages():
    long = {"status": "fail", "error_type": "E", "error_message": "x" * 500}
    assert len(front.cell_note(long)) == front.NOTE_LIMIT and front.cell_note(long).endswith("…")
    staged = {"status": "pass", "serialize_outcome": schema.STAGE_ERROR, "decompose_outcome": "ok"}
    assert front.cell_note(staged) == "save/load fails"
    assert front.cell_note({"status": "pass"}) == ""


def test_grid_data_marks_failed_stages_moves_and_packages_per_column(tmp_path: Path):
    codecache = "load: module 'torch._inductor' has no attribute 'codecache'"
    cells = cells_of(
        tmp_path,
        [
            make_cell("2.9.1", "saves", serialize_status="ok", graph_hash="1" * 16, fingerprint_version=1),
            make_cell("2.10.0", "saves", serialize_status="error", serialize_error="load: TypeError: boom",
                      graph_hash="2" * 16, fingerprint_version=1),
            make_cell("2.10.0", "models/hf", dependency_set="transformers>=4.56"),
        ],
    )  # fmt: skip
    cells.loc[cells["case"] == "models/hf", ["aoti_status", "aoti_error_type", "aoti_error"]] = [
        "error",
        "AttributeError",
        codecache,
    ]
    labels = tables.environment_labels(cells)
    pages = {case: "cases/%s.html" % case.replace("/", "__") for case in set(cells["case"])}
    data = front.grid_data(cells, labels, pages, transitions.find(cells))
    hf, saves = data["cases"]
    newest = str(data["columns"].index([data["envs"].index("2.10.0"), data["modes"].index("strict")]))
    assert saves["stages"] == {newest: ["save/load"]}
    assert saves["moves"] == {newest: ["graph-change"]}  # the graph changed into 2.10.0, not on 2.9.1
    assert saves["notes"][newest] == "save/load fails"
    assert hf["stages"] == {newest: ["aoti"]}
    assert hf["notes"][newest] == "aoti fails (known upstream issue pytorch/pytorch#173706)"
    assert "pytorch/pytorch#173706" in hf["errors"]  # the search finds a cell by its issue
    assert hf["packages"] == ["transformers>=4.56"] and saves["packages"] == []
    assert (data["stage_failure"], data["move_kinds"]) == ("stage-failure", ["graph-change", "op-drift"])


def test_every_status_has_the_schemas_glyph_and_a_colour():
    """A cell's, a load's and a compile's outcomes each draw with one glyph (the schema's) and a colour; a skipped
    compile is its own glyph, not an unknown one's."""
    for kind, known in (("cell", schema.STATUSES), ("load", schema.LOAD_STATUSES), ("compile", schema.AOTI_STATUSES)):
        for status in known:
            assert writers.glyph(status, kind) not in ("?", schema.NO_RECORD), (kind, status)
            assert writers.colour(status, kind), (kind, status)
    assert writers.glyph("pass") == schema.Status.PASS.symbol
    assert writers.glyph(schema.STAGE_SKIPPED, "compile") == schema.AOTI_SYMBOL[schema.STAGE_SKIPPED]
    assert writers.glyph("no-such-status") == "?" and writers.colour("no-such-status") == ""


# --- pass rates and the badge -----------------------------------------------------------------------


def test_pass_rates_count_only_cells_that_ran_and_the_newest_release_takes_every_mode(tmp_path: Path):
    cells = cells_of(
        tmp_path,
        [
            make_cell("2.5.1", "a"),
            make_cell("2.5.1", "b", "fail"),
            make_cell("2.6.0", "a"),
            make_cell("2.6.0", "b", "not-applicable"),
            make_cell("2.6.0", "a", "mismatch", "non-strict"),
        ],
    )
    found = model.pass_rates(tables.summary(cells))
    rates = {(r.label, r.mode): (r.passed, r.judged) for r in found}
    assert rates == {("2.5.1", "strict"): (1, 2), ("2.6.0", "strict"): (1, 1), ("2.6.0", "non-strict"): (0, 1)}
    assert model.newest_pass_rate(found) == ("2.6.0", 1, 2)


def test_the_newest_release_is_rated_on_torch_alone_not_on_a_with_set(tmp_path: Path):
    rows = [make_cell("2.6.0", "a"), make_cell("2.6.0", "b", "fail")]
    rows += [make_cell("2.6.0", "m", with_set="transformers==5.0.0", dependency_set="transformers==5.0.0")]
    cells = cells_of(tmp_path, rows)
    found = model.pass_rates(tables.summary(cells))
    assert list(dict.fromkeys(r.label for r in found)) == ["2.6.0", "2.6.0 [transformers==5.0.0]"]
    assert [(r.passed, r.judged) for r in found if r.label == "2.6.0 [transformers==5.0.0]"] == [(1, 1)]
    assert model.newest_pass_rate(found) == ("2.6.0", 1, 2)


def test_badge_is_svg_with_the_rate_rounded_down_and_coloured_by_it():
    good = ElementTree.fromstring(badge.render("2.15.0", 199, 200))
    texts = [t.text for t in good.iter("{http://www.w3.org/2000/svg}text")]
    assert texts == ["torch.export", "2.15.0: 99% pass"]
    fills = {r.get("fill") for r in good.iter("{http://www.w3.org/2000/svg}rect")}
    assert badge.COLOURS[0][1] in fills
    poor = ElementTree.fromstring(badge.render("2.1.2", 1, 3))
    assert badge.COLOURS[-1][1] in {r.get("fill") for r in poor.iter("{http://www.w3.org/2000/svg}rect")}
    assert int(poor.get("width")) < int(good.get("width"))  # a shorter message, a narrower badge
    empty = ElementTree.fromstring(badge.render("", 0, 0))
    assert [t.text for t in empty.iter("{http://www.w3.org/2000/svg}text")][-1] == "no data"
    odd = ElementTree.fromstring(badge.render("<9.9 & co>", 1, 1))  # still well-formed
    assert odd.find("{http://www.w3.org/2000/svg}title").text == "torch.export: <9.9 & co>: 100% pass"


# --- the site a report writes -----------------------------------------------------------------------


def test_the_report_writes_the_site_its_pages_and_each_table_inside_its_folder(built: Path):
    index = (built / "site" / "index.html").read_text(encoding="utf-8")
    assert "<title>Nightly &lt;b&gt;matrix&lt;/b&gt;</title>" in index
    data = embedded(index)
    names = [case["name"] for case in data["cases"]]
    assert names == ["breaks", "heals", "nested/case", "real_models/hf_tiny", "steady"]
    for case in data["cases"]:
        assert (built / "site" / case["page"]).is_file()
    assert [c["name"] for c in data["cases"] if c["real"]] == ["real_models/hf_tiny"]
    for name in ("site.css", "site.js", "badge.svg"):
        assert (built / "site" / name).is_file()
    # Nothing is fetched from elsewhere: the page's only resources are the site's own files.
    assert re.findall(r'<(?:script|link|img)[^>]*(?:src|href)="([^"]*)"', index) == ["site.css", "badge.svg", "site.js"]
    # Each table of the report as gzipped CSV inside the site's folder, and its Parquet linked where the report
    # wrote it, one folder up: stored once.
    tables = built / "site" / "tables"
    # Every table a reader downloads; texts.parquet and graph_diffs.parquet (for rebuilding the report) are not.
    kept = ("texts.parquet", "graph_diffs.parquet")
    assert all((built / name).is_file() and name not in index for name in kept)
    for parquet in (p for p in built.glob("*.parquet") if p.name not in kept):
        csv = tables / (parquet.stem + ".csv.gz")
        assert csv.is_file(), csv
        assert len(pd.read_csv(csv)) == len(pd.read_parquet(parquet))
        assert not (tables / parquet.name).exists()
        assert 'href="tables/%s"' % csv.name in index and 'href="../%s"' % parquet.name in index
    assert not list(built.glob("*.csv.gz"))  # nothing beside the Parquet, outside the site
    tags = pd.read_csv(tables / "cells.csv.gz")["tags"].dropna()
    assert json.loads(tags.iloc[0]) == ["torch.cond"]  # a list as JSON text
    listed = set(json.loads((built / report_files.MANIFEST).read_text(encoding="utf-8"))["files"])
    assert {"site/index.html", "site/cases/breaks.html", "site/tables/cells.csv.gz", "loads.parquet"} <= listed
    assert not [entry for entry in listed if entry.startswith("site/") and entry.endswith((".parquet", ".png", ".py"))]


def test_record_text_stays_text_on_every_page(built: Path):
    for path in (built / "site").rglob("*.html"):
        page = path.read_text(encoding="utf-8")
        seen = parsed(page)
        # The grid's data and script and the keys of the changes' filters, the upgrade answer's data and script, and
        # on a case page with a grid of squares the script that makes their tooltips; no other page has one.
        grid = path.parent.name == "cases" and '<table class="grid"' in page
        scripts = 3 if path.name == "index.html" else 2 if path.name == "upgrade.html" else 1 if grid else 0
        assert seen.tags.count("script") == scripts, path
        assert not grid or '<script src="../tips.js"></script>' in page, path
        assert "<script>alert" not in page and "</details><script>" not in page, path
        assert "\x1b" not in page
    breaks = parsed((built / "site" / "cases" / "breaks.html").read_text(encoding="utf-8"))
    shown = "".join(breaks.text)
    assert "<script>alert(1)</script>" in shown and "</details><script>alert(2)</script>" in shown


def test_a_case_page_has_its_history_diffs_packages_and_saved_loaded_grid(built: Path):
    steady = (built / "site" / "cases" / "steady.html").read_text(encoding="utf-8")
    assert "<h2>Graph changes</h2>" in steady and "\n+mul(x, 2)" in steady
    grid = steady[steady.index('<section id="saved-loaded">') :].split("<details><summary>What the glyphs mean")[0]
    # Each square's glyph, in the grid's order; a failure's tooltip says it in a few words (tips.js names the row and
    # the column), its record text escaped.
    squares = re.findall(r'<span class="st l(\d+)"', grid)
    assert [schema.LOAD_STATUSES[int(i)] for i in squares] == ["pass", "pass", "load-error", "pass"]
    assert '<span class="st l3" title="load-error: KeyError">' in grid
    assert "<script>alert(3)" not in steady
    listed = re.findall(r"<li>(load-error.*?)</li>", grid)
    assert len(listed) == 1 and listed[0].startswith("load-error: KeyError: &lt;script&gt;alert(3)")
    assert listed[0].endswith(" red — 2.6.0 → 2.5.0")  # the failure, and the one pair it shows on
    model = (built / "site" / "cases" / "real_models__hf_tiny.html").read_text(encoding="utf-8")
    # The packages the case's set names, at the version its environment resolved (not what they pulled in).
    dependencies = model[model.index('<section id="dependencies">') :]
    assert ">4.50.0</td>" in dependencies and ">4.57.1</td>" in dependencies
    assert "<li><strong>pack</strong>: real models</li>" in model
    heals = (built / "site" / "cases" / "heals.html").read_text(encoding="utf-8")
    assert "<code>torch._dynamo.exc.Unsupported</code>" in heals and "<h2>Errors</h2>" in heals


def test_the_verdicts_link_the_newest_releases_failures_in_the_grid(built: Path):
    index = (built / "site" / "index.html").read_text(encoding="utf-8")
    assert "<strong>Newest release, 2.6.0</strong>: " in index and '<a href="#summary">per build</a>' in index
    assert "Still broken on 2.6.0" in index and '<a href="cases/breaks.html">breaks</a>' in index
    svg = ElementTree.fromstring((built / "site" / "badge.svg").read_text(encoding="utf-8"))
    assert [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")][-1].startswith("2.6.0: ")


def test_every_relative_link_of_the_report_names_a_file_of_it(built: Path, tmp_path: Path):
    assert len(links_support.links(built)) > 50
    assert links_support.relative(built, r"^tables/.*\.csv\.gz$") and links_support.relative(built, r"\.parquet$")
    assert links_support.broken(built) == []
    # As committed in the project, without the CSV: no link to it either.
    folders = [str(f) for f in records_with_everything(tmp_path / "again")]
    report.build_report(folders, str(built), charts=False)
    assert not links_support.relative(built, r"\.csv\.gz$")
    assert links_support.broken(built) == []


def test_without_csv_the_site_offers_the_parquet_and_says_where_the_csv_is_published(tmp_path: Path):
    folders = [str(f) for f in records_with_everything(tmp_path / "records")]
    out = tmp_path / "report"
    report.build_report(folders, str(out), charts=False, csv=True)
    assert (out / "site" / "tables" / "cells.csv.gz").is_file()
    report.build_report(folders, str(out), charts=False)  # as committed in the project: no CSV, the earlier removed
    assert not list(out.rglob("*.csv.gz")) and not (out / "site" / "tables").exists()
    index = (out / "site" / "index.html").read_text(encoding="utf-8")
    assert "tables/" not in index and "CSV (gzip)" not in index and markup.text(front.NO_CSV) in index
    for parquet in re.findall(r'href="\.\./([^"/]+\.parquet)"', index):
        assert (out / parquet).is_file()
    assert 'href="../cells.parquet"' in index


def test_building_twice_is_byte_identical_and_a_gone_case_loses_its_page(tmp_path: Path):
    folders = [str(f) for f in records_with_everything(tmp_path / "records")]
    out = tmp_path / "report"
    report.build_report(folders, str(out), charts=False, csv=True)
    ours = [p for p in out.rglob("*") if p.is_file() and p.relative_to(out).parts[0] == "site"]
    first = {p: p.read_bytes() for p in ours}
    assert len(first) > 10
    report.build_report(folders, str(out), charts=False, csv=True)
    assert {p: p.read_bytes() for p in first} == first
    (out / "site" / "notes.html").write_text("mine", encoding="utf-8")  # not the report's: it stays
    report.build_report(folders[:1], str(out), charts=False, csv=True)
    assert not (out / "site" / "cases" / "real_models__hf_tiny.html").exists()
    tables = out / "site" / "tables"
    assert not (tables / "loads.csv.gz").exists() and not (tables / "loads.parquet").exists()
    assert (tables / "cells.csv.gz").is_file()
    assert (out / "site" / "notes.html").read_text(encoding="utf-8") == "mine"


def test_only_site_files_and_csv_tables_are_ever_removed():
    assert site.ours("site/index.html") and site.ours("site/cases/a~1234.html") and site.ours("cells.csv.gz")
    assert site.ours("cells.csv")  # what earlier builds wrote, removed when not written again
    # The copies earlier builds made of tables, charts and repro scripts: removed by the next build.
    assert site.ours("site/tables/cells.parquet") and site.ours("site/charts/pass-rate.png")
    assert site.ours("site/cases/a.repro/cell_strict.py")  # a copy of a repro script
    for entry in (
        "index.md", "site/../x.csv", "../cells.csv", "/tmp/x.csv", "cases/a.csv", "site/.x.js", "site/a.py",
        "site/cases/a.py", "site/cases/.a.repro/x.py", "charts/pass-rate.png", "cells.parquet",
    ):  # fmt: skip
        assert not site.ours(entry), entry


def test_an_environment_that_did_not_install_is_named_on_the_front_page(tmp_path: Path):
    folder = tmp_path / "records"
    error = {
        "kind": "env-error", "schema_version": schema.SCHEMA_VERSION, "torch_version": "2.5.1", "variant": "cpu",
        "python": "3.11", "error_type": "InstallError", "error_message": "no wheel for <b>this</b>\nmore",
        "finished_at": "2025-01-01T00:00:00+00:00",
    }  # fmt: skip
    write_by_release(folder, [error, make_cell("2.6.0", "a")])
    report.build_report([str(folder)], str(tmp_path / "report"), charts=False)
    index = (tmp_path / "report" / "site" / "index.html").read_text(encoding="utf-8")
    assert "<h2>Environments that failed to install</h2>" in index
    assert (
        "2.5.1 cpu py3.11 (torch alone); each with its error and what the installer said on the"
        ' <a href="install-errors.html">' in index
    )
    page = (tmp_path / "report" / "site" / "install-errors.html").read_text(encoding="utf-8")
    row = '<td class="l">2.5.1</td><td class="l">cpu</td><td class="l">3.11</td><td class="l">torch alone</td>'
    assert row + '<td class="l"><code>InstallError</code></td>' in page
    assert '<td class="l">no wheel for &lt;b&gt;this&lt;/b&gt; ⏎ more</td>' in page


def grid_html(table: pd.DataFrame) -> str:
    """A case page holding the saved × loaded section of ``table`` alone, as the site draws it."""
    from matrix.contract.products import PROGRAM
    from matrix.records import artifacts as loads_table
    from matrix.report import case_grids
    from matrix.report import document as d
    from matrix.report.writers import html as html_writer

    section = case_grids.section(PROGRAM, table, loads_table.orders(table))
    return html_writer.write(d.Page("cases/x", "x", (section,) if section else ()), {"index"})


def loads_of(rows: List[Dict[str, Any]]) -> pd.DataFrame:
    from matrix.records import artifacts as loads_table

    return loads_table.table(pd.DataFrame({key: [r.get(key) for r in rows] for key in schema.LOAD_KEYS}, dtype=object))


def test_an_untrusted_load_on_a_case_page_is_not_listed_as_a_failure() -> None:
    unsigned = dict(error_type="UntrustedArtifact", error_message="untrusted artifact: no signature")
    rows = [
        load("2.5.0", "2.5.0", "steady"),
        load("2.5.0", "2.6.0", "steady", "untrusted", **unsigned),
        load("2.6.0", "2.6.0", "steady", "load-error", error_type="KeyError", error_message="no version"),
    ]
    html = grid_html(loads_of(rows))
    listed = re.findall(r"<li>(.*?)</li>", html)
    assert listed == ["load-error: KeyError: no version — 2.6.0 → 2.6.0"]
    # The untrusted pair is counted as not tried, apart from the failures, and its error is not quoted as one.
    untrusted = schema.LOAD_STATUSES.index("untrusted")
    assert (
        '<p>strict, not tried (no failure): <span class="st l%d">%s</span> untrusted: 1 use</p>'
        % (untrusted, markup_glyph("untrusted"))
        in html
    )
    assert "UntrustedArtifact" not in html


def markup_glyph(status: str) -> str:
    return schema.LoadStatus(status).symbol


def test_failures_that_differ_only_in_numbers_are_one_line_under_a_grid() -> None:
    def mismatch(saved: str, loaded: object) -> str:
        return "Serialized version ['%s', '1'] does not match our current schema version (%s, 2)." % (saved, loaded)

    releases = ["2.%d.0" % minor for minor in range(3, 15)]
    rows = [load("2.3.0", "2.3.0", "steady")]
    rows += [
        load("2.3.0", loaded, "steady", "load-error", error_type="RuntimeError", error_message=mismatch("5", minor))
        for minor, loaded in enumerate(releases[1:], start=4)
    ]
    rows.append(load("2.4.0", "2.3.0", "steady", "load-error", error_type="KeyError", error_message="no 'version' 7"))
    html = grid_html(loads_of(rows))
    listed = re.findall(r"<li>(.*?)</li>", html)
    merged = "load-error: RuntimeError: Serialized version [&#x27;5&#x27;, &#x27;1&#x27;] does not match our"
    merged += " current schema version (…, 2). — "
    assert len(listed) == 2 and listed[0].startswith(merged), listed
    # The first eight pairs named, and how many more; the other failure keeps its own line and number.
    assert listed[0].endswith("2.3.0 → 2.11.0 … (+3)")
    assert listed[1] == "load-error: KeyError: no &#x27;version&#x27; 7 — 2.4.0 → 2.3.0"
    # Failures of two shapes that read alike where a line is cut are one line, their pairs in the grid's order.
    long = "KeyError: " + "no item named version " * 15
    rows = [
        load("2.3.0", "2.4.0", "steady", "load-error", error_type="KeyError", error_message=long + "[loader 1]"),
        load("2.3.0", "2.5.0", "steady", "load-error", error_type="KeyError", error_message=long + "[loader (5, 1)]"),
        load("2.4.0", "2.5.0", "steady", "load-error", error_type="KeyError", error_message=long + "[loader 2]"),
    ]
    cut = re.findall(r"<li>(.*?)</li>", grid_html(loads_of(rows)))
    assert len(cut) == 1 and cut[0].endswith("… — 2.3.0 → 2.4.0, 2.3.0 → 2.5.0, 2.4.0 → 2.5.0"), cut
    # A square's tooltip says its failure in a few words, never its message: a page of many squares stays small.
    assert (
        html.count('title="load-error: RuntimeError"') == 11
        and "pass" not in html.split("<table")[1].split("</table>")[0]
    )
