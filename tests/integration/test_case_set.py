"""The whole case set, run by the real runner on the installed torch."""

from __future__ import annotations

import pytest

from matrix.contract.case import discover
from matrix.contract.schema import STATUSES

from conftest import ROOT, read_cells, run_matrix


@pytest.mark.slow
def test_every_cell_of_the_case_set_gets_a_status_and_none_is_a_case_error(tmp_path):
    run_matrix("run", "--cases", "cases", "--out", str(tmp_path), "--progress", "none", timeout=1800)
    cells = read_cells(tmp_path)
    names = {info.name for info in discover([str(ROOT / "cases")])}
    assert {(c["case"], c["mode"]) for c in cells} == {(n, m) for n in names for m in ("strict", "non-strict")}
    assert len(cells) == 2 * len(names)
    assert all(c["status"] in STATUSES for c in cells)
    broken = [
        "%s: %s %s" % (c["cell_id"], c["status"], c["error_message"])
        for c in cells
        if c["status"] in ("case-error", "crash", "timeout")
    ]
    assert not broken, "\n".join(broken)
    # every applicable cell ran export; every passing one has a graph fingerprint
    for cell in cells:
        if cell["status"] == "pass":
            assert cell["graph_hash"] and cell["ops"] is not None and cell["export_s"] > 0, cell["cell_id"]
        if cell["status"] == "not-applicable":
            assert cell["missing"], cell["cell_id"]
