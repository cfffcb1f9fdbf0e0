"""Programs exported on one release and compiled on a newer one, from hand-written ``aoti-compile`` records: the
table, its shares and failures (records/product_uses.py); their section of the saved-programs page, the case pages'
grids (Markdown and site); the published table read back and merged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pandas as pd
from markdown_it import MarkdownIt

from matrix.contract import records, schema
from matrix.contract.products import COMPILE, PACKAGE, PROGRAM
from matrix.contract.schema import AOTI_COMPILE_KEYS, AOTI_COMPILE_KIND
from matrix.records import artifacts as loads_table
from matrix.records import merge, product_uses, store
from matrix.report import artifacts as page
from matrix.report import build as report
from matrix.report.writers import markdown as md_writer

from .test_aoti_loads import html_rows, table_rows
from conftest import make_cell, make_load

EXPORTED = ("2.6.0", "2.8.0", "2.10.0")
COMPILED = ("2.8.0", "2.10.0", "2.12.0")
CASES = (("mlp", "strict"), ("mlp", "non-strict"), ("cond", "strict"))
UNDEFINED = "undefined symbol: aoti_torch_new_tensor_handle"


def compile_record(exported: str, compiled: str, case: str = "mlp", status: str = "ok", mode: str = "strict",
                   **extra: Any) -> Dict[str, Any]:  # fmt: skip
    """A hand-written ``aoti-compile`` record: the program saved on ``exported`` compiled on ``compiled``."""
    record: Dict[str, Any] = {key: None for key in AOTI_COMPILE_KEYS}
    record.update(
        schema_version=schema.SCHEMA_VERSION, kind=AOTI_COMPILE_KIND, saved_torch_version=exported,
        saved_variant="cpu", saved_python="3.11", torch_version=compiled, variant="cpu", python="3.11", case=case,
        mode=mode, status=status, finished_at="2025-01-01T00:00:00+00:00", aoti_api="aoti_compile_and_package",
        compile_s=10.0, package_bytes=1_500_000,
    )  # fmt: skip
    if status == "ok":
        record.update(load_s=1.5, run_s=0.01, checked_inputs=2, aoti_loader="aoti_load_package")
    record.update(extra)
    return record


def outcome(exported: str, compiled: str, case: str, mode: str) -> Dict[str, Any]:
    """A story: 2.6.0's cond does not load on 2.12.0 (nothing to compile); 2.8.0's strict mlp fails to compile on
    2.10.0; its cond package does not load there; 2.10.0's cond mismatches on 2.12.0; the rest passes."""
    if (exported, compiled, case) == ("2.6.0", "2.12.0", "cond"):
        return {"status": "skipped", "error_type": "RuntimeError", "compile_s": None, "package_bytes": None,
                "error_message": "not compiled: the program does not load on this release: bad version"}  # fmt: skip
    if (exported, compiled, case, mode) == ("2.8.0", "2.10.0", "mlp", "strict"):
        return {"status": "error", "failed_step": "compile", "error_type": "torch._inductor.exc.CppCompileError",
                "error_message": "C++ compile error", "package_bytes": None}  # fmt: skip
    if (exported, compiled, case) == ("2.8.0", "2.10.0", "cond"):
        return {"status": "error", "failed_step": "load", "error_type": "RuntimeError", "error_message": UNDEFINED}
    if (exported, compiled, case) == ("2.10.0", "2.12.0", "cond"):
        return {"status": "mismatch", "failed_step": "run", "error_type": "AssertionError",
                "error_message": "output 0 differs", "load_s": 1.0}  # fmt: skip
    return {}


def compile_records() -> List[Dict[str, Any]]:
    """Each program compiled on every newer release: six pairs, three programs each."""
    order = {"2.6.0": 0, "2.8.0": 1, "2.10.0": 2, "2.12.0": 3}
    return [
        compile_record(e, c, case, mode=mode, **outcome(e, c, case, mode))
        for e in EXPORTED
        for c in COMPILED
        if order[e] < order[c]
        for case, mode in CASES
    ]


