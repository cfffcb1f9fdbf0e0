"""Loading a case: import its module inside an isolated cell and validate what it defines.

What is known of a case without running it (its metadata, discovery, the tag taxonomy) is
the contract's (matrix/contract/case.py); this module is where a case's code first runs.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Tuple

from ..contract.case import CaseError, CaseInfo
from . import capabilities


@dataclass(frozen=True)
class Case:
    """A loaded, validated case, ready to export."""

    info: CaseInfo
    model: Any
    example_args: Tuple[Any, ...]
    example_kwargs: Dict[str, Any] = field(default_factory=dict)
    dynamic_shapes: Any = None
    extra_args: Tuple[Tuple[Any, ...], ...] = ()

    def export_kwargs(self, mode: str, found: Dict[str, bool], copy: Callable[[Any], Any]) -> Dict[str, Any]:
        """The keyword arguments of an export of this case in ``mode`` (``torch.export.export``, ``draft_export``),
        its keyword inputs copied with ``copy``: ``strict=`` only where the release has the keyword."""
        kwargs: Dict[str, Any] = {"kwargs": copy(self.example_kwargs)} if self.example_kwargs else {}
        if self.dynamic_shapes is not None:
            kwargs["dynamic_shapes"] = self.dynamic_shapes
        if found.get("export.strict"):
            kwargs["strict"] = mode == "strict"
        return kwargs


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
