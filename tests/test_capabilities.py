from __future__ import annotations

import torch
from packaging.version import Version

from matrix.worker import capabilities


def test_detect_matches_the_installed_torch():
    found = capabilities.detect()
    assert set(found) == set(capabilities.PROBES)
    release = Version(torch.__version__).release
    assert found["export"] is True
    assert found["export.strict"] is (release >= (2, 2))
    assert found["dim.auto"] is (release >= (2, 5))
    assert found["dim.dynamic"] is (release >= (2, 6))
    assert found["cond"] is hasattr(torch, "cond")
    assert found["export.save"] is hasattr(torch.export, "save")


def test_strict_default_follows_the_release():
    release = Version(torch.__version__).release
    default = capabilities.strict_default()
    if release >= (2, 8):
        assert default is False
    elif release >= (2, 2):
        assert default is True
    else:
        assert default is None


def test_missing_lists_absent_and_unknown_names():
    assert capabilities.missing(["cond", "scan", "nope"], {"cond": True, "scan": False}) == ["nope", "scan"]
