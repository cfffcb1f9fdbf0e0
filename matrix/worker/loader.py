"""``export-matrix load ARTIFACT_DIR... --out DIR``: programs saved on any release, loaded and run on this one.

``run --artifacts`` keeps each passing cell's program with its inputs and eager outputs
(see :mod:`matrix.worker.artifacts`). This command takes every artifact under the
folders given, whichever release saved it (this one included), and in this torch loads
it with ``torch.export.load``, runs it on the saved inputs and compares the results with
the saved outputs, with the cell check's tolerance. Each artifact is isolated as a cell
is: a load that crashes or hangs is recorded as such and the command goes on.

Loading runs code from the artifact's folder (``torch.export.load`` unpickles on some
releases; the case module is imported), so an artifact whose ``meta.json`` is not signed
with this machine's key (:mod:`.signing`) is recorded as ``untrusted`` by the parent and
never reaches a loading process, unless ``--trust`` is given for the folders of this command.
An untrusted record does not count as done: a later ``load --trust`` tries it.

The batch engine (:mod:`.batch`) runs the loads as it runs ``run``'s cells. One record per
artifact goes to ``DIR/load_torch-<version>_<variant>_py<X.Y>.jsonl`` (kind ``load``, keys
``schema.LOAD_KEYS``, statuses ``schema.LoadStatus``). Artifacts already recorded there (same
saving release, case, mode and set of packages beside torch) are skipped unless ``--force``; the
run journal locks the file and records an artifact that killed the command as a crash rather
than loading it again.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Set, Tuple

from ..contract import dependencies, layout, records
from ..contract.errors import UserError
from ..contract.layout import Artifact, Key
from ..contract.options import (
    DEFAULT_TIMEOUT_S,
    add_batch,
    add_variant,
    at_least,
    from_namespace,
    memory_mb,
    positive_seconds,
    safe_name,
)
from ..contract.schema import (
    LOAD_KEYS,
    LOAD_STATUSES,
    SCHEMA_VERSION,
    STAGE_ERROR,
    STAGE_MISMATCH,
    STAGE_OK,
    STAGE_SKIPPED,
    LoadStatus,
    first_line,
)
from . import artifacts, batch, compare, signing
from .environment import installed_torch_version, variant_of
from .journal import Key as JournalKey
from .progress import say


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (
        "Loading a folder of saved programs runs code from it, on every release that loads it. Programs that"
        " `run --artifacts` signed with this machine's key load; others are recorded as untrusted, unless"
        " --trust: give it only for folders you made or trust."
    )
    parser.add_argument(
        "artifacts",
        nargs="+",
        metavar="ARTIFACT_DIR",
        help="folders written by `run --artifacts` (or one release's folder in one)",
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the record file")
    parser.add_argument(
        "--select",
        nargs="+",
        metavar="GLOB",
        default=None,
        help="keep artifacts whose case name or path (release/mode/case) matches one of these globs",
    )
    parser.add_argument(
        "--trust",
        action="store_true",
        help="load the programs under every ARTIFACT_DIR given even where their signature is missing or made"
        " with another key. Loading a saved program runs code from its folder (torch.export.load unpickles"
        " on some releases), on every release that loads it: give --trust only for folders you made or trust."
        " Without it, a program not signed with this machine's key (%s, else the key file in the user's"
        " cache folder) is recorded as untrusted and not read" % signing.KEY_VARIABLE,
    )
    parser.add_argument(
        "--dependency-set",
        default=None,
        metavar="KEY",
        help="load only the programs saved with this set of packages beside torch (a key as `run` records"
        " it; '' for torch alone), in an environment that has them; the record file is named after the set."
        " The nox load sessions run one load per set. Default: every program",
    )
    add_variant(parser, "wheel variant to record (default: from torch's version tag)")
    add_batch(parser, "artifact", "load artifacts already recorded in --out again")


@dataclasses.dataclass(frozen=True)
class LoadOptions:
    """The options of ``export-matrix load``, validated before torch is imported."""

    artifacts: Tuple[str, ...]
    out: str
    select: Optional[Tuple[str, ...]] = None
    timeout: float = DEFAULT_TIMEOUT_S
    max_memory: int = 8192
    variant: Optional[str] = None
    force: bool = False
    isolation: Optional[str] = None
    progress: str = "auto"
    jobs: int = 0
    trust: bool = False  # load every ARTIFACT_DIR given, signed or not
    dependency_set: Optional[str] = None  # only programs saved with this set (None: all)

    def __post_init__(self) -> None:
        object.__setattr__(self, "artifacts", tuple(self.artifacts))
        at_least("--jobs", self.jobs, 0)
        if not self.artifacts:
            raise UserError("ARTIFACT_DIR: give at least one folder written by `run --artifacts`")
        if self.select is not None:
            object.__setattr__(self, "select", tuple(self.select))
        object.__setattr__(self, "timeout", positive_seconds("--timeout", self.timeout))
        memory_mb("--max-memory", self.max_memory)
        safe_name("--variant", self.variant)
        self.settings(os.devnull)  # checks --isolation and --progress

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> LoadOptions:
        return from_namespace(cls, namespace)

    def settings(self, path: str) -> batch.Settings:
        """How the engine runs the loads that go to the record file ``path``."""
        return batch.Settings(
            out=path, timeout=self.timeout, max_memory=self.max_memory, isolation=self.isolation, jobs=self.jobs,
            force=self.force, progress=self.progress,
        )  # fmt: skip


OPTIONS = LoadOptions


def file_name(torch_version: str, variant: str, python: str) -> str:
    """The load record file of one loading environment: ``load_torch-2.9.1_pypi_py3.11.jsonl``."""
    return "load_" + records.env_file_name(torch_version, variant, python)


def journal_key(key: Key, dependency_set: str = "") -> JournalKey:
    """One load's key in the journal and in resuming: its artifact's key and the set it was saved with."""
    # The journal keeps (case, mode, run): the saving release and any set go into the first part;
    # torch alone adds nothing, so that the keys of loads recorded before sets were told apart still match.
    return (json.dumps(list(key[:4]) + ([dependency_set] if dependency_set else [])), key[4], 0)


# --- in the isolated process ---------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LoadJob:
    """Everything an isolated process needs to load one artifact, run it and compare."""

    KIND: ClassVar[str] = "load"

    folder: str
    meta: Dict[str, Any]

    @classmethod
    def from_fields(cls, fields: Dict[str, Any]) -> LoadJob:
        return cls(**fields)

    def run(self) -> Dict[str, Any]:
        from .cell import out_of_memory

        fields: Dict[str, Any] = {"serializer_version": artifacts.serializer_version()}
        try:
            _load_and_run(self.folder, self.meta, fields)
        except MemoryError as exc:
            fields.update(out_of_memory(exc))
        return fields


def _load_and_run(folder: str, meta: Dict[str, Any], fields: Dict[str, Any]) -> None:
    import torch
    import torch.export

    from .cell import describe_error

    problem = layout.verify(folder, meta)
    if problem is not None:
        fields.update(_incomplete(problem))
        return
    fields["case_module"] = _import_case(meta)
    path = os.path.join(folder, layout.PROGRAM)
    # load_s times torch.export.load and reading the saved data, not the checks and imports before.
    start = time.perf_counter()
    loaded = False
    failure: Optional[Exception] = None
    try:
        program = torch.export.load(path)
        loaded = True
        inputs = artifacts.read_inputs(folder, meta, program)
        outputs = artifacts.read_data(folder, layout.OUTPUTS)
        if len(inputs) != len(outputs):
            raise ValueError("%s and %s do not hold matching calls" % (layout.INPUTS, layout.OUTPUTS))
    except Exception as exc:
        failure = exc
    finally:
        fields["load_s"] = round(time.perf_counter() - start, 6)
    if failure is not None:
        fields.update(describe_error(failure) if loaded else load_error(path, meta, failure))
        fields["status"] = LoadStatus.LOAD_ERROR.value
        _blame_case_module(fields)
        return
    check = not meta.get("skip_check")
    start = time.perf_counter()
    try:
        module = program.module()
        for number, ((args, kwargs), expected) in enumerate(zip(inputs, outputs)):
            actual = compare.call(module, number, args, kwargs)
            if check:
                compare.outputs(number, list(expected), actual)
        fields["checked_inputs"] = len(inputs)
    except compare.Mismatch as exc:
        fields.update(
            status=LoadStatus.MISMATCH.value,
            check_status=STAGE_MISMATCH,
            check_detail=str(exc)[:2000],
            error_type="AssertionError",
            error_message=first_line(str(exc)),
        )
        return
    except Exception as exc:
        fields.update(describe_error(exc), status=LoadStatus.RUN_ERROR.value, check_status=STAGE_ERROR)
        _blame_case_module(fields)
        return
    finally:
        fields["run_s"] = round(time.perf_counter() - start, 6)
    fields["status"] = LoadStatus.PASS.value
    fields["check_status"] = STAGE_OK if check else STAGE_SKIPPED
    if not check:
        fields["check_detail"] = str(meta.get("skip_check"))


def load_error(path: str, meta: Dict[str, Any], exc: Exception) -> Dict[str, Any]:
    """The record fields of a ``torch.export.load`` that raised ``exc``: the error torch met, and both schema versions.

    From 2.8, ``torch.export.load`` first tries the pt2 archive loader and, when that raises a
    RuntimeError, falls back to the zip reader of 2.7 and before, whose error on an archive (a
    KeyError for its ``version`` entry, or a request to read the logged warnings) hides the
    first one. For an archive, the archive loader's own error is recorded instead. For a file
    in the old zip layout the zip reader's error is the one that applies, and is kept.
    """
    from .cell import describe_error

    layout, load_pt2 = _layout(path), _archive_loader()
    met = _archive_error(load_pt2, path) if layout == "archive" and load_pt2 is not None else None
    fields = describe_error(met if met is not None else exc)
    note = ""
    if layout == "archive" and load_pt2 is None:
        note = " (a pt2 archive, as torch.export.save writes from 2.8; this release reads only the older zip layout)"
    note += " [serializer schema: saved %s, loader %s]" % (
        schema_tuple(meta.get("serializer_version")),
        schema_tuple(artifacts.serializer_version()),
    )
    message = fields.get("error_message") or ""
    fields["error_message"] = message[: max(0, MESSAGE_CHARS - len(note))] + note
    return fields


# The longest error_message a record keeps (as cell.describe_error cuts it).
MESSAGE_CHARS = 500


def schema_tuple(version: Any) -> str:
    """A serializer schema version as torch prints it: ``"7.3"`` is ``(7, 3)``; ``unknown`` where none was recorded."""
    if not isinstance(version, str) or not version:
        return "unknown"
    parts = version.split(".")
    if len(parts) < 2 or not all(part.isdigit() for part in parts):
        return version
    return "(%s)" % ", ".join(str(int(part)) for part in parts)


def _layout(path: str) -> Optional[str]:
    """``zip`` (the layout ``torch.export.save`` wrote up to 2.7: a ``version`` entry at the top), ``archive``
    (any other zip: a pt2 archive, entries in one folder), or None when the file is no zip."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return None
    return "zip" if "version" in names else "archive"


