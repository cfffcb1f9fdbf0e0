"""The onnx stage run on the installed torch, and the report built from its records: the ONNX outcome drawn from
its declaration alone (``Stage.shown``), on the case pages' grids in both forms, in the front page's grid, in the
failures and in the glossary, with no report code that names it."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest
from unit.forms_support import differences, facts, markdown_facts

from matrix.contract import stages
from matrix.report.build import build_report
from matrix.worker import onnx_stage

from conftest import ROOT

pytestmark = [
    pytest.mark.xdist_group("test_onnx_report"),  # one worker builds the module's run and report once
    pytest.mark.skipif(
        any(importlib.util.find_spec(name) is None for name in onnx_stage.PACKAGES),
        reason="needs onnx, onnxscript and onnxruntime installed (pip install onnx onnxscript onnxruntime)",
    ),
]
# A case whose program ONNX converts and runs, and one whose custom op has no ONNX function: its export fails.
PASSES, FAILS = "tutorial/basic_linear_relu", "tutorial/custom_op_fake_kernel"
SHOWN = stages.ONNX.shown


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("onnx")
    command = [
        sys.executable, "-m", "matrix", "run", "--select", PASSES, FAILS, "--mode", "non-strict",
        "--stages", "check,onnx", "--no-cache", "--no-artifacts", "--progress", "none", "--out", str(root / "records"),
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    build_report([str(root / "records")], str(root / "report"), charts=False)
    yield root / "report"


def page(out: Path, case: str, form: str) -> str:
    name = case.replace("/", "__")
    return (out / ("cases/%s.md" % name if form == "md" else "site/cases/%s.html" % name)).read_text(encoding="utf-8")


def test_the_records_carry_the_real_stages_outcomes(report: Path) -> None:
    cells = {
        r["case"]: r
        for f in (report.parent / "records").glob("*.jsonl")
        for r in map(json.loads, f.read_text(encoding="utf-8").splitlines())
        if r.get("kind") == "cell"
    }
    assert cells[PASSES]["status"] == "pass" and cells[PASSES]["onnx_status"] == "pass"
    assert cells[FAILS]["status"] == "pass" and cells[FAILS]["onnx_status"] == "fail"
    assert cells[FAILS]["onnx_step"] == "export" and cells[FAILS]["onnx_error_type"]


def test_a_case_page_draws_the_onnx_outcome_with_its_meaning_in_both_forms(report: Path) -> None:
    assert SHOWN is not None
    for case in (PASSES, FAILS):
        name = "cases/" + case.replace("/", "__")
        markdown = markdown_facts(page(report, case, "md"), name + ".md")
        site = facts(page(report, case, "html"), "site/%s.html" % name)
        assert differences(markdown, site) is None, case
        texts = " ".join(value for kind, value in site if kind == "text")
        tips = [value for kind, value in site if kind == "tip" and value.startswith("ONNX: ")]
        outcome = "pass" if case == PASSES else "fail"
        assert "ONNX outcome" in texts and "%s %s" % (outcome, SHOWN.meanings[outcome]) in texts
        assert "· ONNX %s" % outcome in texts  # beside the cell's status
        (tip,) = tips  # the grid's one square: the outcome and its meaning
        assert tip.startswith("ONNX: %s — %s" % (outcome, SHOWN.meanings[outcome]))
    site = page(report, FAILS, "html")
    # The failure's details where it failed: the step, the error's class; the error section names the stage.
    assert re.search(r"onnx_step: export.*onnx_error_type: torch\.onnx\.[\w.]*Error", site, re.S)
    assert "ONNX fails" in site and "ONNX fails" not in page(report, PASSES, "html")
    assert "onnx_step" not in page(report, PASSES, "md")  # a pass says its meaning, not the failure's fields


def test_the_front_pages_grid_marks_the_failed_stage_and_the_glossary_says_each_outcome(report: Path) -> None:
    assert SHOWN is not None
    front = (report / "site" / "index.html").read_text(encoding="utf-8")
    assert '"stages":{"0":["ONNX"]}' in front.replace(" ", "") and "ONNX fails" in front
    name = "glossary"
    markdown = (report / (name + ".md")).read_text(encoding="utf-8")
    site = (report / "site" / (name + ".html")).read_text(encoding="utf-8")
    assert differences(markdown_facts(markdown, name + ".md"), facts(site, "site/%s.html" % name)) is None
    for outcome in SHOWN.outcomes:
        assert "| %s: %s | %s |" % (SHOWN.label, outcome, SHOWN.meanings[outcome]) in markdown


def test_run_it_again_names_the_opt_in_stage(report: Path) -> None:
    front = (report / "index.md").read_text(encoding="utf-8")
    assert "--stages %s" % ",".join((*stages.DEFAULT, "onnx")) in front
