"""The standalone repro script: valid Python, the exact install, the case inlined, the steps the failure needs."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Dict

import pytest

from matrix.records import repro_script
from matrix.records.repro import Cell
from matrix.records.repro_script import CALL, RESOLVE, VALUE, CaseSource

from conftest import ROOT, make_cell

CASES = ROOT / "cases"


def cell(status: str = "fail", mode: str = "strict", **extra: Any) -> Cell:
    values: Dict[str, Any] = dict(source="cases", case_file="cases/x.py", error_type="E", error_message="boom")
    values.update(extra)
    return Cell.from_row(make_cell("2.13.0+cpu", "x", status, mode, **values))


def case_at(path: Path, text: str) -> CaseSource:
    path.write_text(text, encoding="utf-8")
    return repro_script.read_case(str(path), "cases/x.py")


PLAIN = '''"""A linear layer."""

import torch

model = torch.nn.Linear(2, 2)
example_args = (torch.randn(3, 2),)
'''


def test_the_script_is_python_that_names_the_cell_its_install_and_its_check_command(tmp_path: Path):
    added = {"transformers": "4.57.6"}
    failing = Cell.from_row(
        dict(make_cell("2.13.0+cpu", "x", "fail", case_file="cases/x.py", dependency_set="transformers"),
             added_packages=added)
    )  # fmt: skip
    text = repro_script.script(failing, case_at(tmp_path / "x.py", PLAIN))
    compile(text, "repro.py", "exec")
    header = text.split("\n\n", 1)[0]
    assert header.startswith(
        "# Reproduces, without torch-export-matrix, the failure of the cell\n#   torch-2.13.0+cpu/strict/x\n"
    )
    assert (
        "#   pip install torch==2.13.0+cpu numpy transformers==4.57.6"
        " --extra-index-url https://download.pytorch.org/whl/cpu\n" in header
    )
    assert "#   export-matrix check cases/x.py --torch 2.13.0+cpu --variant cpu --mode strict --python 3.11" in header
    assert all(line.startswith("#") for line in header.splitlines())
    assert "model = torch.nn.Linear(2, 2)\n" in text and "STRICT = True  # the cell's mode: strict" in text


def test_a_non_strict_cell_exports_with_strict_false_where_the_keyword_exists(tmp_path: Path):
    text = repro_script.script(cell(mode="non-strict"), case_at(tmp_path / "x.py", PLAIN))
    assert "STRICT = False" in text
    assert 'if "strict" in inspect.signature(torch.export.export).parameters:' in text


def test_a_failed_export_runs_eager_then_the_export_and_nothing_after(tmp_path: Path):
    text = repro_script.script(cell(), case_at(tmp_path / "x.py", PLAIN))
    main = _function(text, "main")
    # Eager first, as in the cell: what it does (a lazy registration) can decide what the export meets.
    assert main.index("eager = _clone(model)") < main.index("ep = export(args, kwargs, shapes)")
    assert "check(" not in main and "decompose" not in main and "--load" not in text


def test_later_failed_steps_each_run_and_report_in_the_cells_order(tmp_path: Path):
    failing = cell(
        "mismatch",
        failed_stage="check",
        decompose_status="error",
        decompose_error="RuntimeError: d",
        serialize_status="error",
        serialize_error="load: KeyError: s",
    )
    text = repro_script.script(failing, case_at(tmp_path / "x.py", PLAIN))
    compile(text, "repro.py", "exec")
    main = _function(text, "main")
    order = ["eager = _clone(model)", "ep = export(", "saved = save(ep)", '"check"', '"decompose"', '"serialize"']
    assert [main.index(step) for step in order] == sorted(main.index(step) for step in order)
    assert 'if sys.argv[1:2] == ["--load"]:' in text and "def load(path):" in text
    assert "#   mismatch at check: E: boom\n#   decompose failed: RuntimeError: d\n" in text


def test_a_single_later_step_raises_where_it_fails(tmp_path: Path):
    text = repro_script.script(
        cell("pass", decompose_status="error", decompose_error="e"), case_at(tmp_path / "x.py", PLAIN)
    )
    main = _function(text, "main")
    assert "    decompose(ep)\n" in main and "failed = []" not in main and "import traceback" not in text


def test_a_case_that_compares_nothing_is_run_but_not_compared(tmp_path: Path):
    source = PLAIN + 'skip_check = "random numbers"\n'
    text = repro_script.script(cell("mismatch", failed_stage="check"), case_at(tmp_path / "x.py", source))
    assert "_same(" not in _function(text, "check") and "# the case's skip_check: random numbers" in text


def test_the_modules_a_case_imports_from_its_folder_are_inlined_before_it():
    path = CASES / "exportdb" / "cond_predicate.py"
    case = repro_script.read_case(str(path), "cases/exportdb/cond_predicate.py")
    assert [name for name, _ in case.helpers] == ["_exportdb_ops"]
    text = repro_script.script(cell(case_file="cases/exportdb/cond_predicate.py"), case)
    compile(text, "repro.py", "exec")
    assert text.index("_inlined_module('_exportdb_ops',") < text.index("from _exportdb_ops import cond")
    inlined = _inlined(text)
    assert inlined == {"_exportdb_ops": (CASES / "exportdb" / "_exportdb_ops.py").read_text(encoding="utf-8")}


def test_helpers_are_inlined_after_the_helpers_they_import(tmp_path: Path):
    (tmp_path / "_low.py").write_text("X = 1\n", encoding="utf-8")
    (tmp_path / "_high.py").write_text("from _low import X\nY = X + 1\n", encoding="utf-8")
    case = case_at(tmp_path / "x.py", "import _high\n" + PLAIN)
    assert [name for name, _ in case.helpers] == ["_low", "_high"]


def test_future_imports_open_the_script_and_the_pep_723_block_is_left_out(tmp_path: Path):
    source = '# /// script\n# dependencies = ["timm"]\n# ///\n"""Doc."""\n\nfrom __future__ import annotations\n\n'
    source += PLAIN.split('"""\n', 1)[1]
    case = case_at(tmp_path / "x.py", source)
    text = repro_script.script(cell(), case)
    compile(text, "repro.py", "exec")
    code = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert code[0] == "from __future__ import annotations"
    assert "# /// script" not in text and "timm" in text.split("\n\n", 1)[0]  # the install line names it


