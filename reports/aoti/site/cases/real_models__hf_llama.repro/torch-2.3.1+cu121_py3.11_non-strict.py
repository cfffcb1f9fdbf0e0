# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.3.1+cu121/non-strict/real_models/hf_llama
#
# Recorded on torch 2.3.1+cu121 (variant pypi), Python 3.11:
#   case-error at eager: TypeError: torch.is_autocast_enabled() takes no arguments (1 given)
# This script reproduces the case failing on this release in its eager run, before any export.
# It runs: eager, then export; strict=False.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.3.1 numpy setuptools transformers==5.0.0
#   (with those, the cell's environment had: annotated-doc==0.0.7, annotated-types==0.8.0, anyio==4.16.0, certifi==2026.10.19.post1, click==8.5.1, h11==0.16.0, hf-xet==1.8.0, httpcore==1.0.9, httpx==0.28.1, huggingface-hub==1.33.0, idna==3.20, markdown-it-py==4.3.0, mdurl==0.1.2, packaging==26.4, pydantic==2.14.4, pydantic-core==2.50.5, pygments==2.21.0, pyyaml==6.0.4, regex==2026.11.19, rich==15.0.0, safetensors==0.8.0, shellingham==1.5.4, tokenizers==0.22.2, tqdm==4.70.1, typer==0.29.2, typer-slim==0.24.0, typing-inspection==0.4.5)
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/real_models/hf_llama.py --torch 2.3.1 --variant pypi --mode non-strict --python 3.11
#
# Below: the case, cases/real_models/hf_llama.py, as it was where this script was written, then what
# torch-export-matrix does with a case (matrix/worker/cell.py), in plain torch.

# --------------------------------------------------------------------------------------------------
# The modules the case imports from its own folder, inlined.
# --------------------------------------------------------------------------------------------------
import sys
import types


def _inlined_module(name, source):
    """Make `import name` find a module built from `source`, as the case's folder on sys.path would."""
    module = types.ModuleType(name)
    module.__file__ = name + ".py"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)


_inlined_module('_transformers_heads', r'''
"""What the transformers cases share: heads that return plain tensors, their dynamic shapes and inputs.

Not a case (its name starts with ``_``): the cases next to it import it, as a user's code
imports a helper beside it. It needs nothing but torch.
"""

import torch


class CausalLogits(torch.nn.Module):
    """A causal LM's logits only; use_cache=False so no key/value cache object is built or returned."""

    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask):
        return self.lm(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits


def causal_dynamic_shapes():
    from torch.export import Dim

    batch, seq = Dim("batch", min=1, max=8), Dim("seq", min=2, max=32)
    return {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}


def causal_example(vocab):
    return (torch.randint(0, vocab, (2, 8)), torch.ones(2, 8, dtype=torch.long))


def causal_extra(vocab):
    """Another batch and length, the first row left-padded as for batched generation."""
    mask = torch.ones(3, 5, dtype=torch.long)
    mask[0, :2] = 0
    return [(torch.randint(0, vocab, (3, 5)), mask)]


class Seq2SeqLogits(torch.nn.Module):
    """An encoder-decoder's logits only; use_cache=False so no key/value cache object is built or returned."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        out = self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            decoder_input_ids=decoder_input_ids,
            use_cache=False,
        )
        return out.logits


def seq2seq_dynamic_shapes():
    from torch.export import Dim

    batch = Dim("batch", min=1, max=8)
    src, tgt = Dim("src_len", min=2, max=32), Dim("tgt_len", min=2, max=32)
    return {
        "input_ids": {0: batch, 1: src},
        "attention_mask": {0: batch, 1: src},
        "decoder_input_ids": {0: batch, 1: tgt},
    }


def seq2seq_example(vocab):
    return (torch.randint(0, vocab, (2, 8)), torch.ones(2, 8, dtype=torch.long), torch.randint(0, vocab, (2, 4)))


def seq2seq_extra(vocab):
    """Another batch, source and target length, the first source right-padded."""
    mask = torch.ones(3, 6, dtype=torch.long)
    mask[0, 4:] = 0
    return [(torch.randint(0, vocab, (3, 6)), mask, torch.randint(0, vocab, (3, 5)))]
'''[1:])

# --------------------------------------------------------------------------------------------------
# The case: cases/real_models/hf_llama.py
# --------------------------------------------------------------------------------------------------

# (its PEP 723 block of dependencies is the install line at the top)
"""Llama causal LM from transformers (tiny config, random weights): one forward to logits, dynamic batch and sequence.

RMSNorm, rotary position embeddings, grouped-query attention (4 query heads, 2 key/value heads), SwiGLU MLP.
"""

import torch
import transformers
from _transformers_heads import CausalLogits, causal_dynamic_shapes, causal_example, causal_extra

torch.manual_seed(0)

config = transformers.LlamaConfig(
    vocab_size=128,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
)

model = CausalLogits(transformers.LlamaForCausalLM(config)).eval()
dynamic_shapes = causal_dynamic_shapes
example_args = causal_example(128)
extra_args = causal_extra(128)
tags = {"torch.model", "torch.dynamic-shape"}
requires = ["dim", "export.dynamic_shapes"]

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


def _value(value):
    """A function (not a module or class) stands for what it returns, as in the worker's case loader."""
    if callable(value) and not hasattr(value, "forward") and not isinstance(value, type):
        return value()
    return value


def inputs():
    """The case's example inputs, keyword inputs, dynamic shapes and further inputs, as the cell reads them."""
    args = _value(example_args)
    kwargs = {}
    shapes = _value(dynamic_shapes)
    extra = list(_value(extra_args))
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
