"""The standalone script that reproduces a failing cell without torch-export-matrix, ready for an upstream issue.

The script is plain Python and torch: a header that says what was recorded, which step it
reproduces and what to install (:func:`matrix.records.repro.install`), then the case's source
inlined (with the modules it imports from its own folder, such as ``_exportdb_ops``), then what
the worker does with a case (matrix/worker/cell.py), written out in plain torch: the eager run
on copies, ``torch.export.export`` with the cell's ``strict=`` (left out before torch 2.2, whose
export is strict only), and the later steps the failure needs: the check against eager,
``run_decompositions()``, or a save and a load in a fresh process. It raises where the failure
reproduces and prints ``did not reproduce`` where it does not.

The script is text, written on the host: nothing here imports torch or runs the case.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from matrix.contract.case import CaseInfo, imported_modules, read_info
from matrix.records import repro
from matrix.records.repro import CHECK, DECOMPOSE, EAGER, EXPORT, SERIALIZE, Cell
from matrix.records.repro_code import (
    AFTER_CALLS,
    AFTER_FUNCTION,
    CHECK_FUNCTION,
    CLONE,
    COMPARE_LOADED,
    DECOMPOSE_FUNCTION,
    DEVICE_FUNCTION,
    EXPORT_FUNCTION,
    INLINED_MODULE,
    INPUTS_FUNCTION,
    LOAD_FUNCTION,
    LOAD_ON_DEVICE,
    SAME,
    SAVE_FUNCTION,
    SKIPPED,
    UNCOMPARED_CHECK,
    VALUE_FUNCTION,
)

# What a case defines that the script reads, and how: a function is called, a literal used as it is,
# anything else (a name bound to a function, a call) goes through ``_value`` as the worker's loader does.
INPUTS = ("example_args", "example_kwargs", "dynamic_shapes", "extra_args")
CALL, VALUE, RESOLVE = "call", "value", "resolve"
_LITERALS = (ast.Tuple, ast.List, ast.Dict, ast.Set, ast.Constant)
RULE = "# " + "-" * 98
HEADER_WIDTH = 98


@dataclass(frozen=True)
class CaseSource:
    """A case file as a script inlines it: its text, the modules it imports from its folder, its metadata."""

    label: str  # the case file as the records name it: cases/exportdb/cond_predicate.py
    text: str
    helpers: Tuple[Tuple[str, str], ...] = ()  # (module name, source), each after those it imports
    info: Optional[CaseInfo] = None

    @property
    def declared(self) -> Tuple[str, ...]:
        """The case's PEP 723 requirements."""
        return self.info.dependencies if self.info is not None else ()

    @property
    def skip_check(self) -> Optional[str]:
        """Why the case's outputs are not compared with eager (random ops, ...), where it says so."""
        return self.info.skip_check if self.info is not None else None


