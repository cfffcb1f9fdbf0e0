"""The case format, as host and worker both read it: static metadata, discovery, the tag taxonomy.

A case is a plain module under ``cases/``. Its metadata (docstring, ``tags``, ``requires``,
``expected``, ``skip_check``, its PEP 723 block) is read from the source with ``ast`` without
running it, so listing, planning and selecting cases never executes user code; the worker
imports the module itself only inside an isolated cell (matrix/worker/case.py).

Standard library only, Python 3.8 syntax: the worker imports this inside every torch environment.
"""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import dependencies

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

METADATA_NAMES = ("tags", "requires", "expected", "skip_check", "inputs")


class CaseError(Exception):
    """A case file that cannot be loaded or is malformed; the message names the file."""


# Records name an exception by its module and class (``error_type``): this one kept the name it
# had before the case format had a module of its own, so records of every run compare equal.
# matrix.worker.case imports it, so the name still resolves.
CaseError.__module__ = "matrix.worker.case"


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
    # Files it reads that the result cache cannot see being read: globs relative to its folder (docs/cache.md).
    inputs: Tuple[str, ...] = ()

    def to_json(self) -> Dict[str, Any]:
        """Every field, in order, tuples as lists; ``name`` and ``path`` as a record names them (case, case_file)."""
        named = {"name": "case", "path": "case_file"}
        return {
            named.get(f.name, f.name): list(value) if isinstance(value, tuple) else value
            for f in fields(self)
            for value in (getattr(self, f.name),)
        }


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
            inputs=_strings(values.get("inputs", ()), path, "inputs"),
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
    unknown = sorted(set(info.requires) - CAPABILITIES)
    if unknown:
        raise CaseError(
            "%s: unknown capabilities in `requires` %s; known: %s" % (path, unknown, ", ".join(sorted(CAPABILITIES)))
        )
    if info.expected is not None and info.expected not in EXPECTED:
        raise CaseError("%s: `expected` must be one of %s, got %r" % (path, sorted(EXPECTED), info.expected))


# The vocabulary of a case's ``requires``: what the worker probes in the installed torch
# (matrix/worker/capabilities.py has one probe per name). A case naming another is malformed.
CAPABILITIES = frozenset(
    {
        "export",
        "export.strict",
        "export.dynamic_shapes",
        "export.save",
        "export.load",
        "export.unflatten",
        "export.register_dataclass",
        "export_for_training",
        "draft_export",
        "run_decompositions",
        "default_decompositions",
        "core_aten_decompositions",
        "dim",
        "dim.derived",
        "dim.auto",
        "dim.dynamic",
        "dim.static",
        "cond",
        "map",
        "scan",
        "while_loop",
        "associative_scan",
        "associative_scan.generic",
        "check",
        "check_is_size",
        "custom_op",
        "register_fake",
        "sdpa",
        "assume_constant_result",
        "compiler.is_compiling",
        "compiler.is_exporting",
        "numpy",
    }
)

# Where ExportDB's examples are: the worker's ``--source exportdb`` names each bundled example
# PREFIX + its name; our own copies of them lie in a folder named EXPORTDB_FOLDER.
EXPORTDB_SOURCE = "exportdb"
EXPORTDB_PREFIX = "torch-exportdb/"
EXPORTDB_FOLDER = "exportdb"


def exportdb_example(case: str, case_file: Any, source: Any) -> Optional[str]:
    """The name of the ExportDB example a case (its name, file and source) stands for: a bundled example,
    or a case file of ours in a folder named ``exportdb``, named as its example; None for any other case."""
    if source == EXPORTDB_SOURCE:
        return case[len(EXPORTDB_PREFIX) :] if case.startswith(EXPORTDB_PREFIX) else case
    parts = case_file.replace("\\", "/").split("/") if isinstance(case_file, str) else []
    if len(parts) > 1 and parts[-2] == EXPORTDB_FOLDER and parts[-1].endswith(".py"):
        return parts[-1][: -len(".py")]
    return None


def cell_selected(case: str, cell: str, select: Optional[Sequence[str]]) -> bool:
    """Whether ``--select`` keeps a cell: its case name or its cell id matches one of the globs (none keeps all)."""
    return not select or any(fnmatch.fnmatchcase(case, g) or fnmatch.fnmatchcase(cell, g) for g in select)


def imported_modules(source: Any) -> List[str]:
    """The first dotted part of every module a source (text or bytes) imports anywhere, absolute imports
    only, in order and once each; none where it does not parse. A case's local modules are among them."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    names: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.append(node.module.split(".")[0])
    return list(dict.fromkeys(names))
