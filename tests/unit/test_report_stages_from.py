"""``report --stages-from DIR``: another folder's opt-in stages' outcomes join the report's matching cells, its
follow-up products (packages, compiles) join the report's records, and nothing else of that folder does (its other
cells and saved programs stay out); a cell that matches none is said in a warning. The report keeps the runs it
joined in ``stamp.json``: re-rendered from its own folder, it still cites them, in both forms, and "Run it again"
makes a joined stage's run apart, then joins it."""

from __future__ import annotations

import argparse
import json
import re
import shlex
from pathlib import Path
from typing import Any, Dict, List, Optional

import pandas as pd
import pytest

from matrix.contract import records, schema, stages
from matrix.contract.errors import UserError
from matrix.contract.products import COMPILE, PACKAGE
from matrix.contract.requests import RunRequest
from matrix.records import other_runs, store
from matrix.report import build as report
from matrix.report import stamp

from .forms_support import differences, facts, markdown_facts
from conftest import environment_record, make_cell


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


def test_a_case_is_matched_by_its_file_where_the_two_runs_name_it_apart(tmp_path: Path) -> None:
    # `run` names cases/tutorial/mine.py "tutorial/mine" (from the case root); `check cases/tutorial` names it "mine".
    main = write(tmp_path / "main", [make_cell(r, "tutorial/mine", case_file="cases/tutorial/mine.py")
                                     for r in ("2.6.0", "2.8.0")])  # fmt: skip
    other = write(tmp_path / "onnx", [
        cell("2.8.0", "mine", case_file="cases/tutorial/mine.py", **ONNX),
        cell("2.8.0", "mine2", case_file="./cases/tutorial/../tutorial/mine2.py", **ONNX),  # a file the report lacks
        cell("2.6.0", "tutorial/mine", **ONNX),  # no file named: matched by its name
    ])  # fmt: skip
    found = other_runs.join(store.load([main]), store.load([other]))
    cells = found.store.cells.set_index(["torch_version", "case"])
    assert found.stages == ("onnx",) and found.unmatched == 1
    assert list(cells["onnx_status"]) == ["pass", "pass"] and len(cells) == 2
    assert other_runs.ran(store.load([other]), found.store.cells)[1] == ("mine2", "tutorial/mine")


def environment(release: str, day: int, run_id: str) -> Dict[str, Any]:
    return {**environment_record(release, "2025-01-%02dT00:00:00+00:00" % day), "run_id": run_id}


ONNX = {"onnx_status": "pass", "onnx_opset": 18}
OTHER = stamp.Stamp(commit="0123456789ab", version="0.1.0", date="2025-01-04")  # the ONNX run's, where it kept one


def joined_report(tmp_path: Path, other_stamp: Optional[stamp.Stamp] = OTHER) -> Path:
    """A report of two cases on two releases, in strict mode, with the ONNX outcomes of another run (one case, on the
    newer release) joined."""
    main = write(tmp_path / "main", [environment("2.6.0", 1, "a"), environment("2.8.0", 1, "a")] + [
        make_cell(release, case) for release in ("2.6.0", "2.8.0") for case in ("mine", "yours")])  # fmt: skip
    other = write(tmp_path / "onnx", [environment("2.8.0", 3, "b"), cell("2.8.0", "mine", **ONNX)])
    if other_stamp is not None:
        stamp.write(other, other_stamp)  # as a published report keeps its stamp
    report.build_report([main], str(tmp_path / "report"), charts=False, stages_from=[other])
    return tmp_path / "report"


def cited(out: Path) -> str:
    """What the front page says of the runs whose records it shows and how to cite it, checked the same in both
    forms: the table of runs, "How to cite" and the commands of "Run it again"."""
    markdown = markdown_facts((out / "index.md").read_text(encoding="utf-8"), "index.md")
    site = facts((out / "site" / "index.html").read_text(encoding="utf-8"), "site/index.html")
    assert differences(markdown, site) is None
    said = " ".join(value for kind, value in markdown if kind == "text")
    return said[said.index("records runs written on") : said.index("A single failure is reproduced")]


