"""What the unit tests (tests/unit) and the integration tests (tests/integration) share."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pandas as pd
import pytest

from matrix.contract import records, schema
from matrix.envs import install, pythons, releases
from matrix.envs.install import Sources
from matrix.records import store, tables, transitions

ROOT = Path(__file__).resolve().parent.parent
# Every test runs its cells: results kept by another test (or by the developer's own runs) are not
# reused, since fixture cases behave by the variables a test sets. Tests of reuse name a --cache.
os.environ["EXPORT_MATRIX_RESULT_CACHE"] = "off"
FIXTURES = ROOT / "tests" / "fixtures"  # case folders
DATA = ROOT / "tests" / "data"  # recorded records and graphs


INTEGRATION = ROOT / "tests" / "integration"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--forms-report", action="append", default=[], metavar="DIR",
        help="a built report whose Markdown pages and site pages must say the same (tests/unit/test_forms_report.py)",
    )  # fmt: skip


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadgroup`` (pyproject.toml's addopts), the tests of a module marked ``xdist_group`` go to one
    xdist worker, which builds the module's fixture once; every other test goes wherever a worker is free.

    xdist's own loadgroup finds the mark through a node id it rewrites, which pytest 9 no longer reads back: its
    groups came apart, and each worker that got a test of such a module built the module's fixture again. The
    group here is the module, read from the module's file: the mark is in its source.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    grouped: Dict[str, bool] = {}

    def in_a_group(module: str) -> bool:
        if module not in grouped:
            path = config.rootpath / module
            grouped[module] = path.suffix == ".py" and "pytest.mark.xdist_group(" in path.read_text(encoding="utf-8")
        return grouped[module]

    class ModuleGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return module if in_a_group(module) else nodeid

    return ModuleGroups(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    """Mark every test under tests/integration `integration`, so that `-m "not integration"` leaves them out."""
    for item in items:
        if item.path.is_relative_to(INTEGRATION):
            item.add_marker(pytest.mark.integration)


# --- hand-written records -------------------------------------------------------------------------


def make_cell(release: str, case: str, status: str = "pass", mode: str = "strict", run: int = 0, **extra: Any):
    """A hand-written cell record, as the worker writes it; ``extra`` sets or overrides any key."""
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


def make_load(saved: str, loaded: str, case: str = "add", status: str = "pass", mode: str = "strict", **extra: Any):
    """A hand-written load record, as ``export-matrix load`` writes it: the program ``saved`` kept, loaded on
    ``loaded`` (CPU builds, Python 3.11); ``extra`` sets or overrides any key."""
    record: Dict[str, Any] = {key: None for key in schema.LOAD_KEYS}
    record.update(
        schema_version=schema.SCHEMA_VERSION, kind="load", saved_torch_version=saved, saved_variant="cpu",
        saved_python="3.11", torch_version=loaded, variant="cpu", python="3.11", case=case, mode=mode,
        status=status, finished_at="2025-01-01T00:00:00+00:00",
    )  # fmt: skip
    record.update(extra)
    return record


def environment_record(release: str, started_at: str = "2025-01-01T00:00:00+00:00") -> Dict[str, Any]:
    """A hand-written environment record, as the worker writes one at the start of a run."""
    return {
        "kind": "environment",
        "schema_version": schema.SCHEMA_VERSION,
        "torch_version": release,
        "variant": "cpu",
        "python": "3.11",
        "started_at": started_at,
        "capabilities": {"cond": True},
    }


def cell_table(rows: List[Dict[str, Any]]) -> pd.DataFrame:
    """The cell table of hand-written records, read as a report reads them."""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "cells.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return tables.cells(store.load([folder]).cells)


def environment_of(
    release: str, cuda: Optional[str] = None, strict: Any = None, keyword: bool = True
) -> Dict[str, Any]:
    """An environment record of a CPU build: its CUDA version, export's strict default, whether it takes strict=."""
    return {
        "kind": "environment", "schema_version": schema.SCHEMA_VERSION, "torch_version": release, "variant": "cpu",
        "python": "3.11", "cuda_version": cuda, "strict_default": strict, "started_at": "2025-03-01T10:00:00+00:00",
        "capabilities": {"export.strict": keyword},
    }  # fmt: skip


