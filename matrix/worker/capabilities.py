"""Detect what the installed torch offers, so cases ask for features instead of versions."""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable, Dict


def _attr(dotted: str) -> Callable[[], bool]:
    """A probe that is true when ``module.attr.attr`` resolves."""

    def probe() -> bool:
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                obj: Any = importlib.import_module(".".join(parts[:cut]))
            except Exception:
                continue
            try:
                for name in parts[cut:]:
                    obj = getattr(obj, name)
            except AttributeError:
                return False
            return True
        return False

    return probe


def _export_kwarg(name: str) -> Callable[[], bool]:
    def probe() -> bool:
        import torch.export

        return name in inspect.signature(torch.export.export).parameters

    return probe


def _derived_dim() -> bool:
    from torch.export import Dim

    return Dim("tem_probe") * 2 is not None


def _associative_scan_generic() -> bool:
    # Releases before the `combine_mode` option could only generate CUDA code for the scan.
    from torch._higher_order_ops.associative_scan import associative_scan

    return "combine_mode" in inspect.signature(associative_scan).parameters


# Capability name -> probe. Names are the vocabulary of a case's ``requires``.
PROBES: Dict[str, Callable[[], bool]] = {
    "export": _attr("torch.export.export"),
    "export.strict": _export_kwarg("strict"),
    "export.dynamic_shapes": _export_kwarg("dynamic_shapes"),
    "export.save": _attr("torch.export.save"),
    "export.load": _attr("torch.export.load"),
    "export.unflatten": _attr("torch.export.unflatten"),
    "export.register_dataclass": _attr("torch.export.register_dataclass"),
    "export_for_training": _attr("torch.export.export_for_training"),
    "draft_export": _attr("torch.export.draft_export"),
    "run_decompositions": _attr("torch.export.ExportedProgram.run_decompositions"),
    "default_decompositions": _attr("torch.export.default_decompositions"),
    "core_aten_decompositions": _attr("torch._decomp.core_aten_decompositions"),
    "dim": _attr("torch.export.Dim"),
    "dim.derived": _derived_dim,
    "dim.auto": _attr("torch.export.Dim.AUTO"),
    "dim.dynamic": _attr("torch.export.Dim.DYNAMIC"),
    "dim.static": _attr("torch.export.Dim.STATIC"),
    "cond": _attr("torch.cond"),
    "map": _attr("torch._higher_order_ops.map.map"),
    "scan": _attr("torch._higher_order_ops.scan.scan"),
    "while_loop": _attr("torch._higher_order_ops.while_loop.while_loop"),
    "associative_scan": _attr("torch._higher_order_ops.associative_scan.associative_scan"),
    "associative_scan.generic": _associative_scan_generic,
    "check": _attr("torch._check"),
    "check_is_size": _attr("torch._check_is_size"),
    "custom_op": _attr("torch.library.custom_op"),
    "register_fake": _attr("torch.library.register_fake"),
    "sdpa": _attr("torch.nn.functional.scaled_dot_product_attention"),
    "assume_constant_result": _attr("torch._dynamo.assume_constant_result"),
    "compiler.is_compiling": _attr("torch.compiler.is_compiling"),
    "compiler.is_exporting": _attr("torch.compiler.is_exporting"),
    "numpy": _attr("numpy.ndarray"),
}


def strict_default() -> Any:
    """The default of ``torch.export.export(strict=...)``, or None where the keyword is absent."""
    import torch.export

    param = inspect.signature(torch.export.export).parameters.get("strict")
    if param is None or param.default is inspect.Parameter.empty:
        return None
    return param.default


def detect() -> Dict[str, bool]:
    """Run every probe; a probe that raises means the capability is missing."""
    found: Dict[str, bool] = {}
    for name, probe in sorted(PROBES.items()):
        try:
            found[name] = bool(probe())
        except Exception:
            found[name] = False
    return found


def missing(required: Any, found: Dict[str, bool]) -> list:
    """The required capabilities that ``found`` lacks, sorted; unknown names count as missing."""
    return sorted(name for name in required if not found.get(name, False))
