# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.5.1+cu124/strict/real_models/hf_llama_static_cache
#
# Recorded on torch 2.5.1+cu124 (variant pypi), Python 3.11:
#   case-error at load: matrix.worker.case.CaseError: transformers 5.23.0 fails on torch 2.5.1+cu124 as the case loads: NameError: name 'nn' is not defined
# This script reproduces the case failing on this release as it loads, before any export.
# It runs: eager, then export; strict=True.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.5.1 numpy setuptools transformers==5.23.0
#   (with those, the cell's environment had: annotated-doc==0.0.7, annotated-types==0.8.0, anyio==4.16.0, click==8.5.1, h11==0.16.0, hf-xet==1.8.0, httpcore2==2.16.2, httpx2==2.16.2, huggingface-hub==2.4.0, idna==3.20, markdown-it-py==4.3.0, mdurl==0.1.2, packaging==26.3, pydantic==2.14.3, pydantic-core==2.50.4, pygments==2.21.0, pyyaml==6.0.3, regex==2026.11.15, rich==15.0.0, safetensors==0.8.0, shellingham==1.5.4, tokenizers==0.23.3, tqdm==4.70.1, truststore==0.10.5, typer==0.29.2, typing-inspection==0.4.5)
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/real_models/hf_llama_static_cache.py --torch 2.5.1 --variant pypi --mode strict --python 3.11
#
# Below: the case, cases/real_models/hf_llama_static_cache.py, as it was where this script was
# written, then what torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The case: cases/real_models/hf_llama_static_cache.py
# --------------------------------------------------------------------------------------------------

# (its PEP 723 block of dependencies is the install line at the top)
"""Llama (tiny config, random weights) decoding one token at a time against a static key/value cache.

The cache is wrapped the way transformers' ExecuTorch recipe does it
(TorchExportableModuleForDecoderOnlyLM): its tensors are buffers that each step updates in
place at cache_position. The three calls run in sequence, so the later steps read what the
earlier ones wrote.
"""

import torch
import transformers

torch.manual_seed(0)


class DecodeStep(torch.nn.Module):
    """Positional (input_ids, cache_position) -> logits, over transformers' static-cache wrapper."""

    def __init__(self):
        super().__init__()
        from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

        config = transformers.LlamaConfig(
            vocab_size=128,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=64,
        )
        lm = transformers.LlamaForCausalLM(config).eval()
        # The wrapper asks for a static cache in the generation config.
        lm.generation_config.cache_implementation = "static"
        recipe = TorchExportableModuleForDecoderOnlyLM(lm, batch_size=1, max_cache_len=16)
        # The recipe's inner static-cache module is called directly: the outer forward of
        # transformers 5.x does not pass cache_position on, and the inner one needs it.
        self.step = recipe.model

    def forward(self, input_ids, cache_position):
        return self.step(input_ids=input_ids, cache_position=cache_position)


model = DecodeStep().eval()
example_args = (torch.tensor([[5]]), torch.tensor([0]))
extra_args = [(torch.tensor([[17]]), torch.tensor([1])), (torch.tensor([[42]]), torch.tensor([2]))]
tags = {"torch.model", "torch.mutation"}

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
    shapes = None
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
