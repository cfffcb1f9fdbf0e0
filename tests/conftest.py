from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def make_cell(release: str, case: str, status: str = "pass", mode: str = "strict", run: int = 0, **extra: Any):
    """A hand-written cell record, as the worker writes it; ``extra`` sets or overrides any key."""
    from matrix import schema
    from matrix.worker import records

    values: Dict[str, Any] = dict(
        torch_version=release,
        variant="cpu",
        python="3.11",
        case=case,
        mode=mode,
        run=run,
        cell_id=schema.cell_id(release, mode, case),
        status=status,
        finished_at="2025-01-01T00:00:00+00:00",
    )
    values.update(extra)
    return records.empty_cell(**values)


def run_matrix(*args: str, cwd: Path = ROOT, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``python -m matrix ...`` in a child interpreter, as a user would."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "matrix", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            "export-matrix %s failed (%d):\n%s" % (" ".join(args), proc.returncode, proc.stderr[-4000:])
        )
    return proc


def read_cells(folder: Path) -> List[Dict[str, Any]]:
    cells = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                if record["kind"] == "cell":
                    cells.append(record)
    return cells


def by_cell(cells: List[Dict[str, Any]]) -> Dict[tuple, Dict[str, Any]]:
    return {(c["case"], c["mode"]): c for c in cells}


@pytest.fixture(scope="session")
def basic_run(tmp_path_factory: pytest.TempPathFactory) -> List[Dict[str, Any]]:
    """The basic fixture cases, run once for the whole session."""
    out = tmp_path_factory.mktemp("basic")
    run_matrix("run", "--cases", str(FIXTURES / "basic"), "--out", str(out), "--progress", "none")
    return read_cells(out)


# Modules whose every test runs the real runner, the whole case set, or installs environments.
INTEGRATION_MODULES = {"test_case_set", "test_runner", "test_isolate", "test_ci_simulation", "test_benchmarks"}
# Fixtures that run the real runner or installer: a test using one is an integration test.
INTEGRATION_FIXTURES = {"basic_run", "local_wheels"}


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """Mark the slow tests `integration`: `nox -s unit` leaves them out, `nox -s tests` runs everything."""
    for item in items:
        module = item.module.__name__.rsplit(".", 1)[-1] if getattr(item, "module", None) else ""
        fixtures = set(getattr(item, "fixturenames", ()))
        if module in INTEGRATION_MODULES or fixtures & INTEGRATION_FIXTURES:
            item.add_marker(pytest.mark.integration)