def write_records(path: Path, rows: List[Dict[str, Any]], tail: str = "") -> Path:
    """A record file of ``rows``, one JSON line each, then ``tail`` (a line cut short, say)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + tail, encoding="utf-8")
    return path


# --- a history of three releases, as reports show them --------------------------------------------

_HOSTILE = "left | right `tick` <script>alert(1)</script> [x](http://evil) see http://evil.example.com\nsecond line"
_HOSTILE_TRACEBACK = "Traceback:\n```\n</details><script>alert(2)</script>\n````\nRuntimeError: boom"


def report_cell(release: str, case: str, status: str = "pass", mode: str = "strict", **extra: Any) -> Dict[str, Any]:
    """A cell with what a report shows of it: its source, a tag and, if it passes, a graph."""
    defaults: Dict[str, Any] = {"source": "cases", "tags": ["torch.cond"]}
    if status == "pass":
        defaults.update(
            graph_hash="1" * 16, fingerprint_version=1, ops=["aten.add.Tensor"], graph_text="add(x, 1)\n", export_s=0.1
        )
    return make_cell(release, case, status, mode, **{**defaults, **extra})


def report_environment(release: str, started_at: str) -> Dict[str, Any]:
    """An environment record with the machine and device a report's header names."""
    return {
        "kind": "environment",
        "schema_version": schema.SCHEMA_VERSION,
        "torch_version": release,
        "variant": "cpu",
        "python": "3.11",
        "machine": "x86_64",
        "device": "cpu",
        "started_at": started_at,
    }


def write_by_release(folder: Path, rows: List[Dict[str, Any]]) -> Path:
    """A record folder with one file per release, named as the worker names them."""
    folder.mkdir(parents=True, exist_ok=True)
    by_release: Dict[str, List[Dict[str, Any]]] = {}
    for row in rows:
        by_release.setdefault(row["torch_version"], []).append(row)
    for release, part in by_release.items():
        (folder / records.env_file_name(release, "cpu", "3.11")).write_text(
            "".join(json.dumps(r) + "\n" for r in part), encoding="utf-8"
        )
    return folder


def history() -> List[Dict[str, Any]]:
    """Three releases with a regression, a fix, a graph change and a hostile error."""
    return [
        report_environment("2.4.1", "2025-03-01T10:00:00+00:00"),
        report_cell("2.4.1", "steady"),
        report_cell("2.4.1", "steady", mode="non-strict"),
        report_cell("2.4.1", "breaks"),
        report_cell("2.4.1", "heals", "fail", error_type="torch._dynamo.exc.Unsupported", error_message="graph break"),
        report_cell("2.4.1", "nested/case", "not-applicable", missing=["cond"]),
        report_environment("2.5.0", "2025-03-02T10:00:00+00:00"),
        report_cell("2.5.0", "steady", graph_hash="2" * 16, graph_text="add(x, 1)\nmul(x, 2)\n"),
        report_cell("2.5.0", "steady", mode="non-strict"),
        report_cell(
            "2.5.0",
            "breaks",
            "fail",
            error_type="RuntimeError",
            error_message=_HOSTILE,
            error_traceback=_HOSTILE_TRACEBACK,
        ),
        report_cell("2.5.0", "heals"),
        report_cell("2.5.0", "nested/case", expected="supported"),
        report_environment("2.6.0", "2025-03-02T12:00:00+00:00"),
        report_cell("2.6.0", "steady", graph_hash="2" * 16, graph_text="add(x, 1)\nmul(x, 2)\n"),
        report_cell("2.6.0", "breaks", "fail", error_type="RuntimeError", error_message=_HOSTILE),
        report_cell("2.6.0", "heals"),
    ]


# --- report tables for the CI verdict -------------------------------------------------------------

