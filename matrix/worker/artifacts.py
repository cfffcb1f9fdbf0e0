"""Exported programs kept on disk by ``run --artifacts DIR``, for ``load`` to try on other releases.

Each cell that exports and passes its check keeps its program in
``DIR/<torch_version>_<variant>_py<X.Y>/<mode>/<case folder>/``; a cell run with ``--with``
adds its set's suffix to the case folder (``<case folder>_deps-1a2b3c4d``), so that each set
keeps its own program, and a cell run on another device than the CPU ends it in ``@<device>``:

- ``program.pt2``: ``torch.export.save`` of the program, as the cell's serialize stage saved it
  before running it (running a program can update its buffers in place); without that stage it
  is saved after the check ran it;
- ``inputs.pt``: ``{"calls": [[leaf, ...], ...]}``, the example inputs, then each extra input the
  check ran the program on, each call's ``(args, kwargs)`` flattened with torch's pytree; ``load``
  rebuilds them with the loaded program's own ``call_spec.in_spec``, so that dataclasses and custom
  pytree classes need no pickling (format 1 kept ``[args, kwargs]`` as they were, plain data only);
- ``outputs.pt``: ``{"calls": [[leaf, ...], ...]}``, eager's outputs for those inputs on the saving
  release, flattened with torch's pytree; they, not the loading release's random numbers, are the reference;
- ``meta.json``: what was saved (case, mode, release, variant, Python, the packages beside torch and
  the part of them ``--with`` added, the serializer's schema version, the form of the inputs' leaves:
  see INPUTS_FORMS) and each file's size and sha256;
- ``meta.sig``: meta.json's signature (see :mod:`.signing`); ``load`` refuses an artifact without a
  valid one unless told ``--trust``;
- ``aoti.pt2`` (or ``aoti.so``), where the cell ran the aoti stage: its AOTInductor package
  (:mod:`.aoti_stage`), listed in meta.json like the files above and described under its ``aoti`` key.

The leaves of inputs and outputs are plain data only (tensors, numbers, text, None) and are
written with pickle protocol 2, so that ``torch.load(..., weights_only=True)`` reads them on every
release from 2.1. A folder is written under a temporary name (starting with ``.``) and renamed once
complete: a folder with its final name but no ``meta.json``, or a file whose size or sha256 differs
from ``meta.json``'s, was damaged afterwards, and ``load`` reports it as incomplete. The cell's
record says whether its program was kept: ``artifact`` is ``saved``, or ``not-saved`` with the
reason in ``artifact_error`` (``torch.export.save`` raised, a leaf that is not plain data).

Standard library and torch only, Python 3.8 syntax: this runs inside every torch environment.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..contract import layout
from ..contract.layout import FILES, FORMAT_VERSION, INPUTS, META, OUTPUTS, PROGRAM, Target, artifact_folder
from ..contract.records import without_paths
from ..contract.schema import ARTIFACT_NOT_SAVED, ARTIFACT_SAVED, STAGE_OK, STAGE_SKIPPED, first_line, now
from . import signing

# torch.save's own default, and what torch.load reads on every release.
PICKLE_PROTOCOL = 2


def serializer_version() -> Optional[str]:
    """The installed torch's serialized-program schema version (``8.20``), where torch exposes one."""
    try:
        from torch._export.serde import schema

        version = getattr(schema, "SCHEMA_VERSION", None)
    except Exception:
        return None
    if isinstance(version, (tuple, list)):
        return ".".join(str(part) for part in version)
    return None if version is None else str(version)


def python_version() -> str:
    return "%d.%d" % sys.version_info[:2]


def plain(value: Any, where: str = "value") -> Any:
    """``value`` checked to hold only plain data; outputs' tensors are detached. Raises TypeError naming the part."""
    import torch

    if isinstance(value, torch.Tensor):
        if type(value) not in (torch.Tensor, torch.nn.Parameter) or value.layout != torch.strided:
            raise TypeError("%s is a %s, which only plain tensors can stand for" % (where, type(value).__name__))
        return value
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if type(value) in (list, tuple):
        return type(value)(plain(item, "%s[%d]" % (where, i)) for i, item in enumerate(value))
    if type(value) is dict:
        if not all(isinstance(key, str) for key in value):
            raise TypeError("%s is a dict with keys that are not text" % where)
        return {key: plain(item, "%s[%r]" % (where, key)) for key, item in value.items()}
    raise TypeError(
        "%s is a %s, which is not plain data (tensors, numbers, text, lists, dicts)" % (where, type(value).__name__)
    )


def _leaves(output: Any, where: str) -> List[Any]:
    import torch
    from torch.utils import _pytree

    leaves = []
    for index, leaf in enumerate(_pytree.tree_flatten(output)[0]):
        if isinstance(leaf, torch.Tensor):
            # A copy, so that a view does not save the whole storage it looks into.
            leaf = leaf.detach().clone()
        leaves.append(plain(leaf, "%s leaf %d" % (where, index)))
    return leaves


