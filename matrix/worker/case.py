"""The case format: discovery, static metadata and validated loading of case modules.

A case is a plain module under ``cases/``. Its metadata (docstring, ``tags``,
``requires``, ``expected``, ``skip_check``) is read from the source with ``ast``
without running it, so listing and selecting cases never executes user code; the
module itself is imported only inside an isolated cell.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from . import capabilities, dependencies

# ExportDB's tags plus ours. A case's tags must come from this set.
TAGS = frozenset(
    {
        # ExportDB's taxonomy
        "python.assert",
        "python.builtin",
        "python.closure",
        "python.context-manager",
        "python.control-flow",
        "python.data-structure",
        "python.object-model",
        "torch.cond",
        "torch.dynamic-shape",
        "torch.dynamic-value",
        "torch.escape-hatch",
        "torch.map",
        "torch.mutation",
        "torch.operator",
        # ours
        "python.random",
        "torch.autocast",
        "torch.custom-op",
        "torch.decomposition",
        "torch.dtype",
        "torch.higher-order-op",
        "torch.model",
        "torch.pytree",
        "torch.serialization",
        "torch.training-ir",
        "torch.unbacked",
        "torch.graph-break",
    }
)

# Documented claims a case may carry in ``expected``.
EXPECTED = frozenset({"supported", "not-supported-yet", "strict-only", "non-strict-only", "fails"})

METADATA_NAMES = ("tags", "requires", "expected", "skip_check")


class CaseError(Exception):
    """A case file that cannot be loaded or is malformed; the message names the file."""


@dataclass(frozen=True)
class CaseInfo:
    """What is known about a case without running it."""

    name: str
    path: str
    description: str
    source: str = "cases"
    tags: Tuple[str, ...] = ()
    requires: Tuple[str, ...] = ()
    expected: Optional[str] = None
    skip_check: Optional[str] = None
    problem: Optional[str] = None  # set when the file is malformed: the cell becomes case-error
    dependencies: Tuple[str, ...] = ()  # from its PEP 723 block: what it imports besides torch
    requires_python: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        return {
            "case": self.name,
            "case_file": self.path,
            "description": self.description,
            "source": self.source,
            "tags": list(self.tags),
            "requires": list(self.requires),
            "expected": self.expected,
            "skip_check": self.skip_check,
            "problem": self.problem,
            "dependencies": list(self.dependencies),
            "requires_python": self.requires_python,
        }


@dataclass(frozen=True)
class Case:
    """A loaded, validated case, ready to export."""

    info: CaseInfo
    model: Any
    example_args: Tuple[Any, ...]
    example_kwargs: Dict[str, Any] = field(default_factory=dict)
    dynamic_shapes: Any = None
    extra_args: Tuple[Tuple[Any, ...], ...] = ()


def discover(roots: List[str]) -> List[CaseInfo]:
    """Every case under the given folders or files, sorted by name; names must be unique."""
    found: Dict[str, CaseInfo] = {}
    for root in roots:
        base = Path(root)
        if base.is_file():
            files = [(base, base.parent)]
        elif base.is_dir():
            # Regular files only: a FIFO or socket named *.py would block the read forever.
            files = [(p, base) for p in sorted(base.rglob("*.py")) if p.is_file()]
        else:
            raise CaseError("%s: no such case file or folder" % root)
        for path, top in files:
            rel = path.relative_to(top)
            if path.name.startswith("_") or any(part.startswith((".", "_")) for part in rel.parts[:-1]):
                continue
            info = read_info(path, rel.with_suffix("").as_posix())
            if info.name in found:
                raise CaseError("%s: case name %r is also used by %s" % (path, info.name, found[info.name].path))
            found[info.name] = info
    return [found[name] for name in sorted(found)]


def _literal(node: ast.AST, path: Path, name: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise CaseError("%s: `%s` must be a literal (a string, or a list/set/tuple of strings)" % (path, name))


def read_info(path: Path, name: str) -> CaseInfo:
    """Read a case's metadata from its source; a malformed file yields a CaseInfo with ``problem`` set."""
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
    except (OSError, SyntaxError, ValueError) as exc:
        return CaseInfo(name=name, path=str(path), description="", problem="%s: cannot parse: %s" % (path, exc))
    values: Dict[str, Any] = {}
    defined = set()
    try:
        block = dependencies.read_block(source, str(path)) or {}
    except dependencies.MetadataError as exc:
        return CaseInfo(name=name, path=str(path), description="", problem=str(exc))
    try:
        for stmt in tree.body:
            targets: List[ast.expr] = []
            value: Optional[ast.AST] = None
            if isinstance(stmt, ast.Assign):
                targets, value = stmt.targets, stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets, value = [stmt.target], stmt.value
            elif isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                defined.add(stmt.name)
            for target in targets:
                if isinstance(target, ast.Name):
                    defined.add(target.id)
                    if target.id in METADATA_NAMES and value is not None:
                        values[target.id] = _literal(value, path, target.id)
        info = CaseInfo(
            name=name,
            path=str(path),
            description=(ast.get_docstring(tree) or "").strip(),
            tags=_strings(values.get("tags", ()), path, "tags"),
            requires=_strings(values.get("requires", ()), path, "requires"),
            expected=_optional_string(values.get("expected"), path, "expected"),
            skip_check=_optional_string(values.get("skip_check"), path, "skip_check"),
            dependencies=tuple(block.get("dependencies", ())),
            requires_python=block.get("requires-python"),
        )
        _validate_info(info, defined, path)
    except CaseError as exc:
        return CaseInfo(name=name, path=str(path), description="", problem=str(exc))
    return info