Statuses = Dict[Tuple[str, str, str], str]  # (release, case, mode) -> status


def write_report(folder: Path, statuses: Statuses) -> Path:
    """A report folder's tables (cells.parquet, transitions.parquet) made from hand-written cells."""
    shard = folder / "records.jsonl"
    folder.mkdir(parents=True)
    with records.Writer(str(shard)) as writer:
        for (release, case, mode), given in sorted(statuses.items()):
            # "pass-unsaved": exported and checked, but the saved program does not load.
            status, saved = ("pass", "error") if given == "pass-unsaved" else (given, "ok")
            error = None if status == "pass" else "torch._dynamo.exc.Unsupported"
            writer.write(
                records.empty_cell(
                    torch_version=release,
                    variant="cpu",
                    python="3.11",
                    case=case,
                    mode=mode,
                    run=0,
                    cell_id=schema.cell_id(release, mode, case),
                    status=status,
                    error_type=error,
                    error_message=None if error is None else "cannot trace %s" % case,
                    serialize_status=saved if status == "pass" else None,
                    finished_at="2025-01-01T00:00:00+00:00",
                )  # fmt: skip
            )
    table = tables.cells(store.load([str(shard)]).cells)
    tables.parquet_frame(table).to_parquet(folder / "cells.parquet")
    transitions.find(table).to_parquet(folder / "transitions.parquet")
    shard.unlink()
    return folder


def grid(rows: Sequence[Tuple[str, str, str, str]]) -> Statuses:
    """Statuses from (release, case, mode, status) rows."""
    return {(release, case, mode): status for release, case, mode, status in rows}


BASELINE = grid(
    [
        ("2.4.1", "cond_predicate", "strict", "pass"),
        ("2.5.1", "cond_predicate", "strict", "pass"),
        ("2.4.1", "list_unpack", "strict", "pass"),
        ("2.5.1", "list_unpack", "strict", "fail"),  # a known regression: not new
    ]
)


# --- the real runner, in a child interpreter ------------------------------------------------------


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
    """The cell records of a record folder, file by file."""
    cells = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                if record["kind"] == "cell":
                    cells.append(record)
    return cells


def by_cell(cells: List[Dict[str, Any]]) -> Dict[tuple, Dict[str, Any]]:
    """Cells by (case, mode)."""
    return {(c["case"], c["mode"]): c for c in cells}


@pytest.fixture(scope="session")
def basic_run(tmp_path_factory: pytest.TempPathFactory) -> List[Dict[str, Any]]:
    """The basic fixture cases, run once for the whole session."""
    out = tmp_path_factory.mktemp("basic")
    run_matrix("run", "--cases", str(FIXTURES / "basic"), "--out", str(out), "--progress", "none")
    return read_cells(out)


# --- fake wheels and installers: environments installed offline -----------------------------------


def write(path: Path, text: str) -> Path:
    """A text file, with its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def make_wheel(folder: Path, name: str, version: str, requires: Sequence[str] = ()) -> Path:
    """A minimal pure-Python wheel: enough for an installer to resolve and install it (and ``requires``)."""
    dist = "%s-%s.dist-info" % (name, version)
    needs = "".join("Requires-Dist: %s\n" % r for r in requires)
    files = {
        "%s/__init__.py" % name: "VERSION = %r\n" % version,
        dist + "/METADATA": "Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s" % (name, version, needs),
        dist + "/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[dist + "/RECORD"] = "".join("%s,,\n" % f for f in [*files, dist + "/RECORD"])
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ("%s-%s-py3-none-any.whl" % (name, version))
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    return path


CURRENT = pythons.current_python()
FAKE_VARIANT = releases.Variant("cpu", "file:///nonexistent", "EXPORT_MATRIX_TEST_INDEX", local_tag="cpu")
FAKE_RELEASE = releases.Release("9.9.9", "9.9", (CURRENT,), numpy_pin="fakenumpy")


class FailingInstaller:
    """An installer whose downloads fail, as they do without network."""

    name = "fake"

    def __init__(self) -> None:
        self.calls: List[str] = []

    def create(self, path: Path, interpreter: str) -> None:
        self.calls.append("create")
        path.mkdir(parents=True)

    def install(
        self, python: Path, requirements: Sequence[str], sources: Sources, constraints: Sequence[str] = ()
    ) -> str:
        self.calls.append("install")
        raise install.classify("error: Failed to fetch: https://example/torch/\n  cause: dns error", "install")


def installers() -> List[install.Installer]:
    """The real installers here: uv first where it is found, then pip."""
    found: List[install.Installer] = [install.PipInstaller()]
    uv = install.find_uv()
    if uv:
        found.insert(0, install.UvInstaller(uv))
    return found


@pytest.fixture
def local_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pip configuration offering fake torch and numpy wheels from a folder, and no index at all."""
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "torch", "9.9.9+cpu")
    make_wheel(wheels, "torch", "9.9.9")
    make_wheel(wheels, "fakenumpy", "1.0")
    conf = write(tmp_path / "pip.conf", "[global]\nno-index = true\nfind-links = %s\n" % wheels)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    for variable in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_NO_INDEX"):
        monkeypatch.delenv(variable, raising=False)
    return wheels


