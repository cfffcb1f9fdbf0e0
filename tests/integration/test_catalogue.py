"""``export-matrix cases`` as a user runs it: the listing as JSON and text, its folders and sources."""

from __future__ import annotations

import json
from pathlib import Path

from matrix.contract.case import discover

from conftest import ROOT, run_matrix

CASES = ROOT / "cases"
GOOD = '"""Doubles | halves."""\nimport torch\nmodel = torch.nn.Identity()\nexample_args = (torch.ones(1),)\n'


def test_json_lists_every_case_with_its_metadata():
    listed = json.loads(run_matrix("cases", "--json").stdout)
    infos = discover([str(CASES)])
    assert [item["case"] for item in listed] == [info.name for info in infos]
    by_name = {item["case"]: item for item in listed}
    item = by_name["exportdb/cond_operands"]
    assert item["expected"] == "supported"
    assert item["tags"] == ["torch.cond", "torch.dynamic-shape"]
    assert "dim" in item["requires"]
    assert item["source"] == "cases" and item["problem"] is None
    assert item["case_file"].endswith("cases/exportdb/cond_operands.py")
    assert by_name["models/random_noise_like"]["skip_check"]


def test_readme_is_up_to_date_with_the_generator():
    generated = run_matrix("cases", "--markdown").stdout
    readme = (CASES / "README.md").read_text(encoding="utf-8")
    assert readme == generated, "cases/README.md is stale: run `export-matrix cases --markdown > cases/README.md`"


def test_text_listing_shows_malformed_cases(tmp_path: Path):
    (tmp_path / "good.py").write_text(GOOD + 'tags = ["torch.cond"]\nrequires = ["cond"]\n')
    (tmp_path / "bad.py").write_text('"""Bad."""\nmodel = 1\nexample_args = ()\ntags = ["nope"]\n')
    out = run_matrix("cases", "--cases", str(tmp_path)).stdout
    lines = out.splitlines()
    assert lines[0].startswith("bad ") and "PROBLEM:" in lines[0] and "unknown tags ['nope']" in lines[0]
    assert lines[1].startswith("good ") and lines[1].endswith("Doubles | halves.")
    assert "tags: torch.cond; requires: cond" in lines[2]
    assert lines[-1] == "2 cases, 1 malformed"


def test_default_folder_is_cases_in_the_current_directory(tmp_path: Path):
    (tmp_path / "cases" / "theme").mkdir(parents=True)
    (tmp_path / "cases" / "theme" / "one.py").write_text(GOOD)
    listed = json.loads(run_matrix("cases", "--json", cwd=tmp_path).stdout)
    assert [item["case"] for item in listed] == ["theme/one"]


def test_missing_folder_exits_2_with_a_clear_message(tmp_path: Path):
    proc = run_matrix("cases", "--cases", str(tmp_path / "nowhere"), check=False)
    assert proc.returncode == 2
    assert "nowhere: no such case file or folder" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_exportdb_source_lists_the_bundled_examples():
    listed = json.loads(run_matrix("cases", "--source", "exportdb", "--json").stdout)
    names = [item["case"] for item in listed]
    assert "torch-exportdb/cond_predicate" in names
    assert all(item["source"] == "exportdb" for item in listed)
    proc = run_matrix("cases", "--source", "exportdb", "--cases", "cases", check=False)
    assert proc.returncode == 2 and "--cases does not apply" in proc.stderr
