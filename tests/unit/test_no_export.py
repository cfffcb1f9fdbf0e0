"""The unit folder refuses a real export (tests/unit/conftest.py): every way in fails the test that tries it."""

from __future__ import annotations

import inspect
from pathlib import Path
from types import ModuleType

import pytest
import torch

MESSAGE = r"a unit test ran a real export \(%s\): it belongs in tests/integration"


def guard(request: pytest.FixtureRequest) -> ModuleType:
    """tests/unit/conftest.py, as pytest loaded it."""
    here = Path(__file__).with_name("conftest.py")
    (found,) = [m for m in request.config.pluginmanager.get_plugins() if getattr(m, "__file__", None) == str(here)]
    return found


def model_and_args():
    return torch.nn.Linear(2, 2), (torch.ones(1, 2),)


@pytest.mark.parametrize("strict", [True, False])
def test_export_is_refused_and_the_attempt_is_kept_for_the_tests_end(request, strict: bool) -> None:
    conftest = guard(request)
    with pytest.raises(AssertionError, match=MESSAGE % r"torch\.export\.export"):
        torch.export.export(*model_and_args(), strict=strict)
    # Caught here, as the worker catches a failed export: the fixture's check at the end would fail
    # this test. Taken back so that it passes.
    assert conftest._EXPORTED == ["torch.export.export"]
    del conftest._EXPORTED[:]


def test_draft_export_and_the_functions_every_trace_ends_in_are_refused(request) -> None:
    conftest = guard(request)
    names = {"%s.%s" % (module.__name__, name) for module, name in conftest._ENTRY_POINTS}
    if "torch.export._trace._non_strict_export" not in names or "torch.export.draft_export" not in names:
        pytest.skip("torch %s traces through other functions (draft_export came in 2.7)" % torch.__version__)
    with pytest.raises(AssertionError, match=MESSAGE % r"torch\.export\.draft_export"):
        torch.export.draft_export(*model_and_args())
    # Code that holds torch's internal entry point, not the public one, still reaches a refusal.
    from torch.export._trace import _export

    for strict, name in ((True, "_strict_export"), (False, "_non_strict_export")):
        with pytest.raises(AssertionError, match=MESSAGE % (r"torch\.export\._trace\." + name)):
            _export(*model_and_args(), strict=strict, pre_dispatch=True)
    assert conftest._EXPORTED == [
        "torch.export.draft_export",
        "torch.export._trace._strict_export",
        "torch.export._trace._non_strict_export",
    ]
    del conftest._EXPORTED[:]


def test_the_refusal_keeps_the_signature_that_capability_probes_read() -> None:
    assert "strict" in inspect.signature(torch.export.export).parameters
    assert "dynamic_shapes" in inspect.signature(torch.export.export).parameters
