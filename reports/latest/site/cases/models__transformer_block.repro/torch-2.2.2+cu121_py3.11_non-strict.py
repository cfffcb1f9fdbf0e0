# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.2.2+cu121/non-strict/models/transformer_block
#
# Recorded on torch 2.2.2+cu121 (variant pypi), Python 3.11:
#   decompose failed: AssertionError: aot_autograd expected to have an entirely functional graph, but found %copy_ : [num_users=1] = call_function[target=torch.ops.aten.copy_.default](args = (%full_like, %where), kwargs = {})
# This script reproduces the decompose step: ExportedProgram.run_decompositions().
# It runs: eager, then export, then decompose; strict=False.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.2.2 'numpy<2' setuptools
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/models/transformer_block.py --torch 2.2.2 --variant pypi --mode non-strict --python 3.11
#
# Below: the case, cases/models/transformer_block.py, as it was where this script was written, then
# what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/models/transformer_block.py
# --------------------------------------------------------------------------------------------------

"""A small pre-norm transformer block written out by hand: fused QKV projection, SDPA, residuals and an MLP."""

import torch
import torch.nn.functional as F

torch.manual_seed(0)


class Block(torch.nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(), torch.nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


model = Block().eval()
example_args = (torch.randn(2, 5, 16),)
tags = {"torch.model"}
requires = ["sdpa"]

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
    args = example_args
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


def decompose(ep):
    """ExportedProgram.run_decompositions(), to the core ATen operator set."""
    print("torch %s: ep.run_decompositions()" % torch.__version__, flush=True)
    return ep.run_decompositions()


def main():
    """The steps that reproduce the recorded failure, in the order the cell ran them."""
    args, kwargs, shapes, extra = inputs()
    # Eager first, on copies of the model and of each input, as the cell runs the case before exporting.
    print("torch %s: the eager run" % torch.__version__, flush=True)
    eager = _clone(model)
    calls = [(_clone(a), _clone(kwargs)) for a in [args, *extra]]
    expected = [eager(*a, **k) for a, k in calls]
    ep = export(args, kwargs, shapes)
    decompose(ep)
    print("did not reproduce: every step ran without the recorded failure on torch %s" % torch.__version__)


if __name__ == "__main__":
    main()
