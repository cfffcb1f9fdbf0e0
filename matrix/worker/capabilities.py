"""Detect what the installed torch offers, so cases ask for features instead of versions."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import sys
from typing import Any, Callable, Dict, Optional, Tuple


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


CACHE_NAME = "export-matrix-capabilities.json"


def _torch_build_key() -> Dict[str, Any]:
    """What identifies the installed torch build, read without importing torch.

    A reinstall changes the files of ``version.py`` (size, time), so even a rebuild of the
    same version string makes a new key.
    """
    spec = importlib.util.find_spec("torch")
    folders = list(spec.submodule_search_locations or []) if spec else []
    key: Dict[str, Any] = {"torch": folders}
    for folder in folders:
        path = os.path.join(folder, "version.py")
        try:
            stat = os.stat(path)
            with open(path, "rb") as f:
                key["version.py"] = hashlib.sha256(f.read()).hexdigest()[:16]
            key["version.py.stat"] = [stat.st_size, stat.st_mtime_ns, stat.st_ino]
        except OSError:
            pass
    with open(__file__, "rb") as f:  # new probes in this module: detect again
        key["probes"] = hashlib.sha256(f.read()).hexdigest()[:16]
    return key


def cache_path() -> str:
    """In a virtual environment, the environment itself; else the user's cache folder, per interpreter."""
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        return os.path.join(sys.prefix, CACHE_NAME)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    interpreter = hashlib.sha256(sys.prefix.encode()).hexdigest()[:12]
    return os.path.join(base, "torch-export-matrix", "capabilities-%s.json" % interpreter)


def cached_detect(path: Optional[str] = None) -> Tuple[Dict[str, bool], bool]:
    """``detect()``, stored in the environment and reused while the torch build is the same.

    Returns the capabilities and whether they came from the cache. A cache that cannot be
    read or written is ignored: detection costs seconds, never correctness.
    """
    path = cache_path() if path is None else path
    key = _torch_build_key()
    try:
        with open(path, encoding="utf-8") as f:
            stored = json.load(f)
        if stored.get("key") == key and isinstance(stored.get("found"), dict):
            return {str(k): bool(v) for k, v in stored["found"].items()}, True
    except (OSError, ValueError, AttributeError):
        pass
    found = detect()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = "%s.%d" % (path, os.getpid())
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump({"key": key, "found": found}, f, sort_keys=True)
        os.replace(temporary, path)
    except OSError:
        pass
    return found, False
