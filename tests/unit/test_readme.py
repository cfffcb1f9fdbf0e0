"""The README's quick start and the status table of docs/report.md, read as a new user reads them."""

from __future__ import annotations

import re
from typing import List, Tuple

from matrix.contract.schema import Status

from conftest import ROOT

README = ROOT / "README.md"
REPORT_PAGE = ROOT / "docs" / "report.md"  # reading the report: where the status table moved from the README


def quick_start() -> List[str]:
    """The commands of the Quick start's first code block."""
    section = README.read_text().split("## Quick start\n", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]


def status_table() -> List[Tuple[str, str]]:
    text = REPORT_PAGE.read_text()
    table = text.split("| status | meaning |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    rows = [re.fullmatch(r"\| `([^`]+)` \| (.+) \|", line) for line in table.splitlines()]
    assert all(rows), table
    return [(row.group(1), row.group(2)) for row in rows if row]


def test_the_status_table_is_the_schema_word_for_word() -> None:
    assert status_table() == [(status.value, status.meaning) for status in Status]


def test_the_quick_start_is_venv_install_then_the_two_nox_commands() -> None:
    commands = quick_start()
    assert commands[0] == "python3 -m venv .venv && . .venv/bin/activate"
    assert commands[1] == "pip install -e ."
    assert commands[2] == "export-matrix --help"
    assert commands[3:] == ["nox -s run load report", "nox -s tests"]