def frame(rows: List[Dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame({key: [r.get(key) for r in rows] for key in AOTI_COMPILE_KEYS}, dtype=object)


def judged() -> product_uses.ProductUses:
    return product_uses.judge(COMPILE, frame(compile_records()))


# --- the judgement -----------------------------------------------------------------------------------


def test_the_table_keeps_the_latest_record_of_each_program_and_compiling_release() -> None:
    rows = compile_records()
    again = compile_record("2.8.0", "2.10.0", "mlp", finished_at="2025-02-01T00:00:00+00:00")  # a fix, recorded later
    old = {k: v for k, v in compile_record("2.6.0", "2.8.0", "old").items() if k not in ("failed_step", "with_set")}
    found = loads_table.table(frame([*rows, again, old]), COMPILE)
    assert len(found) == len(rows) + 1  # the later record replaces one; one without the newer keys still reads
    mlp = found[(found["saved"] == "2.8.0") & (found["loaded"] == "2.10.0") & (found["case"] == "mlp")]
    assert sorted(mlp["status"]) == ["ok", "ok"]  # strict: fixed by the later record; non-strict: passed
    assert list(found.columns) == ["saved", "loaded", *AOTI_COMPILE_KEYS]
    # A status outside the vocabulary is no compile.
    assert loads_table.table(frame([compile_record("2.6.0", "2.8.0", status="pass")]), COMPILE).empty


def test_each_pair_counts_how_far_its_programs_got_and_what_was_not_tried() -> None:
    shares = judged().shares
    strict = shares[shares["mode"] == "strict"].set_index(["saved", "loaded"])
    columns = ["total", "compile", "load", "passed", "skipped", "not_applicable", "untrusted"]
    assert strict.loc[("2.8.0", "2.10.0"), columns].tolist() == [2, 1, 0, 0, 0, 0, 0]  # compile error; load error
    assert strict.loc[("2.6.0", "2.12.0"), columns].tolist() == [1, 1, 1, 1, 1, 0, 0]  # cond did not load: skipped
    assert strict.loc[("2.10.0", "2.12.0"), columns].tolist() == [2, 2, 2, 1, 0, 0, 0]  # cond mismatches
    assert strict.loc[("2.6.0", "2.8.0"), "share"] == 1.0
    non_strict = shares[shares["mode"] == "non-strict"]
    assert set(non_strict["passed"]) == {1} and set(non_strict["total"]) == {1}
    assert list(shares["mode"].unique()) == ["strict", "non-strict"]
    assert list(strict.index.get_level_values("loaded")[:3]) == ["2.8.0", "2.10.0", "2.12.0"]  # version order


def test_failures_say_where_each_compile_stopped_and_not_tried_is_no_failure() -> None:
    found = product_uses.failures(judged().table, COMPILE)
    texts = {failure.text: list(programs) for failure, programs in found}
    assert texts == {
        "compile error: torch._inductor.exc.CppCompileError: C++ compile error": [("mlp", "strict", "2.8.0", "2.10.0")],
        "load error: RuntimeError: " + UNDEFINED: [("cond", "strict", "2.8.0", "2.10.0")],
        "mismatch: AssertionError: output 0 differs": [("cond", "strict", "2.10.0", "2.12.0")],
    }
    cost = judged().cost.set_index("loaded")
    assert cost.loc["2.10.0", "compiles"] == 6 and cost.loc["2.10.0", "compile_s_median"] == 10.0
    assert cost.loc["2.12.0", "compiles"] == 8  # the skipped program never compiled: no time


def test_compile_failures_that_differ_only_in_numbers_are_one_the_most_common_first() -> None:
    def failed(exported: str, compiled: str, message: str, error_type: str = "RuntimeError") -> Dict[str, Any]:
        return compile_record(exported, compiled, status="error", failed_step="run", error_type=error_type,
                              error_message=message)  # fmt: skip

    rows = [
        failed("2.6.0", "2.8.0", "oops"),
        failed("2.6.0", "2.10.0", "API call failed at model_container_runner.cpp, line 144"),
        failed("2.6.0", "2.12.0", "API call failed at model_container_runner.cpp, line 150"),
        failed("2.8.0", "2.12.0", "API call failed at model_container_runner.cpp, line 150", "ValueError"),
    ]
    found = [
        (failure.text, [where[2:] for where in wheres])
        for failure, wheres in product_uses.failures(loads_table.table(frame(rows), COMPILE), COMPILE)
    ]
    assert found == [
        ("run error: RuntimeError: API call failed at model_container_runner.cpp, line …",
         [("2.6.0", "2.10.0"), ("2.6.0", "2.12.0")]),
        ("run error: RuntimeError: oops", [("2.6.0", "2.8.0")]),
        ("run error: ValueError: API call failed at model_container_runner.cpp, line 150", [("2.8.0", "2.12.0")]),
    ]  # fmt: skip


def test_the_store_reads_compiles_apart_and_cuts_machine_paths(tmp_path: Path) -> None:
    folder = tmp_path / "records"
    folder.mkdir()
    with records.Writer(str(folder / "load_torch-2.10.0_cpu_py3.11.jsonl")) as writer:
        writer.write(make_load("2.6.0", "2.10.0"))
        writer.write(compile_record("2.6.0", "2.10.0", status="error", failed_step="compile",
                                    error_message="in /home/me/x/aoti.pt2"))  # fmt: skip
    (folder / "cells.jsonl").write_text(json.dumps(make_cell("2.10.0", "mlp")) + "\n")
    loaded = store.load([str(folder)])
    compiles = loaded.products[COMPILE.name]
    assert not loaded.warnings and loaded.products[PACKAGE.name].empty
    assert list(compiles["kind"]) == [AOTI_COMPILE_KIND] and len(loaded.loads) == 1
    assert compiles["error_message"].iloc[0] == "in aoti.pt2"


def test_merge_keeps_a_compile_beside_the_load_and_the_package_load_of_the_same_pair(tmp_path: Path) -> None:
    shards = []
    for name, status in (("a", "error"), ("b", "ok")):
        path = tmp_path / name / "load_torch-2.10.0_cpu_py3.11.jsonl"
        path.parent.mkdir(parents=True)
        finished = "2025-01-0%dT00:00:00+00:00" % (1 if name == "a" else 2)
        rows = [
            make_load("2.6.0", "2.10.0", finished_at=finished),
            dict(make_load("2.6.0", "2.10.0", finished_at=finished), kind="aoti-load"),
            compile_record("2.6.0", "2.10.0", "add", status, finished_at=finished),
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        shards.append(merge.read_shard(str(path)))
    merged = merge.merge(shards)
    kept = merged.files["load_torch-2.10.0_cpu_py3.11.jsonl"]
    assert sorted((r["kind"], r["status"]) for r in kept) == [("aoti-compile", "ok"), ("aoti-load", "pass"),
                                                             ("load", "pass")]  # fmt: skip


# --- artifacts.md, the case pages, the published table ------------------------------------------------------


def test_the_packages_section_ends_with_the_exported_by_compiled_grid_its_cost_and_failures(tmp_path: Path) -> None:
    uses = [product_uses.judge(p, pd.DataFrame()) for p in (PROGRAM, PACKAGE)] + [judged()]
    written = page.write(str(tmp_path), uses)
    assert {COMPILE.table, "charts/aoti-compiles-strict.png"} <= written.files
    assert PACKAGE.table not in written.files  # no package load: no package table
    text = md_writer.write(page.page(uses, written.charts))
    assert "## " + PACKAGE.title not in text
    section = text[text.index("## " + COMPILE.title) :]
    assert "9 programs exported on 3 builds of 3 releases, compiled on 3 builds of 3 releases." in section
    rows = table_rows(section)
    assert rows[0] == ["exported on ↓ / compiled on →", *COMPILED]
    assert rows[1] == ["2.6.0", "2/2/2 of 2", "2/2/2 of 2", "1/1/1 of 1"]
    assert rows[2] == ["2.8.0", "·", "1/0/0 of 2", "2/2/2 of 2"]
    assert rows[3] == ["2.10.0", "·", "·", "2/2/1 of 2"]
    assert ["compiled on", "compiles", "median s", "longest s", "package load s (median)",
            "package MB (median)"] in rows  # fmt: skip
    html = MarkdownIt("commonmark").render(section)
    assert (
        "<li>compile error: torch._inductor.exc.CppCompileError: C++ compile error — mlp (strict) 2.8.0 → 2.10.0</li>"
        in html
    )
    assert "not compiled: the program does not load on the compiling release" in section  # the legend
    assert "![AOTInductor compiles that load and match: strict](charts/aoti-compiles-strict.png)" in section
    stored = pd.read_parquet(tmp_path / COMPILE.table)
    assert len(stored) == 18 and set(stored["kind"]) == {AOTI_COMPILE_KIND}
    assert {"compile_s", "load_s", "run_s", "package_bytes", "failed_step", "error_type"} <= set(stored.columns)


def _records(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    releases = sorted({*EXPORTED, *COMPILED}, key=lambda r: tuple(map(int, r.split("."))))
    cells = [make_cell(release, case, mode=mode) for release in releases for case, mode in CASES]
    (folder / "cells.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cells), encoding="utf-8")
    with records.Writer(str(folder / "load.jsonl")) as writer:
        for row in compile_records():
            writer.write(row)
    return folder


def test_the_report_writes_the_table_each_case_page_its_grid_and_rebuilds_from_the_table(tmp_path: Path) -> None:
    out, again = tmp_path / "report", tmp_path / "again"
    report.build_report([str(_records(tmp_path / "records"))], str(out), charts=False)
    case = (out / "cases" / "cond.md").read_text(encoding="utf-8")
    grid = table_rows(case[case.index("## Exported × compiled") :])
    assert grid[0] == ["strict: exported on ↓ compiled on →", *COMPILED]
    # A compile's outcome has the glyph of the same idea; a skipped compile, which no status of the writers names,
    # reads as unknown, its word in its tooltip.
    assert grid[1:4] == [["2.6.0", "✅", "✅", "?"], ["2.8.0", "·", "❌", "✅"], ["2.10.0", "·", "·", "⚠️"]]
    assert '<span title="skipped">?</span>' in case
    # The site's case page: the same grid, every glyph under its release.
    site = (out / "site" / "cases" / "cond.html").read_text(encoding="utf-8")
    rows = html_rows(site[site.index('id="exported-compiled"') :])
    assert rows[0] == ["strict: exported on ↓ compiled on →", *COMPILED]
    assert rows[1:4] == grid[1:4]
    assert "<li>load error: RuntimeError: %s — 2.8.0 → 2.10.0</li>" % UNDEFINED in site
    assert "aoti_compiles.parquet" in (out / "site" / "index.html").read_text(encoding="utf-8")  # a download
    # The published tables stand for the records: the report rebuilt from them is the same.
    report.build_report([str(out)], str(again), charts=False)
    for name in ("artifacts.md", "site/artifacts.html", "cases/cond.md", COMPILE.table, "site/cases/cond.html"):
        assert (out / name).read_bytes() == (again / name).read_bytes(), name
