"""What the integration tests share across modules and xdist workers: one AOTInductor compile per test run."""

from __future__ import annotations

from typing import Any, Dict

import pytest

from .aoti_package import package


@pytest.fixture(scope="session")
def aoti_package(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    """The case with a dynamic batch run once with the aoti stage (tests/integration/aoti_package.py), read only."""
    return package(tmp_path_factory)
