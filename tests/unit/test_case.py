from __future__ import annotations

import ast
import copy
import re
from pathlib import Path
from typing import List

import pytest
import torch

from matrix.contract import dependencies
from matrix.contract.case import EXPECTED, TAGS, CaseError, CaseInfo, discover, read_info
from matrix.worker import capabilities, exportdb
from matrix.worker.case import Case, load

from conftest import ROOT

CASES = ROOT / "cases"
INFOS = discover([str(CASES)])
FOUND = capabilities.detect()

# APIs newer than torch 2.1: a case may reach them only lazily (inside a function body),
# so that it still imports on 2.1 and is reported not-applicable there.
NEWER_THAN_2_1 = {
    "Dim", "dims", "cond", "custom_op", "register_fake", "register_dataclass", "export_for_training",
    "while_loop", "scan", "associative_scan", "_check_is_size", "is_compiling", "is_exporting",
    "AUTO", "DYNAMIC", "STATIC", "draft_export",
}  # fmt: skip


def _names(infos: List[CaseInfo]) -> List[str]:
    return [info.name for info in infos]


def test_the_case_set_is_large_and_well_formed():
    assert len(INFOS) >= 100
    problems = [info.problem for info in INFOS if info.problem]
    assert problems == []
    folders = {info.name.split("/")[0] for info in INFOS}
    assert folders == {"exportdb", "tutorial", "strict_nonstrict", "models", "real_models"}
    assert _names(INFOS) == sorted(_names(INFOS))


def test_exportdb_folder_claims_the_support_levels_of_torchs_own_examples():
    """Where the installed torch bundles an ExportDB example of the same name, our claim of support holds there.

    Torch promotes examples to supported over releases (our claims follow the documented
    index), so a not-supported claim may have become supported; never the reverse.
    """
    ours = {info.name.split("/", 1)[1]: info for info in INFOS if info.name.startswith("exportdb/")}
    bundled = {info.name.split("/", 1)[-1]: info for info in exportdb.discover()}
    shared = set(ours) & set(bundled)
    assert len(shared) >= len(ours) // 2, "the exportdb folder should follow torch's ExportDB names"
    claimed = {name for name in shared if ours[name].expected == "supported"}
    assert claimed and {name: bundled[name].expected for name in claimed} == dict.fromkeys(claimed, "supported")
    assert {info.expected for info in ours.values()} <= {"supported", "not-supported-yet"}


@pytest.mark.parametrize("info", INFOS, ids=_names(INFOS))
def test_case_metadata(info: CaseInfo):
    assert info.description and not info.description[0].isspace()
    assert set(info.tags) <= TAGS
    assert set(info.requires) <= set(capabilities.PROBES)
    assert info.expected is None or info.expected in EXPECTED
    assert info.source == "cases"
    if "python.random" in info.tags:
        assert info.skip_check, "random cases must say why numbers are not compared"


@pytest.mark.parametrize("info", INFOS, ids=_names(INFOS))
def test_case_loads_and_runs_eagerly(info: CaseInfo):
    absent = sorted(name for name, version in dependencies.installed(info.dependencies).items() if version is None)
    if absent:  # the runner records such a cell not-applicable; `check` and the sessions install the set
        pytest.skip("the test environment lacks %s, which the case's PEP 723 block names" % ", ".join(absent))
    case = load(info)
    assert isinstance(case, Case)
    assert isinstance(case.model, torch.nn.Module)
    assert isinstance(case.example_args, tuple)
    assert isinstance(case.example_kwargs, dict)
    assert all(isinstance(args, tuple) for args in case.extra_args)
    assert case.dynamic_shapes is None or isinstance(case.dynamic_shapes, (dict, tuple, list))
    if case.dynamic_shapes is not None and info.expected != "fails":
        assert case.extra_args, "a dynamic case needs extra_args of other sizes to show the program generalises"
    missing = capabilities.missing(info.requires, FOUND)
    if missing:
        pytest.skip("torch %s lacks %s: the case's cells are not-applicable here" % (torch.__version__, missing))
    # Eager must work, or the cell would be a case-error rather than a statement about export.
    model = copy.deepcopy(case.model)
    model(*copy.deepcopy(case.example_args), **copy.deepcopy(case.example_kwargs))
    for args in case.extra_args:
        model(*copy.deepcopy(args), **copy.deepcopy(case.example_kwargs))


