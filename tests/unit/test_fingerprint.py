"""Graph fingerprints: the canonical text of graphs recorded on several releases and modes."""

from __future__ import annotations

import difflib
import re

import pytest

from matrix.worker.canonical import canonicalize, normalize_text

from conftest import DATA

GRAPHS = DATA / "graphs"


def test_normalize_text_drops_addresses_and_absolute_paths():
    text = "<function sym_min at 0x7f3a2b1c9d00> in /home/someone/env/lib/python3.11/site-packages/torch/x.py:12"
    assert normalize_text(text) == "<function sym_min> in x.py:12"
    assert normalize_text("cases/exportdb/foo.py: bad") == "cases/exportdb/foo.py: bad"


# --------------------------------------------------------------------------- recorded raw texts


def _recorded():
    """{(release, mode, program, stage): raw text} of every file under tests/data/graphs."""
    found = {}
    for path in sorted(GRAPHS.glob("*/*/*.txt")):
        name = path.name[: -len(".txt")]
        program, _, stage = name.partition(".")
        found[(path.parent.parent.name, path.parent.name, program, stage or "export")] = path.read_text()
    return found


RECORDED = _recorded()


def _body(release, mode, program, stage):
    """Which graph body a recording holds, by reading its program and torch's known behaviour.

    The training IR of 2.13 keeps a mutation in the graph as an in-place op; decomposed,
    and in the older releases' exports, it is a functional output of the graph. Decomposing
    ``cond_branches`` rewrites ``aten.sum.default`` as ``aten.sum.dim_IntList``.
    """
    if program in ("input_mutation", "buffer_mutation", "batchnorm_train"):
        in_place = release == "2.13.0" and stage == "export"
        return (program, "in-place" if in_place else "functional")
    if program == "cond_branches":
        return (program, stage)
    return (program,)


def test_the_recordings_cover_releases_modes_and_the_spellings_they_differ_in():
    # Guards the data the tests below rely on: without these, equal hashes would prove little.
    releases = {key[0] for key in RECORDED}
    assert {"2.2.2", "2.3.1", "2.5.1", "2.13.0"} <= releases
    for program in ("closure_plus1", "input_mutation", "buffer_mutation", "batchnorm_train"):
        modes = {key[1] for key in RECORDED if key[2] == program}
        assert modes == {"strict", "non-strict"}, program
    constants = {
        re.search(r"^input CONSTANT_TENSOR %\w+ target='(\w+)'", text, re.M).group(1)
        for key, text in RECORDED.items()
        if key[2] == "closure_plus1"
    }
    assert {"_lifted_tensor_constant0", "lifted_tensor_0"} <= constants
    assert any("closure" in name and "cell_contents" in name for name in constants)
    mutated = {
        re.search(r"^output USER_INPUT_MUTATION %\w+ target='(\w+)'", text, re.M).group(1)
        for key, text in RECORDED.items()
        if key[2] == "input_mutation" and "USER_INPUT_MUTATION" in text
    }
    assert mutated == {"l_x_", "arg0_1", "x"}
    buffer_orders = {
        tuple(re.findall(r"^input BUFFER %\w+ target='([\w.]+)'", text, re.M))
        for key, text in RECORDED.items()
        if key[2] == "batchnorm_train"
    }
    assert len(buffer_orders) == 2


def test_equal_bodies_hash_equal_across_releases_and_modes_and_only_they():
    hashes = {key: canonicalize(text)[0] for key, text in RECORDED.items()}
    by_body = {}
    for key, digest in hashes.items():
        by_body.setdefault(_body(*key), set()).add(digest)
    for body, digests in by_body.items():
        assert len(digests) == 1, (body, sorted(k for k in hashes if _body(*k) == body))
    # and different bodies never share a hash
    assert len({next(iter(d)) for d in by_body.values()}) == len(by_body)
    # the mutation bodies really were recorded from several releases in both modes
    for program in ("input_mutation", "buffer_mutation", "batchnorm_train"):
        functional = [k for k in hashes if _body(*k) == (program, "functional")]
        assert {k[0] for k in functional} >= {"2.2.2", "2.3.1", "2.5.1", "2.13.0"}, program
        assert {k[1] for k in functional} == {"strict", "non-strict"}, program