def _archive_loader() -> Optional[Callable[..., Any]]:
    """This release's pt2 archive loader (``torch.export.pt2_archive._package.load_pt2``, from 2.8), or None."""
    try:
        from torch.export.pt2_archive._package import load_pt2
    except Exception:
        return None
    return load_pt2  # type: ignore[no-any-return]


def _archive_error(load_pt2: Callable[..., Any], path: str) -> Optional[Exception]:
    """What the archive loader raises on ``path``; None when it loads."""
    try:
        load_pt2(path)
    except MemoryError:
        raise
    except Exception as exc:
        return exc
    return None


def _incomplete(problem: str) -> Dict[str, Any]:
    return {
        "status": LoadStatus.LOAD_ERROR.value,
        "error_type": "IncompleteArtifact",
        "error_message": "incomplete artifact: %s" % problem,
    }


def _import_case(meta: Dict[str, Any]) -> str:
    """Import the case's module when its file is here: it registers what the program may name
    (custom ops, pytree types), as the user's own code would before loading. Returns how it went.

    Only a relative path inside the current folder (the project's checkout) is imported: an
    artifact's meta.json is data, and must not choose which code runs.
    """
    path = meta.get("case_file")
    if meta.get("source") != "cases" or not isinstance(path, str) or not _inside_here(path):
        return "absent"
    from ..contract.case import CaseInfo
    from .case import load

    try:
        load(CaseInfo(name=str(meta["case"]), path=path, description=""))
    except Exception as exc:
        return "failed: %s" % (records.without_paths(first_line(str(exc), 300)) or type(exc).__name__)
    return "imported"


