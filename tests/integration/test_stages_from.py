"""``report --stages-from DIR`` on real records: two runs of the worker on the installed torch, a plain one and a
``--stages check,onnx`` one, and the report of the first with the second's ONNX outcomes joined to its matching
cells, in both forms, with nothing else of the second run counted, its unmatched cell said, and both runs' stamps
cited, the same after a re-render from the report's folder alone, which also says how to make the second run again."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, List

import pytest
from unit.forms_support import differences, facts, markdown_facts

from matrix.contract import checkout, stages
from matrix.report import stamp
from matrix.report.build import Report, build_report
from matrix.worker import onnx_stage

from conftest import ROOT

pytestmark = [
    pytest.mark.xdist_group("test_stages_from"),  # one worker runs the module's two runs and report once
    pytest.mark.skipif(
        any(importlib.util.find_spec(name) is None for name in onnx_stage.PACKAGES),
        reason="needs onnx, onnxscript and onnxruntime installed (pip install onnx onnxscript onnxruntime)",
    ),
]
# Both runs hold these; the ONNX run alone holds ALONE, a cell the report does not have.
PASSES, FAILS, ALONE = "tutorial/basic_linear_relu", "tutorial/custom_op_fake_kernel", "tutorial/dim_auto"
SHOWN = stages.ONNX.shown
OTHER = stamp.Stamp(commit="0123456789ab", version="0.1.0", date="2026-11-30")  # the ONNX run's publication


def run(out: Path, cases: List[str], extra: List[str]) -> None:
    command = [
        sys.executable, "-m", "matrix", "run", "--select", *cases, "--mode", "non-strict", "--no-cache",
        "--no-artifacts", "--progress", "none", "--out", str(out), *extra,
    ]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, object]]:
    root = tmp_path_factory.mktemp("stages_from")
    run(root / "plain", [PASSES, FAILS], [])
    run(root / "onnx", [PASSES, FAILS, ALONE], ["--stages", "check,onnx"])
    shutil.copytree(root / "onnx", root / "records")  # the run's folder as `run` left it: no stamp of its own
    stamp.write(str(root / "onnx"), OTHER)  # as a published report keeps its stamp
    alone = build_report([str(root / "plain")], str(root / "alone"), charts=False)
    joined = build_report([str(root / "plain")], str(root / "report"), charts=False, stages_from=[str(root / "onnx")])
    yield {"root": root, "alone": alone, "joined": joined}


def page(out: Path, case: str, form: str) -> str:
    name = case.replace("/", "__")
    return (out / ("cases/%s.md" % name if form == "md" else "site/cases/%s.html" % name)).read_text(encoding="utf-8")


def test_the_onnx_outcomes_join_the_matching_cells_in_both_forms(built: Dict[str, object]) -> None:
    assert SHOWN is not None
    report = Path(str(built["root"])) / "report"
    for case, outcome in ((PASSES, "pass"), (FAILS, "fail")):
        name = "cases/" + case.replace("/", "__")
        site = facts(page(report, case, "html"), "site/%s.html" % name)
        assert differences(markdown_facts(page(report, case, "md"), name + ".md"), site) is None, case
        texts = " ".join(value for kind, value in site if kind == "text")
        assert "· ONNX %s" % outcome in texts and "%s %s" % (outcome, SHOWN.meanings[outcome]) in texts
    # Without --stages-from, the same records say nothing of ONNX.
    assert "ONNX" not in page(Path(str(built["root"])) / "alone", PASSES, "md")


def test_nothing_else_of_the_other_run_is_counted_and_its_unmatched_cell_is_said(built: Dict[str, object]) -> None:
    alone, joined = built["alone"], built["joined"]
    assert isinstance(alone, Report) and isinstance(joined, Report)
    assert (joined.cells, joined.pages) == (alone.cells, alone.pages) == (2, 2)
    report = Path(str(built["root"])) / "report"
    assert not (report / "cases" / (ALONE.replace("/", "__") + ".md")).exists()
    said = [w for w in joined.warnings if "match no cell" in w]
    assert said == [
        "%s: 1 cell(s) with an opt-in stage's outcome match no cell of the report; left out" % (built["root"] / "onnx")
    ]


def test_the_citation_names_both_runs_stamps_in_both_forms(built: Dict[str, object]) -> None:
    report = Path(str(built["root"])) / "report"
    own = stamp.read(str(report))
    assert own is not None and own.commit != OTHER.commit
    markdown = (report / "index.md").read_text(encoding="utf-8")
    site = (report / "site" / "index.html").read_text(encoding="utf-8")
    assert differences(markdown_facts(markdown, "index.md"), facts(site, "site/index.html")) is None
    cite = next(line for line in markdown.splitlines() if "How to cite" in line)
    assert own.words() in cite and "ONNX outcomes of every case (non-strict) from the run %s" % OTHER.words() in cite
    assert "| ONNX outcomes of every case (non-strict) | 1 |" in markdown and "| %s |" % OTHER.commit in markdown
    for words in (own.words(), OTHER.words()):
        assert words in site


def _cited(out: Path) -> List[str]:
    """The front page's lines that cite the runs and say how to make them again, checked the same in both forms; the
    report's own stamp (a re-render's is its own day's) said as OWN."""
    own = stamp.read(str(out))
    assert own is not None
    markdown = (out / "index.md").read_text(encoding="utf-8")
    site = (out / "site" / "index.html").read_text(encoding="utf-8")
    assert differences(markdown_facts(markdown, "index.md"), facts(site, "site/index.html")) is None
    lines = markdown.replace(own.words(), "OWN").splitlines()
    return lines[
        lines.index("| records | runs | written on (UTC) | published or made at commit |") : lines.index("## Summary")
    ]


def test_a_re_render_from_the_report_alone_cites_both_runs_and_makes_the_onnx_run_again(
    built: Dict[str, object],
) -> None:
    root = Path(str(built["root"]))
    before = _cited(root / "report")
    build_report([str(root / "report")], str(root / "again"), charts=False)
    assert _cited(root / "again") == before
    said = "\n".join(before)
    assert "ONNX outcomes of every case (non-strict) from the run %s" % OTHER.words() in said
    # The ONNX run again as it ran (its three cases, the report's two among them; non-strict), then joined.
    stages_word = ",".join((*stages.DEFAULT, "onnx"))
    assert "nox -s run -- --device cpu --mode non-strict --stages %s --out results/onnx`" % stages_word in said
    assert "`export-matrix report results/latest --out reports/local --stages-from results/onnx`" in said


def test_a_record_folder_is_cited_with_the_commit_its_runs_were_made_at(built: Dict[str, object]) -> None:
    """A folder of ``run`` keeps no stamp.json; its environment records say the code that made it (tool_commit)."""
    root = Path(str(built["root"]))
    build_report([str(root / "plain")], str(root / "of-records"), charts=False, stages_from=[str(root / "records")])
    markdown = (root / "of-records" / "index.md").read_text(encoding="utf-8")
    cite = next(line for line in markdown.splitlines() if "How to cite" in line)
    made = checkout.commit(str(ROOT))
    if made:  # a checkout: the runs made here name its commit
        assert "ONNX outcomes of every case (non-strict) from the run of " in cite and "at commit %s)" % made in cite
        assert "| ONNX outcomes of every case (non-strict) | 1 |" in markdown and "| %s |" % made in markdown
    else:
        assert "(its commit not recorded)" in cite
