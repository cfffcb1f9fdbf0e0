"""Artifacts for ``load``: the helpers of :mod:`matrix.worker.artifacts` and the load options, in process."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from matrix.contract import layout, schema
from matrix.contract.errors import UserError
from matrix.contract.options import from_namespace
from matrix.worker import artifacts, load_job, loader, runner

# --- the artifacts module -------------------------------------------------------------------


def test_case_folders_are_plain_where_they_can_be_and_distinct() -> None:
    assert layout.case_folder("exportdb/cond_branch") == "exportdb__cond_branch"
    assert layout.case_folder("add-one.v2") == "add-one.v2"
    odd = ["Upper", "a b", "../up", "a__b", "a/__b", "x" * 150, "$\\macro$", "a\0b", "a/b/"]
    names = {layout.case_folder(case) for case in odd + ["upper", "a_b", "a/b"]}
    assert len(names) == len(odd) + 3
    for name in names:
        assert "/" not in name and "\0" not in name and name not in ("", ".", "..") and not name.startswith(".")
        assert len(name) <= 100


def test_a_program_saved_off_the_cpu_has_a_folder_of_its_own_and_a_key_of_its_own(tmp_path: Path) -> None:
    assert layout.artifact_name("tutorial/add_one") == "tutorial__add_one"
    assert layout.artifact_name("tutorial/add_one", device="cuda") == "tutorial__add_one@cuda"
    with_set = layout.artifact_name("a", "packaging==23.2", "cuda")
    assert with_set.startswith("a_deps-") and with_set.endswith("@cuda")
    # No case folder has an "@" otherwise: no case's folder on the CPU is another's on a GPU.
    assert "@" not in layout.case_folder("odd@case/a b")
    # A folder whose meta.json cannot be read still says its device, from its name.
    env = tmp_path / layout.env_folder("2.11.0", "cpu", "3.11") / "strict"
    for name in ("add_one", "add_one@cuda"):
        (env / name).mkdir(parents=True)
    found = {a.folder.rsplit("/", 1)[1]: a for a in layout.discover((str(tmp_path),))}
    assert {name: a.device for name, a in found.items()} == {"add_one": "cpu", "add_one@cuda": "cuda"}
    # A GPU's program kept before devices had folders of their own: its meta.json says where it was saved.
    older = tmp_path / "older" / layout.env_folder("2.11.0", "cpu", "3.11") / "strict" / "add_one"
    older.mkdir(parents=True)
    meta = dict(case="add_one", mode="strict", torch_version="2.11.0", variant="cpu", python="3.11", device="cuda",
                format_version=layout.FORMAT_VERSION, files=[])  # fmt: skip
    (older / layout.META).write_text(json.dumps(meta), encoding="utf-8")
    (kept,) = layout.discover((str(tmp_path / "older"),))
    assert (kept.problem, kept.device) == (None, "cuda")
    # Resuming tells the two loads apart; a CPU load's key is what it was before devices.
    cpu, cuda = (loader.journal_key(found["add_one"].key, "", device=device) for device in ("cpu", "cuda"))
    assert cpu == loader.journal_key(found["add_one"].key) and cpu != cuda
    records = tmp_path / "load.jsonl"
    record = dict(schema_version=schema.SCHEMA_VERSION, kind="load", status="pass", saved_torch_version="2.11.0",
                  saved_variant="cpu", saved_python="3.11", case="add_one", mode="strict", device="cuda")  # fmt: skip
    records.write_text(json.dumps(record) + "\n")
    assert loader.LoadBatch([], "2.12.0", "cpu", "3.11").done(str(records))[0] == {cuda}


def test_load_takes_the_programs_of_its_device_and_says_how_many_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = tmp_path / layout.env_folder("2.11.0", "cpu", "3.11") / "strict"
    for name in ("add_one", "add_one@cuda", "double@cuda"):
        (env / name).mkdir(parents=True)
    found = layout.discover((str(tmp_path),))
    assert [a.case for a in loader.on_device(found, "cpu", [str(tmp_path)])] == ["add_one"]
    assert "(2 on cuda): --device cuda loads them" in capsys.readouterr().err
    assert [a.case for a in loader.on_device(found, "cuda", [str(tmp_path)])] == ["add_one@cuda", "double@cuda"]
    with pytest.raises(UserError, match=r"--device cpu: no program selected under .* was saved on cpu \(2 on cuda\)"):
        loader.on_device([a for a in found if a.device == "cuda"], "cpu", [str(tmp_path)])


def test_a_load_on_a_gpu_names_it_and_its_result_never_stands_for_another_gpu(tmp_path: Path) -> None:
    folder = tmp_path / layout.env_folder("2.11.0", "cpu", "3.11") / "strict" / "add_one@cuda"
    folder.mkdir(parents=True)
    meta = dict(case="add_one", mode="strict", torch_version="2.11.0", variant="cpu", python="3.11", device="cuda",
                format_version=layout.FORMAT_VERSION, files=[])  # fmt: skip
    (folder / layout.META).write_text(json.dumps(meta), encoding="utf-8")
    (artifact,) = layout.discover((str(tmp_path),))
    assert artifact.device == "cuda" and artifact.problem is None
    loads = loader.LoadBatch([artifact], "2.12.0", "cpu", "3.11", trust=True, device="cuda")
    loads.env.update(run_id="r", serializer_version=None)  # what set_up adds, which needs a GPU here
    keys = {}
    for name, driver in (("NVIDIA H200", "580.1"), ("NVIDIA H200", "590.2"), ("NVIDIA H100", "580.1")):
        loads.gpu = {"gpu_name": name, "gpu_capability": "9.0", "gpu_driver": driver}
        (item,) = loads.items(loads.wanted())
        assert (item.record["device"], item.record["gpu"]) == ("cuda", "%s, compute 9.0, driver %s" % (name, driver))
        keys[name, driver] = loads.cache_key(item)
    assert None not in keys.values() and len(set(keys.values())) == 3  # another model or driver: another key
    # A batch on the CPU keys the same files without a device or GPU: never one of those keys.
    cpu = loader.LoadBatch([artifact], "2.12.0", "cpu", "3.11", trust=True)
    cpu.env.update(run_id="r", serializer_version=None)
    assert cpu.cache_key(cpu.items(cpu.wanted())[0]) not in keys.values()


def test_environment_folders_round_trip() -> None:
    name = layout.env_folder("2.10.0.dev20250101+cu126", "cu126_x", "3.12")
    assert name == "2.10.0.dev20250101+cu126_cu126_x_py3.12"
    assert layout.parse_env_folder(name) == ("2.10.0.dev20250101+cu126", "cu126_x", "3.12")
    for other in ("strict", ".tmp-2.5.1_pypi_py3.11", "2.5.1_pypi", "2.5.1_pypi_py3"):
        assert layout.parse_env_folder(other) is None


def test_only_plain_data_can_be_kept() -> None:
    import torch

    value = {"x": (torch.ones(2), [1, 2.5, None, True, "s"])}
    assert artifacts.plain(value) is not value and artifacts.plain(value)["x"][1] == [1, 2.5, None, True, "s"]
    with pytest.raises(TypeError, match=r"input\['x'\]\[0\] is a object"):
        artifacts.plain({"x": [object()]}, "input")
    with pytest.raises(TypeError, match="keys that are not text"):
        artifacts.plain({1: torch.ones(1)})
    with pytest.raises(TypeError, match="only plain tensors"):
        artifacts.plain(torch.ones(2).to_sparse())


def test_read_meta_and_verify_name_what_is_wrong(tmp_path: Path) -> None:
    assert "no meta.json" in str(layout.read_meta(str(tmp_path))[1])
    (tmp_path / "meta.json").write_text("{not json")
    assert "meta.json cannot be read" in str(layout.read_meta(str(tmp_path))[1])
    (tmp_path / "meta.json").write_text(json.dumps({"case": "a", "mode": "strict"}))
    assert "lacks torch_version, variant, python" in str(layout.read_meta(str(tmp_path))[1])
    meta = {"files": [{"name": name, "size": 1, "sha256": "0" * 64} for name in layout.FILES]}
    assert layout.verify(str(tmp_path), meta) == "program.pt2 is missing"
    for name in layout.FILES:
        (tmp_path / name).write_bytes(b"xy")
    assert layout.verify(str(tmp_path), meta) == "program.pt2 has 2 bytes, meta.json says 1"


def test_artifacts_are_off_unless_asked() -> None:
    parser = argparse.ArgumentParser()
    runner.configure(parser)
    assert from_namespace(runner.RunOptions, parser.parse_args(["--out", "o"])).artifacts is None
    assert from_namespace(runner.RunOptions, parser.parse_args(["--out", "o", "--artifacts", "a"])).artifacts == "a"
    assert (
        from_namespace(
            runner.RunOptions, parser.parse_args(["--out", "o", "--artifacts", "a", "--no-artifacts"])
        ).artifacts
        is None
    )


def test_load_options_are_checked_before_torch_is_imported() -> None:
    parser = argparse.ArgumentParser()
    loader.configure(parser)
    options = from_namespace(loader.LoadOptions, parser.parse_args(["a", "b", "--out", "o", "--select", "add*"]))
    assert (options.artifacts, options.select, options.force) == (("a", "b"), ("add*",), False)
    with pytest.raises(UserError, match="--timeout"):
        loader.LoadOptions(artifacts=("a",), out="o", timeout=0)
    with pytest.raises(UserError, match="--variant"):
        loader.LoadOptions(artifacts=("a",), out="o", variant="../x")
    assert loader.file_name("2.5.1", "pypi", "3.11") == "load_torch-2.5.1_pypi_py3.11.jsonl"


def test_only_case_files_inside_the_current_folder_are_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside, outside = tmp_path / "checkout", tmp_path / "elsewhere"
    for folder in (inside / "cases", outside):
        folder.mkdir(parents=True)
        (folder / "case.py").write_text("raise RuntimeError('ran')\n")
    monkeypatch.chdir(inside)

    def imported(path: str, source: str = "cases") -> str:
        return load_job.import_case({"case": "case", "source": source, "case_file": path})

    assert imported("cases/case.py").startswith("failed: ")  # tried: the file is here
    assert imported("cases/missing.py") == "absent"
    assert imported(str(inside / "cases" / "case.py")) == "absent"  # absolute: data must not choose the code
    assert imported("../elsewhere/case.py") == "absent"
    assert imported("cases/case.py", source="exportdb") == "absent"