def _inside_here(path: str) -> bool:
    if os.path.isabs(path) or not path.endswith(".py") or "\0" in path:
        return False
    here = os.path.realpath(os.getcwd())
    resolved = os.path.realpath(os.path.join(here, path))
    return os.path.commonpath([here, resolved]) == here and os.path.isfile(resolved)


def _blame_case_module(fields: Dict[str, Any]) -> None:
    note = fields.get("case_module") or ""
    if note.startswith("failed"):
        fields["error_message"] = records.without_paths(
            "%s (the case module did not import: %s)" % (fields.get("error_message") or "", note[len("failed: ") :])
        )


# --- in the parent ---------------------------------------------------------------------------


class LoadBatch(batch.Batch):
    """The artifacts of one load: every saved program selected, loaded in the installed torch."""

    noun, verb, doing = "artifact", "load", "loading"
    statuses = LOAD_STATUSES
    record_keys = LOAD_KEYS
    # What the parent knows better than the child: the identity of the load.
    parent_keys = frozenset(("schema_version", "kind", "run_id", "torch_version", "variant", "python", "case", "mode"))

    def __init__(
        self,
        found: List[Artifact],
        version: str,
        variant: str,
        python: str,
        signing_key: Optional[bytes] = None,
        trust: bool = False,
    ) -> None:
        """``signing_key`` verifies each artifact's signature, unless ``trust``; None: there is no key."""
        self.artifacts = {journal_key(artifact.key, artifact.dependency_set): artifact for artifact in found}
        self.env: Dict[str, Any] = {"torch_version": version, "variant": variant, "python": python}
        self.can_load = False
        self.signing_key = signing_key
        self.trust = trust

    def wanted(self) -> List[JournalKey]:
        return list(self.artifacts)

    def done(self, path: str) -> Tuple[Set[JournalKey], List[str]]:
        """The artifacts already recorded in a load record file, for resuming."""
        if not os.path.exists(path):
            return set(), []
        found, warnings = records.read(path)
        keys: Set[JournalKey] = set()
        for record in found:
            # An untrusted one was never tried: a later `load --trust` (or with the right key) tries it.
            if record.get("kind") != "load" or record.get("status") == LoadStatus.UNTRUSTED.value:
                continue
            key = tuple(record.get(k) for k in ("saved_torch_version", "saved_variant", "saved_python", "case", "mode"))
            saved_set = record.get("dependency_set") or ""
            if all(isinstance(part, str) for part in (*key, saved_set)):
                keys.add(journal_key(key, saved_set))  # type: ignore[arg-type]
            else:
                warnings.append("%s: skipped a load record without a usable saving release, case and mode" % path)
        return keys, warnings

    def set_up(self, settings: batch.Settings, run_id: str) -> Optional[Dict[str, Any]]:
        try:
            import torch.export

            self.can_load = hasattr(torch.export, "load")
        except Exception:
            self.can_load = False
        self.env.update(run_id=run_id, serializer_version=artifacts.serializer_version())
        if self.can_load:
            self.preimport(settings)
        return None

    def libraries(self) -> List[str]:
        # The packages the programs were saved with: each load imports its case module, and with it them.
        sets = {saved_with(artifact) for artifact in self.artifacts.values()}
        return sorted({r for key in sets for r in dependencies.key_requirements(key)})

    def items(self, keys: Sequence[JournalKey]) -> List[batch.Item]:
        return [self._item(key) for key in keys]

    def _item(self, key: JournalKey) -> batch.Item:
        artifact, env = self.artifacts[key], self.env
        record: Dict[str, Any] = {name: None for name in LOAD_KEYS}
        meta = artifact.meta or {}
        record.update(
            schema_version=SCHEMA_VERSION, kind="load", run_id=env["run_id"],
            saved_torch_version=artifact.saved_torch_version, saved_variant=artifact.saved_variant,
            saved_python=artifact.saved_python, torch_version=env["torch_version"], variant=env["variant"],
            python=env["python"], device=meta.get("device"), case=artifact.case, mode=artifact.mode,
            artifact=artifact.relative, saved_serializer_version=meta.get("serializer_version"),
            dependency_set=saved_with(artifact), with_set=artifact.with_set,
            serializer_version=env["serializer_version"], format_version=meta.get("format_version"),
        )  # fmt: skip
        if artifact.problem is not None:
            record.update(_incomplete(artifact.problem))
            return batch.Item(key, artifact.relative, record)
        assert artifact.meta is not None  # an artifact without a usable meta.json has a problem
        distrust = None if self.trust else untrusted(artifact.folder, artifact.meta, self.signing_key)
        if distrust is not None:
            # Decided here, in the parent: no process is started for it, nothing of it is unpickled or imported.
            record.update(
                status=LoadStatus.UNTRUSTED.value,
                error_type="UntrustedArtifact",
                error_message="untrusted artifact: %s; pass --trust to load folders you made or trust" % distrust,
            )
            return batch.Item(key, artifact.relative, record)
        if not self.can_load:
            record.update(
                status=LoadStatus.NOT_APPLICABLE.value,
                error_message="torch %s has no torch.export.load" % env["torch_version"],
            )
            return batch.Item(key, artifact.relative, record)
        job = LoadJob(folder=os.path.abspath(artifact.folder), meta=artifact.meta)
        return batch.Item(key, artifact.relative, record, job)

    def died(self, item: batch.Item) -> None:
        item.record.update(
            status=LoadStatus.CRASH.value,
            error_type="matrix.worker.loader.LoaderDied",
            error_message="the load command died while this artifact loaded (killed by it or from"
            " outside); recorded as a crash and not loaded again without --force",
        )

    def warm_up(self) -> None:
        if self.can_load:
            _warm_up()


