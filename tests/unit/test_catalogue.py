"""The case catalogue as markdown: grouped by folder, deterministic, escaped."""

from __future__ import annotations

from matrix.worker.case import CaseInfo, discover
from matrix.worker.catalogue import markdown

from conftest import ROOT

CASES = ROOT / "cases"


def test_markdown_groups_by_folder_and_is_deterministic():
    infos = discover([str(CASES)])
    text = markdown(infos)
    assert text == markdown(list(reversed(infos)))
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:4] == ["## exportdb (36)", "## models (%d)" % sum(i.name.startswith("models/") for i in infos),
                            "## strict_nonstrict (%d)" % sum(i.name.startswith("strict_nonstrict/") for i in infos),
                            "## tutorial (%d)" % sum(i.name.startswith("tutorial/") for i in infos)]  # fmt: skip
    assert headings[-1] == "## Tags"
    row = next(line for line in text.splitlines() if line.startswith("| `exportdb/torch_sym_min`"))
    assert row.endswith("| `torch.operator` |  | not-supported-yet |")


def test_markdown_escapes_pipes_and_shows_problems():
    infos = [
        CaseInfo(name="a/pipes", path="a/pipes.py", description="x | y\nsecond line", tags=("torch.cond",)),
        CaseInfo(name="a/broken", path="a/broken.py", description="", problem="a/broken.py: cannot parse: | here"),
    ]
    text = markdown(infos)
    assert "| `a/pipes` | x \\| y | `torch.cond` |  |  |" in text
    assert "| `a/broken` | PROBLEM: a/broken.py: cannot parse: \\| here |" in text
    assert "second line" not in text