def test_a_changed_constant_op_changes_the_hash_and_only_its_line():
    for release, mode in (("2.3.1", "non-strict"), ("2.5.1", "non-strict"), ("2.13.0", "strict")):
        plus1 = canonicalize(RECORDED[(release, mode, "closure_plus1", "export")])
        plus2 = canonicalize(RECORDED[(release, mode, "closure_plus2", "export")])
        assert plus1[0] != plus2[0]
        changed = [line for line in difflib.ndiff(plus1[1].splitlines(), plus2[1].splitlines()) if line[:1] in "+-"]
        assert changed == [
            "- v1 = aten.add.Tensor(v0, 1) : float32[2,3]",
            "+ v1 = aten.add.Tensor(v0, 2) : float32[2,3]",
        ]


@pytest.mark.parametrize("key", sorted(RECORDED), ids=lambda key: "/".join(key))
def test_no_name_torch_generates_reaches_the_canonical_text(key):
    raw = RECORDED[key]
    text = canonicalize(raw)[1]
    user_fqns = set(re.findall(r"^input (?:PARAMETER|BUFFER) .*?target='(\w+)'", raw, re.M))
    generated = set(re.findall(r"%(\w+)", raw)) | set(re.findall(r"target='(\w+)'", raw)) - user_fqns
    words = set(re.findall(r"(?<![\w.])[A-Za-z_]\w*(?![\w.])", text))
    assert not generated & words
    assert "?" not in text  # every reference resolved
    assert re.search(r"\bs\d+\b", text) is None  # symbols renamed


def test_state_is_numbered_by_fqn_whatever_order_torch_lists_it_in():
    strict = canonicalize(RECORDED[("2.13.0", "strict", "batchnorm_train", "decomposed")])[1]
    loose = canonicalize(RECORDED[("2.13.0", "non-strict", "batchnorm_train", "decomposed")])[1]
    assert strict == loose
    lines = strict.splitlines()
    assert [line.split(" : ")[0] for line in lines if "BUFFER" in line] == [
        "buffer0 = BUFFER bn.num_batches_tracked",
        "buffer1 = BUFFER bn.running_mean",
        "buffer2 = BUFFER bn.running_var",
        "out0 BUFFER_MUTATION bn.num_batches_tracked = v0",
        "out1 BUFFER_MUTATION bn.running_mean = v3",
        "out2 BUFFER_MUTATION bn.running_var = v4",
    ]
    assert lines[-1] == "out3 USER_OUTPUT = v2"


def test_user_fqns_stay_and_torch_placeholders_go():
    text = canonicalize(RECORDED[("2.5.1", "strict", "buffer_mutation", "export")])[1]
    assert text.splitlines()[:3] == [
        "param0 = PARAMETER counter.scale : float32[3]",
        "buffer0 = BUFFER counter.total : float32[3]",
        "input0 = USER_INPUT : float32[2,3]",
    ]
    assert "out0 BUFFER_MUTATION counter.total = v3" in text
    mutation = canonicalize(RECORDED[("2.2.2", "strict", "input_mutation", "export")])[1]
    assert "out0 USER_INPUT_MUTATION input0 = v0" in mutation


def test_subgraphs_are_canonical_inside_too():
    # 2.2.2 names a branch's input arg0_1, 2.13.0 names it after the outer input.
    old = canonicalize(RECORDED[("2.2.2", "strict", "cond_branches", "export")])
    new = canonicalize(RECORDED[("2.13.0", "non-strict", "cond_branches", "export")])
    assert old == new
    assert "graph0 = subgraph {\n  in0 = input : float32[2,3]\n  v0 = aten.sin.default(in0)" in new[1]
    assert "higher_order.cond(v1, graph0, graph1, [input0])" in new[1]


# --------------------------------------------------------------------------- canonicalize on its own