def execute(options: LoadOptions) -> Dict[str, int]:
    """Load the selected artifacts; returns counts per status of the loads recorded now."""
    found = [a for a in layout.discover(options.artifacts) if layout.selected(a, options.select)]
    if options.dependency_set is not None:
        found = [a for a in found if saved_with(a) == options.dependency_set]
        if not found:
            say(
                "nothing under %s was saved with %s"
                % (", ".join(options.artifacts), options.dependency_set or "torch alone")
            )
            return {}
    if not found:
        raise UserError("nothing selected: no artifact under %s matches --select %s"
                        % (", ".join(options.artifacts), " ".join(options.select or ["*"])))  # fmt: skip
    key = None if options.trust else signing.verifying_key()
    version = installed_torch_version()
    variant = options.variant or variant_of(version)
    python = artifacts.python_version()
    name = file_name(version, variant, python)[: -len(".jsonl")] + dependencies.set_suffix(options.dependency_set or "")
    settings = options.settings(os.path.join(options.out, name + ".jsonl"))
    loads = LoadBatch(found, version, variant, python, key, options.trust)
    return batch.execute(loads, settings, version, variant)


def saved_with(artifact: Artifact) -> str:
    """The set of packages beside torch that an artifact was saved with ("" for torch alone)."""
    return artifact.dependency_set


