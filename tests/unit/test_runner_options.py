"""``export-matrix run``'s options: frozen and normalised."""

from __future__ import annotations

import pytest

from matrix.worker.runner import RunOptions


def test_options_are_frozen_and_normalised() -> None:
    options = RunOptions(out="o", select=["a*"], stages="check, serialize", timeout=5)
    assert options.select == ("a*",) and options.stages == ("check", "serialize") and options.timeout == 5.0
    assert options.modes == ("strict", "non-strict")
    with pytest.raises(AttributeError):
        options.out = "elsewhere"  # type: ignore[misc]
