"""Exported programs kept on disk by ``run --artifacts DIR``, for ``load`` to try on other releases.

Each cell that exports and passes its check keeps its program in
``DIR/<torch_version>_<variant>_py<X.Y>/<mode>/<case folder>/``:

- ``program.pt2``: ``torch.export.save`` of the program, as the cell's serialize stage saved it
  before running it (running a program can update its buffers in place); without that stage it
  is saved after the check ran it;
- ``inputs.pt``: ``{"calls": [[args, kwargs], ...]}``, the example inputs, then each extra input the
  check ran the program on;
- ``outputs.pt``: ``{"calls": [[leaf, ...], ...]}``, eager's outputs for those inputs on the saving
  release, flattened with torch's pytree; they, not the loading release's random numbers, are the reference;
- ``meta.json``: what was saved (case, mode, release, variant, Python, the serializer's schema version)
  and each file's size and sha256.

Inputs and outputs hold plain data only (tensors, numbers, text, None, lists, tuples and dicts) and are
written with pickle protocol 2, so that ``torch.load(..., weights_only=True)`` reads them on every
release from 2.1. A folder is written under a temporary name (starting with ``.``) and renamed once
complete: a folder with its final name but no ``meta.json``, or a file whose size or sha256 differs
from ``meta.json``'s, was damaged afterwards, and ``load`` reports it as incomplete.

Standard library and torch only, Python 3.8 syntax: this runs inside every torch environment.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import UserError
from ..schema import MODES, STAGE_OK, STAGE_SKIPPED, first_line, now

FORMAT_VERSION = 1
PROGRAM = "program.pt2"
INPUTS = "inputs.pt"
OUTPUTS = "outputs.pt"
META = "meta.json"
FILES = (PROGRAM, INPUTS, OUTPUTS)
# torch.save's own default, and what torch.load reads on every release.
PICKLE_PROTOCOL = 2
# What meta.json must hold, as text, for an artifact to be identified.
META_TEXT_KEYS = ("case", "mode", "torch_version", "variant", "python")

_PLAIN_PART = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")
_ENV_FOLDER = re.compile(r"(?P<torch_version>[^_/\\]+)_(?P<variant>.+)_py(?P<python>[0-9]+\.[0-9]+)")
MAX_FOLDER_NAME = 100


@dataclasses.dataclass(frozen=True)
class Target:
    """Where a run keeps its artifacts, and the variant and device they are filed under."""

    root: str
    variant: str
    device: str = "cpu"


def env_folder(torch_version: str, variant: str, python: str) -> str:
    """One environment's folder: ``2.5.1_pypi_py3.11``."""
    return "%s_%s_py%s" % (torch_version.replace("/", "_"), variant, python)


def parse_env_folder(name: str) -> Optional[Tuple[str, str, str]]:
    """(torch_version, variant, python) of an environment folder's name, or None when it is not one."""
    found = _ENV_FOLDER.fullmatch(name)
    if found is None or name.startswith("."):
        return None
    return found.group("torch_version"), found.group("variant"), found.group("python")


