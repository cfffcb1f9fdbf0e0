from __future__ import annotations

import torch

from matrix.worker.fingerprint import fingerprint, normalize_text

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


def _export(model, *args, **kwargs):
    return torch.export.export(model, args, strict=False, **kwargs)


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


def test_normalize_text_drops_addresses_and_absolute_paths():
    text = "<function sym_min at 0x7f3a2b1c9d00> in /home/someone/env/lib/python3.11/site-packages/torch/x.py:12"
    assert normalize_text(text) == "<function sym_min> in x.py:12"
    assert normalize_text("cases/exportdb/foo.py: bad") == "cases/exportdb/foo.py: bad"


class WithState(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)
        self.register_buffer("count", torch.zeros(2))

    def forward(self, x):
        self.count.add_(1)
        return self.linear(x) + self.count


def test_a_legacy_graph_signature_gives_the_same_fingerprint():
    """Releases before input/output specs (2.1) name state with dynamo's prefix; the text must match."""
    from types import SimpleNamespace

    # decomposed, the buffer update is an output of the graph (a BUFFER_MUTATION)
    ep = torch.export.export(WithState(), (torch.ones(2, 2),), strict=True).run_decompositions()
    sig = ep.graph_signature
    legacy = SimpleNamespace(
        graph_module=ep.graph_module,
        graph_signature=SimpleNamespace(
            input_specs=None,
            inputs_to_parameters={k: "L__self___" + v for k, v in sig.inputs_to_parameters.items()},
            inputs_to_buffers={k: "L__self___" + v for k, v in sig.inputs_to_buffers.items()},
            buffers_to_mutate={k: "L__self___" + v for k, v in sig.buffers_to_mutate.items()},
        ),
    )
    assert fingerprint(legacy) == fingerprint(ep)
    assert "out BUFFER_MUTATION count" in fingerprint(ep)[3]
