"""The ExportDB examples bundled with the installed torch, read as cases.

Every release since 2.1 ships ``torch._export.db.examples`` with ``all_examples()``, a
dict of ``ExportCase`` objects, but their shape changed: up to 2.4 an example was
registered by a decorator (on a module class or, in 2.1, a plain function) and carried
``example_inputs`` (a tuple or an ``ExportArgs``) and ``extra_inputs``; from 2.5 an
example is a module of plain variables and carries ``example_args``, ``example_kwargs``
and ``extra_args``. This module reads both, relying on nothing else that is private.

Each example carries a support level, and ExportDB's documented levels change between
releases: :func:`claim` gives, for a case that stands for an example, the level the
installed release's own ExportDB documents, which its cell records as ``exportdb_claim``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Any, Dict, List, Optional, Tuple

from ..contract.case import EXPORTDB_PREFIX as PREFIX
from ..contract.case import EXPORTDB_SOURCE as SOURCE
from ..contract.case import CaseError, CaseInfo, exportdb_example
from .case import Case

# Our own case files live under cases/exportdb/; the bundled ones get a prefix of their own (PREFIX).
PACKAGE = "torch._export.db.examples"

# ExportDB's SupportLevel names -> our ``expected`` vocabulary.
SUPPORT_LEVELS = {"SUPPORTED": "supported", "NOT_SUPPORTED_YET": "not-supported-yet"}

# The installed release's support level per example, read once per process (see claims).
_claims: Optional[Dict[str, Optional[str]]] = None


def _examples() -> Dict[str, Any]:
    try:
        module = importlib.import_module(PACKAGE)
        return dict(module.all_examples())
    except Exception as exc:
        raise CaseError(
            "%s cannot be read with this torch (%s: %s); use --source cases" % (PACKAGE, type(exc).__name__, exc)
        )


def discover() -> List[CaseInfo]:
    """The installed release's ExportDB examples, sorted by name."""
    return [_info(name, example) for name, example in sorted(_examples().items())]


def _info(name: str, example: Any) -> CaseInfo:
    return CaseInfo(
        name=PREFIX + name,
        path=_path(name, example),
        description=inspect.cleandoc(str(getattr(example, "description", "") or "")),
        source=SOURCE,
        tags=tuple(sorted(str(tag) for tag in (getattr(example, "tags", None) or ()))),
        expected=expected_of(example),
    )


def expected_of(example: Any) -> Optional[str]:
    """The example's own support level in our vocabulary (an unknown level is kept, lower-cased)."""
    level = getattr(example, "support_level", None)
    if level is None:
        return None
    name = getattr(level, "name", str(level))
    return SUPPORT_LEVELS.get(name, name.lower().replace("_", "-"))


def claims() -> Dict[str, Optional[str]]:
    """The support level the installed release's ExportDB documents for each of its examples, in our
    vocabulary; empty where its ExportDB cannot be read. Read once per process."""
    global _claims
    if _claims is None:
        import torch

        # Examples build their models and inputs when imported: the random state of a
        # process that goes on to run cases stays as it was.
        with torch.random.fork_rng(devices=[]):
            try:
                _claims = {name: expected_of(example) for name, example in _examples().items()}
            except CaseError:
                _claims = {}
    return dict(_claims)


example_of = exportdb_example


def claim(info: CaseInfo) -> Optional[str]:
    """The installed release's own ExportDB support level for the example a case stands for; None where the
    case stands for no example or the release bundles no example of that name."""
    name = example_of(info.name, info.path, info.source)
    return claims().get(name) if name is not None else None


def _path(name: str, example: Any) -> str:
    """The example's file relative to site-packages (``torch/_export/db/examples/x.py``), stable across environments."""
    module = sys.modules.get(PACKAGE + "." + name)
    filename = getattr(module, "__file__", None)
    if not filename:
        try:
            target = example.model if inspect.isfunction(example.model) else type(example.model)
            filename = inspect.getsourcefile(target)
        except (TypeError, AttributeError):
            filename = None
    if not filename:
        return PACKAGE
    import torch

    site = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
    return os.path.relpath(os.path.abspath(filename), site).replace(os.sep, "/")


def source_file(info: CaseInfo) -> str:
    """The file whose source decides a case's result: a bundled example's own file in the installed torch
    (its ``path`` is relative to site-packages), any other case's ``path`` as it is."""
    if info.source != SOURCE or os.path.isabs(info.path):
        return info.path
    import torch

    site = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))
    return os.path.join(site, *info.path.split("/"))


def load(info: CaseInfo) -> Case:
    """Build the Case of one bundled example. Raises CaseError when it is missing or unreadable."""
    name = info.name[len(PREFIX) :] if info.name.startswith(PREFIX) else info.name
    examples = _examples()
    if name not in examples:
        raise CaseError("%s: this torch has no ExportDB example %r" % (PACKAGE, name))
    example = examples[name]
    try:
        args, kwargs = _inputs(example)
        return Case(
            info=info,
            model=_as_module(example.model, name),
            example_args=args,
            example_kwargs=kwargs,
            dynamic_shapes=getattr(example, "dynamic_shapes", None),
            extra_args=_extra_args(example),
        )
    except CaseError:
        raise
    except Exception as exc:
        raise CaseError("%s.%s: cannot read the example: %s: %s" % (PACKAGE, name, type(exc).__name__, exc))


def _split(inputs: Any) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """A tuple of args, or an ``ExportArgs`` with ``args`` and ``kwargs`` (releases up to 2.4)."""
    if isinstance(inputs, tuple):
        return inputs, {}
    if hasattr(inputs, "args") and hasattr(inputs, "kwargs"):
        return tuple(inputs.args), dict(inputs.kwargs)
    raise CaseError("unexpected example inputs of type %s" % type(inputs).__name__)


def _inputs(example: Any) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    if hasattr(example, "example_args"):
        return tuple(example.example_args), dict(getattr(example, "example_kwargs", None) or {})
    return _split(example.example_inputs)


def _extra_args(example: Any) -> Tuple[Tuple[Any, ...], ...]:
    """The example's one further input, where the exported program is meant to generalise to it.

    Releases up to 2.1 made such examples dynamic through ``constraints`` that
    ``torch.export.export`` took as an argument; the runner passes only
    ``dynamic_shapes``, so those examples export statically and the further input,
    which needs the dynamic program, is left out.
    """
    if getattr(example, "constraints", None):
        return ()
    extra = getattr(example, "extra_args", None)
    if extra is None:
        extra = getattr(example, "extra_inputs", None)
    if extra is None:
        return ()
    args, kwargs = _split(extra)
    return () if kwargs else (args,)


def _as_module(model: Any, name: str) -> Any:
    """The example's model as an ``nn.Module``; 2.1 registered some examples as plain functions."""
    import torch

    if isinstance(model, torch.nn.Module):
        return model
    if inspect.isclass(model) and issubclass(model, torch.nn.Module):
        return model()
    if callable(model):
        # ``forward`` is the function itself, so its signature (which ``dynamic_shapes``
        # refers to by parameter name) is what export sees.
        cls = type(
            "ExportDBFunction_" + name,
            (torch.nn.Module,),
            {"forward": staticmethod(model), "__doc__": getattr(model, "__doc__", None)},
        )
        return cls()
    raise CaseError("%s.%s: the model is a %s, not a module or function" % (PACKAGE, name, type(model).__name__))
