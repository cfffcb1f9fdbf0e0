"""Graph fingerprints of programs exported here, and across separate runs."""

from __future__ import annotations

import difflib
import re
from types import SimpleNamespace

import torch

from matrix.worker.fingerprint import FINGERPRINT_VERSION, fingerprint, raw_text

from conftest import FIXTURES, by_cell, read_cells, run_matrix


def test_hash_is_equal_across_separate_runs(basic_run, tmp_path):
    run_matrix(
        "run", "--cases", str(FIXTURES / "basic"), "--out", str(tmp_path), "--select", "add_one", "dynamic_batch"
    )
    again = by_cell(read_cells(tmp_path))
    first = by_cell(basic_run)
    for key in again:
        assert again[key]["graph_hash"] == first[key]["graph_hash"], key
        assert again[key]["decomposed_hash"] == first[key]["decomposed_hash"], key
        assert again[key]["fingerprint_version"] == FINGERPRINT_VERSION, key
    assert first[("add_one", "strict")]["graph_hash"] != first[("dynamic_batch", "strict")]["graph_hash"]


class AddNamed(torch.nn.Module):
    def forward(self, some_input):
        renamed_intermediate = some_input + 1
        return renamed_intermediate * 3


class AddOther(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        return y * 3


class AddChanged(torch.nn.Module):
    def forward(self, x):
        y = x + 2
        return y * 3


def _export(model, *args, strict=False, **kwargs):
    return torch.export.export(model, args, strict=strict, **kwargs)


def test_hash_ignores_names_and_changes_with_the_graph():
    x = torch.ones(2, 3)
    named = fingerprint(_export(AddNamed(), x))
    other = fingerprint(_export(AddOther(), x))
    changed = fingerprint(_export(AddChanged(), x))
    assert named[0] == other[0]
    assert named[0] != changed[0]
    assert named[1] == ["aten.add.Tensor", "aten.mul.Tensor"]
    assert named[2] == 4  # input, add, mul, output
    assert "some_input" not in named[3] and "renamed" not in named[3]
    assert "float32[2,3]" in named[3]
    bigger = fingerprint(_export(AddOther(), torch.ones(4, 3)))
    assert bigger[0] != other[0]  # shapes are part of the graph


def test_symbols_are_renamed_by_first_appearance():
    dim = torch.export.Dim("batch", min=2, max=100)
    text = fingerprint(_export(AddOther(), torch.ones(4, 3), dynamic_shapes=({0: dim},)))[3]
    assert "float32[S0,3]" in text


def _closure_module(offset):
    table = torch.arange(3.0)

    class ClosurePlus(torch.nn.Module):
        def forward(self, x):
            return x * table + offset

    return ClosurePlus()


def test_a_closed_over_constant_hashes_alike_in_both_modes_on_this_release():
    """Strict names the constant after the closure cell, non-strict ``lifted_tensor_0``."""
    x = torch.ones(2, 3)
    strict = fingerprint(_export(_closure_module(1), x, strict=True))
    loose = fingerprint(_export(_closure_module(1), x, strict=False))
    assert strict[0] == loose[0], "\n".join(difflib.unified_diff(strict[3].splitlines(), loose[3].splitlines()))
    assert "const0 = CONSTANT_TENSOR : float32[3]" in strict[3]
    assert not re.search(r"lifted|closure|cell_contents", strict[3] + loose[3])


# --------------------------------------------------------------------------- raw text from torch


class WithState(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)
        self.register_buffer("count", torch.zeros(2))

    def forward(self, x):
        self.count.add_(1)
        return self.linear(x) + self.count


def _legacy(ep, prefix, flatten=False):
    """The same program as releases before input/output specs (2.1) describe it."""
    sig = ep.graph_signature

    def name(fqn):
        return prefix + (fqn.replace(".", "_") if flatten else fqn)

    return SimpleNamespace(
        graph_module=ep.graph_module,
        state_dict=ep.state_dict,
        graph_signature=SimpleNamespace(
            input_specs=None,
            inputs_to_parameters={k: name(v) for k, v in sig.inputs_to_parameters.items()},
            inputs_to_buffers={k: name(v) for k, v in sig.inputs_to_buffers.items()},
            buffers_to_mutate={k: name(v) for k, v in sig.buffers_to_mutate.items()},
        ),
    )


def test_a_legacy_graph_signature_gives_the_same_fingerprint():
    # decomposed, the buffer update is an output of the graph (a BUFFER_MUTATION)
    ep = _export(WithState(), torch.ones(2, 2), strict=True).run_decompositions()
    assert fingerprint(_legacy(ep, "L__self___")) == fingerprint(ep)
    assert "out0 BUFFER_MUTATION count = " in fingerprint(ep)[3]


class Nested(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = WithState()

    def forward(self, x):
        return self.inner(x)


def test_a_legacy_flattened_state_name_is_mapped_back_to_its_fqn():
    ep = _export(Nested(), torch.ones(2, 2), strict=True).run_decompositions()
    legacy = _legacy(ep, "L__self___", flatten=True)
    assert "target='inner.linear.weight'" in raw_text(legacy)
    assert fingerprint(legacy) == fingerprint(ep)
    assert "PARAMETER inner.linear.weight" in fingerprint(ep)[3]
