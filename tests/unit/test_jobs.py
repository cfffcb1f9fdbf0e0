"""The job kinds the batch engine runs (:mod:`matrix.worker.jobs`): listed explicitly, each one keeping to the protocol.

A job kind is imported by the registry and named in ``KINDS``; nothing in the worker finds one
from a string at run time (``importlib``), so that the engine's imports go one way.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Set

import pytest

from matrix.contract.case import CaseInfo
from matrix.worker import aoti_compiles, aoti_stage, cell_job, jobs, load_job, messages

from conftest import ROOT

WORKER = ROOT / "matrix" / "worker"
# A job of each kind, as the parent makes them: each must cross into an isolated process unchanged.
SAMPLES: Dict[str, Callable[[], Any]] = {
    "cell": lambda: cell_job.CellJob(
        CaseInfo(name="a/b", path="cases/a/b.py", description="d", tags=("torch.cond",), requires=("cond",)),
        "strict", "cpu", ("check", "serialize"), {"cond": True}, 1.5, "art", "cpu",
    ),
    "load": lambda: load_job.LoadJob(folder="/x/y", meta={"case": "a/b", "files": [{"name": "program.pt2"}]}),
    "aoti-load": lambda: aoti_stage.AotiLoadJob(folder="/x/y", meta={"aoti": {"file": "aoti.pt2"}}, trust=True),
    "aoti-compile": lambda: aoti_compiles.AotiCompileJob(folder="/x/y", meta={"case": "a/b"}, timeout_s=30.0),
}  # fmt: skip
# The worker modules that may use importlib, and why; none of them is the engine, the registry or a job kind.
IMPORTLIB_USERS = {
    "__main__": "the worker's commands, by name",
    "capabilities": "probes torch's APIs by their dotted names",
    "case": "loads a case file from its path",
    "environment": "finds the installed torch and its distribution",
    "exportdb": "imports the ExportDB examples bundled with torch",
    "first_use": "imports what loading a program needs, by dotted name, before forking loads",
    "native": "wraps a known native loader's module (safetensors) as it is imported, through sys.meta_path",
    "reads": "maps a compiled module file to its source (importlib.util.source_from_cache)",
    "stage": "imports the worker module a stage's declaration names (contract/stages.py)",
    "uses": "imports the worker module a product's declaration names (contract/products.py)",
    "onnx_stage": "finds whether onnx, onnxscript and onnxruntime are installed, and their versions",
}
ENGINE = {"batch", "jobs", "messages", "pristine", "isolate", "lanes", "child", "journal", "progress", "framing"}


def test_the_registry_lists_the_job_kinds() -> None:
    assert jobs.KINDS == {
        "cell": cell_job.CellJob, "load": load_job.LoadJob, "aoti-load": aoti_stage.AotiLoadJob,
        "aoti-compile": aoti_compiles.AotiCompileJob,
    }  # fmt: skip
    assert jobs.MERGES == {
        "fresh-load": cell_job.merge_fresh_load, "aoti-load": aoti_stage.merge_aoti_load,
        "aoti-compile": aoti_compiles.merge_aoti_compile,
    }  # fmt: skip
    assert set(SAMPLES) == set(jobs.KINDS)  # a new kind comes with a sample here


@pytest.mark.parametrize("name", sorted(jobs.KINDS))
def test_each_kind_keeps_to_the_protocol(name: str) -> None:
    kind = jobs.KINDS[name]
    assert kind.KIND == name
    assert dataclasses.is_dataclass(kind) and kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert "KIND" not in {field.name for field in dataclasses.fields(kind)}  # a class constant, not a field
    assert isinstance(inspect.getattr_static(kind, "from_fields"), classmethod)
    assert callable(getattr(kind, "run", None))
    job = SAMPLES[name]()
    assert isinstance(job, jobs.Job)
    crossed = json.loads(json.dumps(messages.message(job)))
    assert crossed["job"] == name
    assert jobs.KINDS[crossed["job"]].from_fields(crossed["fields"]) == job


def test_work_runs_a_message_by_its_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclasses.dataclass(frozen=True)
    class Echo:
        KIND = "echo"
        text: str

        @classmethod
        def from_fields(cls, fields: Dict[str, Any]) -> Echo:
            return cls(**fields)

        def run(self) -> Dict[str, Any]:
            return {"status": "pass", "text": self.text}

    monkeypatch.setitem(jobs.KINDS, "echo", Echo)  # type: ignore[arg-type]
    assert jobs.work(messages.message(Echo("hi"))) == {"status": "pass", "text": "hi"}


def test_a_cells_follow_up_is_a_load_job_with_a_known_merge(tmp_path: Path) -> None:
    follow = cell_job.fresh_load(str(tmp_path), discard=False)
    assert follow["merge"] in jobs.MERGES
    assert follow["message"]["job"] == load_job.LoadJob.KIND
    assert jobs.KINDS[follow["message"]["job"]].from_fields(follow["message"]["fields"]).folder == str(tmp_path)


def _importlib_uses(tree: ast.AST) -> List[int]:
    """The lines where a module imports importlib or calls ``__import__``."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "importlib" for alias in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "importlib":
            lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            lines.append(node.lineno)
    return lines


def test_nothing_in_the_worker_finds_a_job_kind_from_a_string() -> None:
    kind_modules = {kind.__module__.rsplit(".", 1)[1] for kind in jobs.KINDS.values()}
    kind_modules |= {merge.__module__.rsplit(".", 1)[1] for merge in jobs.MERGES.values()}
    assert not (ENGINE | kind_modules) & set(IMPORTLIB_USERS)
    wrong = []
    for path in sorted(WORKER.glob("*.py")):
        lines = _importlib_uses(ast.parse(path.read_text(encoding="utf-8")))
        if lines and path.stem not in IMPORTLIB_USERS:
            wrong.append("%s:%s" % (path.relative_to(ROOT), ",".join(map(str, lines))))
    assert wrong == [], "importlib outside %s: a job kind goes into jobs.KINDS" % sorted(IMPORTLIB_USERS)


def test_the_registry_names_each_kind_by_an_import() -> None:
    tree = ast.parse((WORKER / "jobs.py").read_text(encoding="utf-8"))
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported: Set[str] = {alias.asname or alias.name for node in imports for alias in node.names}
    registries = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(node.value, ast.Dict):
            registries[node.target.id] = node.value
    assert set(registries) >= {"KINDS", "MERGES"}
    for name in ("KINDS", "MERGES"):
        values = registries[name].values
        # A kind imported by name, or a module of jobs' own list of its kinds (``**load_job.KINDS``), never found.
        assert values and all(
            (isinstance(value, ast.Name) and value.id in imported)
            or (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
                and value.value.id in imported and value.attr == name)
            for value in values
        ), name  # fmt: skip
