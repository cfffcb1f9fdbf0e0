"""Capabilities: what detect() claims of the installed torch holds when a program uses it."""

from __future__ import annotations

import io

import pytest
import torch

from matrix.worker import capabilities

FOUND = capabilities.detect()


class AddOne(torch.nn.Module):
    def forward(self, x):
        return x + 1


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