def in_spec(program: Any) -> Any:
    """The pytree spec of an ExportedProgram's ``(args, kwargs)`` (``call_spec.in_spec``, there from 2.1), or None."""
    try:
        return program.call_spec.in_spec
    except Exception:  # not an ExportedProgram, or a release that moved it
        return None


# How a format-2 inputs.pt's leaves go back together with the program's in_spec: as ``(args, kwargs)``,
# or as ``args`` alone, which is all that torch 2.1's in_spec holds when a program takes no kwargs.
ARGS_KWARGS = "args-kwargs"
ARGS = "args"
INPUTS_FORMS = (ARGS_KWARGS, ARGS)


def flat_inputs(
    calls: Sequence[Tuple[Tuple[Any, ...], Dict[str, Any]]], spec: Any = None
) -> Tuple[List[List[Any]], str]:
    """Each call's ``(args, kwargs)`` as the leaves of torch's pytree, checked to be plain data, and their form.

    With ``spec`` (the program's in_spec), each call must flatten to that very structure (see
    INPUTS_FORMS): the loader puts the leaves back with it. Raises TypeError or ValueError naming the input.
    """
    from torch.utils import _pytree

    flat, forms = [], set()
    for number, (args, kwargs) in enumerate(calls):
        leaves, structure = _pytree.tree_flatten((tuple(args), dict(kwargs)))
        form = ARGS_KWARGS
        if spec is not None and structure != spec:
            if kwargs or _pytree.tree_flatten(tuple(args))[1] != spec:
                raise ValueError("input %d does not flatten to the program's in_spec (its pytree structure)" % number)
            form = ARGS
        forms.add(form)
        flat.append([plain(leaf, "input %d leaf %d" % (number, index)) for index, leaf in enumerate(leaves)])
    if len(forms) > 1:
        raise ValueError("the inputs flatten to the program's in_spec in different ways")
    return flat, forms.pop() if forms else ARGS_KWARGS


def rebuild_inputs(
    calls: List[Any], spec: Any, form: str = ARGS_KWARGS
) -> List[Tuple[Tuple[Any, ...], Dict[str, Any]]]:
    """The ``(args, kwargs)`` of each call of a format-2 inputs.pt, put back together with the program's in_spec."""
    from torch.utils import _pytree

    if form not in INPUTS_FORMS:
        raise ValueError("%s has inputs_form %r; this loader reads %s" % (META, form, ", ".join(INPUTS_FORMS)))
    if spec is None:
        raise ValueError("the loaded program has no call_spec.in_spec to rebuild its saved inputs with")
    rebuilt = []
    for number, leaves in enumerate(calls):
        if not isinstance(leaves, list) or len(leaves) != spec.num_leaves:
            raise ValueError(
                "%s call %d holds %s leaves; the program takes %d"
                % (INPUTS, number, len(leaves) if isinstance(leaves, list) else "no list of", spec.num_leaves)
            )
        value = _pytree.tree_unflatten(leaves, spec)
        args, kwargs = (value, {}) if form == ARGS else value
        rebuilt.append((tuple(args), dict(kwargs)))
    return rebuilt


