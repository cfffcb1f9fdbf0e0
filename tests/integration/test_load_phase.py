"""Artifacts kept by ``run --artifacts`` and the ``load`` command, with the real local torch, as a user runs them."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from matrix.contract import layout, schema
from matrix.worker import artifacts, loader

from conftest import FIXTURES, ROOT, read_cells, run_matrix

pytestmark = pytest.mark.xdist_group("test_load_phase")  # one worker, so that its module fixture is built once

PASSING = {  # the basic fixtures' cells that pass on the local torch, and so keep an artifact
    ("add_one", "strict"), ("add_one", "non-strict"), ("dynamic_batch", "strict"), ("dynamic_batch", "non-strict"),
    ("needs_cond", "strict"), ("needs_cond", "non-strict"), ("graph_break", "non-strict"),
}  # fmt: skip


def read_loads(folder: Path) -> List[Dict[str, Any]]:
    found = []
    for path in sorted(folder.glob("load_*.jsonl")):
        found.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return found


def by_artifact(found: List[Dict[str, Any]]) -> Dict[Tuple[str, str], Dict[str, Any]]:
    return {(r["case"], r["mode"]): r for r in found}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Path, List[Dict[str, Any]]]:
    """The basic fixture cases run once with --artifacts: the artifact folder and the cell records."""
    base = tmp_path_factory.mktemp("artifacts")
    run_matrix("run", "--cases", str(FIXTURES / "basic"), "--artifacts", str(base / "art"),
               "--out", str(base / "records"), "--progress", "none")  # fmt: skip
    return base / "art", read_cells(base / "records")


def copy_of(saved: Tuple[Path, List[Dict[str, Any]]], tmp_path: Path) -> Tuple[Path, Path]:
    """A copy of the artifact folder to damage, and its one environment folder."""
    art = tmp_path / "art"
    shutil.copytree(saved[0], art)
    (env,) = [p for p in art.iterdir()]
    return art, env


def test_save_writes_a_complete_folder_atomically_and_replaces_an_earlier_one(tmp_path: Path) -> None:
    import torch

    class Double(torch.nn.Module):
        def forward(self, x: Any, scale: float = 1.0) -> Any:
            return {"y": x * 2 * scale, "n": x.shape[0]}

    model, x = Double(), torch.arange(4.0)
    program = torch.export.export(model, (x,), {"scale": 3.0})
    target = layout.Target(str(tmp_path), "cpu")
    folder = Path(artifacts.save(target, "odd/Case", "strict", program, [((x,), {"scale": 3.0})], [model(x, 3.0)]))
    env = layout.env_folder(str(torch.__version__), "cpu", artifacts.python_version())
    assert folder == tmp_path / env / "strict" / layout.case_folder("odd/Case")
    assert sorted(p.name for p in folder.iterdir()) == sorted(layout.FILES + (layout.META, "meta.sig"))
    meta, problem = layout.read_meta(str(folder))
    assert problem is None and meta is not None
    assert (meta["case"], meta["mode"], meta["variant"], meta["calls"]) == ("odd/Case", "strict", "cpu", 1)
    assert meta["serializer_version"] == artifacts.serializer_version()
    for entry in meta["files"]:
        data = (folder / entry["name"]).read_bytes()
        assert entry["size"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert layout.verify(str(folder), meta) is None
    # Outputs are flattened: the dict's leaves, the int included.
    assert artifacts.read_data(str(folder), layout.OUTPUTS)[0][1] == 4
    # Saved again (a --force re-run): replaced whole, and no temporary folder is left behind.
    artifacts.save(target, "odd/Case", "strict", program, [((x,), {"scale": 3.0})], [model(x, 3.0)])
    assert [p.name for p in (tmp_path / env / "strict").iterdir()] == [folder.name]
    # A failure leaves nothing under the final name.
    with pytest.raises(TypeError, match="input 0 leaf 0 is a object"):
        artifacts.save(target, "other", "strict", program, [((object(),), {"scale": 3.0})], [model(x)])
    with pytest.raises(ValueError, match="input 0 does not flatten to the program's in_spec"):
        artifacts.save(target, "other", "strict", program, [((x,), {})], [model(x)])
    assert not (tmp_path / env / "strict" / "other").exists()
    assert [p.name for p in (tmp_path / env / "strict").iterdir()] == [folder.name]


def test_load_refuses_folders_without_artifacts(tmp_path: Path) -> None:
    done = run_matrix("load", str(tmp_path / "missing"), "--out", str(tmp_path / "out"), check=False)
    assert done.returncode == 2 and "missing: no such folder" in done.stderr
    (tmp_path / "empty").mkdir()
    done = run_matrix("load", str(tmp_path / "empty"), "--out", str(tmp_path / "out"), check=False)
    assert done.returncode == 2 and "empty: no artifacts here" in done.stderr


# --- run --artifacts, then load, with the real torch -----------------------------------------


def test_run_keeps_an_artifact_per_passing_cell(saved: Tuple[Path, List[Dict[str, Any]]]) -> None:
    art, cells = saved
    assert {(c["case"], c["mode"]) for c in cells if c["status"] == "pass"} == PASSING
    (env,) = list(art.iterdir())
    cell = cells[0]
    assert env.name == layout.env_folder(cell["torch_version"], cell["variant"], cell["python"])
    kept = {(case.name, mode.name) for mode in env.iterdir() for case in mode.iterdir()}
    assert kept == PASSING  # and nothing else: no temporary folder left behind
    meta = json.loads((env / "strict" / "dynamic_batch" / "meta.json").read_text())
    assert (meta["torch_version"], meta["variant"], meta["python"]) == (cell["torch_version"], "cpu", cell["python"])
    assert meta["calls"] == 2  # the example input and the extra one the check ran
    assert meta["check_status"] == "ok" and meta["source"] == "cases"


def test_artifacts_saved_here_load_and_match_here(saved: Tuple[Path, List[Dict[str, Any]]], tmp_path: Path) -> None:
    art, cells = saved
    out = tmp_path / "loads"
    run_matrix("load", str(art), "--out", str(out), "--progress", "none")
    found = by_artifact(read_loads(out))
    assert set(found) == PASSING
    torch_version = cells[0]["torch_version"]
    for record in found.values():
        assert set(record) == set(schema.LOAD_KEYS)
        assert record["kind"] == "load" and record["status"] == "pass", record
        assert record["saved_torch_version"] == record["torch_version"] == torch_version
        assert record["saved_serializer_version"] == record["serializer_version"] is not None
        assert record["load_s"] > 0 and record["run_s"] > 0 and record["finished_at"]
    assert found["dynamic_batch", "strict"]["checked_inputs"] == 2
    assert [p.name for p in out.glob("*.jsonl")] == [loader.file_name(torch_version, "cpu", cells[0]["python"])]

    # Resumed: every artifact is recorded, so nothing loads again, unless --force.
    again = run_matrix("load", str(art), "--out", str(out), "--progress", "none")
    assert "7 already recorded, 0 to load" in again.stderr and len(read_loads(out)) == 7
    run_matrix("load", str(art), "--out", str(out), "--progress", "none", "--force", "--select", "add_one")
    assert len(read_loads(out)) == 9


def test_programs_are_loaded_on_the_device_they_were_saved_on(
    saved: Tuple[Path, List[Dict[str, Any]]], tmp_path: Path
) -> None:
    import torch

    art, env = copy_of(saved, tmp_path)

    class AddOne(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return x + 1

    # What `run --device cuda --artifacts` keeps, made here with CPU tensors: a folder beside the CPU one.
    x = torch.ones(3)
    target = layout.Target(str(art), "cpu", device="cuda")
    kept = Path(artifacts.save(target, "add_one", "strict", torch.export.export(AddOne(), (x,)), [((x,), {})], [x + 1]))
    assert kept == env / "strict" / "add_one@cuda" and (env / "strict" / "add_one" / layout.META).is_file()
    assert json.loads((kept / layout.META).read_text())["device"] == "cuda"
    out = tmp_path / "loads"
    done = run_matrix("load", str(art), "--out", str(out), "--progress", "none")
    assert "left out the programs saved on another device than cpu (1 on cuda): --device cuda loads them" in done.stderr
    found = read_loads(out)
    assert set(by_artifact(found)) == PASSING and len(found) == len(PASSING)
    assert {(r["device"], r["gpu"], r["status"]) for r in found} == {("cpu", None, "pass")}
    # Where this torch has no CUDA (or no GPU is visible), --device cuda is refused in one line, nothing recorded.
    refused = run_matrix("load", str(art), "--out", str(out), "--device", "cuda", check=False)
    errors = [line for line in refused.stderr.splitlines() if "error" in line]
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert len(errors) == 1 and "--device cuda" in errors[0] and "CUDA" in errors[0], refused.stderr
    assert len(read_loads(out)) == len(PASSING)
    # A folder of a GPU's programs alone has nothing to load on the CPU, and says so.
    only = tmp_path / "gpu-only"
    shutil.copytree(kept, only / env.name / "strict" / kept.name)
    refused = run_matrix("load", str(only), "--out", str(out), check=False)
    assert refused.returncode == 2 and "was saved on cpu (1 on cuda); --device cuda loads them" in refused.stderr


def test_a_corrupted_program_is_a_load_error_and_the_others_still_pass(
    saved: Tuple[Path, List[Dict[str, Any]]], tmp_path: Path
) -> None:
    art, env = copy_of(saved, tmp_path)
    # Garbage in place of the program, listed in meta.json as if saved so: torch.export.load meets it.
    folder = env / "strict" / "add_one"
    (folder / "program.pt2").write_bytes(b"PK\x03\x04 this is not a program")
    meta = json.loads((folder / "meta.json").read_text())
    for entry in meta["files"]:
        if entry["name"] == "program.pt2":
            data = (folder / "program.pt2").read_bytes()
            entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    (folder / "meta.json").write_text(json.dumps(meta))
    out = tmp_path / "loads"
    # --trust: meta.json was rewritten without the signing key, and this test is about what torch.export.load meets.
    run_matrix("load", str(art), "--out", str(out), "--progress", "none", "--trust")
    found = by_artifact(read_loads(out))
    broken = found.pop(("add_one", "strict"))
    assert broken["status"] == "load-error" and broken["error_type"] and broken["load_s"] is not None
    assert "incomplete" not in broken["error_message"]
    assert {r["status"] for r in found.values()} == {"pass"} and len(found) == 6


def test_a_truncated_artifact_folder_is_reported_as_incomplete(
    saved: Tuple[Path, List[Dict[str, Any]]], tmp_path: Path
) -> None:
    art, env = copy_of(saved, tmp_path)
    (env / "strict" / "add_one" / "meta.json").unlink()
    outputs = env / "non-strict" / "needs_cond" / "outputs.pt"
    outputs.write_bytes(outputs.read_bytes()[:100])
    program = env / "strict" / "needs_cond" / "program.pt2"
    program.write_bytes(program.read_bytes()[:-1] + b"!")  # same size, other bytes
    out = tmp_path / "loads"
    run_matrix("load", str(art), "--out", str(out), "--progress", "none")
    found = by_artifact(read_loads(out))
    assert len(found) == 7
    messages = {key: found[key]["error_message"] for key in found if found[key]["status"] != "pass"}
    assert messages == {
        ("add_one", "strict"): "incomplete artifact: no meta.json (the folder was cut short or damaged)",
        ("needs_cond", "non-strict"): "incomplete artifact: outputs.pt has 100 bytes, meta.json says %d"
        % json.loads((env / "non-strict" / "needs_cond" / "meta.json").read_text())["files"][2]["size"],
        ("needs_cond", "strict"): "incomplete artifact: program.pt2's sha256 differs from meta.json's",
    }
    assert {found[key]["status"] for key in messages} == {"load-error"}


def test_the_worker_entry_loads_too(saved: Tuple[Path, List[Dict[str, Any]]], tmp_path: Path) -> None:
    import subprocess

    from conftest import ROOT

    done = subprocess.run(
        [sys.executable, "-m", "matrix.worker", "load", str(saved[0]), "--out", str(tmp_path), "--progress", "none",
         "--select", "*/strict/add_one"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert [(r["case"], r["mode"], r["status"]) for r in read_loads(tmp_path)] == [("add_one", "strict", "pass")]


def test_an_artifact_that_killed_the_load_command_is_a_crash_not_loaded_again(
    saved: Tuple[Path, List[Dict[str, Any]]], tmp_path: Path
) -> None:
    art, cells = saved
    out = tmp_path / "loads"
    out.mkdir()
    path = out / loader.file_name(cells[0]["torch_version"], "cpu", cells[0]["python"])
    # What the journal holds when the command died while this artifact loaded: started, never recorded.
    started = loader.journal_key((cells[0]["torch_version"], "cpu", cells[0]["python"], "add_one", "strict"))
    entry = {"case": started[0], "mode": started[1], "run": started[2], "run_id": "dead", "started_at": "x"}
    Path(str(path) + ".journal").write_text(json.dumps(entry) + "\n")
    run_matrix("load", str(art), "--out", str(out), "--progress", "none")
    found = by_artifact(read_loads(out))
    assert found["add_one", "strict"]["status"] == "crash"
    assert found["add_one", "strict"]["error_type"] == "matrix.worker.loader.LoaderDied"
    assert {r["status"] for key, r in found.items() if key != ("add_one", "strict")} == {"pass"}


def test_pytree_inputs_are_kept_and_load_where_nothing_exported(tmp_path: Path) -> None:
    """A dataclass, a custom pytree class, a number and None as inputs: saved as leaves, rebuilt by the load."""
    # A path relative to the checkout, as a user gives one: the loading process imports the case
    # module from it, which registers the types before the program is read.
    cases = (FIXTURES / "pytree_inputs").relative_to(ROOT)
    run_matrix("run", "--cases", str(cases), "--stages", "check,serialize", "--artifacts", str(tmp_path / "art"),
               "--out", str(tmp_path / "records"), "--progress", "none")  # fmt: skip
    cells = read_cells(tmp_path / "records")
    assert sorted((c["mode"], c["status"], c["artifact"], c["artifact_error"]) for c in cells) == [
        ("non-strict", "pass", "saved", None), ("strict", "pass", "saved", None)
    ]  # fmt: skip
    run_matrix("load", str(tmp_path / "art"), "--out", str(tmp_path / "loads"), "--progress", "none")
    loads = read_loads(tmp_path / "loads")
    assert sorted((r["mode"], r["status"], r["checked_inputs"], r["case_module"]) for r in loads) == [
        ("non-strict", "pass", 1, "imported"), ("strict", "pass", 1, "imported")
    ]  # fmt: skip