def _import_time_nodes(tree: ast.Module):
    """Nodes evaluated when the module is imported: everything outside function bodies."""
    pending: list = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending.extend(node.decorator_list)
            pending.extend(node.args.defaults)
            continue
        if isinstance(node, ast.Lambda):
            continue
        yield node
        pending.extend(ast.iter_child_nodes(node))


@pytest.mark.parametrize("info", INFOS, ids=_names(INFOS))
def test_newer_apis_are_reached_lazily(info: CaseInfo):
    tree = ast.parse(Path(info.path).read_text(encoding="utf-8"))
    for node in _import_time_nodes(tree):
        if isinstance(node, ast.Attribute):
            assert node.attr not in NEWER_THAN_2_1, "%s:%d: `.%s` at import time" % (info.path, node.lineno, node.attr)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("torch", "functorch"):
            names = {alias.name for alias in node.names}
            assert not names & NEWER_THAN_2_1, "%s:%d: imports %s at import time" % (info.path, node.lineno, names)


# Malformed case files: each must give a problem (or CaseError) that names the file.


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


GOOD = '"""Adds one."""\nimport torch\n\nmodel = torch.nn.Identity()\nexample_args = (torch.ones(2),)\n'


@pytest.mark.parametrize(
    "source, message",
    [
        ("def broken(:\n", "cannot parse"),
        ('"""No model."""\nimport torch\nexample_args = (torch.ones(1),)\n', "no module-level `model`"),
        ('"""No inputs."""\nimport torch\nmodel = torch.nn.Identity()\n', "no module-level `example_args`"),
        ("import torch\nmodel = torch.nn.Identity()\nexample_args = ()\n", "needs a docstring"),
        (GOOD + 'tags = {"torch.no-such-tag"}\n', "unknown tags ['torch.no-such-tag']"),
        (GOOD + 'TAG = "torch.cond"\ntags = [TAG]\n', "`tags` must be a literal"),
        (GOOD + 'requires = ["time_travel"]\n', "unknown capabilities in `requires` ['time_travel']"),
        (GOOD + 'expected = "works"\n', "`expected` must be one of"),
        (GOOD + "tags = [1, 2]\n", "`tags` must be a string or a collection of strings"),
    ],
    ids=["syntax", "no-model", "no-args", "no-docstring", "unknown-tag", "non-literal", "unknown-req", "bad-expected",
         "tag-types"],
)  # fmt: skip
def test_malformed_metadata_is_a_problem_naming_the_file(tmp_path: Path, source: str, message: str):
    path = _write(tmp_path, "broken.py", source)
    (info,) = discover([str(tmp_path)])
    assert info.name == "broken"
    assert info.problem is not None
    assert str(path) in info.problem and message in info.problem
    with pytest.raises(CaseError, match=re.escape(str(path))):
        load(info)


@pytest.mark.parametrize(
    "body, message",
    [
        ("model = 3\nexample_args = (1,)\n", "`model` must be a torch.nn.Module instance, got int"),
        ("model = torch.nn.Identity()\nexample_args = [torch.ones(1)]\n", "`example_args` must be a tuple, got list"),
        ("model = torch.nn.Identity()\nexample_args = (1,)\nextra_args = [[1]]\n", "`extra_args` must be a list"),
        ("model = torch.nn.Identity()\nexample_args = (1,)\ndynamic_shapes = 4\n", "`dynamic_shapes` must be"),
        ("raise RuntimeError('boom')\nmodel = None\nexample_args = ()\n", "import failed: RuntimeError: boom"),
    ],
    ids=["model-type", "args-type", "extra-type", "dynamic-type", "import-raises"],
)
def test_bad_values_raise_a_case_error_naming_the_file(tmp_path: Path, body: str, message: str):
    path = _write(tmp_path, "bad.py", '"""Bad values."""\nimport torch\n' + body)
    (info,) = discover([str(tmp_path)])
    assert info.problem is None
    with pytest.raises(CaseError) as raised:
        load(info)
    assert str(path) in str(raised.value) and message in str(raised.value)