def _strings(value: Any, path: Path, key: str) -> Tuple[str, ...]:
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, (list, tuple, set, frozenset)) or not all(isinstance(v, str) for v in value):
        raise CaseError("%s: `%s` must be a string or a collection of strings, got %r" % (path, key, value))
    return tuple(sorted(set(value)))


def _optional_string(value: Any, path: Path, key: str) -> Optional[str]:
    if value is not None and not isinstance(value, str):
        raise CaseError("%s: `%s` must be a string, got %r" % (path, key, value))
    return value


def _validate_info(info: CaseInfo, defined: set, path: Path) -> None:
    if not info.description:
        raise CaseError("%s: the module needs a docstring saying what the case exercises" % path)
    for required in ("model", "example_args"):
        if required not in defined:
            raise CaseError("%s: no module-level `%s`" % (path, required))
    unknown = sorted(set(info.tags) - TAGS)
    if unknown:
        raise CaseError("%s: unknown tags %s; known tags: %s" % (path, unknown, ", ".join(sorted(TAGS))))
    unknown = sorted(set(info.requires) - set(capabilities.PROBES))
    if unknown:
        raise CaseError(
            "%s: unknown capabilities in `requires` %s; known: %s"
            % (path, unknown, ", ".join(sorted(capabilities.PROBES)))
        )
    if info.expected is not None and info.expected not in EXPECTED:
        raise CaseError("%s: `expected` must be one of %s, got %r" % (path, sorted(EXPECTED), info.expected))


def _resolve(value: Any) -> Any:
    """Lazily built values: a zero-argument function stands for what it returns."""
    if callable(value) and not hasattr(value, "forward") and not isinstance(value, type):
        return value()
    return value


def load(info: CaseInfo) -> Case:
    """Import a case module and validate what it defines. Raises CaseError on any problem."""
    if info.problem:
        raise CaseError(info.problem)
    module_name = "export_matrix_case_" + info.name.replace("/", "__").replace("-", "_")
    spec = importlib.util.spec_from_file_location(module_name, info.path)
    if spec is None or spec.loader is None:
        raise CaseError("%s: not importable" % info.path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up by name
    folder = os.path.dirname(os.path.abspath(info.path))
    sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise CaseError("%s: import failed: %s: %s" % (info.path, type(exc).__name__, exc)) from exc
    finally:
        if sys.path and sys.path[0] == folder:
            del sys.path[0]
    return from_namespace(info, vars(module))


def from_namespace(info: CaseInfo, ns: Dict[str, Any]) -> Case:
    """Validate the values a case defines and build the Case."""
    import torch

    model = ns.get("model")
    if not isinstance(model, torch.nn.Module):
        raise CaseError("%s: `model` must be a torch.nn.Module instance, got %s" % (info.path, type(model).__name__))
    args = _resolve(ns.get("example_args"))
    if not isinstance(args, tuple):
        raise CaseError("%s: `example_args` must be a tuple, got %s" % (info.path, type(args).__name__))
    kwargs = _resolve(ns.get("example_kwargs", None)) or {}
    if not isinstance(kwargs, dict) or not all(isinstance(k, str) for k in kwargs):
        raise CaseError("%s: `example_kwargs` must be a dict with string keys" % info.path)
    extra = _resolve(ns.get("extra_args", None)) or ()
    if not isinstance(extra, (list, tuple)) or not all(isinstance(a, tuple) for a in extra):
        raise CaseError("%s: `extra_args` must be a list of argument tuples" % info.path)
    dynamic = _resolve(ns.get("dynamic_shapes", None))
    if dynamic is not None and not isinstance(dynamic, (dict, tuple, list)):
        raise CaseError("%s: `dynamic_shapes` must be a dict, tuple or list (or a function returning one)" % info.path)
    return Case(
        info=info,
        model=model,
        example_args=args,
        example_kwargs=kwargs,
        dynamic_shapes=dynamic,
        extra_args=tuple(extra),
    )


def missing_for(info: CaseInfo, mode: str, found: Dict[str, bool]) -> List[str]:
    """Capabilities a (case, mode) cell needs that the installed torch lacks."""
    needed = set(info.requires) | {"export"}
    if mode == "non-strict":
        needed.add("export.strict")
    return capabilities.missing(needed, found)
