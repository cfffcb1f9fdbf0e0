"""The record schema, shared by the worker and the host: statuses, modes, identities, keys.

A new status, a new key or a change to which record wins is made here and nowhere else.
Standard library only, and Python 3.8 syntax: the worker imports this module inside
every torch environment.
"""

from __future__ import annotations

import datetime
import enum
import json
import math
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple

from . import stages

SCHEMA_VERSION = 1

MODES = ("strict", "non-strict")

# What identifies one cell across runs, shards and machines. ``with_set`` is the part of the
# cell's dependency set that ``--with`` added (a set key, "" for none): the same case run with
# ``--with transformers==4.57.1`` and with ``--with transformers==5.2.0`` is two cells, side by
# side like two variants. A case's own PEP 723 set is the same on every release and stays out.
# ``device`` is where the cell ran (``--device``): one build's cell on the CPU and on a GPU is two cells.
IDENTITY = ("torch_version", "variant", "python", "with_set", "device", "case", "mode", "run")
# Identity fields a record may lack (written before they existed), and what a missing one means.
IDENTITY_DEFAULTS = {"run": 0, "with_set": "", "device": "cpu"}
# What identifies one environment (a torch build for one Python).
ENV_KEY = ("torch_version", "variant", "python")

# A load of a kept AOTInductor package (AOTI_LOAD_KEYS), beside the loads of saved programs.
AOTI_LOAD_KIND = "aoti-load"
# A program saved on an older release, compiled with AOTInductor on the loading one (AOTI_COMPILE_KEYS).
AOTI_COMPILE_KIND = "aoti-compile"
RECORD_KINDS = ("environment", "cell", "env-error", "load", AOTI_LOAD_KIND, AOTI_COMPILE_KIND)
# The kinds that record a release taking something a run kept on another release: a saved program loaded, an
# AOTInductor package loaded, a saved program compiled. Each has a load's identity (LOAD_IDENTITY).
LOAD_KINDS = ("load", AOTI_LOAD_KIND, AOTI_COMPILE_KIND)

# Every cell record carries these keys (None where they do not apply).
CELL_KEYS = (
    "schema_version", "kind", "run_id", "env_id", "cell_id",
    "torch_version", "variant", "python", "device",
    "source", "case", "case_file", "mode", "run", "tags", "requires", "expected", "dependency_set", "with_set",
    # For a case that stands for an ExportDB example: the support level this release's own ExportDB
    # gives it (``expected``'s vocabulary); None where the release bundles no example of that name.
    "exportdb_claim",
    "status", "failed_stage", "missing",
    "reason",
    "error_type", "error_message", "error_traceback", "gb_type", "error_case_name",
    "strict_passed",
    "graph_hash", "fingerprint_version", "ops", "node_count", "graph_text",
    "diagnosis_status", "diagnosis",
    # Where a failed export's diagnosis was kept from instead of run again ("<torch_version>/<run_id>" of
    # the cell that ran draft_export, matrix/worker/diagnosis.py); None where it ran in this cell.
    "diagnosis_reused_from",
    "decompose_status", "decomposed_hash", "decomposed_ops", "decompose_error",
    "check_status", "check_detail", "checked_inputs",
    "serialize_status", "serialize_error",
    # serialize_* is what a fresh process saw where one loaded the program (serialize_fresh_*),
    # else the round trip in the exporting process; that round trip is kept in serialize_in_process_*.
    "serialize_in_process_status", "serialize_in_process_error",
    "serialize_fresh_status", "serialize_fresh_error", "serialize_fresh_s",
    # Whether a passing cell kept its program for ``load`` (ARTIFACT_SAVED, ARTIFACT_NOT_SAVED), and why not.
    "artifact", "artifact_error",
    "load_s", "eager_s", "export_s", "check_s", "decompose_s", "serialize_s", "total_s",
    "peak_rss_mb", "exit_code", "stderr_tail", "finished_at",
    # The run that measured a result this record reuses (matrix/worker/reuse.py); None where it ran now.
    "reused_from",
    # With --device cuda: the GPU the cell ran on ("NVIDIA H200, compute 9.0, driver 570.86"); None on the CPU.
    "gpu",
)  # fmt: skip

# The keys of an env-error record (an environment that could not be installed) that tables read.
ENV_ERROR_KEYS = (
    "torch_version", "variant", "python", "dependency_set", "error_type", "error_message", "installer_output",
    "finished_at",
)  # fmt: skip