def case_folder(case: str) -> str:
    """The folder name of a case: one path component; distinct cases get distinct names.

    A name of lower-case letters and digits joined by single ``._-`` (parts split at ``/``)
    keeps its parts, joined by ``__``; any other keeps a readable cut and a hash of the whole.
    """
    parts = case.split("/")
    if all(_PLAIN_PART.fullmatch(part) for part in parts):
        name = "__".join(parts)
        if len(name) <= MAX_FOLDER_NAME:
            return name
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", case).strip("._-")[:60].rstrip("._-") or "case"
    digest = hashlib.sha256(case.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return "%s~%s" % (readable, digest)


def artifact_folder(root: str, torch_version: str, variant: str, python: str, mode: str, case: str) -> str:
    return os.path.join(root, env_folder(torch_version, variant, python), mode, case_folder(case))


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


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
) -> str:
    """Write one artifact and return its folder; an earlier artifact of the same cell is replaced.

    ``program`` is the bytes ``torch.export.save`` wrote, or the ExportedProgram to save now;
    ``outputs`` holds eager's output for each of ``calls``. Raises on any failure, leaving
    no folder under the final name.
    """
    import torch

    torch_version = str(torch.__version__)
    python = python_version()
    final = artifact_folder(target.root, torch_version, target.variant, python, mode, case)
    parent = os.path.dirname(final)
    os.makedirs(parent, exist_ok=True)
    inputs = {"calls": [[plain(args, "input %d args" % n), plain(kwargs, "input %d kwargs" % n)]
                        for n, (args, kwargs) in enumerate(calls)]}  # fmt: skip
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
        listed = []
        for name in FILES:
            path = os.path.join(temp, name)
            _sync(path)
            listed.append({"name": name, "size": os.path.getsize(path), "sha256": _sha256(path)})
        meta: Dict[str, Any] = dict(extra_meta or {})
        meta.update(
            format_version=FORMAT_VERSION,
            case=case,
            mode=mode,
            torch_version=torch_version,
            variant=target.variant,
            python=python,
            device=target.device,
            serializer_version=serializer_version(),
            calls=len(inputs["calls"]),
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
        fd = os.open(os.path.dirname(final), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
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
) -> Optional[str]:
    """Keep a passing cell's program (see :func:`save`); called in the cell, after its check.

    ``saved`` is the buffer the cell saved the program to before running it, if any. The
    extra inputs are kept only when the check ran them. A failure is written to the cell's
    log (its ``stderr_tail``) and does not change the cell's record. Returns the folder.
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
    program = saved.getvalue() if saved is not None else ep
    try:
        return save(target, info.name, mode, program, calls, outputs, extra_meta)
    except MemoryError:
        raise
    except Exception as exc:
        sys.stderr.write("warning: artifact not kept: %s: %s\n" % (type(exc).__name__, first_line(str(exc), 300)))
        sys.stderr.flush()
        return None


# --- reading, in ``load`` ----------------------------------------------------------------


def read_meta(folder: str) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """An artifact folder's meta.json, or why it cannot be used."""
    path = os.path.join(folder, META)
    if not os.path.isfile(path):
        return None, "no %s (the folder was cut short or damaged)" % META
    try:
        with open(path, "rb") as f:
            meta = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError) as exc:
        return None, "%s cannot be read: %s" % (META, exc)
    if not isinstance(meta, dict):
        return None, "%s is not a JSON object" % META
    odd = [key for key in META_TEXT_KEYS if not isinstance(meta.get(key), str)]
    if odd:
        return None, "%s lacks %s" % (META, ", ".join(odd))
    if meta.get("format_version") != FORMAT_VERSION:
        return None, "%s has format version %r; this loader reads %d" % (
            META,
            meta.get("format_version"),
            FORMAT_VERSION,
        )
    files = meta.get("files")
    if not isinstance(files, list) or not all(isinstance(entry, dict) for entry in files):
        return None, "%s has no file list" % META
    return meta, None


def verify(folder: str, meta: Dict[str, Any]) -> Optional[str]:
    """Why the files of an artifact differ from what meta.json lists, or None when all are whole."""
    listed = {entry.get("name"): entry for entry in meta.get("files") or []}
    for name in FILES:
        entry = listed.get(name)
        path = os.path.join(folder, name)
        if entry is None:
            return "%s does not list %s" % (META, name)
        if not os.path.isfile(path):
            return "%s is missing" % name
        size = os.path.getsize(path)
        if size != entry.get("size"):
            return "%s has %d bytes, %s says %s" % (name, size, META, entry.get("size"))
        if _sha256(path) != entry.get("sha256"):
            return "%s's sha256 differs from %s's" % (name, META)
    return None


def read_data(folder: str, name: str) -> List[Any]:
    """The ``calls`` list of inputs.pt or outputs.pt, read as plain data only."""
    import torch

    value = torch.load(os.path.join(folder, name), weights_only=True)
    if not isinstance(value, dict) or not isinstance(value.get("calls"), list):
        raise ValueError("%s holds no list of calls" % name)
    return value["calls"]


