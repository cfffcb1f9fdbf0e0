# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.6.0+cu124/strict/real_models/hf_vit
#
# Recorded on torch 2.6.0+cu124 (variant pypi), Python 3.11:
#   fail at export: torch._dynamo.exc.Unsupported: call_method GetAttrVariable(GetSetDescriptorVariable(), co_varnames) __contains__ [ConstantVariable(str: 'use_cache')] {}
# This script reproduces the export step: torch.export.export.
# It runs: eager, then export; strict=True.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.6.0 numpy setuptools transformers==5.23.0
#   (with those, the cell's environment had: annotated-doc==0.0.7, annotated-types==0.8.0, anyio==4.16.0, click==8.5.1, h11==0.16.0, hf-xet==1.8.0, httpcore2==2.16.2, httpx2==2.16.2, huggingface-hub==2.4.0, idna==3.20, markdown-it-py==4.3.0, mdurl==0.1.2, packaging==26.3, pydantic==2.14.3, pydantic-core==2.50.4, pygments==2.21.0, pyyaml==6.0.3, regex==2026.11.15, rich==15.0.0, safetensors==0.8.0, shellingham==1.5.4, tokenizers==0.23.3, tqdm==4.70.1, truststore==0.10.5, typer==0.29.2, typing-inspection==0.4.5)
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/real_models/hf_vit.py --torch 2.6.0 --variant pypi --mode strict --python 3.11
#
# Below: the case, cases/real_models/hf_vit.py, as it was where this script was written, then what
# torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/real_models/hf_vit.py
# --------------------------------------------------------------------------------------------------

# (its PEP 723 block of dependencies is the install line at the top)
"""ViT image encoder from transformers (tiny config, random weights) on 32x32 images with a dynamic batch."""

import torch
import transformers

torch.manual_seed(0)


class ImageEncoder(torch.nn.Module):
    """Tensors in, tensors out: the hidden states and the pooled [CLS] vector instead of a ModelOutput."""

    def __init__(self):
        super().__init__()
        config = transformers.ViTConfig(
            image_size=32,
            patch_size=8,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
        )
        self.vit = transformers.ViTModel(config)

    def forward(self, pixel_values):
        out = self.vit(pixel_values=pixel_values)
        return out.last_hidden_state, out.pooler_output


def dynamic_shapes():
    from torch.export import Dim

    return {"pixel_values": {0: Dim("batch", min=1, max=32)}}


model = ImageEncoder().eval()
example_args = (torch.randn(2, 3, 32, 32),)
extra_args = [(torch.randn(3, 3, 32, 32),)]
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

# --------------------------------------------------------------------------------------------------
# What torch-export-matrix does with the case, in plain torch.
# --------------------------------------------------------------------------------------------------
import copy
import inspect

import torch
import torch.export

STRICT = True  # the cell's mode: strict


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
    shapes = dynamic_shapes()
    extra = list(extra_args)
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