class _Outcome:
    """What the members of a status enum share: a rank (higher is better; None where the status is not comparable,
    as it says nothing about torch), a glyph, a colour and a meaning, from their class's tables (``_TABLES``)."""

    value: str

    @property
    def rank(self) -> Optional[int]:
        return _TABLES[type(self).__name__][0].get(self.value)

    @property
    def symbol(self) -> str:
        return _TABLES[type(self).__name__][1][self.value]

    @property
    def colour(self) -> str:
        return _TABLES[type(self).__name__][2][self.value]

    @property
    def meaning(self) -> str:
        return _TABLES[type(self).__name__][3][self.value]

    def __str__(self) -> str:
        return self.value


class Status(_Outcome, str, enum.Enum):
    """The outcome of a cell. The string values are what the records hold."""

    PASS = "pass"
    MISMATCH = "mismatch"
    FAIL = "fail"
    CRASH = "crash"
    TIMEOUT = "timeout"
    NOT_APPLICABLE = "not-applicable"
    CASE_ERROR = "case-error"
    # The runner's own fault, not torch.export's (a fork that cannot use CUDA, a CUDA context that cannot be
    # made): no evidence about torch, like an environment that did not install (contract/faults.py).
    HARNESS_ERROR = "harness-error"

    @property
    def applicable(self) -> bool:
        """Whether the cell ran torch.export at all and so counts towards a pass rate."""
        return self.value in _RANK


_RANK = {"pass": 3, "mismatch": 2, "fail": 1, "crash": 0, "timeout": 0}
_SYMBOL = {
    "pass": "✅", "mismatch": "⚠️", "fail": "❌", "crash": "💥", "timeout": "⏱️", "not-applicable": "➖",
    "case-error": "🚧", "harness-error": "🛠️",
}  # fmt: skip
# Okabe and Ito's colour-blind-safe palette, and a grey: pass, mismatch and fail stay apart
# in every common kind of colour blindness.
_COLOUR = {
    "pass": "#009E73", "mismatch": "#F0E442", "fail": "#D55E00", "crash": "#000000", "timeout": "#CC79A7",
    "not-applicable": "#BBBBBB", "case-error": "#0072B2", "harness-error": "#56B4E9",
}  # fmt: skip
_MEANING = {
    "pass": "exported, and the exported program reproduces eager",
    "mismatch": "exported, but the exported program gives other numbers than eager, or raises where eager did not",
    "fail": "torch.export.export raised",
    "crash": "the cell's process died (signal, os._exit, out of memory)",
    "timeout": "the cell ran past its time limit and was killed",
    "not-applicable": "the release lacks a capability the case or mode needs; never a failure",
    "case-error": "the case cannot load, or its eager run fails, on this release",
    "harness-error": "the runner's own fault (a fork that cannot use CUDA, a driver error): no evidence about torch",
}

STATUSES = tuple(status.value for status in Status)  # in display order
APPLICABLE = tuple(status.value for status in Status if status.applicable)
# Breaks ties between equally common statuses of one cell's runs: the worse one wins.
WORST_FIRST = ("crash", "timeout", "fail", "mismatch", "case-error", "harness-error", "not-applicable", "pass")
# The symbol of a grid position that has no record.
NO_RECORD = "·"


class NoCell(str, enum.Enum):
    """Why a command that runs a case (``check``) has no cell record to show, never a record's status: a table
    row names a ``Status`` or one of these, so a reader can tell an environment that did not install from a worker
    that left nothing."""

    ENV_ERROR = "env-error"  # the environment did not install: its env-error record (that kind) says why
    NO_RECORD = "no-record"  # the worker left no cell record; what went wrong, where known, is shown beside it

    def __str__(self) -> str:
        return self.value


# The stages run on an exported program that the report shows in columns of their own, as (name, what a report
# calls it), from their declarations (contract/stages.py). A cell records each one's outcome in ``<name>_status``
# (STAGE_OK, STAGE_ERROR or "skipped") and ``<name>_error``; the status of the cell itself says nothing about them.
STAGES = tuple((stage.name, str(stage.label)) for stage in stages.REPORTED)
STAGE_OK = "ok"
STAGE_ERROR = "error"
STAGE_SKIPPED = "skipped"
# The check stage's outcome (``check_status``) when the program runs but its numbers differ.
STAGE_MISMATCH = "mismatch"
# A failed export's diagnosis (``diagnosis_status``): done (its problems are listed), skipped (no
# time was left), timeout, error (draft_export itself raised), not-applicable (no draft_export).
DIAGNOSIS_DONE = "done"
# A passing cell's saved program (``artifact``), where the run keeps them: saved, or not-saved
# with a one-line reason in ``artifact_error`` (torch.export.save raised, an input or output
# that is not plain data). None where the cell did not pass or nothing was to be kept.
ARTIFACT_SAVED = "saved"
ARTIFACT_NOT_SAVED = "not-saved"


