"""The GPU as a process that forks may see it: facts read without a CUDA context, and a check before each fork.

A CUDA context does not survive a fork: a child of a process that initialised CUDA fails at its
first CUDA call ("Cannot re-initialize CUDA in forked subprocess"). So no process of the worker
that forks (the run's root, the fresh-load server, a cell that forks its AOTInductor compile)
may initialise CUDA, or every cell it forks reads ``fail`` for the runner's own fault. This
module holds what keeps that true:

- :func:`prepare` makes torch's availability checks ask NVML, not the CUDA runtime (torch reads
  ``PYTORCH_NVML_BASED_CUDA_CHECK``; its fake tensors and serializer call ``is_available`` hundreds
  of times during an export, so this must hold before the first one);
- :func:`facts` reads the GPU's model, compute capability, memory and the driver through NVML,
  which opens no CUDA context;
- :func:`initialised` tells, in microseconds, whether this process holds a CUDA context anyway
  (torch's own state, and the driver's: ``cuDeviceGetCount`` answers "not initialised" before
  ``cuInit``), so that the engine forks nothing from it.

Only the standard library: ``ctypes`` reaches NVML and the driver where they are installed.
Python 3.8 syntax.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any, Dict, List, Optional

NVML_CHECK = "PYTORCH_NVML_BASED_CUDA_CHECK"
# Set by CUDA's runtime rules: which GPUs a process sees, by index or UUID, in order.
VISIBLE = "CUDA_VISIBLE_DEVICES"
# The fields a CUDA cell's record and result key carry: a result from one GPU never stands for another.
FIELDS = ("gpu_name", "gpu_capability", "gpu_driver")
# What one CUDA cell may take of the GPU's memory, for sizing parallel lanes on it.
CELL_GPU_MB = 4096

_CUDA_SUCCESS = 0


def prepare(environ: Optional[Dict[str, str]] = None) -> None:
    """Make torch's CUDA availability checks use NVML: call before torch is imported."""
    (os.environ if environ is None else environ)[NVML_CHECK] = "1"


def _loaded(name: str) -> Optional[Any]:
    """The library ``name`` if this process has loaded it already (loading nothing), else None."""
    mode = getattr(os, "RTLD_NOLOAD", 0)
    if not mode:
        return None
    try:
        return ctypes.CDLL(name, mode=mode | getattr(os, "RTLD_LAZY", 1))
    except OSError:
        return None


def initialised() -> Optional[str]:
    """Why this process may not fork a process that uses CUDA, or None: its CUDA state, read without changing it."""
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None) if torch is not None else None
    if cuda is not None:
        if getattr(cuda, "_initialized", False):
            return "torch initialised CUDA in this process"
        in_bad_fork = getattr(cuda, "_is_in_bad_fork", None)
        try:
            if in_bad_fork is not None and in_bad_fork():
                return "this process was forked from one that had initialised CUDA"
        except Exception:  # a release without the check: the driver below still tells
            pass
    driver = _loaded("libcuda.so.1")
    if driver is not None:
        count = ctypes.c_int(0)
        try:
            if driver.cuDeviceGetCount(ctypes.byref(count)) == _CUDA_SUCCESS:
                return "the CUDA driver was initialised in this process"
        except (AttributeError, OSError):
            pass
    return None


class _Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


def visible(environ: Optional[Dict[str, str]] = None) -> Optional[List[str]]:
    """The GPUs ``CUDA_VISIBLE_DEVICES`` names, in order (indices or UUIDs); None where it is not set.

    As CUDA reads it: the list ends at the first entry that is not a device (``-1`` hides them all).
    """
    value = (os.environ if environ is None else environ).get(VISIBLE)
    if value is None:
        return None
    names: List[str] = []
    for entry in value.split(","):
        entry = entry.strip()
        if entry.isdigit() or entry.startswith(("GPU-", "MIG-")):
            names.append(entry)
        else:
            break
    return names


