"""The saved-program folder: where ``run --artifacts DIR`` keeps each program, and how ``load`` finds one.

``DIR/<torch_version>_<variant>_py<X.Y>/<mode>/<case folder>/`` holds ``program.pt2``, ``inputs.pt``,
``outputs.pt``, ``meta.json`` (what was saved, each file's size and sha256) and ``meta.sig``; a cell
that ran the aoti stage adds its AOTInductor package (``aoti.pt2``, or ``aoti.so`` where the release
compiles a bare library), listed in meta.json like the others, so that the signature covers it, and
described under its ``aoti`` key. A program saved on another device than the CPU (``run --device cuda``) holds
tensors of that device and is kept apart: its case folder ends in ``@<device>`` (``tutorial__add_one@cuda``), a
name no case folder has otherwise, and ``load --device`` loads the programs of one device.
matrix/worker/artifacts.py writes and reads the files themselves.
The host plans loads, removes and reports saved programs with this module alone.

Standard library only, Python 3.8 syntax: the worker imports this inside every torch environment.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import dependencies
from .case import cell_selected
from .errors import UserError
from .schema import MODES

FORMAT_VERSION = 2
# The formats ``load`` reads: 1 kept inputs as ``[args, kwargs]``, 2 as pytree leaves.
READ_FORMATS = (1, 2)
PROGRAM = "program.pt2"
INPUTS = "inputs.pt"
OUTPUTS = "outputs.pt"
META = "meta.json"
FILES = (PROGRAM, INPUTS, OUTPUTS)
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
    dependency_set: str = ""  # the packages beside torch (dependencies.set_key); "" for torch alone
    with_set: str = ""  # the part of them that ``--with`` added (the record's with_set); names the folder


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


def artifact_name(case: str, with_set: str = "", device: str = "cpu") -> str:
    """The folder name of a case's artifact: its :func:`case_folder`, the suffix of the ``--with`` set, if any, and
    ``@<device>`` where it was saved on another device than the CPU."""
    return case_folder(case) + dependencies.set_suffix(with_set) + ("" if device == "cpu" else "@" + device)


def artifact_folder(
    root: str, torch_version: str, variant: str, python: str, mode: str, case: str, with_set: str = "",
    device: str = "cpu",
) -> str:  # fmt: skip
    return os.path.join(root, env_folder(torch_version, variant, python), mode, artifact_name(case, with_set, device))


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
    if type(meta.get("format_version")) is not int or meta["format_version"] not in READ_FORMATS:
        return None, "%s has format version %r; this loader reads %s" % (
            META,
            meta.get("format_version"),
            " and ".join(str(version) for version in READ_FORMATS),
        )
    files = meta.get("files")
    if not isinstance(files, list) or not all(isinstance(entry, dict) for entry in files):
        return None, "%s has no file list" % META
    return meta, None


def verify(folder: str, meta: Dict[str, Any]) -> Optional[str]:
    """Why the files of an artifact differ from what meta.json lists, or None when all are whole.

    FILES must be listed; any other file listed (an AOTInductor package) must be whole too.
    """
    listed = {entry.get("name"): entry for entry in meta.get("files") or []}
    others = sorted(name for name in listed if name not in FILES and isinstance(name, str))
    for name in (*FILES, *others):
        problem = verify_file(folder, meta, name)
        if problem is not None:
            return problem
    return None


def verify_file(folder: str, meta: Dict[str, Any], name: str, path: Optional[str] = None) -> Optional[str]:
    """Why the file ``name`` of an artifact (read at ``path``, else in ``folder``) differs from what meta.json
    lists for it, or None when it is whole."""
    if name in (".", "..") or os.path.basename(name) != name or name != name.strip() or not name:
        return "%s lists %r, which is not a file in its folder" % (META, name)
    entry = next((e for e in meta.get("files") or [] if isinstance(e, dict) and e.get("name") == name), None)
    path = os.path.join(folder, name) if path is None else path
    if entry is None:
        return "%s does not list %s" % (META, name)
    if not os.path.isfile(path):
        return "%s is missing" % name
    size = os.path.getsize(path)
    if size != entry.get("size"):
        return "%s has %d bytes, %s says %s" % (name, size, META, entry.get("size"))
    if sha256_of(path) != entry.get("sha256"):
        return "%s's sha256 differs from %s's" % (name, META)
    return None


# --- finding artifacts, in ``load`` ----------------------------------------------------------

# (saved_torch_version, saved_variant, saved_python, case, mode): the program a load tries; with the
# set of packages it was saved beside (Artifact.dependency_set), what a load record is kept for.
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

    @property
    def dependency_set(self) -> str:
        """The packages beside torch it was saved with: "" for torch alone, or where no meta.json says."""
        return _text((self.meta or {}).get("dependency_set"))

    @property
    def with_set(self) -> str:
        """The part of :attr:`dependency_set` that ``--with`` added: "" for none, or where no meta.json says."""
        return _text((self.meta or {}).get("with_set"))

    @property
    def device(self) -> str:
        """The device its program and inputs were saved on: the CPU where meta.json does not say, or cannot be
        read and the folder's name has no ``@<device>``."""
        saved = (self.meta or {}).get("device")
        if isinstance(saved, str) and saved:
            return saved
        name = os.path.basename(self.folder)
        return name.rsplit("@", 1)[1] if self.meta is None and "@" in name else "cpu"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


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
    """Every artifact folder under ``roots``, in path order; the first of two with the same key, set and device is
    kept."""
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
    kept: Dict[Tuple[Key, str, str], Artifact] = {}
    for artifact in found:
        identity = (artifact.key, artifact.dependency_set, artifact.device)
        if identity in kept:
            sys.stderr.write(
                "warning: %s is the same artifact as %s; loading the first only\n"
                % (artifact.folder, kept[identity].folder)
            )
            continue
        kept[identity] = artifact
    return list(kept.values())


