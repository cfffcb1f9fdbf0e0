"""The case catalogue as markdown: grouped by folder, deterministic, escaped."""

from __future__ import annotations

from matrix.contract.case import CaseInfo, discover
from matrix.worker.catalogue import markdown

from conftest import ROOT

CASES = ROOT / "cases"


def test_markdown_groups_by_folder_and_is_deterministic():
    infos = discover([str(CASES)])
    text = markdown(infos)
    assert text == markdown(list(reversed(infos)))
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    folders = ("models", "real_models", "strict_nonstrict", "tutorial")
    counts = ["## %s (%d)" % (f, sum(i.name.startswith(f + "/") for i in infos)) for f in folders]
    assert headings[:5] == ["## exportdb (36)", *counts]
    assert headings[-1] == "## Tags"
    row = next(line for line in text.splitlines() if line.startswith("| `exportdb/torch_sym_min`"))
    assert row.endswith("| `torch.operator` |  | not-supported-yet |")
    # Only a folder with cases that name packages has the Needs column.
    row = next(line for line in text.splitlines() if line.startswith("| `real_models/tv_resnet18`"))
    assert row.endswith("| `torchvision` | supported |")


def test_markdown_escapes_pipes_and_shows_problems():
    infos = [
        CaseInfo(name="a/pipes", path="a/pipes.py", description="x | y\nsecond line", tags=("torch.cond",)),
        CaseInfo(name="a/broken", path="a/broken.py", description="", problem="a/broken.py: cannot parse: | here"),
    ]
    text = markdown(infos)
    assert "| `a/pipes` | x \\| y | `torch.cond` |  | none |" in text  # no claim: says so
    assert "| `a/broken` | PROBLEM: a/broken.py: cannot parse: \\| here |" in text
    assert "second line" not in text