def facts(environ: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """The visible GPUs as NVML tells them, without a CUDA context.

    ``gpu_count`` (0 without NVIDIA's driver), and for the first visible GPU ``gpu_name``,
    ``gpu_capability`` (``"9.0"``), ``gpu_driver``, ``gpu_memory_mb`` and ``gpu_free_mb``.
    """
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return {"gpu_count": 0}
    try:
        if nvml.nvmlInit_v2() != _CUDA_SUCCESS:
            return {"gpu_count": 0}
    except AttributeError:
        return {"gpu_count": 0}
    try:
        return _read(nvml, visible(environ))
    except (AttributeError, OSError):
        return {"gpu_count": 0}
    finally:
        try:
            nvml.nvmlShutdown()
        except (AttributeError, OSError):
            pass


def _read(nvml: Any, names: Optional[List[str]]) -> Dict[str, Any]:
    total = ctypes.c_uint(0)
    if nvml.nvmlDeviceGetCount_v2(ctypes.byref(total)) != _CUDA_SUCCESS:
        return {"gpu_count": 0}
    handles = []
    for name in [str(i) for i in range(total.value)] if names is None else names:
        handle = ctypes.c_void_p()
        if name.isdigit():
            found = int(name) < total.value and nvml.nvmlDeviceGetHandleByIndex_v2(int(name), ctypes.byref(handle)) == 0
        else:
            found = nvml.nvmlDeviceGetHandleByUUID(name.encode(), ctypes.byref(handle)) == _CUDA_SUCCESS
        if not found:
            break  # as CUDA reads the list: it ends at a device that is not there
        handles.append(handle)
    out: Dict[str, Any] = {"gpu_count": len(handles)}
    if not handles:
        return out
    first = handles[0]
    text = ctypes.create_string_buffer(96)
    if nvml.nvmlSystemGetDriverVersion(text, 96) == _CUDA_SUCCESS:
        out["gpu_driver"] = text.value.decode(errors="replace")
    if nvml.nvmlDeviceGetName(first, text, 96) == _CUDA_SUCCESS:
        out["gpu_name"] = text.value.decode(errors="replace")
    major, minor = ctypes.c_int(0), ctypes.c_int(0)
    if nvml.nvmlDeviceGetCudaComputeCapability(first, ctypes.byref(major), ctypes.byref(minor)) == _CUDA_SUCCESS:
        out["gpu_capability"] = "%d.%d" % (major.value, minor.value)
    memory = _Memory()
    if nvml.nvmlDeviceGetMemoryInfo(first, ctypes.byref(memory)) == _CUDA_SUCCESS:
        out["gpu_memory_mb"] = int(memory.total >> 20)
        out["gpu_free_mb"] = int(memory.free >> 20)
    return out


def torch_has_cuda(torch: Any) -> bool:
    """Whether the installed torch was built for CUDA (read from its version, not from the device)."""
    return bool(getattr(getattr(torch, "version", None), "cuda", None))


def available(torch: Any, found: Optional[Dict[str, Any]] = None) -> bool:
    """Whether ``--device cuda`` can run here: a CUDA build of torch and a GPU NVML sees; no CUDA context made."""
    return torch_has_cuda(torch) and int((facts() if found is None else found).get("gpu_count") or 0) > 0


def identity(found: Dict[str, Any]) -> Dict[str, Any]:
    """What names the GPU a CUDA result came from: model, compute capability, driver."""
    return {name: found.get(name) for name in FIELDS}


def lanes(found: Dict[str, Any], cores: int) -> int:
    """CUDA cells run at once by default: as many as the GPU's free memory holds, at most one a core."""
    free = int(found.get("gpu_free_mb") or 0)
    return max(1, min(cores, free // CELL_GPU_MB))


def label(found: Dict[str, Any]) -> Optional[str]:
    """The GPU for a record: ``"NVIDIA H200, compute 9.0, driver 570.86"``; None where no GPU was used."""
    if not found.get("gpu_name"):
        return None
    return "%s, compute %s, driver %s" % (found["gpu_name"], found.get("gpu_capability"), found.get("gpu_driver"))


def checked(torch: Any, device: str) -> Dict[str, Any]:
    """The GPU a run on ``device`` uses (empty on the CPU); bad input where ``--device cuda`` cannot run here."""
    if device == "cpu":
        return {}
    from ..contract.errors import UserError

    if not torch_has_cuda(torch):
        raise UserError("--device %s: this torch (%s) was built without CUDA" % (device, torch.__version__))
    found = facts()
    if not available(torch, found):
        raise UserError(
            "--device %s: CUDA is not available in this torch (%s): no GPU is visible" % (device, torch.__version__)
        )
    return found


_SAID = set()  # type: set


def say_once(message: str) -> None:
    """Write ``message`` to stderr the first time this process meets it."""
    if message not in _SAID:
        _SAID.add(message)
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
