"""Capabilities: what detect() finds in the installed torch, its cache, and the documented strict default."""

from __future__ import annotations

import torch
from packaging.version import Version

from matrix.contract.case import CAPABILITIES
from matrix.worker import capabilities

FOUND = capabilities.detect()


def test_every_probe_answers_with_a_bool():
    assert set(FOUND) == set(capabilities.PROBES)
    assert all(isinstance(value, bool) for value in FOUND.values())
    assert FOUND["export"] is True  # the matrix starts at a release with torch.export


def test_the_worker_probes_exactly_the_capabilities_a_case_may_require():
    # A case's `requires` is checked against the contract's names; each needs a probe, and a probe needs a name.
    assert set(capabilities.PROBES) == set(CAPABILITIES)


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