def read_case(path: str, label: str) -> CaseSource:
    """Read a case file and every module it imports from its own folder (recursively); OSError if unreadable."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    helpers: Dict[str, str] = {}
    _collect_helpers(text, file.parent, helpers, {file.stem})
    return CaseSource(label, text, tuple(helpers.items()), read_info(file, file.stem))


def _collect_helpers(text: str, folder: Path, found: Dict[str, str], visiting: set) -> None:
    """Add to ``found`` each module of ``folder`` that ``text`` imports, those it imports first."""
    for name in imported_modules(text):
        helper = folder / (name + ".py")
        if name in found or name in visiting or not helper.is_file():
            continue
        source = helper.read_text(encoding="utf-8")
        _collect_helpers(source, folder, found, visiting | {name})
        found[name] = source


# --- the script ------------------------------------------------------------------------------------


def script(cell: Cell, case: CaseSource) -> str:
    """The whole script for ``cell``, whose case is ``case``."""
    steps = repro.plan(cell)
    body, futures = _case_body(case.text)
    parts = [_header(cell, case, steps)]
    if futures:
        parts.append("\n".join(futures) + "\n")
    if case.helpers:
        parts.append(_helpers(case.helpers))
    parts.append("%s\n# The case: %s\n%s\n\n%s" % (RULE, _one_line(case.label), RULE, body.rstrip("\n") + "\n"))
    parts.append(_run(cell, case, steps))
    return "\n\n".join(part.rstrip("\n") for part in parts) + "\n"


def _header(cell: Cell, case: CaseSource, steps: Sequence[str]) -> str:
    wanted = repro.install(cell, case.declared)
    lines = [
        "Reproduces, without torch-export-matrix, the failure of the cell",
        "  " + cell.cell_id,
        "",
        "Recorded on torch %s (variant %s%s), Python %s%s%s:"
        % (
            cell.release,
            cell.variant,
            ", git %s" % cell.git_version if cell.git_version else "",
            cell.python,
            " with --with %s" % cell.with_set if cell.with_set else "",
            "" if cell.device == "cpu" else ", on %s (%s)" % (cell.device, cell.gpu or "its GPU not recorded"),
        ),
        *("  " + line for line in repro.recorded(cell)),
        "This script reproduces %s." % repro.reproduces(cell),
        "It runs: %s; strict=%s." % (", then ".join(steps), cell.mode == "strict"),
        "",
        "Install, in a fresh environment of Python %s:" % cell.python,
        "  " + wanted.command,
    ]
    if wanted.note:
        lines.append("  (%s)" % wanted.note)
    if wanted.resolved:
        lines.append(
            "  (with those, the cell's environment had: %s)" % ", ".join("%s==%s" % p for p in wanted.resolved)
        )
    lines += [
        "then run this file with that Python. Where the failure reproduces, it raises (the traceback ends"
        " with the error); where it does not, it prints 'did not reproduce'.",
    ]
    command = repro.check_command(cell)
    if command:
        lines += ["", "The same cell with torch-export-matrix, from its checkout:", "  " + command]
    lines += [
        "",
        "Below: the case, %s, as it was where this script was written, then what torch-export-matrix does"
        " with a case (matrix/worker/cell.py), in plain torch." % case.label,
    ]
    return "\n".join(("# " + line).rstrip() for line in _wrapped(lines))


def _wrapped(lines: Sequence[str]) -> List[str]:
    """Prose lines wrapped at HEADER_WIDTH; indented lines (records, commands) kept whole, to copy as they are."""
    found: List[str] = []
    for line in lines:
        line = _one_line(line)
        found += [line] if line.startswith(" ") or not line else textwrap.wrap(line, HEADER_WIDTH)
    return found


def _one_line(text: str) -> str:
    return " ".join(text.split("\n")).replace("\r", " ")


def _case_body(text: str) -> Tuple[str, List[str]]:
    """The case's source without its PEP 723 block (the header's install line holds it) and without its
    ``from __future__`` imports, which must open a file: they are returned to go at the top of the script."""
    lines = text.splitlines()
    futures: List[str] = []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        tree = None
    if tree is not None:
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                end = node.end_lineno or node.lineno
                futures.append("\n".join(lines[node.lineno - 1 : end]))
                lines[node.lineno - 1 : end] = [""] * (end - node.lineno + 1)
                lines[node.lineno - 1] = "# (its __future__ import opens this script)"
    return "\n".join(_without_block(lines)) + "\n", futures


def _without_block(lines: List[str]) -> List[str]:
    """The lines without a ``# /// script`` ... ``# ///`` block, which would make tools read the case's needs."""
    if "# /// script" not in lines:
        return lines
    start = lines.index("# /// script")
    end = next((i for i in range(start + 1, len(lines)) if lines[i] == "# ///"), None)
    if end is None:
        return lines
    return lines[:start] + ["# (its PEP 723 block of dependencies is the install line at the top)"] + lines[end + 1 :]


def _helpers(helpers: Sequence[Tuple[str, str]]) -> str:
    calls = "\n".join("_inlined_module(%r, %s)\n" % (name, _literal(source)) for name, source in helpers)
    return RULE + "\n# The modules the case imports from its own folder, inlined.\n" + RULE + INLINED_MODULE + calls


def _literal(source: str) -> str:
    """``source`` as a readable string literal: a raw triple-quoted one where that holds it exactly, else repr."""
    for quote in ("'''", '"""'):
        candidate = "r%s\n%s%s" % (quote, source, quote)
        try:
            if ast.literal_eval(candidate) == "\n" + source:
                return candidate + "[1:]"
        except (SyntaxError, ValueError):
            continue
    return repr(source)


