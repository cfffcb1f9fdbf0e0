"""Signed saved programs end to end: ``run --artifacts`` signs, ``load`` refuses a tampered one unless ``--trust``;
in process, ``save`` signs the program it saves."""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from matrix.contract import layout
from matrix.worker import artifacts, loader, signing

from conftest import FIXTURES, ROOT, run_matrix

pytestmark = pytest.mark.xdist_group("test_signing")  # one worker, so that its module fixture is built once


def read_loads(folder: Path) -> List[Dict[str, Any]]:
    found = []
    for path in sorted(folder.glob("load_*.jsonl")):
        found.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return found


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Path, Path]:
    """One tiny case run with --artifacts and the default key: the artifact folder and the cache folder."""
    base = tmp_path_factory.mktemp("signing")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(base / "cache"))
        patch.delenv(signing.KEY_VARIABLE, raising=False)
        run_matrix("run", "--cases", str(FIXTURES / "basic"), "--select", "add_one", "--mode", "strict",
                   "--artifacts", str(base / "art"), "--out", str(base / "records"), "--progress", "none")  # fmt: skip
    return base / "art", base / "cache"


@pytest.fixture
def same_machine(saved: Tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Tuple[Path, Path]:
    """The environment of a later command on the machine that saved: the same cache folder, no key variable."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(saved[1]))
    monkeypatch.delenv(signing.KEY_VARIABLE, raising=False)
    return saved


def a_copy(saved: Tuple[Path, Path], tmp_path: Path) -> Tuple[Path, Path]:
    """A copy of the artifact folder to tamper with, and its one artifact's folder."""
    art = tmp_path / "art"
    shutil.copytree(saved[0], art)
    (folder,) = [meta.parent for meta in art.rglob("meta.json")]
    return art, folder


def rehash(folder: Path, **changes: Any) -> None:
    """What someone without the key can do: rewrite meta.json to match the files (and say more)."""
    meta = json.loads((folder / "meta.json").read_text())
    for entry in meta["files"]:
        data = (folder / entry["name"]).read_bytes()
        entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    meta.update(changes)
    (folder / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))


def load(art: Path, out: Path, *more: str, cwd: Path = ROOT) -> Dict[str, Any]:
    done = run_matrix("load", str(art), "--out", str(out), "--progress", "none", *more, cwd=cwd)
    found = read_loads(out)
    assert found, done.stderr
    return dict(found[-1], stderr=done.stderr)


def test_run_signs_with_a_private_key_in_the_cache_folder_and_load_there_trusts_it(
    same_machine: Tuple[Path, Path], tmp_path: Path
) -> None:
    art, cache = same_machine
    key_file = cache / "torch-export-matrix" / "signing-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    (meta,) = list(art.rglob("meta.json"))
    assert signing.verify(str(meta), key_file.read_text().strip().encode()) is None
    record = load(art, tmp_path / "loads")
    assert (record["case"], record["status"]) == ("add_one", "pass")


def test_a_tampered_program_is_refused_before_it_is_read_and_loaded_with_trust(
    same_machine: Tuple[Path, Path], tmp_path: Path
) -> None:
    import torch

    art, folder = a_copy(same_machine, tmp_path)
    # Other expected outputs, and meta.json naming a case module that runs code when imported.
    checkout = tmp_path / "checkout"
    (checkout / "cases").mkdir(parents=True)
    (checkout / "cases" / "evil.py").write_text("import pathlib\npathlib.Path('ran').write_text('code ran')\n")
    outputs = torch.load(folder / "outputs.pt", weights_only=True)
    outputs["calls"] = [[leaf + 100 for leaf in call] for call in outputs["calls"]]
    torch.save(outputs, folder / "outputs.pt", pickle_protocol=2)
    rehash(folder, source="cases", case_file="cases/evil.py")
    out = tmp_path / "loads"

    refused = load(art, out, cwd=checkout)
    assert refused["status"] == "untrusted" and refused["error_type"] == "UntrustedArtifact"
    assert refused["error_message"] == (
        "untrusted artifact: the signature does not match the signing key (meta.json was changed, or signed"
        " with another key); pass --trust to load folders you made or trust"
    )
    assert refused["load_s"] is None and refused["case_module"] is None
    assert not (checkout / "ran").exists()
    assert "done: untrusted 1" in refused["stderr"] and "`load --trust`" in refused["stderr"]

    # The same --out: an untrusted record is not done, so --trust loads it, runs the named code, reads the data.
    trusted = load(art, out, "--trust", cwd=checkout)
    assert (checkout / "ran").read_text() == "code ran"
    assert trusted["status"] == "mismatch" and trusted["case_module"] is not None and trusted["load_s"] is not None
    assert [r["status"] for r in read_loads(out)] == ["untrusted", "mismatch"]


def test_a_missing_signature_or_another_key_is_refused(
    same_machine: Tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    art, folder = a_copy(same_machine, tmp_path)
    monkeypatch.setenv(signing.KEY_VARIABLE, "another key shared by the jobs of a workflow")
    record = load(art, tmp_path / "other-key")
    assert record["status"] == "untrusted" and "does not match the signing key" in record["error_message"]
    (folder / "meta.sig").unlink()
    record = load(art, tmp_path / "unsigned")
    assert record["status"] == "untrusted"
    assert record["error_message"].startswith("untrusted artifact: no signature (meta.sig); pass --trust")


# --- save, in process: a real export, signed as it is saved ----------------------------------------

KEY = b"k" * 40
OTHER = b"o" * 40


def test_save_signs_what_it_saves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setenv(signing.KEY_VARIABLE, KEY.decode())
    program = torch.export.export(torch.nn.Linear(2, 2), (torch.ones(1, 2),))
    folder = Path(artifacts.save(layout.Target(str(tmp_path), "cpu"), "lin", "strict", program,
                                 [((torch.ones(1, 2),), {})], [torch.zeros(1, 2)]))  # fmt: skip
    assert sorted(p.name for p in folder.iterdir()) == sorted(layout.FILES + (layout.META, "meta.sig"))
    meta, problem = layout.read_meta(str(folder))
    assert problem is None and meta is not None
    assert loader.untrusted(str(folder), meta, KEY) is None
    assert "does not match" in str(loader.untrusted(str(folder), meta, OTHER))
