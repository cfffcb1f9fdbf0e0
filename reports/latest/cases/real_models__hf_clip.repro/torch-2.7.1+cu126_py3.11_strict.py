# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.7.1+cu126/strict/real_models/hf_clip
#
# Recorded on torch 2.7.1+cu126 (variant pypi), Python 3.11:
#   fail at export: torch._dynamo.exc.UserError: Constraints violated (seq)! For more information, run with TORCH_LOGS="+dynamic".
# This script reproduces the export step: torch.export.export.
# It runs: eager, then export; strict=True.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.7.1 numpy transformers==5.23.0
#   (with those, the cell's environment had: annotated-doc==0.0.7, annotated-types==0.8.0, anyio==4.16.0, click==8.5.1, h11==0.16.0, hf-xet==1.8.0, httpcore2==2.16.2, httpx2==2.16.2, huggingface-hub==2.4.0, idna==3.20, markdown-it-py==4.3.0, mdurl==0.1.2, packaging==26.3, pydantic==2.14.3, pydantic-core==2.50.4, pygments==2.21.0, pyyaml==6.0.4, regex==2026.11.15, rich==15.0.0, safetensors==0.8.0, shellingham==1.5.4, tokenizers==0.23.3, tqdm==4.70.1, truststore==0.10.5, typer==0.29.2, typing-inspection==0.4.5)
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/real_models/hf_clip.py --torch 2.7.1 --variant pypi --mode strict --python 3.11
#
# Below: the case, cases/real_models/hf_clip.py, as it was where this script was written, then what
# torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/real_models/hf_clip.py
# --------------------------------------------------------------------------------------------------

# (its PEP 723 block of dependencies is the install line at the top)
"""CLIP from transformers (tiny config, random weights): texts and images to similarity logits.

Two towers; the number of texts, the text length and the number of images are independent dynamic dimensions.
"""

import torch
import transformers

torch.manual_seed(0)


class Similarity(torch.nn.Module):
    """Returns the image-text and text-image logits instead of a CLIPOutput."""

    def __init__(self):
        super().__init__()
        config = transformers.CLIPConfig(
            text_config=dict(
                vocab_size=100,
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
                max_position_embeddings=32,
            ),
            vision_config=dict(
                image_size=32,
                patch_size=8,
                hidden_size=32,
                intermediate_size=64,
                num_hidden_layers=2,
                num_attention_heads=2,
            ),
            projection_dim=16,
        )
        self.clip = transformers.CLIPModel(config)

    def forward(self, input_ids, attention_mask, pixel_values):
        out = self.clip(input_ids=input_ids, attention_mask=attention_mask, pixel_values=pixel_values)
        return out.logits_per_image, out.logits_per_text


def dynamic_shapes():
    from torch.export import Dim

    texts, seq, images = Dim("texts", min=1, max=16), Dim("seq", min=2, max=32), Dim("images", min=1, max=16)
    return {
        "input_ids": {0: texts, 1: seq},
        "attention_mask": {0: texts, 1: seq},
        "pixel_values": {0: images},
    }


model = Similarity().eval()
example_args = (torch.randint(0, 100, (3, 7)), torch.ones(3, 7, dtype=torch.long), torch.randn(2, 3, 32, 32))
mask = torch.ones(4, 5, dtype=torch.long)
mask[1, 3:] = 0
extra_args = [(torch.randint(0, 100, (4, 5)), mask, torch.randn(5, 3, 32, 32))]
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
