"""ExportDB examples: discovered in the installed torch and loaded as cases."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Dict

import pytest
import torch
from torch._export.db import examples as examples_package
from torch._export.db.examples import all_examples

from matrix.contract.case import CaseError, CaseInfo, discover
from matrix.worker import exportdb

from conftest import ROOT, old_style_example


def bundled_examples() -> Dict[str, Any]:
    """torch's own ExportDB examples. None found fails the test, which would otherwise check nothing; it is
    skipped only where the installed torch ships no example module at all."""
    shipped = sorted(p.stem for p in Path(examples_package.__file__).parent.glob("*.py") if p.stem != "__init__")
    if not shipped:
        pytest.skip(
            "torch %s bundles no ExportDB example (%s has none)" % (torch.__version__, examples_package.__name__)
        )
    found = all_examples()
    assert found, "torch %s ships %d ExportDB example modules but all_examples() found none" % (
        torch.__version__,
        len(shipped),
    )
    return found


def test_discover_returns_the_installed_examples_with_expectations():
    bundled = bundled_examples()
    infos = exportdb.discover()
    assert [info.name for info in infos] == ["torch-exportdb/" + name for name in sorted(bundled)]
    assert len(infos) == len(bundled) > 0
    for info in infos:
        example = bundled[info.name.split("/", 1)[1]]
        want = "supported" if example.support_level.name == "SUPPORTED" else "not-supported-yet"
        assert info.expected == want, info.name
        assert info.source == "exportdb"
        assert info.description and info.description == inspect.cleandoc(example.description)
        assert set(info.tags) == set(example.tags)
        assert info.path == "torch/_export/db/examples/%s.py" % info.name.split("/", 1)[1]
        assert info.problem is None


def test_kwargs_reach_the_case():
    assert "fn_with_kwargs" in bundled_examples()
    (info,) = [info for info in exportdb.discover() if info.name == "torch-exportdb/fn_with_kwargs"]
    case = exportdb.load(info)
    assert case.example_kwargs and all(isinstance(k, str) for k in case.example_kwargs)


def test_unknown_example_is_a_case_error():
    info = CaseInfo(name="torch-exportdb/no_such_example", path="x", description="x", source="exportdb")
    with pytest.raises(CaseError, match="no ExportDB example 'no_such_example'"):
        exportdb.load(info)


def test_constraint_era_examples_drop_their_extra_inputs(monkeypatch: pytest.MonkeyPatch):
    example = old_style_example()
    example.constraints = ["a dynamic_dim constraint the runner cannot pass"]
    monkeypatch.setattr(exportdb, "_examples", lambda: {"scaled_sum": example})
    (info,) = exportdb.discover()
    assert exportdb.load(info).extra_args == ()


def test_unreadable_examples_package_is_a_case_error(monkeypatch: pytest.MonkeyPatch):
    def broken(name: str) -> Any:
        raise RuntimeError("Error on conflict export case name.")

    monkeypatch.setattr(exportdb.importlib, "import_module", broken)
    with pytest.raises(CaseError, match="cannot be read with this torch .*use --source cases"):
        exportdb.discover()


# --- each release's own claims ------------------------------------------------------------------------


def level(example: Any) -> str:
    return "supported" if example.support_level.name == "SUPPORTED" else "not-supported-yet"


@pytest.mark.parametrize("root", ["cases", "cases/exportdb"])
def test_a_case_file_of_an_exportdb_example_gets_the_installed_releases_own_claim(root: str):
    bundled = bundled_examples()
    ours = [info for info in discover([str(ROOT / root)]) if "/exportdb/" in info.path.replace("\\", "/")]
    assert len(ours) > 30
    for info in ours:
        name = info.path.replace("\\", "/").rsplit("/", 1)[1][: -len(".py")]
        assert exportdb.example_of(info.name, info.path, info.source) == name
        assert exportdb.claim(info) == (level(bundled[name]) if name in bundled else None), info.name
    # Most of our files stand for an example this release bundles: the claims above are not all None.
    assert sum(exportdb.claim(info) is not None for info in ours) >= len(ours) // 2
    # A case of another folder stands for no example, whatever its name.
    other = CaseInfo(name="exportdb_like/cond_predicate", path="cases/models/cond_predicate.py", description="x")
    assert exportdb.example_of(other.name, other.path, other.source) is None and exportdb.claim(other) is None


def test_a_bundled_example_claims_its_own_support_level():
    infos = exportdb.discover()
    assert len(infos) == len(bundled_examples())
    for info in infos:
        assert exportdb.claim(info) == info.expected is not None, info.name


def test_claims_are_read_once_and_leave_the_random_state_alone(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(exportdb, "_claims", None)
    calls = []

    def examples() -> Dict[str, Any]:
        calls.append(1)
        torch.randn(3)  # as an example that builds its inputs when imported
        return {"scaled_sum": old_style_example()}

    monkeypatch.setattr(exportdb, "_examples", examples)
    state = torch.get_rng_state()
    info = CaseInfo(name="exportdb/scaled_sum", path="cases/exportdb/scaled_sum.py", description="x")
    assert exportdb.claim(info) == "not-supported-yet" and exportdb.claims() == {"scaled_sum": "not-supported-yet"}
    assert len(calls) == 1 and torch.equal(state, torch.get_rng_state())


def test_a_release_whose_exportdb_cannot_be_read_claims_nothing(monkeypatch: pytest.MonkeyPatch):
    def broken() -> Dict[str, Any]:
        raise CaseError("torch._export.db.examples cannot be read with this torch")

    monkeypatch.setattr(exportdb, "_claims", None)
    monkeypatch.setattr(exportdb, "_examples", broken)
    info = CaseInfo(name="exportdb/cond_predicate", path="cases/exportdb/cond_predicate.py", description="x")
    assert exportdb.claim(info) is None and exportdb.claims() == {}
