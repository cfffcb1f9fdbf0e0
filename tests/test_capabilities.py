"""Capabilities: what detect() claims of the installed torch holds when a program uses it."""

from __future__ import annotations

import io

import pytest
import torch
from packaging.version import Version

from matrix.worker import capabilities

FOUND = capabilities.detect()


class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


def test_every_probe_answers_with_a_bool():
    assert set(FOUND) == set(capabilities.PROBES)
    assert all(isinstance(value, bool) for value in FOUND.values())
    assert FOUND["export"] is True  # the matrix starts at a release with torch.export


@pytest.mark.skipif(not FOUND["export.strict"], reason="this torch has no strict keyword")
def test_claimed_strict_keyword_exports_both_ways():
    for strict in (True, False):
        ep = torch.export.export(AddOne(), (torch.ones(2),), strict=strict)
        assert torch.equal(ep.module()(torch.ones(2)), torch.full((2,), 2.0))


@pytest.mark.skipif(not (FOUND["export.save"] and FOUND["export.load"]), reason="this torch cannot save programs")
def test_claimed_save_and_load_round_trip():
    buffer = io.BytesIO()
    torch.export.save(torch.export.export(AddOne(), (torch.ones(2),)), buffer)
    buffer.seek(0)
    assert torch.equal(torch.export.load(buffer).module()(torch.zeros(2)), torch.ones(2))


@pytest.mark.skipif(not FOUND["cond"], reason="this torch has no torch.cond")
def test_claimed_cond_exports_a_data_dependent_branch():
    class Branch(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda t: t + 1, lambda t: t - 1, (x,))

    ep = torch.export.export(Branch(), (torch.ones(2),))
    assert torch.equal(ep.module()(-torch.ones(2)), torch.full((2,), -2.0))


def test_hidden_and_unknown_capabilities_are_missing():
    assert capabilities.missing(["cond", "scan", "nope"], {"cond": True, "scan": False}) == ["nope", "scan"]


def test_strict_default_follows_the_documented_flip():
    # Documented in torch's release notes: strict=True by default until 2.7, strict=False from 2.8.
    release = Version(torch.__version__).release
    default = capabilities.strict_default()
    assert default is (None if release < (2, 2) else release < (2, 8))


def test_capabilities_are_cached_per_torch_build_and_detected_again_after_a_reinstall(tmp_path, monkeypatch):
    path = str(tmp_path / "capabilities.json")
    first, cached = capabilities.cached_detect(path)
    assert (first, cached) == (FOUND, False)
    again, cached = capabilities.cached_detect(path)
    assert (again, cached) == (FOUND, True)
    # A reinstall rewrites torch's version.py: its size, time or inode change, so its key does.
    key = capabilities._torch_build_key()
    monkeypatch.setattr(capabilities, "_torch_build_key", lambda: dict(key, **{"version.py.stat": [0, 0, 0]}))
    _, cached = capabilities.cached_detect(path)
    assert cached is False
    (tmp_path / "capabilities.json").write_text("{not json")
    assert capabilities.cached_detect(path) == (FOUND, False)  # a broken cache is detected again, not trusted


def test_the_build_key_follows_torchs_own_files():
    key = capabilities._torch_build_key()
    assert key["torch"] and len(key["version.py"]) == 16 and len(key["version.py.stat"]) == 3