# --- finding artifacts, in ``load`` ----------------------------------------------------------

# (saved_torch_version, saved_variant, saved_python, case, mode): what a load record is kept for.
Key = Tuple[str, str, str, str, str]


class ArtifactError(UserError):
    """A folder given to ``load`` that holds no artifacts; the message names it."""


@dataclasses.dataclass(frozen=True)
class Artifact:
    """One artifact folder, identified from its meta.json or, failing that, from its path."""

    folder: str
    relative: str  # <environment>/<mode>/<case folder>
    saved_torch_version: str
    saved_variant: str
    saved_python: str
    case: str
    mode: str
    meta: Optional[Dict[str, Any]]
    problem: Optional[str]  # why it cannot be loaded before trying (incomplete, inconsistent)

    @property
    def key(self) -> Key:
        return (self.saved_torch_version, self.saved_variant, self.saved_python, self.case, self.mode)


def _folders(path: str) -> List[str]:
    try:
        names = os.listdir(path)
    except OSError:
        return []
    return sorted(name for name in names if not name.startswith(".") and os.path.isdir(os.path.join(path, name)))


def _environments(root: str) -> List[str]:
    """The environment folders in ``root``: ``root`` itself when it is one, else its children that are."""
    if parse_env_folder(os.path.basename(os.path.normpath(root))) is not None and any(
        os.path.isdir(os.path.join(root, mode)) for mode in MODES
    ):
        return [root]
    return [os.path.join(root, name) for name in _folders(root) if parse_env_folder(name) is not None]


def discover(roots: Tuple[str, ...]) -> List[Artifact]:
    """Every artifact folder under ``roots``, in path order; the first of two with the same key is kept."""
    found: List[Artifact] = []
    for root in roots:
        if not os.path.isdir(root):
            raise ArtifactError("ARTIFACT_DIR %s: no such folder" % root)
        here = []
        for env in _environments(root):
            saved = parse_env_folder(os.path.basename(os.path.normpath(env)))
            assert saved is not None
            for mode in MODES:
                for name in _folders(os.path.join(env, mode)):
                    here.append(_artifact(os.path.join(env, mode, name), saved, mode, name))
        if not here:
            raise ArtifactError(
                "ARTIFACT_DIR %s: no artifacts here; give the folder of `run --artifacts DIR`"
                " (it holds <torch>_<variant>_py<X.Y>/<mode>/<case> folders)" % root
            )
        found.extend(here)
    kept: Dict[Key, Artifact] = {}
    for artifact in found:
        if artifact.key in kept:
            sys.stderr.write(
                "warning: %s is the same artifact as %s; loading the first only\n"
                % (artifact.folder, kept[artifact.key].folder)
            )
            continue
        kept[artifact.key] = artifact
    return list(kept.values())


def _artifact(folder: str, saved: Tuple[str, str, str], mode: str, name: str) -> Artifact:
    torch_version, variant, python = saved
    relative = "%s/%s/%s" % (env_folder(torch_version, variant, python), mode, name)
    meta, problem = read_meta(folder)
    if meta is not None:
        where = (
            meta["torch_version"],
            meta["variant"],
            meta["python"],
            meta["mode"],
            case_folder(meta["case"]),
        )
        if where != (torch_version, variant, python, mode, name):
            problem = "%s names %s/%s/%s, not the folder it is in" % (
                META,
                env_folder(meta["torch_version"], meta["variant"], meta["python"]),
                meta["mode"],
                case_folder(meta["case"]),
            )
            meta = None
    if meta is None:
        # Without a usable meta.json the folder's own name stands for the case.
        return Artifact(folder, relative, torch_version, variant, python, name, mode, None, problem)
    return Artifact(folder, relative, torch_version, variant, python, meta["case"], mode, meta, None)


def selected(artifact: Artifact, select: Optional[Tuple[str, ...]]) -> bool:
    return not select or any(
        fnmatch.fnmatchcase(artifact.case, g) or fnmatch.fnmatchcase(artifact.relative, g) for g in select
    )
