"""The load sessions find each dependency set among programs saved here: a real export, in process.

Moved from tests/unit/test_noxfile.py (unit tests export nothing).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import ROOT


def test_the_load_sessions_load_each_dependency_set_where_its_packages_are(tmp_path: Path) -> None:
    """Programs saved beside packages are grouped by set, torch alone first, read from their meta.json, each set with
    the devices its programs were saved on."""
    import importlib.util

    import torch

    from matrix.contract import layout
    from matrix.worker import artifacts, loader

    model = torch.nn.Linear(2, 2)
    program = torch.export.export(model, (torch.ones(1, 2),))
    for case, key, device in (
        ("plain", "", "cpu"), ("uses_timm", "timm", "cpu"), ("uses_both", "timm|transformers<5", "cpu"),
        ("uses_timm", "timm", "cuda"),  # what a run on a GPU keeps, made here with CPU tensors
    ):  # fmt: skip
        target = layout.Target(str(tmp_path), "pypi", device, dependency_set=key)
        folder = artifacts.save(target, case, "strict", program, [((torch.ones(1, 2),), {})], [model(torch.ones(1, 2))])
        found = layout.discover((str(tmp_path),))
        assert loader.saved_with(next(a for a in found if (a.case, a.device) == (case, device))) == key
        assert Path(folder, "meta.json").is_file()
    spec = importlib.util.spec_from_file_location("noxfile_under_test", ROOT / "noxfile.py")
    assert spec is not None and spec.loader is not None
    noxfile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(noxfile)
    assert noxfile._saved_sets(tmp_path) == {"": ["cpu"], "timm": ["cpu", "cuda"], "timm|transformers<5": ["cpu"]}
    # Where nothing was saved with torch alone, its load still runs (and says so), on the CPU.
    for plain in tmp_path.glob("*/strict/plain"):
        shutil.rmtree(plain)
    assert noxfile._saved_sets(tmp_path)[""] == ["cpu"]