def artifact_at(folder: str) -> Optional[Artifact]:
    """The artifact in ``folder`` (``<environment>/<mode>/<case folder>``) as ``discover`` finds it; None elsewhere."""
    path = os.path.normpath(folder)
    mode_folder, name = os.path.split(path)
    env, mode = os.path.split(mode_folder)
    saved = parse_env_folder(os.path.basename(env))
    if saved is None or mode not in MODES or not os.path.isdir(path):
        return None
    return _artifact(path, saved, mode, name)


def _artifact(folder: str, saved: Tuple[str, str, str], mode: str, name: str) -> Artifact:
    torch_version, variant, python = saved
    relative = "%s/%s/%s" % (env_folder(torch_version, variant, python), mode, name)
    meta, problem = read_meta(folder)
    if meta is not None:
        # An artifact from before --with sets had folders of their own has no with_set: it had none; one saved on a
        # GPU before devices had folders of their own has its device in meta.json alone.
        with_set = _text(meta.get("with_set"))
        named = artifact_name(meta["case"], with_set, _text(meta.get("device")) or "cpu")
        where = (meta["torch_version"], meta["variant"], meta["python"], meta["mode"])
        if where != (torch_version, variant, python, mode) or name not in (
            named,
            artifact_name(meta["case"], with_set),
        ):
            problem = "%s names %s/%s/%s, not the folder it is in" % (
                META,
                env_folder(meta["torch_version"], meta["variant"], meta["python"]),
                meta["mode"],
                named,
            )
            meta = None
    if meta is None:
        # Without a usable meta.json the folder's own name stands for the case.
        return Artifact(folder, relative, torch_version, variant, python, name, mode, None, problem)
    return Artifact(folder, relative, torch_version, variant, python, meta["case"], mode, meta, None)


def selected(artifact: Artifact, select: Optional[Tuple[str, ...]]) -> bool:
    return cell_selected(artifact.case, artifact.relative, select)
