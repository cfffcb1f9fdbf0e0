"""``report --stages-from DIR``: another folder's opt-in stages' outcomes join the report's matching cells, its
follow-up products (packages, compiles) join the report's records, and nothing else of that folder does (its other
cells and saved programs stay out); a cell that matches none is said in a warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pandas as pd

from matrix.contract import records, schema
from matrix.contract.products import COMPILE, PACKAGE
from matrix.records import other_runs, store
from matrix.report import build as report

from conftest import make_cell


def write(folder: Path, rows: List[Dict[str, Any]]) -> str:
    folder.mkdir(parents=True)
    with records.Writer(str(folder / "records.jsonl")) as writer:
        for row in rows:
            writer.write(row)
    return str(folder)


def used(kind: str, keys: Any, case: str, status: str = "pass", **extra: Any) -> Dict[str, Any]:
    row: Dict[str, Any] = {key: None for key in keys}
    row.update(
        schema_version=schema.SCHEMA_VERSION, kind=kind, saved_torch_version="2.6.0", saved_variant="cpu",
        saved_python="3.11", torch_version="2.8.0", variant="cpu", python="3.11", case=case, mode="non-strict",
        status=status, finished_at="2025-01-01T00:00:00+00:00", **extra,
    )  # fmt: skip
    return row


def test_only_the_other_folders_packages_and_compiles_are_added(tmp_path: Path) -> None:
    main = write(tmp_path / "main", [make_cell("2.6.0", "mine"), make_cell("2.8.0", "mine"),
                                     used("load", schema.LOAD_KEYS, "mine")])  # fmt: skip
    other = write(
        tmp_path / "aoti",
        [
            make_cell("2.8.0", "theirs"),
            used("load", schema.LOAD_KEYS, "theirs"),
            used(schema.AOTI_LOAD_KIND, schema.AOTI_LOAD_KEYS, "mine", package="model.pt2"),
            used(schema.AOTI_COMPILE_KIND, schema.AOTI_COMPILE_KEYS, "mine", status="ok"),
        ],
    )
    found = other_runs.join(store.load([main]), store.load([other]))
    joined = found.store
    assert found.products == ("aoti_loads", "aoti_compiles") and found.stages == () and found.unmatched == 0
    assert sorted(set(joined.cells["case"])) == ["mine"]
    assert list(joined.loads["case"]) == ["mine"]
    assert [list(joined.products[p.name]["case"]) for p in (PACKAGE, COMPILE)] == [["mine"], ["mine"]]
    # The report built with it answers the upgrade with the package of the other folder.
    built = report.build_report([main], str(tmp_path / "report"), charts=False, stages_from=[other])
    assert built.cells == 2
    page = (tmp_path / "report" / "upgrade.md").read_text(encoding="utf-8")
    assert "- packages, non-strict: 1 of 1 load and match" in page
    assert "- programs compiled, non-strict: 1 of 1 compile, load and match" in page
    index = (tmp_path / "report" / "index.md").read_text(encoding="utf-8")
    assert (
        "**AOTInductor packages, backward promise (non-strict mode; strict mode not run)**: kept on the 1 pair tried"
        in index
    )


def test_a_mode_that_did_not_run_is_said_not_counted(tmp_path: Path) -> None:
    rows = [make_cell(r, c, mode="non-strict", expected="supported") for r in ("2.6.0", "2.8.0") for c in "ab"]
    report.build_report([write(tmp_path / "records", rows)], str(tmp_path / "report"), charts=False)
    index = (tmp_path / "report" / "index.md").read_text(encoding="utf-8")
    assert "- strict and non-strict not compared: strict mode was not run;" in index
    assert "## Strict vs non-strict\n\nNot compared: strict mode was not run.\n" in index
    claims = (tmp_path / "report" / "claims.md").read_text(encoding="utf-8")
    documented = claims.split("## Documented to work")[1]
    assert "Not run: strict mode, so it is not counted here." in documented
    assert "| release | non-strict: pass | ran (non-strict) | unexpected failures |" in documented
    assert "0 of 2" not in documented and "2 of 2 (100.0%)" in documented


def cell(release: str, case: str, **stage_fields: Any) -> Dict[str, Any]:
    """A cell record of a run that selected opt-in stages: their fields beside the cell's."""
    return {**make_cell(release, case), **stage_fields}


def test_an_opt_in_stage_joins_the_matching_cell_only_and_the_rest_is_warned(tmp_path: Path) -> None:
    main = write(tmp_path / "main", [make_cell("2.6.0", "mine"), make_cell("2.8.0", "mine")])
    onnx = {"onnx_status": "pass", "onnx_opset": 18}
    other = write(tmp_path / "onnx", [cell("2.8.0", "mine", **onnx), cell("2.8.0", "theirs", **onnx),
                                      make_cell("2.6.0", "plain")])  # fmt: skip
    found = other_runs.join(store.load([main]), store.load([other]))
    cells = found.store.cells.set_index(["torch_version", "case"])
    assert found.stages == ("onnx",) and found.unmatched == 1  # "theirs"; "plain" carries no opt-in outcome
    assert cells.loc[("2.8.0", "mine"), "onnx_status"] == "pass" and cells.loc[("2.8.0", "mine"), "onnx_opset"] == 18
    assert pd.isna(cells.loc[("2.6.0", "mine"), "onnx_status"])  # no cell of the other run matches it
    assert len(found.store.cells) == 2
    # A cell's own outcome is kept: the other run fills only what the cell lacks.
    again = other_runs.join(found.store, store.load([write(tmp_path / "later", [
        cell("2.8.0", "mine", onnx_status="fail")])]))  # fmt: skip
    assert again.stages == () and again.store.cells.set_index("torch_version").loc["2.8.0", "onnx_status"] == "pass"
    built = report.build_report([main], str(tmp_path / "report"), charts=False, stages_from=[other])
    assert built.cells == 2
    (warning,) = [w for w in built.warnings if "match no cell" in w]
    assert warning == "%s: 1 cell(s) with an opt-in stage's outcome match no cell of the report; left out" % other