# --- loading a saved program on another release (``export-matrix load``) --------------------
# Every record of something made on one release and used on another (contract/products.py) starts with USE_HEAD
# and ends with USE_TAIL (None where a key does not apply): ``reused_from`` is the run that measured a result this
# record reuses (matrix/worker/reuse.py), None where it ran now. A load record (LOAD_KEYS) adds the serialized-program
# schema version of the saving and of the loading release, where torch exposes one.
USE_HEAD = (
    "schema_version", "kind", "run_id", "saved_torch_version", "saved_variant", "saved_python",
    "torch_version", "variant", "python", "device", "case", "mode", "artifact", "dependency_set", "with_set",
)  # fmt: skip
# ``gpu``: with load --device cuda, the GPU it ran on, as a cell's record names it; None on the CPU.
USE_TAIL = ("run_s", "total_s", "peak_rss_mb", "exit_code", "stderr_tail", "finished_at", "reused_from", "gpu")
LOAD_KEYS = USE_HEAD + (
    "status", "error_type", "error_message", "error_traceback",
    "saved_serializer_version", "serializer_version", "format_version",
    "check_status", "check_detail", "checked_inputs", "case_module", "load_s",
) + USE_TAIL  # fmt: skip
# What identifies one load: the saving environment, the loading one, the case, the mode, and the
# ``--with`` set the program was saved with (``with_set``, as in a cell's identity: the same case
# saved under two sets is two programs). Every load record has the first ones (LOAD_REQUIRED); one
# written before sets had folders of their own has no ``with_set``: it had none. ``device`` is where
# the program was saved and loaded (``load --device``); a record without one loaded on the CPU.
SAVED_ENV_KEY = ("saved_torch_version", "saved_variant", "saved_python")
LOAD_REQUIRED = SAVED_ENV_KEY + ENV_KEY + ("case", "mode")
LOAD_IDENTITY = LOAD_REQUIRED + ("with_set", "device")


class LoadStatus(_Outcome, str, enum.Enum):
    """The outcome of loading a saved program and running it on its saved inputs (not comparable: the loading
    release cannot try)."""

    PASS = "pass"
    MISMATCH = "mismatch"
    RUN_ERROR = "run-error"
    LOAD_ERROR = "load-error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    NOT_APPLICABLE = "not-applicable"
    UNTRUSTED = "untrusted"
    HARNESS_ERROR = "harness-error"  # the runner's own fault, as for a cell


_LOAD_RANK = {"pass": 3, "mismatch": 2, "run-error": 1, "load-error": 0, "crash": 0, "timeout": 0}
_LOAD_SYMBOL = dict(_SYMBOL, **{"run-error": "❌", "load-error": "🚫", "untrusted": "🔒"})
_LOAD_COLOUR = dict(_COLOUR, **{"run-error": "#d62728", "load-error": "#7f2704", "untrusted": "#525252"})
_LOAD_MEANING = {
    "pass": "loaded, ran on the saved inputs and reproduced the saved outputs",
    "mismatch": "loaded and ran, but gave other numbers than the saving release's eager run",
    "run-error": "loaded, but running the loaded program raised",
    "load-error": "torch.export.load (or reading the saved inputs) raised, or the artifact is incomplete",
    "crash": "the load's process died (signal, os._exit, out of memory)",
    "timeout": "the load ran past its time limit and was killed",
    "not-applicable": "the loading release has no torch.export.load",
    "untrusted": "not loaded: its signature is missing or does not match the signing key (see load --trust)",
    "harness-error": _MEANING["harness-error"],
}
LOAD_STATUSES = tuple(status.value for status in LoadStatus)  # in display order
_TABLES = {
    Status.__name__: (_RANK, _SYMBOL, _COLOUR, _MEANING),
    LoadStatus.__name__: (_LOAD_RANK, _LOAD_SYMBOL, _LOAD_COLOUR, _LOAD_MEANING),
}


