# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.3.1+cu121/non-strict/models/dataclass_input
#
# Recorded on torch 2.3.1+cu121 (variant pypi), Python 3.11:
#   fail at export: ValueError: Did not find a flatten_with_keys_fn for type: <class 'export_matrix_case_models__dataclass_input.TokenBatch'>. Please pass a flatten_with_keys_fn argument to register_pytree_node.
# This script reproduces the export step: torch.export.export.
# It runs: eager, then export; strict=False.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.3.1 numpy setuptools
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/models/dataclass_input.py --torch 2.3.1 --variant pypi --mode non-strict --python 3.11
#
# Below: the case, cases/models/dataclass_input.py, as it was where this script was written, then
# what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/models/dataclass_input.py
# --------------------------------------------------------------------------------------------------

"""A dataclass input registered with `torch.export.register_dataclass` is flattened into its tensor fields."""

import inspect
from dataclasses import dataclass

import torch
import torch.utils._pytree as pytree

torch.manual_seed(0)


@dataclass
class TokenBatch:
    ids: torch.Tensor
    weights: torch.Tensor


class WeightedEmbedding(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(10, 4)

    def forward(self, batch):
        return (self.embed(batch.ids) * batch.weights.unsqueeze(-1)).sum(1)


def example_args():
    # Registered when the inputs are built, so importing the case needs no export API.
    if TokenBatch not in getattr(pytree, "SUPPORTED_NODES", {}):
        # A serialised name lets torch.export.save write the type; older releases take no name.
        options = {}
        if "serialized_type_name" in inspect.signature(torch.export.register_dataclass).parameters:
            options["serialized_type_name"] = "export_matrix_cases.TokenBatch"
        torch.export.register_dataclass(TokenBatch, **options)
    return (TokenBatch(ids=torch.tensor([[1, 2, 3], [4, 5, 6]]), weights=torch.rand(2, 3)),)


model = WeightedEmbedding()
tags = {"torch.model", "torch.pytree"}
requires = ["export.register_dataclass"]

# --------------------------------------------------------------------------------------------------
# What torch-export-matrix does with the case, in plain torch.
# --------------------------------------------------------------------------------------------------
import copy
import inspect

import torch
import torch.export

STRICT = False  # the cell's mode: non-strict


def _clone(value):
    """A deep copy, so that what one step does to its inputs never reaches the next one."""
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def inputs():
    """The case's example inputs, keyword inputs, dynamic shapes and further inputs, as the cell reads them."""
    args = example_args()
    kwargs = {}
    shapes = None
    extra = []
    return args, kwargs, shapes, extra


def export(args, kwargs, shapes):
    """torch.export.export as the cell calls it; before torch 2.2, export has no `strict` and is strict only."""
    options = {}
    if kwargs:
        options["kwargs"] = _clone(kwargs)
    if shapes is not None:
        options["dynamic_shapes"] = shapes
    if "strict" in inspect.signature(torch.export.export).parameters:
        options["strict"] = STRICT
    print("torch %s: torch.export.export(..., strict=%s)" % (torch.__version__, STRICT), flush=True)
    return torch.export.export(model, _clone(args), **options)


def main():
    """The steps that reproduce the recorded failure, in the order the cell ran them."""
    args, kwargs, shapes, extra = inputs()
    # Eager first, on copies of the model and of each input, as the cell runs the case before exporting.
    print("torch %s: the eager run" % torch.__version__, flush=True)
    eager = _clone(model)
    calls = [(_clone(a), _clone(kwargs)) for a in [args, *extra]]
    expected = [eager(*a, **k) for a, k in calls]
    ep = export(args, kwargs, shapes)
    print("did not reproduce: every step ran without the recorded failure on torch %s" % torch.__version__)


if __name__ == "__main__":
    main()