def untrusted(folder: str, meta: Dict[str, Any], key: Optional[bytes]) -> Optional[str]:
    """Why an artifact's ``meta`` (read from ``folder``) is not known to be signed with ``key``; None when it is."""
    if key is None:
        return "no signing key here to check its signature (set %s to the key that signed it)" % signing.KEY_VARIABLE
    data, problem = signing.signed_bytes(os.path.join(folder, layout.META), key)
    if problem is not None:
        return problem
    try:
        same = data is not None and json.loads(data.decode("utf-8")) == meta
    except ValueError:
        same = False
    # The signed bytes must be what the job will use: meta.json could have changed since discovery.
    return None if same else "%s changed while it was read" % layout.META


def _warm_up() -> None:
    """Save, load and run a tiny program once in the parent, so that forked loads time the load, not imports.

    Loading and running a program imports the deserializer, the unlifting code and more on
    first use, which costs more than a second on some releases; forked children inherit it.
    """
    import io

    import torch

    try:
        program = torch.export.export(torch.nn.Linear(2, 2), (torch.ones(1, 2),))
        buffer = io.BytesIO()
        torch.export.save(program, buffer)
        buffer.seek(0)
        torch.export.load(buffer).module()(torch.ones(1, 2))
    except Exception:  # the warm-up only saves time: a release where it fails loads each program cold
        pass


def main(options: LoadOptions) -> int:
    counts = execute(options)
    sys.stderr.write(batch.summary(counts, LOAD_STATUSES, "nothing to load") + "\n")
    if counts.get(LoadStatus.UNTRUSTED.value):
        sys.stderr.write(
            "warning: %d saved program(s) not loaded: not signed with this machine's signing key (their records"
            " say why); `load --trust` loads folders you made or trust, %s gives the key that signed them\n"
            % (counts[LoadStatus.UNTRUSTED.value], signing.KEY_VARIABLE)
        )
    return 0
