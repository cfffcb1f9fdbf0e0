# Reproduces, without torch-export-matrix, the failure of the cell
#   torch-2.6.0+cu124/non-strict/real_models/hf_llama_static_cache
#
# Recorded on torch 2.6.0+cu124 (variant pypi), Python 3.11:
#   decompose failed: RuntimeError: false INTERNAL ASSERT FAILED at "RegisterFunctionalization_0.cpp":3939, please report a bug to PyTorch. mutating a non-functional tensor with a functional tensor is not allowed. Please ensure that all of your inputs are wrapped inside of a functionalize() call.
#   serialize failed: fresh process: load-error: torch._export.serde.serialize.SerializeError: Failed deserializing node Node(target='torch.ops.higher_order.wrap_with_set_grad_enabled', inputs=[NamedArgument(name='', arg=Argument(as_bool=False)), NamedArgument(name='', arg=Argument(as_graph=GraphArgument(name='submod_1',
# This script reproduces the decompose step: ExportedProgram.run_decompositions(); the serialize
# step: torch.export.save, then torch.export.load and a run in a fresh process.
# It runs: eager, then export, then decompose, then serialize; strict=False.
#
# Install, in a fresh environment of Python 3.11:
#   pip install torch==2.6.0 numpy setuptools transformers==5.23.0
#   (with those, the cell's environment had: annotated-doc==0.0.7, annotated-types==0.8.0, anyio==4.16.0, click==8.5.1, h11==0.16.0, hf-xet==1.8.0, httpcore2==2.16.2, httpx2==2.16.2, huggingface-hub==2.4.0, idna==3.20, markdown-it-py==4.3.0, mdurl==0.1.2, packaging==26.3, pydantic==2.14.3, pydantic-core==2.50.4, pygments==2.21.0, pyyaml==6.0.3, regex==2026.11.15, rich==15.0.0, safetensors==0.8.0, shellingham==1.5.4, tokenizers==0.23.3, tqdm==4.70.1, truststore==0.10.5, typer==0.29.2, typing-inspection==0.4.5)
# then run this file with that Python. Where the failure reproduces, it raises (the traceback ends
# with the error); where it does not, it prints 'did not reproduce'.
#
# The same cell with torch-export-matrix, from its checkout:
#   export-matrix check cases/real_models/hf_llama_static_cache.py --torch 2.6.0 --variant pypi --mode non-strict --python 3.11
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
import sys
import traceback

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


def _same(expected, actual, what):
    """Raise AssertionError at the first pytree leaf where `actual` differs from eager's `expected`."""
    from torch.utils import _pytree

    want, got = _pytree.tree_flatten(expected)[0], _pytree.tree_flatten(actual)[0]
    if len(want) != len(got):
        raise AssertionError("%s has %d leaves, eager's %d" % (what, len(got), len(want)))
    for index, (e, a) in enumerate(zip(want, got)):
        if isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor):
            try:
                torch.testing.assert_close(a, e, equal_nan=True)
            except AssertionError as exc:
                raise AssertionError("%s, leaf %d, differs from eager's: %s" % (what, index, exc)) from None
        elif e != a:
            raise AssertionError("%s, leaf %d: %r, eager's %r" % (what, index, a, e))


def save(ep):
    """torch.export.save to a file of a new temporary folder: the program a fresh process loads."""
    import os
    import tempfile

    path = os.path.join(tempfile.mkdtemp(prefix="export-repro-"), "program.pt2")
    print("torch %s: torch.export.save" % torch.__version__, flush=True)
    torch.export.save(ep, path)
    return path


def load_in_a_fresh_process(path):
    """Load and run the saved program in a new Python that runs the case's code but never exports, as the cell does."""
    import os
    import shutil
    import subprocess

    try:
        done = subprocess.run([sys.executable, __file__, "--load", path])
    finally:
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)
    if done.returncode:
        raise RuntimeError("the fresh process failed (exit status %d): its traceback is above" % done.returncode)


def load(path):
    """In the fresh process: load the program and run it on the case's example inputs, then compare with eager.

    Eager runs last: what it does (a lazy registration) must not help the load, as it cannot in the cell's.
    """
    args, kwargs, _, _ = inputs()
    print("torch %s: torch.export.load, then a run of the loaded program" % torch.__version__, flush=True)
    loaded = torch.export.load(path)
    actual = loaded.module()(*_clone(args), **_clone(kwargs))
    expected = _clone(model)(*_clone(args), **_clone(kwargs))
    _same(expected, actual, "the loaded program's output")


def decompose(ep):
    """ExportedProgram.run_decompositions(), to the core ATen operator set."""
    print("torch %s: ep.run_decompositions()" % torch.__version__, flush=True)
    return ep.run_decompositions()


def after(failed, name, run):
    """Run one step on the exported program; a failure is printed and named in `failed`, and the next step runs."""
    try:
        run()
    except Exception:
        traceback.print_exc()
        failed.append(name)


def main():
    """The steps that reproduce the recorded failure, in the order the cell ran them."""
    args, kwargs, shapes, extra = inputs()
    # Eager first, on copies of the model and of each input, as the cell runs the case before exporting.
    print("torch %s: the eager run" % torch.__version__, flush=True)
    eager = _clone(model)
    calls = [(_clone(a), _clone(kwargs)) for a in [args, *extra]]
    expected = [eager(*a, **k) for a, k in calls]
    ep = export(args, kwargs, shapes)
    saved = save(ep)  # saved before the program runs: running it may update its buffers
    # Each step on the exported program runs, as in the cell, whether or not the one before failed.
    failed = []
    after(failed, "decompose", lambda: decompose(ep))
    after(failed, "serialize", lambda: load_in_a_fresh_process(saved))
    if failed:
        raise SystemExit("reproduced: %s failed (tracebacks above)" % ", ".join(failed))
    print("did not reproduce: every step ran without the recorded failure on torch %s" % torch.__version__)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--load"]:  # the fresh process of the save/load step
        load(sys.argv[2])
    else:
        main()