def fake_package(root: Path, runner: str) -> Path:
    """A package laid out like ``matrix``: the worker's modules, a host module, and a byte-code cache."""
    package = root / "matrix"
    write(package / "__init__.py", "# the package\n")
    write(package / "contract" / "schema.py", "SCHEMA = 1\n")
    write(package / "worker" / "__main__.py", "MAIN = 1\n")
    write(package / "worker" / "runner.py", runner)
    write(package / "worker" / "__pycache__" / "runner.cpython-311.pyc", "")
    write(package / "report" / "build.py", "import pandas\n")
    return package


# --- an ExportDB example of the old layout --------------------------------------------------------


class _Level:
    def __init__(self, name: str) -> None:
        self.name = name


def old_style_example() -> SimpleNamespace:
    """An example shaped as releases up to 2.4 registered them: a function with ExportArgs inputs."""
    import torch

    def scaled_sum(x, y, *, scale):
        """Adds two tensors and scales the sum."""
        return (x + y) * scale

    inputs = SimpleNamespace(args=(torch.ones(2, 3), torch.ones(2, 3)), kwargs={"scale": torch.tensor(2.0)})
    return SimpleNamespace(
        model=scaled_sum,
        description="    Adds two tensors\n    and scales the sum.\n",
        tags={"python.data-structure"},
        support_level=_Level("NOT_SUPPORTED_YET"),
        example_inputs=inputs,
        extra_inputs=(torch.zeros(4, 3), torch.zeros(4, 3)),
        constraints=[],
    )


# --- saved programs loaded in this process --------------------------------------------------------

# The key tests/data/saved_programs/make_linear.py signed the committed programs with.
SAVED_PROGRAMS_KEY = "saved-programs-fixture-key-for-tests-only"


@pytest.fixture
def saved_programs_key(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Load's signing key set to the test programs' own; torch's warning before its archive fallback left out."""
    from matrix.worker import signing

    monkeypatch.setenv(signing.KEY_VARIABLE, SAVED_PROGRAMS_KEY)
    caplog.set_level(logging.ERROR, logger="torch.export")


def load_in_process(folder: Path) -> Dict[str, Any]:
    """A saved program's load record, loaded in this process as a load job would."""
    from matrix.contract import layout
    from matrix.worker import load_job

    meta, problem = layout.read_meta(str(folder))
    assert problem is None and meta is not None, problem
    return load_job.LoadJob(folder=str(folder), meta=meta).run()


def schema_here() -> str:
    """The installed torch's serializer schema, as a load record's message writes it."""
    from matrix.worker import artifacts, forensics

    return forensics.schema_tuple(artifacts.serializer_version())


@pytest.fixture(autouse=True)
def _build_date(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every report a test builds, here or in a process it starts, carries one build date (report.stamp),
    whatever the day: two builds a test compares byte for byte never straddle midnight."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