def _sync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save(
    target: Target,
    case: str,
    mode: str,
    program: Any,
    calls: Sequence[Tuple[Tuple[Any, ...], Dict[str, Any]]],
    outputs: Sequence[Any],
    extra_meta: Optional[Dict[str, Any]] = None,
    spec: Any = None,
    extra_files: Optional[Dict[str, str]] = None,
) -> str:
    """Write one artifact and return its folder; an earlier artifact of the same cell is replaced.

    ``program`` is the bytes ``torch.export.save`` wrote, or the ExportedProgram to save now;
    ``outputs`` holds eager's output for each of ``calls``; ``spec`` is the program's in_spec,
    which each call must match (taken from ``program`` when that is an ExportedProgram);
    ``extra_files`` (name -> path) are moved into the folder and listed with the others. Raises
    on any failure, leaving no folder under the final name.
    """
    import torch

    torch_version = str(torch.__version__)
    python = python_version()
    final = artifact_folder(
        target.root, torch_version, target.variant, python, mode, case, target.with_set, target.device
    )
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    if spec is None and not isinstance(program, (bytes, bytearray)):
        spec = in_spec(program)
    flat, form = flat_inputs(calls, spec)
    inputs = {"calls": flat}
    expected = {"calls": [_leaves(out, "output %d" % n) for n, out in enumerate(outputs)]}
    temp = tempfile.mkdtemp(prefix=".tmp-", dir=parent)
    try:
        program_path = os.path.join(temp, PROGRAM)
        if isinstance(program, (bytes, bytearray)):
            with open(program_path, "wb") as f:
                f.write(program)
        else:
            torch.export.save(program, program_path)
        torch.save(inputs, os.path.join(temp, INPUTS), pickle_protocol=PICKLE_PROTOCOL)
        torch.save(expected, os.path.join(temp, OUTPUTS), pickle_protocol=PICKLE_PROTOCOL)
        for name, source in sorted((extra_files or {}).items()):
            shutil.move(source, os.path.join(temp, name))
        listed = []
        for name in (*FILES, *sorted(extra_files or {})):
            path = os.path.join(temp, name)
            _sync(path)
            listed.append({"name": name, "size": os.path.getsize(path), "sha256": layout.sha256_of(path)})
        meta: Dict[str, Any] = dict(extra_meta or {})
        meta.update(
            format_version=FORMAT_VERSION,
            case=case,
            mode=mode,
            torch_version=torch_version,
            variant=target.variant,
            python=python,
            device=target.device,
            dependency_set=target.dependency_set,  # the packages it was saved beside; "" for torch alone
            with_set=target.with_set,
            serializer_version=serializer_version(),
            calls=len(inputs["calls"]),
            inputs_form=form,
            pickle_protocol=PICKLE_PROTOCOL,
            saved_at=now(),
            files=listed,
        )
        meta_path = os.path.join(temp, META)
        with open(meta_path, "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1, sort_keys=True, default=str)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        signing.sign(meta_path, signing.signing_key())
        _replace(temp, final)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return final


def _replace(temp: str, final: str) -> None:
    """Put the complete folder ``temp`` at ``final``, moving an earlier one aside first (a folder cannot
    be renamed over a non-empty one)."""
    old = None
    if os.path.lexists(final):
        old = tempfile.mkdtemp(prefix=".old-", dir=os.path.dirname(final))
        os.rename(final, os.path.join(old, "artifact"))
    os.rename(temp, final)
    try:
        _sync(os.path.dirname(final))
    except OSError:  # not every file system syncs folders
        pass
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def keep(
    target: Target,
    record: Dict[str, Any],
    info: Any,
    mode: str,
    ep: Any,
    saved: Any,
    case: Any,
    expected: Any,
    expected_extra: Sequence[Any],
    extra_files: Optional[Dict[str, str]] = None,
    more_meta: Optional[Dict[str, Any]] = None,
) -> Optional[str]:
    """Keep a passing cell's program (see :func:`save`); called in the cell, after its check.

    ``saved`` is the buffer the cell saved the program to before running it, if any. The
    extra inputs are kept only when the check ran them. ``extra_files`` and ``more_meta`` add
    files and meta.json keys (the aoti stage's package). The record's ``artifact`` says whether
    it was kept, and ``artifact_error`` why not; the cell's status does not change. Returns the
    folder, or None when nothing was kept.
    """
    calls = [(case.example_args, case.example_kwargs)]
    outputs = [expected]
    if record.get("check_status") in (STAGE_OK, STAGE_SKIPPED):
        calls += [(args, case.example_kwargs) for args in case.extra_args]
        outputs += list(expected_extra)
    extra_meta = {
        "source": info.source,
        "case_file": info.path,
        "skip_check": info.skip_check,
        "check_status": record.get("check_status"),
        "strict_passed": record.get("strict_passed"),
        "graph_hash": record.get("graph_hash"),
    }
    extra_meta.update(more_meta or {})
    program = saved.getvalue() if saved is not None else ep
    try:
        folder = save(target, info.name, mode, program, calls, outputs, extra_meta, in_spec(ep), extra_files)
    except MemoryError:
        raise
    except Exception as exc:
        reason = "%s: %s" % (type(exc).__name__, first_line(str(exc), 300))
        record.update(artifact=ARTIFACT_NOT_SAVED, artifact_error=without_paths(reason))
        return None
    record.update(artifact=ARTIFACT_SAVED, artifact_error=None)
    return folder


def read_data(folder: str, name: str) -> List[Any]:
    """The ``calls`` list of inputs.pt or outputs.pt, read as plain data only."""
    import torch

    value = torch.load(os.path.join(folder, name), weights_only=True)
    if not isinstance(value, dict) or not isinstance(value.get("calls"), list):
        raise ValueError("%s holds no list of calls" % name)
    return value["calls"]


def read_inputs(folder: str, meta: Dict[str, Any], spec: Any) -> List[Tuple[Tuple[Any, ...], Dict[str, Any]]]:
    """The ``(args, kwargs)`` of each saved call, for a loaded program whose in_spec is ``spec`` (a package's: the
    one meta.json keeps), in either format."""
    calls = read_data(folder, INPUTS)
    if meta.get("format_version") != 1:
        return rebuild_inputs(calls, spec, meta.get("inputs_form", ARGS_KWARGS))
    if not all(isinstance(call, (list, tuple)) and len(call) == 2 and isinstance(call[1], dict) for call in calls):
        raise ValueError("%s holds calls that are not [args, kwargs]" % INPUTS)
    return [(tuple(args), kwargs) for args, kwargs in calls]