@pytest.mark.parametrize(
    "source, expected",
    [
        (
            "def dynamic_shapes():\n    return None\nexample_args = (1,)\n",
            {"dynamic_shapes": CALL, "example_args": VALUE},
        ),
        ("dynamic_shapes = make\nextra_args = build()\n", {"dynamic_shapes": RESOLVE, "extra_args": RESOLVE}),
        ("example_kwargs = {'a': 1}\n", {"example_kwargs": VALUE}),
    ],
)
def test_each_input_is_read_as_the_worker_resolves_it(source: str, expected: Dict[str, str]):
    assert repro_script.defined(source) == expected


def test_a_case_that_names_a_function_for_its_inputs_gets_the_workers_resolution(tmp_path: Path):
    source = PLAIN + "def shapes():\n    return None\n\n\ndynamic_shapes = shapes\n"
    text = repro_script.script(cell(), case_at(tmp_path / "x.py", source))
    assert "    shapes = _value(dynamic_shapes)\n" in text and "def _value(value):" in text


@pytest.mark.parametrize(
    "source", ["plain\n", "a '''quoted''' text\n", "both ''' and \"\"\"\n", "ends in \\", "\\n kept\n"]
)
def test_an_inlined_helper_keeps_its_source_exactly(source: str):
    assert eval(repro_script._literal(source), {}) == source


def _function(text: str, name: str) -> str:
    tree = ast.parse(text)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return str(ast.get_source_segment(text, node))


def _inlined(text: str) -> Dict[str, str]:
    found = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_inlined_module":
            found[ast.literal_eval(node.args[0])] = eval(ast.unparse(node.args[1]), {})
    return found


def on_the_cpu(on_device: Cell) -> Cell:
    import dataclasses

    return dataclasses.replace(on_device, device="cpu", gpu=None)


def test_a_cell_on_a_gpu_moves_the_model_and_every_input_there_and_says_where_it_ran(tmp_path: Path):
    import dataclasses

    import torch

    gpu = "NVIDIA H200, compute 9.0, driver 580.1"
    text = repro_script.script(cell(device="cuda", gpu=gpu), case_at(tmp_path / "x.py", PLAIN))
    header = text.split("\n\n", 1)[0]
    assert "Python 3.11, on cuda (%s):" % gpu in " ".join(line.lstrip("# ") for line in header.splitlines())
    assert "--python 3.11 --device cuda" in header
    main = _function(text, "main")
    assert main.index("args, kwargs, shapes, extra = inputs()") < main.index("model.to(DEVICE)")
    assert main.index("model.to(DEVICE)") < main.index("eager = _clone(model)")
    # The script's own mover, run here on the meta device (this machine may have no GPU).
    namespace: Dict[str, Any] = {"__name__": "repro_under_test"}
    exec(compile(text, "repro.py", "exec"), namespace)
    assert namespace["DEVICE"] == "cuda"
    namespace["DEVICE"] = "meta"

    @dataclasses.dataclass
    class Pair:
        a: Any
        b: Any

    moved = namespace["_on_device"](((torch.ones(2), [torch.ones(1)]), {"k": Pair(torch.ones(3), 4)}, "text"))
    assert [t.device.type for t in (moved[0][0], moved[0][1][0], moved[1]["k"].a)] == ["meta"] * 3
    assert isinstance(moved[1]["k"], Pair) and moved[1]["k"].b == 4 and moved[2] == "text"
    # A CPU cell's script moves nothing.
    assert "DEVICE" not in repro_script.script(cell(), case_at(tmp_path / "x.py", PLAIN))
    # The fresh process of the save/load step runs the program it loads on the device it was saved on.
    saved = cell("pass", device="cuda", serialize_status="error", serialize_error="load: KeyError: s")
    load = _function(repro_script.script(saved, case_at(tmp_path / "x.py", PLAIN)), "load")
    assert load.index("args, kwargs = _on_device(args), _on_device(kwargs)") < load.index("loaded.module()(")
    assert load.index("model.to(DEVICE)") < load.index("expected = _clone(model)")
    on_cpu = _function(repro_script.script(on_the_cpu(saved), case_at(tmp_path / "x.py", PLAIN)), "load")
    assert "DEVICE" not in on_cpu and "_on_device" not in on_cpu