def test_lazy_values_and_helpers_next_to_the_case(tmp_path: Path):
    _write(tmp_path, "theme/_helper_for_test_case.py", "SCALE = 3\n")
    _write(
        tmp_path,
        "theme/lazy.py",
        '"""Lazy values."""\nimport torch\nfrom _helper_for_test_case import SCALE\n\n'
        "model = torch.nn.Identity()\n\ndef example_args():\n    return (torch.ones(2) * SCALE,)\n\n"
        'def dynamic_shapes():\n    return {"input": None}\n',
    )
    _write(tmp_path, "_private/ignored.py", "this is not python (\n")
    (info,) = discover([str(tmp_path)])
    assert info.name == "theme/lazy"
    case = load(info)
    assert torch.equal(case.example_args[0], torch.full((2,), 3.0))
    assert case.dynamic_shapes == {"input": None}


def test_duplicate_names_name_both_files(tmp_path: Path):
    first = _write(tmp_path / "a", "same.py", GOOD)
    second = _write(tmp_path / "b", "same.py", GOOD)
    with pytest.raises(CaseError) as raised:
        discover([str(tmp_path / "a"), str(tmp_path / "b")])
    assert str(first) in str(raised.value) and str(second) in str(raised.value)


def test_missing_root_is_a_case_error(tmp_path: Path):
    with pytest.raises(CaseError, match="no such case file or folder"):
        discover([str(tmp_path / "nowhere")])


def test_read_info_of_a_single_file(tmp_path: Path):
    path = _write(tmp_path, "one.py", GOOD + 'tags = "torch.cond"\nexpected = "fails"\nskip_check = "random"\n')
    info = read_info(path, "one")
    assert info.tags == ("torch.cond",) and info.expected == "fails" and info.skip_check == "random"
    assert info.description == "Adds one."


# What torch says when an operation meets a tensor on another device than its inputs'.
_OTHER_DEVICE = ("is not on the expected device", "Expected all tensors to be on the same device")


def test_every_case_takes_its_device_from_its_inputs():
    """Moved to the meta device (as ``--device cuda`` moves a case to the GPU), no case meets a CPU tensor it built.

    A case that builds a tensor on the CPU inside ``forward`` cannot run on a GPU, and its CUDA column
    would say so as a case-error rather than tell anything about torch.export. Other errors on meta
    (``.item()``, data-dependent shapes) are meta's own limits, not the case's.
    """
    from matrix.worker.cell import _to_device

    pinned = {}
    for info in INFOS:
        if info.problem or info.dependencies or capabilities.missing(info.requires, FOUND):
            continue
        case = _to_device(load(info), "meta")
        try:
            case.model(*case.example_args, **case.example_kwargs)
        except Exception as exc:
            if any(text in str(exc) for text in _OTHER_DEVICE):
                pinned[info.name] = str(exc).splitlines()[0]
    assert pinned == {}


def test_a_case_declares_its_inputs_as_a_literal_list_of_globs(tmp_path: Path) -> None:
    body = '"""Reads weights."""\nimport torch\nmodel = torch.nn.Identity()\nexample_args = (torch.ones(1),)\n'
    good = tmp_path / "good.py"
    good.write_text(body + 'inputs = ["weights/*.safetensors", "shards/"]\n')
    assert read_info(good, "good").inputs == ("shards/", "weights/*.safetensors")
    bad = tmp_path / "bad.py"
    bad.write_text(body + "inputs = [3]\n")
    problem = read_info(bad, "bad").problem
    assert problem is not None and str(bad) in problem and "`inputs` must be a string or a collection" in problem