def test_inputs_are_ordered_by_role_whatever_order_torch_lists_them_in():
    constants_first = (
        "input CONSTANT_TENSOR %c_k target='lifted_tensor_0'\n"
        "input PARAMETER %p_w target='w'\n"
        "input USER_INPUT %x\n"
        "output USER_OUTPUT %mul\n"
        "%c_k = placeholder : float32[3]\n%p_w = placeholder : float32[3]\n%x = placeholder : float32[3]\n"
        "%add = call_function aten.add.Tensor(%x, %c_k) : float32[3]\n"
        "%mul = call_function aten.mul.Tensor(%add, %p_w) : float32[3]\n"
        "return [%mul]\n"
    )
    parameters_first = (
        "input PARAMETER %arg0_1 target='w'\n"
        "input CONSTANT_TENSOR %_lifted_tensor_constant0 target='_lifted_tensor_constant0'\n"
        "input USER_INPUT %arg1_1\n"
        "output USER_OUTPUT %mul\n"
        "%arg0_1 = placeholder : float32[3]\n%_lifted_tensor_constant0 = placeholder : float32[3]\n"
        "%arg1_1 = placeholder : float32[3]\n"
        "%add = call_function aten.add.Tensor(%arg1_1, %_lifted_tensor_constant0) : float32[3]\n"
        "%mul = call_function aten.mul.Tensor(%add, %arg0_1) : float32[3]\n"
        "return [%mul]\n"
    )
    assert canonicalize(constants_first) == canonicalize(parameters_first)
    swapped = parameters_first.replace(
        "aten.add.Tensor(%arg1_1, %_lifted_tensor_constant0)", "aten.add.Tensor(%arg1_1, %arg0_1)"
    )
    assert canonicalize(swapped)[0] != canonicalize(parameters_first)[0]


def test_strings_keep_their_text_but_not_node_names_or_symbols():
    raw = (
        "input USER_INPUT %x\n"
        "output USER_OUTPUT %x\n"
        "%x = placeholder : float32[s3]\n"
        "%ge = call_function aten.ge.Scalar(%x, 2) : bool[s3]\n"
        "%assert = call_function aten._assert_scalar.default(%ge, "
        "'Runtime assertion failed for expression s3 >= 2 on node \\'ge_1\\' (%x)') : -\n"
        "return [%x]\n"
    )
    text = canonicalize(raw)[1]
    assert "'Runtime assertion failed for expression S0 >= 2 on node ? (%x)'" in text
    assert "v1 = aten._assert_scalar.default(v0, " in text


def test_literal_spec_arguments_and_unlisted_placeholders_are_kept():
    raw = (
        "input USER_INPUT %x\n"
        "input USER_INPUT None\n"
        "output USER_OUTPUT %x\n"
        "output USER_OUTPUT 3\n"
        "%x = placeholder : float32[2]\n"
        "%extra = placeholder : int64[]\n"
        "return [%x, 3]\n"
    )
    assert canonicalize(raw)[1].splitlines() == [
        "input0 = USER_INPUT : float32[2]",
        "input1 = USER_INPUT = None",
        "in0 = input : int64[]",
        "out0 USER_OUTPUT = input0",
        "out1 USER_OUTPUT = 3",
    ]


def test_a_graph_without_signature_keeps_its_return_line():
    # Without output specs the return line is the only record of what the graph returns.
    raw = "%x = placeholder : float32[s0]\n%y = call_function aten.neg.default(%x) : float32[s0]\nreturn [%y, %x]\n"
    assert canonicalize(raw)[1].splitlines() == [
        "in0 = input : float32[S0]",
        "v0 = aten.neg.default(in0) : float32[S0]",
        "return [v0, in0]",
    ]


def test_a_text_that_is_not_raw_graph_text_is_refused():
    with pytest.raises(ValueError, match="line 2"):
        canonicalize("input USER_INPUT %x\nx = placeholder\n")
    with pytest.raises(ValueError, match="unclosed"):
        canonicalize("%g = get_attr 'true_graph_0' {\n%y = placeholder : -\n")
