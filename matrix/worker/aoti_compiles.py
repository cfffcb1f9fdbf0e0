"""Which saved programs ``load --aoti`` compiles on this release, the job that compiles one, and its use
(products.COMPILE).

"Exported on X, compiled on Y": on the loading release Y, every selected program saved on an *older* release X
(in version order: ``2.9.1 < 2.10.0.dev20251001 < 2.10.0``; the variant does not matter) is compiled with Y's
AOTInductor (:class:`AotiCompileJob`) and its package loaded in a fresh process. A program saved on Y itself is
not: compiling a program on the release that exported it is the aoti stage of ``run``. Nor is one saved on a
newer release, which no user compiles on an older one. A program whose own load fails here is tried and
recorded ``skipped`` by the job, without a compile: a program that cannot be loaded cannot be compiled.

Versions are compared here, in the worker, without ``packaging``: the release numbers, then a pre-release
(``a``, ``b``, ``rc``) and a development build (``.dev``) before the release they lead to, as PEP 440 orders
them; the local tag (``+cpu``) takes no part. A version this cannot read is older than nothing.

Standard library only, Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Sequence, Tuple

from ..contract import layout, records
from ..contract.layout import Artifact
from ..contract.products import AOTI_FROM, COMPILE
from ..contract.schema import STAGE_OK, STAGE_SKIPPED, LoadStatus, first_line
from . import aoti, artifacts
from .aoti_stage import AotiLoadJob, PackageUse, _outcome, compile_in_child
from .load_job import import_case, in_private, load_program
from .messages import FOLLOW_UP, message
from .use import Fields, Found, Use

_VERSION = re.compile(r"(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?(?:\.post\d+)?(?:\.dev(\d+))?")
_PHASES = {"a": 0, "b": 1, "rc": 2}
# Where a final release sorts among its own pre-releases and development builds.
_FINAL = (3, 0)
_NO_DEV = float("inf")

Order = Tuple[Tuple[int, ...], Tuple[int, int], float]
# Where a version older() read sorts (never: to_compile keeps only those it reads); typed as one.
_OLDEST: Order = ((), (-1, 0), 0.0)


def release_order(version: str) -> Optional[Order]:
    """A sort key of a torch version in release order (see the module docstring); None where it is not one."""
    found = _VERSION.fullmatch(str(version).split("+", 1)[0].strip())
    if found is None:
        return None
    numbers = [int(n) for n in found.group(1).split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()  # 2.10 == 2.10.0
    phase, pre, dev = found.group(2), found.group(3), found.group(4)
    if phase is not None:
        stage = (_PHASES[phase], int(pre))
    elif dev is not None:
        stage = (-1, 0)  # 2.10.0.dev… comes before 2.10.0a1 and 2.10.0
    else:
        stage = _FINAL
    return tuple(numbers), stage, float(dev) if dev is not None else _NO_DEV


def older(saved: str, loading: str) -> bool:
    """Whether the release ``saved`` comes before ``loading`` (builds of one release are neither)."""
    before, after = release_order(saved), release_order(loading)
    return before is not None and after is not None and before < after


def to_compile(found: List[Artifact], version: str, sources: str = AOTI_FROM[0]) -> List[Artifact]:
    """The artifacts ``load --aoti`` compiles on the release ``version``: those saved on an older one, in order.

    ``sources`` (``--aoti-from``): ``all`` of them, or ``nearest-and-oldest``: those of the newest older release
    found and of the oldest in its epoch (every build of each: a release's builds are one release here). The
    epoch is the serializer's major schema version the programs were saved with: a release loads no program
    saved with another one (5 on 2.3–2.4, 7 on 2.5, 8 from 2.6), so an older epoch's oldest would be tried in
    vain where the epoch's own oldest has programs this release can load. A program whose meta names no schema
    version is in every epoch.
    """
    chosen = [artifact for artifact in found if older(artifact.saved_torch_version, version)]
    if sources == AOTI_FROM[0] or not chosen:
        return chosen
    placed = [(release_order(artifact.saved_torch_version) or _OLDEST, schema_major(artifact)) for artifact in chosen]
    nearest = max(order for order, _ in placed)
    epochs = {major for order, major in placed if order == nearest and major is not None}
    oldest = min(order for order, major in placed if not epochs or major is None or major in epochs)
    return [artifact for artifact, (order, _) in zip(chosen, placed) if order in (nearest, oldest)]


def schema_major(artifact: Artifact) -> Optional[str]:
    """The serializer's major schema version a program was saved with (``8`` of ``8.20``), as its meta says."""
    version = (artifact.meta or {}).get("serializer_version")
    return str(version).split(".", 1)[0] if version else None


# --- the compile of a program saved on an older release (products.COMPILE, ``load --aoti``) ---------------


# ``aoti-compile``: a program saved on an older release, compiled with AOTInductor here, then its package loaded
# in a fresh process, run on the saved inputs and compared: "exported on X, compiled on Y" (``load --aoti``; which
# programs, :mod:`.aoti_compiles`). The parent has checked the folder's signature; this process, forked from a
# parent that never exported nor compiled, checks every file meta.json lists, imports the case module and loads the
# program as a program's load does, then compiles it with this release's own API (:mod:`.aoti`). A program that
# does not load here is not compiled: the record says ``skipped``, and its own load says why. The compile runs in
# a process forked from this one with its own deadline, ``--aoti-timeout`` (:mod:`.forked`, as the aoti stage
# compiles): a compile that hangs or dies is that record's ``timeout`` or ``crash``, g++ included. The package goes
# to a folder of this job's own, beside links to the program's files and a meta.json that lists them all with
# their sha256, and is loaded by an ``aoti-load`` follow-up, which checks every file against that list before it
# loads anything; :func:`merge_aoti_compile` folds its outcome into the record and removes the folder. The package
# is not kept: the record says what it cost (``compile_s``, ``package_bytes``) and what became of it.
@dataclasses.dataclass(frozen=True)
class AotiCompileJob:
    """Everything an isolated process needs to compile one saved program here and hand its package to a fresh load."""

    KIND: ClassVar[str] = "aoti-compile"

    folder: str
    meta: Dict[str, Any]
    timeout_s: float  # what the compile may take (--aoti-timeout)

    @classmethod
    def from_fields(cls, fields: Dict[str, Any]) -> AotiCompileJob:
        return cls(**fields)

    def run(self) -> Dict[str, Any]:
        # A package handed to its load is removed by the merge, after that load.
        return in_private("export-matrix-aoti-compile-", lambda private, fields: _compile(
            self.folder, self.meta, self.timeout_s, private, fields))  # fmt: skip


def _compile(folder: str, meta: Dict[str, Any], timeout_s: float, private: str, fields: Dict[str, Any]) -> bool:
    """Compile the program in ``folder`` into ``private``; True where a follow-up now loads the package."""
    from .failure import describe_error

    problem = layout.verify(folder, meta)
    if problem is not None:
        fields.update(status=STAGE_SKIPPED, error_type="IncompleteArtifact",
                      error_message="not compiled: incomplete artifact: %s" % problem)  # fmt: skip
        return False
    api, missing = aoti.find_api()
    if api is None:
        fields.update(status=LoadStatus.NOT_APPLICABLE.value, error_message=missing)
        return False
    fields["aoti_api"] = api.name
    fields["case_module"] = import_case(meta)
    program, read, found = load_program(folder, meta, lambda loaded: (
        artifacts.read_inputs(folder, meta, artifacts.in_spec(loaded)), aoti.spec_text(loaded)))  # fmt: skip
    if found is not None:  # the error torch met, as a load's
        said = first_line(records.without_paths(found.get("error_message") or ""), 400) or "no message"
        fields.update(found, status=STAGE_SKIPPED,
                      error_message="not compiled: the program does not load on this release: %s" % said)  # fmt: skip
        return False
    calls, spec = read
    args, kwargs = calls[0] if calls else ((), {})
    path = os.path.join(private, api.file)

    result = compile_in_child(api, program, args, kwargs, path, timeout_s, describe_error, "the compile's")
    fields["compile_s"] = result.get("compile_s")
    outcome = result["status"]
    if outcome != "compiled":
        fields.update({k: v for k, v in result.items() if k in ("error_type", "error_message", "error_traceback")})
        fields.update(status=outcome, failed_step="compile" if outcome != LoadStatus.NOT_APPLICABLE.value else None)
        return False
    fields["package_bytes"] = os.path.getsize(path)
    derived = _package_folder(folder, meta, private, api, spec, fields["compile_s"])
    load = AotiLoadJob(folder=private, meta=derived, trust=True)  # a folder this job made, of files it checked
    fields[FOLLOW_UP] = {"message": message(load), "merge": "aoti-compile", "folder": private}
    return True


def _package_folder(
    folder: str, meta: Dict[str, Any], private: str, api: aoti.Api, spec: str, compile_s: Any
) -> Dict[str, Any]:
    """Put beside the package a link to each of the program's files; returns the meta.json that lists them all.

    The package's load checks each file against this list, so a program file changed after this job checked
    it is found changed there; links (copies where the system has none) cost nothing for a large model.
    """
    listed: List[Dict[str, Any]] = []
    for entry in meta.get("files") or []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if name not in layout.FILES:
            continue  # the saving release's own package, if it kept one, is not this one
        source = os.path.join(os.path.realpath(folder), name)
        try:
            os.symlink(source, os.path.join(private, name))
        except (OSError, NotImplementedError):
            shutil.copyfile(source, os.path.join(private, name))
        listed.append(dict(entry))
    package = os.path.join(private, api.file)
    listed.append({"name": api.file, "size": os.path.getsize(package), "sha256": layout.sha256_of(package)})
    device = meta.get("device") or "cpu"
    described = {"file": api.file, "api": api.name, "in_spec": spec, "device": device, "compile_s": compile_s}
    return dict(meta, files=listed, aoti=described)


def merge_aoti_compile(compiled: Dict[str, Any], load: Dict[str, Any], follow: Dict[str, Any]) -> None:
    """Fold the fresh load of a package compiled here into its compile's record, then remove the package's folder."""
    shutil.rmtree(follow["folder"], ignore_errors=True)
    status, outcome, step = _outcome(load)
    failed = outcome != STAGE_OK
    compiled.update(
        status=outcome,
        failed_step=step if failed and status != LoadStatus.NOT_APPLICABLE.value else None,
        error_type=load.get("error_type") if failed else None,
        error_message=load.get("error_message") or "%s, no message" % status if failed else None,
        error_traceback=load.get("error_traceback") if failed else None,
        aoti_loader=load.get("aoti_loader"),
        checked_inputs=load.get("checked_inputs"),
        load_s=load.get("load_s"),
        run_s=load.get("run_s"),
    )
    if failed and load.get("stderr_tail"):
        compiled["stderr_tail"] = load["stderr_tail"]


class CompileUse(PackageUse):
    """A program saved on an older release, compiled here with AOTInductor (products.COMPILE, ``load --aoti``)."""

    product = COMPILE
    refuses_damaged = True
    follows = True  # each compiled package: a fresh load
    kinds = (AotiCompileJob,)
    merges = {AotiCompileJob.KIND: merge_aoti_compile}

    def fields(self, artifact: Artifact, env: Fields) -> Fields:
        return {}

    def present(self, artifact: Artifact) -> bool:
        return True

    def label(self, artifact: Artifact, record: Fields) -> str:
        return "%s (compiled here)" % artifact.relative

    def damaged(self, problem: str) -> Optional[Fields]:
        return {"status": STAGE_SKIPPED, "error_type": "IncompleteArtifact",
                "error_message": "not compiled: incomplete artifact: %s" % problem}  # fmt: skip

    def described(self, record: Fields) -> Optional[Fields]:
        return None

    def available(self, loads: Any, record: Fields) -> Found:
        if not loads.can_load:
            return Use.available(self, loads, record)
        return loads.compile_api  # type: ignore[no-any-return]

    def planned(self, found: Sequence[Artifact], version: str, given: Mapping[str, Any]) -> List[Artifact]:
        return to_compile(list(found), version, given["aoti_from"]) if given.get("aoti") else []

    def set_up(self, loads: Any) -> None:
        PackageUse.set_up(self, loads)
        api, missing = aoti.find_api()
        problem = aoti.compiler_problem() if api is not None else None
        loads.compile_api = (api, missing) if problem is None else (None, problem)

    def job(self, loads: Any, folder: str, meta: Fields, record: Fields) -> Tuple[Any, float]:
        record["aoti_api"] = loads.compile_api[0].name  # else refused
        timeout_s = float(loads.given["aoti_timeout"])
        return AotiCompileJob(folder=folder, meta=meta, timeout_s=timeout_s), timeout_s

    def cache_fields(self, artifact: Artifact) -> Optional[Fields]:
        return {}


USE = CompileUse()
