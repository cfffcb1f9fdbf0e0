"""Programs saved with different ``--with`` sets: a folder each, each discovered and loaded as its own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Dict, List

import pytest

from matrix.contract import dependencies, layout, schema
from matrix.worker import artifacts, loader, signing

pytestmark = pytest.mark.xdist_group("test_artifact_sets")  # one worker, so that its module fixture is built once

WITH = "packaging>=20"


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(signing.KEY_VARIABLE, "k" * 40)  # signs here, whatever the user's own key


@pytest.fixture(scope="module")
def program() -> Any:
    import torch

    return torch.export.export(torch.nn.Linear(2, 2), (torch.ones(1, 2),))


def save(root: Path, program: Any, dependency_set: str = "", with_set: str = "", case: str = "lin") -> Path:
    import torch

    target = layout.Target(str(root), "cpu", dependency_set=dependency_set, with_set=with_set)
    inputs = [((torch.ones(1, 2),), {})]
    return Path(artifacts.save(target, case, "strict", program, inputs, [program.module()(torch.ones(1, 2))]))


def test_a_with_set_gets_a_folder_of_its_own_and_no_set_keeps_the_plain_one(tmp_path: Path, program: Any) -> None:
    plain = save(tmp_path, program)
    first = save(tmp_path, program, "packaging", "packaging")
    second = save(tmp_path, program, WITH, WITH)
    assert plain.name == "lin"
    assert first.name == "lin" + dependencies.set_suffix("packaging") and first.name.startswith("lin_deps-")
    assert second.name == "lin" + dependencies.set_suffix(WITH) != first.name
    assert plain.parent == first.parent == second.parent  # <env>/strict
    # Each kept its own program: the later saves replaced nothing.
    for folder, with_set in ((plain, ""), (first, "packaging"), (second, WITH)):
        meta = json.loads((folder / layout.META).read_text())
        assert meta["with_set"] == with_set and (folder / layout.PROGRAM).is_file()
    assert sorted(p.name for p in plain.parent.iterdir()) == sorted([plain.name, first.name, second.name])


def test_load_finds_every_set_of_one_case_and_keys_each_apart(tmp_path: Path, program: Any) -> None:
    save(tmp_path, program)
    save(tmp_path, program, "packaging", "packaging")
    save(tmp_path, program, WITH, WITH)
    found = layout.discover((str(tmp_path),))
    assert sorted(a.dependency_set for a in found) == ["", "packaging", WITH]
    assert {a.case for a in found} == {"lin"} and all(a.problem is None for a in found)
    batch = loader.LoadBatch(found, "2.13.0", "cpu", "3.11")
    assert len(batch.wanted()) == 3
    # Torch alone keeps the key loads had before sets were told apart, so that their records still count.
    assert loader.journal_key(found[0].key) in batch.wanted()


def records_for(found: List[layout.Artifact]) -> List[Dict[str, Any]]:
    return [
        {"schema_version": schema.SCHEMA_VERSION, "kind": "load", "saved_torch_version": a.saved_torch_version,
         "saved_variant": a.saved_variant, "saved_python": a.saved_python, "case": a.case, "mode": a.mode,
         "dependency_set": a.dependency_set or None, "status": "pass"}
        for a in found
    ]  # fmt: skip


def test_a_load_recorded_for_one_set_does_not_count_as_done_for_another(tmp_path: Path, program: Any) -> None:
    art = tmp_path / "art"
    save(art, program)
    save(art, program, WITH, WITH)
    found = layout.discover((str(art),))
    batch = loader.LoadBatch(found, "2.13.0", "cpu", "3.11")
    path = tmp_path / "load.jsonl"
    with_set = [a for a in found if a.dependency_set == WITH]
    path.write_text("".join(json.dumps(r) + "\n" for r in records_for(with_set)))
    done, warnings = batch.done(str(path))
    assert warnings == [] and len(done) == 1 and done < set(batch.wanted())
    path.write_text("".join(json.dumps(r) + "\n" for r in records_for(found)))
    assert batch.done(str(path))[0] == set(batch.wanted())


def test_an_artifact_saved_before_sets_had_folders_is_still_found(tmp_path: Path, program: Any) -> None:
    folder = save(tmp_path, program)
    meta_path = folder / layout.META
    meta = json.loads(meta_path.read_text())
    del meta["with_set"]
    meta_path.write_text(json.dumps(meta))
    (found,) = layout.discover((str(tmp_path),))
    assert found.problem is None and found.case == "lin" and found.dependency_set == ""


def test_a_program_moved_to_another_sets_folder_is_refused(tmp_path: Path, program: Any) -> None:
    folder = save(tmp_path, program, WITH, WITH)
    moved = folder.parent / "lin"
    shutil.move(str(folder), str(moved))
    (found,) = layout.discover((str(tmp_path),))
    assert found.meta is None and found.case == "lin"
    assert found.problem == "meta.json names %s/strict/%s, not the folder it is in" % (
        moved.parent.parent.name,
        "lin" + dependencies.set_suffix(WITH),
    )