# --- the opt-in AOTInductor stage (``run --stages ...,aoti``) ---------------------------------
# A cell record of a run that selected the aoti stage carries these keys too (None where they do not apply); a run
# without it writes none of them: declared with the stage (contract/stages.py).
AOTI_KEYS = stages.AOTI.keys
# The aoti stage's outcomes (AOTI_COMPILE_MEANING says each): not-applicable is never a failure, and a crash or
# timeout is the compile's or the package load's process's alone: the cell's status stays.
AOTI_STATUSES = stages.AOTI_SHOWN.outcomes


# --- a kept AOTInductor package loaded on a release (``export-matrix load``) -------------------
# ``load`` loads the package a cell's aoti stage kept beside its program too, in a process of its own, as a record
# of its own kind (products.PACKAGE), so that every reader of ``load`` records stays about exported programs;
# ``saved_*`` name the release that compiled it (the one that saved its program), as on a program's load. Its
# statuses are the loads' (AOTI_LOAD_MEANING): not-applicable where the loading release has no loader for the file
# (none before 2.3; ``aoti.so`` needs ``torch._export.aot_load``, ``aoti.pt2`` ``aoti_load_package`` or 2.5's
# ``load_package``) or the machine no C++ compiler. ``package`` is the file loaded, ``package_bytes`` its size,
# ``aoti_api`` what compiled it (its meta.json), ``aoti_loader`` what loaded it here (None where nothing could).
AOTI_LOAD_KEYS = USE_HEAD + (
    "package", "package_bytes", "aoti_api", "aoti_loader",
    "status", "error_type", "error_message", "error_traceback", "checked_inputs", "case_module", "load_s",
) + USE_TAIL  # fmt: skip
# What each load status says of a package (LoadStatus.meaning says it of a program).
AOTI_LOAD_MEANING = dict(_LOAD_MEANING, **{
    "pass": "loaded, ran on the program's saved inputs and reproduced the saved outputs",
    "mismatch": "loaded and ran, but gave other numbers than the compiling release's eager run",
    "run-error": "loaded, but running the compiled package raised",
    "load-error": "the release's AOTInductor loader raised, or the package's folder is incomplete or changed",
    "not-applicable": "the loading release has no loader for this kind of package, or the machine no C++ compiler",
    "untrusted": "not loaded: its folder's signature is missing or does not match the signing key (see load --trust)",
})  # fmt: skip


# --- a program saved on an older release, compiled on this one (``export-matrix load --aoti``) ----------
# "Exported on X, compiled on Y": ``load --aoti`` on release Y loads each program saved on an older release X,
# compiles it with Y's AOTInductor API in a process of its own, loads the package in a fresh process that never
# compiled, runs it on the saved inputs and compares (products.COMPILE; the package itself is not kept).
# ``status`` is one of AOTI_STATUSES (AOTI_COMPILE_MEANING), ``failed_step`` one of AOTI_COMPILE_STEPS (None where
# it matched or the whole process died); ``aoti_api`` compiled it, ``aoti_loader`` loaded the package.
AOTI_COMPILE_KEYS = USE_HEAD + (
    "status", "failed_step", "error_type", "error_message", "error_traceback",
    "aoti_api", "aoti_loader", "package_bytes", "checked_inputs", "case_module", "compile_s", "load_s",
) + USE_TAIL  # fmt: skip
# Where a compile that was tried stopped: the compile, the package's load, or its run and comparison.
AOTI_COMPILE_STEPS = ("compile", "load", "run")
# What each outcome says of a program compiled on a newer release.
AOTI_COMPILE_MEANING = {
    STAGE_OK: "compiled, loaded in a fresh process, ran on the saved inputs and reproduced the saved outputs",
    STAGE_MISMATCH: "compiled and loaded, but gave other numbers than the saving release's eager run",
    STAGE_ERROR: "the compile, the package's load or its run raised (the record's failed_step says which)",
    STAGE_SKIPPED: "not compiled: the program does not load on the compiling release",
    Status.NOT_APPLICABLE.value: "the compiling release has no AOTInductor API, or the machine no C++ compiler",
    Status.CRASH.value: "a process of the compile or of the package's load died (signal, os._exit, out of memory)",
    Status.TIMEOUT.value: "the compile ran past --aoti-timeout, or the load past --timeout, and was killed",
    LoadStatus.UNTRUSTED.value: "not compiled: its folder's signature is missing or does not match the signing key",
}
# Each outcome's glyph in the Markdown pages, beside the load statuses' (the same glyph for the same idea).
AOTI_SYMBOL = {
    STAGE_OK: _SYMBOL["pass"], STAGE_MISMATCH: _SYMBOL["mismatch"], STAGE_ERROR: _SYMBOL["fail"],
    STAGE_SKIPPED: "⏭️", Status.NOT_APPLICABLE.value: _SYMBOL["not-applicable"], Status.CRASH.value: _SYMBOL["crash"],
    Status.TIMEOUT.value: _SYMBOL["timeout"], LoadStatus.UNTRUSTED.value: _LOAD_SYMBOL["untrusted"],
}  # fmt: skip
# The outcomes that tried the program (it loaded, and a compile was started): the others say nothing of AOTInductor.
AOTI_TRIED = stages.AOTI_SHOWN.tried