def test_the_joined_runs_stamp_survives_any_number_of_re_renders_in_both_forms(tmp_path: Path) -> None:
    first = joined_report(tmp_path)
    said = cited(first)
    assert "ONNX outcomes of mine (strict) 1 2025-01-03 %s" % OTHER.commit in said  # its case and mode, of two
    assert "; ONNX outcomes of mine (strict) from the run %s)." % OTHER.words() in said
    # Re-rendered from the report's folder alone, which holds the ONNX outcomes but not the other run's folder;
    # then from that re-render, and in place.
    report.build_report([str(first)], str(tmp_path / "again"), charts=False)
    report.build_report([str(tmp_path / "again")], str(tmp_path / "again"), charts=False)
    assert cited(tmp_path / "again") == said
    # Joined again, the run gives nothing new (the cells hold its outcomes): it is cited once, as before.
    again = [str(tmp_path / "again")]
    report.build_report(again, again[0], charts=False, stages_from=[str(tmp_path / "onnx")])
    assert cited(tmp_path / "again") == said
    assert stamp.sources([str(tmp_path / "again")]) == stamp.sources([str(first)])
    (kept,) = stamp.sources([str(first)])
    assert (kept.stamp, kept.shows, kept.runs, kept.dates) == (OTHER, ("onnx",), 1, "2025-01-03")
    assert (kept.builds, kept.cases, kept.modes) == ((("cpu", "2.8.0", "cpu"),), ("mine",), ("strict",))


def test_a_run_from_a_record_folder_is_cited_by_its_days_and_an_unreadable_kept_run_is_refused(
    tmp_path: Path,
) -> None:
    first = joined_report(tmp_path, other_stamp=None)
    said = cited(first)
    assert "; ONNX outcomes of mine (strict) from the run of 2025-01-03 (its commit not recorded))." in said
    assert "ONNX outcomes of mine (strict) 1 2025-01-03 not recorded" in said
    kept = json.loads((first / stamp.FILE).read_text(encoding="utf-8"))
    del kept["sources"][0]["shows"]
    (first / stamp.FILE).write_text(json.dumps(kept), encoding="utf-8")
    with pytest.raises(UserError, match=r"stamp\.json: its sources \(the runs the report joined\) cannot be read"):
        report.build_report([str(first)], str(tmp_path / "again"), charts=False)


def test_run_it_again_makes_the_joined_stage_apart_and_joins_it_as_the_cli_and_noxfile_read_it(
    tmp_path: Path,
) -> None:
    out = joined_report(tmp_path)
    said = cited(out)  # the same in both forms
    steps = re.findall(r"^\d+\. (.*): `([^`]*)`$", (out / "index.md").read_text(encoding="utf-8"), re.M)
    commands = [command for _, command in steps if "nox" in command or "export-matrix" in command]
    assert commands == [
        'EXPORT_MATRIX_TORCH="2.6.0+cpu 2.8.0+cpu" nox -s run -- --device cpu --mode strict',  # its mode; no onnx
        'EXPORT_MATRIX_TORCH="2.8.0+cpu" nox -s run -- --device cpu --mode strict --select mine --stages'
        " %s --out results/onnx" % ",".join((*stages.DEFAULT, "onnx")),
        "export-matrix report results/latest --out reports/local --stages-from results/onnx",
    ]
    assert "Run the stage onnx apart, as the run whose outcomes this report shows did (its builds, its cases" in said
    # The run session hands the words after -- to export-matrix run's parser; the report command is the CLI's.
    request = RunRequest.from_argv(shlex.split(commands[1].split(" -- ")[1]))
    assert (tuple(request.select), request.mode, request.out) == (("mine",), "strict", "results/onnx")
    assert tuple(request.stages) == (*stages.DEFAULT, "onnx")
    parser = argparse.ArgumentParser()
    report.configure(parser)
    options = report.ReportOptions.from_args(parser.parse_args(shlex.split(commands[2])[2:]))
    assert options.stages_from == ("results/onnx",) and options.records == ("results/latest",)


def test_run_it_again_selects_a_folder_whose_every_case_the_joined_run_ran_by_its_pattern() -> None:
    from types import SimpleNamespace

    from matrix.report.again import selected

    built = SimpleNamespace(cells=pd.DataFrame({"case": ["tutorial/a", "tutorial/b", "models/c", "models/d", "e"]}))
    ran = stamp.Source(stamp.UNKNOWN, ("onnx",), 1, "", cases=("tutorial/b", "tutorial/a", "models/c", "e"))
    words = selected(built, ran)  # type: ignore[arg-type]
    assert words == ["e", "models/c", "tutorial/*"]
    every = stamp.Source(stamp.UNKNOWN, ("onnx",), 1, "", cases=tuple(built.cells["case"]))
    assert selected(built, every) is None  # type: ignore[arg-type]  # a run of every case needs no --select
    request = RunRequest.from_argv(["--select", *words, "--out", "results/onnx"])
    assert tuple(request.select) == ("e", "models/c", "tutorial/*")