def _run(cell: Cell, case: CaseSource, steps: Sequence[str]) -> str:
    """What the worker does with the case, for the steps that reproduce the cell's failure."""
    kinds = defined(case.text)
    needs_value = any(kinds.get(name) == RESOLVE for name in INPUTS)
    compared = case.skip_check is None
    parts = [
        RULE
        + "\n# What torch-export-matrix does with the case, in plain torch.\n"
        + RULE
        + "\n"
        + _imports(steps, cell.device)
        + "\n\nSTRICT = %s  # the cell's mode: %s" % (cell.mode == "strict", cell.mode),
        CLONE,
    ]
    if cell.device != "cpu":
        parts.append(DEVICE_FUNCTION % (repr(cell.device), cell.device))
    if needs_value:
        parts.append(VALUE_FUNCTION)
    parts.append(_inputs(kinds))
    parts.append(EXPORT_FUNCTION)
    if compared and (CHECK in steps or SERIALIZE in steps):
        parts.append(SAME)
    if CHECK in steps:
        parts.append(CHECK_FUNCTION if compared else UNCOMPARED_CHECK % _one_line(str(case.skip_check)))
    if SERIALIZE in steps:
        parts.append(SAVE_FUNCTION)
        last = COMPARE_LOADED if compared else SKIPPED % _one_line(str(case.skip_check))
        parts.append(LOAD_FUNCTION % ("" if cell.device == "cpu" else LOAD_ON_DEVICE, last))
    if DECOMPOSE in steps:
        parts.append(DECOMPOSE_FUNCTION)
    if len([step for step in steps if step in AFTER_CALLS]) > 1:
        parts.append(AFTER_FUNCTION)
    parts.append(_main(steps, cell.device))
    ending = (
        'if __name__ == "__main__":\n'
        '    if sys.argv[1:2] == ["--load"]:  # the fresh process of the save/load step\n'
        "        load(sys.argv[2])\n"
        "    else:\n"
        "        main()"
        if SERIALIZE in steps
        else 'if __name__ == "__main__":\n    main()'
    )
    parts.append(ending)
    return "\n\n\n".join(part.strip("\n") for part in parts)


def _imports(steps: Sequence[str], device: str = "cpu") -> str:
    """The standard library modules and torch, as the steps (and a device other than the CPU) need them."""
    modules = ["copy", "inspect"] + ([] if device == "cpu" else ["dataclasses"])
    if SERIALIZE in steps:
        modules.append("sys")
    if len([step for step in steps if step in AFTER_CALLS]) > 1:
        modules.append("traceback")
    return "".join("import %s\n" % name for name in modules) + "\nimport torch\nimport torch.export"


def defined(text: str) -> Dict[str, str]:
    """How the script reads each of INPUTS the case defines at module level: CALL, VALUE or RESOLVE."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    kinds: Dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in INPUTS:
            kinds[node.name] = CALL
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        value = getattr(node, "value", None)
        for target in targets:
            if isinstance(target, ast.Name) and target.id in INPUTS and value is not None:
                kinds[target.id] = VALUE if isinstance(value, _LITERALS) else RESOLVE
    return kinds


def _read(name: str, kinds: Dict[str, str], missing: str) -> str:
    kind = kinds.get(name)
    if kind == CALL:
        return "%s()" % name
    if kind == RESOLVE:
        return "_value(%s)" % name
    return name if kind == VALUE else missing


def _inputs(kinds: Dict[str, str]) -> str:
    extra = "list(%s)" % _read("extra_args", kinds, "") if "extra_args" in kinds else "[]"
    return INPUTS_FUNCTION % (
        _read("example_args", kinds, "example_args"),
        _read("example_kwargs", kinds, "{}"),
        _read("dynamic_shapes", kinds, "None"),
        extra,
    )


def _main(steps: Sequence[str], device: str = "cpu") -> str:
    lines = [
        "def main():",
        '    """The steps that reproduce the recorded failure, in the order the cell ran them."""',
        "    args, kwargs, shapes, extra = inputs()",
    ]
    if device != "cpu":
        lines += [
            "    model.to(DEVICE)  # in place, as the cell moved the case's model",
            "    args, kwargs, extra = _on_device(args), _on_device(kwargs), [_on_device(a) for a in extra]",
        ]
    if EAGER in steps:
        lines += [
            "    # Eager first, on copies of the model and of each input, as the cell runs the case before exporting.",
            '    print("torch %s: the eager run" % torch.__version__, flush=True)',
            "    eager = _clone(model)",
            "    calls = [(_clone(a), _clone(kwargs)) for a in [args, *extra]]",
            "    expected = [eager(*a, **k) for a, k in calls]",
        ]
    if EXPORT in steps:
        lines.append("    ep = export(args, kwargs, shapes)")
    if SERIALIZE in steps:
        lines.append("    saved = save(ep)  # saved before the program runs: running it may update its buffers")
    after = [(step, AFTER_CALLS[step]) for step in steps if step in AFTER_CALLS]
    if len(after) == 1:
        lines.append("    " + after[0][1])
    elif after:
        lines += [
            "    # Each step on the exported program runs, as in the cell, whether or not the one before failed.",
            "    failed = []",
            *('    after(failed, "%s", lambda: %s)' % (step, call) for step, call in after),
            "    if failed:",
            '        raise SystemExit("reproduced: %s failed (tracebacks above)" % ", ".join(failed))',
        ]
    lines.append(
        '    print("did not reproduce: every step ran without the recorded failure on torch %s" % torch.__version__)'
    )
    return "\n".join(lines)
