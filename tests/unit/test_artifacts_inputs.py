"""Inputs flattened to pytree leaves and rebuilt (:mod:`matrix.worker.artifacts`), without an export.

Programs exported, kept and loaded with such inputs: tests/integration/test_artifacts_inputs.py.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils import _pytree

from matrix.worker import artifacts


def test_inputs_that_flatten_to_another_structure_are_refused() -> None:
    x = torch.ones(2)
    spec = _pytree.tree_flatten(((x, x), {}))[1]
    with pytest.raises(ValueError, match="input 1 does not flatten to the program's in_spec"):
        artifacts.flat_inputs([((x, x), {}), ((x,), {})], spec)
    with pytest.raises(TypeError, match="input 0 leaf 1 is a Tensor, which only plain tensors"):
        artifacts.flat_inputs([((x, x.to_sparse()), {})])
    with pytest.raises(TypeError, match="input 0 leaf 0 is a object"):
        artifacts.flat_inputs([((object(),), {})])


def test_a_spec_of_the_args_alone_is_the_args_form() -> None:
    # torch 2.1 leaves kwargs out of a program's in_spec when it takes none.
    x = torch.arange(3.0)
    args = (x, [x + 1, None], 4)
    spec = _pytree.tree_flatten(args)[1]
    leaves, form = artifacts.flat_inputs([(args, {})], spec)
    assert form == artifacts.ARGS and leaves[0][2:] == [None, 4]
    ((again, kwargs),) = artifacts.rebuild_inputs(leaves, spec, form)
    assert kwargs == {} and again[1][1] is None and again[2] == 4 and torch.equal(again[1][0], x + 1)
    # With kwargs the spec must hold them: the args alone do not stand for the call.
    with pytest.raises(ValueError, match="does not flatten"):
        artifacts.flat_inputs([(args, {"k": x})], spec)


def test_rebuilding_names_what_does_not_fit() -> None:
    spec = _pytree.tree_flatten(((torch.ones(1),), {}))[1]
    with pytest.raises(ValueError, match="inputs.pt call 0 holds 2 leaves; the program takes 1"):
        artifacts.rebuild_inputs([[torch.ones(1), torch.ones(1)]], spec)
    with pytest.raises(ValueError, match="no call_spec.in_spec"):
        artifacts.rebuild_inputs([[torch.ones(1)]], None)
    with pytest.raises(ValueError, match="inputs_form 'odd'"):
        artifacts.rebuild_inputs([[torch.ones(1)]], spec, "odd")