def passes(statuses: Iterable[Any]) -> bool:
    """Whether a release passes a case, from the statuses of its modes there: every mode that exists there passes,
    and one does (a not-applicable mode does not count against it; a release that could run none does not pass).
    The report's verdicts and ``check``'s summary judge by it."""
    existing = [str(s) for s in statuses if str(s) != Status.NOT_APPLICABLE.value]
    return bool(existing) and all(s == Status.PASS.value for s in existing)


def load_rank(status: Any) -> Optional[int]:
    """The rank of a load status string (None when it is not comparable or not a status)."""
    return _LOAD_RANK.get(status) if isinstance(status, str) else None


def rank(status: Any) -> Optional[int]:
    """The rank of a status string (None when it is not comparable or not a status)."""
    return _RANK.get(status) if isinstance(status, str) else None


def first_line(text: Any, limit: Optional[int] = 500) -> str:
    """The first non-blank line of an error message, stripped and cut to ``limit`` characters (None: all of it).

    Anything but text (None, NaN from a table) and blank text give ``""``. The cut adds no marker: a record
    stores what the message said, and each page marks its own cut."""
    if not isinstance(text, str):
        return ""
    lines = text.strip().splitlines()
    line = lines[0].strip() if lines else ""
    return line if limit is None else line[:limit]


def cell_id(torch_version: str, mode: str, case: str) -> str:
    """The readable identifier of a cell, e.g. ``torch-2.4.1+cpu/strict/cond_predicate``."""
    return "torch-%s/%s/%s" % (torch_version, mode, case)


def identity(record: Mapping[str, Any]) -> Tuple[Any, ...]:
    """A cell record's identity; a missing ``run`` is run 0, a missing ``with_set`` is no ``--with``, a missing
    ``device`` the CPU."""
    return tuple(
        record.get(key) if key not in IDENTITY_DEFAULTS else record.get(key) or IDENTITY_DEFAULTS[key]
        for key in IDENTITY
    )


def load_identity(record: Mapping[str, Any]) -> Tuple[Any, ...]:
    """A load record's identity (LOAD_IDENTITY); a missing ``with_set`` is no ``--with``, a missing ``device`` the
    CPU."""
    return tuple(record.get(key) for key in LOAD_REQUIRED) + (
        record.get("with_set") or "",
        record.get("device") or "cpu",
    )


def instant(value: Any) -> float:
    """A ``finished_at`` text as seconds since the epoch; unreadable or missing ones sort first.

    Texts are compared as instants, not as text, so that offsets (``+02:00``, ``Z``) order right.
    """
    if not isinstance(value, str) or not value:
        return -math.inf
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return -math.inf
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.timestamp()


def canonical(record: Mapping[str, Any]) -> str:
    """A record as canonical JSON text: sorted keys, no spaces, NaN as null."""
    clean: Dict[str, Any] = {
        key: (None if isinstance(value, float) and math.isnan(value) else value) for key, value in record.items()
    }
    return json.dumps(clean, sort_keys=True, separators=(",", ":"), default=str)


def recency(record: Mapping[str, Any]) -> Tuple[float, str]:
    """The order in which two records of the same identity are compared: the greatest wins.

    The record that finished last wins; a tie (``finished_at`` has whole seconds) goes to
    the record whose canonical JSON sorts last. A total order, so the winner does not
    depend on reading order: the store and merge use this one rule.
    """
    return (instant(record.get("finished_at")), canonical(record))


def now() -> str:
    """The current time as recorded in ``finished_at``: UTC with microseconds."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")
