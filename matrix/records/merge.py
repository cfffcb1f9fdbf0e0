"""``export-matrix merge``: combine record shards from many machines and retries into one folder.

Merging is idempotent and order-independent, so a job can be retried or its shard
downloaded twice without changing the result:

- a cell's identity is (torch_version, variant, python, with_set, case, mode, run), the
  ``--with`` set being part of it as a variant is; when several records share one, the
  one with the latest ``finished_at`` is kept, and among equal times the one whose
  canonical JSON sorts last. Exact duplicates are simply dropped;
- environment records are kept once each (they differ per invocation, by ``run_id``);
- env-error records are kept once per requested (torch_version, variant, python,
  dependency_set), the latest by the same rule, and only while no shard holds a working
  environment of that key: as when installing, a later successful install clears an
  earlier failure (of that set: a working base environment says nothing of a set's);
- a shard file with unreadable lines (a job cancelled mid-write) or with an environment
  record but no cell (cancelled before its first cell) is used for what it holds and
  flagged: a warning on stderr and an entry in ``merge-report.json``;
- a record whose identity cannot be used is skipped and flagged the same way, naming
  its file and line: torch_version, variant and python name the output file, so each
  must be a safe file-name part (letters, digits and ``._+-``, no leading dot), and a
  cell's case and mode must be text.

The output holds one JSON Lines file per environment (and dependency set), named like the
worker names them, with records sorted, so merging the same shards twice gives byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from matrix.contract import dependencies
from matrix.contract import records as records_mod
from matrix.contract.errors import UserError
from matrix.contract.options import from_namespace, is_safe_name
from matrix.contract.schema import (
    ENV_KEY,
    IDENTITY,
    IDENTITY_DEFAULTS,
    LOAD_KINDS,
    LOAD_REQUIRED,
    RECORD_KINDS,
    SAVED_ENV_KEY,
    identity,
    load_identity,
    recency,
)

REPORT_NAME = "merge-report.json"
# A missing ``run`` means the first (0), a missing ``with_set`` no ``--with``.
CELL_REQUIRED = tuple(key for key in IDENTITY if key not in IDENTITY_DEFAULTS)

Record = Dict[str, Any]
Identity = Tuple[Any, ...]


class MergeError(UserError):
    """An input or output folder that cannot be merged; the message says which and why."""


@dataclass(frozen=True)
class Shard:
    """The records of one shard file and what made it suspect, if anything."""

    path: str
    records: Tuple[Record, ...]
    problems: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Conflict:
    """Several different records for one cell identity, and which file the kept one came from."""

    identity: Identity
    kept_from: str
    dropped_from: Tuple[str, ...]


@dataclass(frozen=True)
class Merged:
    """The merged records, grouped by output file name, plus what the merge had to decide."""

    files: Dict[str, Tuple[Record, ...]]
    cells: int
    duplicates: int
    conflicts: Tuple[Conflict, ...] = ()
    flagged: Tuple[Shard, ...] = ()
    cleared_env_errors: Tuple[Identity, ...] = ()  # env-errors of environments that another shard installed


def canonical(record: Record) -> str:
    """The text a record is written as; also the tie-breaker between conflicting records."""
    return json.dumps(record, sort_keys=True, default=str)


def shard_files(paths: Sequence[str]) -> List[str]:
    """The record files named by the arguments: files as given, folders searched recursively."""
    files: List[str] = []
    for path in paths:
        if os.path.isfile(path):
            files.append(path)
        elif os.path.isdir(path):
            files.extend(records_mod.iter_files(path))
        else:
            raise MergeError("%s: no such shard file or folder" % path)
    # A file named twice (a folder and a file in it, or a repeated argument) is read once.
    seen: Dict[str, str] = {}
    for path in files:
        seen.setdefault(os.path.realpath(path), path)
    return list(seen.values())


def identity_problem(record: Record) -> Optional[str]:
    """Why a record's identity cannot be merged, or None.

    The environment fields (torch_version, variant, python) name the output file, so
    they must be safe file-name parts: letters, digits and ``._+-``, no leading dot. A
    cell's case and mode must be text.
    """
    kind = record.get("kind")
    if kind not in RECORD_KINDS:
        return "of unknown kind %r" % (kind,)
    needed = CELL_REQUIRED if kind == "cell" else LOAD_REQUIRED if kind in LOAD_KINDS else ENV_KEY
    missing = [key for key in needed if record.get(key) is None]
    if missing:
        return "without %s" % ", ".join(missing)
    unsafe = [
        key
        for key in (ENV_KEY + SAVED_ENV_KEY if kind in LOAD_KINDS else ENV_KEY)
        if not is_safe_name(_named_part(kind, key, record[key]))
    ]
    if unsafe:
        return "whose %s %s not a safe file-name part (letters, digits and . _ + -, no leading dot): %s" % (
            " and ".join(unsafe),
            "is" if len(unsafe) == 1 else "are",
            ", ".join("%r" % (record[key],) for key in unsafe),
        )
    if kind in ("cell", *LOAD_KINDS):
        odd = [key for key in ("case", "mode") if not isinstance(record[key], str)]
        if odd:
            return "whose %s %s not text" % (" and ".join(odd), "is" if len(odd) == 1 else "are")
        if not isinstance(record.get("run") or 0, int):
            return "whose run %r is not a number" % (record.get("run"),)
        if not isinstance(record.get("with_set") or "", str):
            return "whose with_set %r is not text" % (record.get("with_set"),)
    if kind not in LOAD_KINDS and not isinstance(record.get("dependency_set") or "", str):
        return "whose dependency_set %r is not text" % (record.get("dependency_set"),)
    return None


def _named_part(kind: Any, key: str, value: Any) -> Any:
    """What of ``value`` must be a safe name part: all of it, but for the colon of a dated channel word
    (``nightly:2026-01-15``) that names a build which could not be installed, which its file name writes
    as ``-`` (``records.name_part``)."""
    if kind == "env-error" and key == "torch_version" and isinstance(value, str):
        return value.replace(":", "-")
    return value


def read_shard(path: str) -> Shard:
    """Read one shard file, noting truncated lines, records without a usable identity, and empty runs."""
    try:
        found, warnings, lines = records_mod.read_numbered(path)
    except records_mod.RecordFileError as exc:
        raise MergeError(str(exc))
    except (OSError, UnicodeDecodeError) as exc:
        raise MergeError("%s: cannot read: %s" % (path, exc))
    problems = list(warnings)
    kept: List[Record] = []
    for record, line in zip(found, lines):
        problem = identity_problem(record)
        if problem is None:
            kept.append(record)
            continue
        where = "%s:%d" % (path, line)
        kind = record.get("kind")
        noun = "a %s record" % kind if kind in RECORD_KINDS else "a record"
        problems.append("%s: skipped %s %s" % (where, noun, problem))
    kinds = {record["kind"] for record in kept}
    if "environment" in kinds and "cell" not in kinds:
        problems.append("%s: holds an environment record but no cells (job cancelled before its first cell?)" % path)
    return Shard(path=path, records=tuple(kept), problems=tuple(problems))


def merge(shards: Iterable[Shard]) -> Merged:
    """Combine shards: one record per cell identity, environments and env-errors deduplicated."""
    cells: Dict[Identity, List[Tuple[Record, str]]] = {}
    loads: Dict[Identity, Record] = {}
    environments: Dict[str, Record] = {}
    env_errors: Dict[Identity, Record] = {}
    flagged: List[Shard] = []
    total = 0
    for shard in shards:
        if shard.problems:
            flagged.append(shard)
        for record in shard.records:
            kind = record["kind"]
            if kind == "cell":
                total += 1
                cells.setdefault(identity(record), []).append((record, shard.path))
            elif kind == "environment":
                environments[canonical(record)] = record
            elif kind in LOAD_KINDS:
                # A program's load and its package's load of the same pair are two records, both kept.
                key = (kind, *load_identity(record))
                if key not in loads or recency(record) > recency(loads[key]):
                    loads[key] = record
            else:
                key = _env_key(record)
                if key not in env_errors or recency(record) > recency(env_errors[key]):
                    env_errors[key] = record

    working = {_env_key(record) for record in environments.values()}
    cleared = sorted((key for key in env_errors if key in working), key=_sort_key)
    for key in cleared:
        del env_errors[key]

    conflicts: List[Conflict] = []
    chosen: List[Record] = []
    for key in sorted(cells, key=_sort_key):
        candidates = cells[key]
        best, best_path = max(candidates, key=lambda pair: (recency(pair[0]), pair[1]))
        chosen.append(best)
        distinct = {canonical(record) for record, _ in candidates}
        if len(distinct) > 1:
            dropped = sorted({path for record, path in candidates if canonical(record) != canonical(best)})
            conflicts.append(Conflict(identity=key, kept_from=best_path, dropped_from=tuple(dropped)))

    grouped: Dict[str, List[Record]] = {}
    for record in sorted(environments.values(), key=lambda r: (str(r.get("started_at") or ""), canonical(r))):
        grouped.setdefault(_file_name(record), []).append(record)
    for key in sorted(env_errors, key=_sort_key):
        grouped.setdefault(_file_name(env_errors[key]), []).append(env_errors[key])
    for record in chosen:
        grouped.setdefault(_file_name(record), []).append(record)
    for key in sorted(loads, key=_sort_key):  # the latest load of each (saved-on, loaded-on, case, mode)
        grouped.setdefault("load_" + _file_name(loads[key]), []).append(loads[key])
    return Merged(
        files={name: tuple(grouped[name]) for name in sorted(grouped)},
        cells=len(chosen),
        duplicates=total - len(chosen),
        conflicts=tuple(conflicts),
        flagged=tuple(sorted(flagged, key=lambda s: s.path)),
        cleared_env_errors=tuple(cleared),
    )


def _sort_key(identity: Identity) -> Tuple[str, ...]:
    # Identities may mix None and text (a record missing a key); compare as text.
    return tuple("" if part is None else "%09d" % part if isinstance(part, int) else str(part) for part in identity)


def _env_key(record: Record) -> Identity:
    """An environment: its torch build and Python, and the dependency set beside torch ("" for none)."""
    return (*(record[k] for k in ENV_KEY), record.get("dependency_set") or "")


def _file_name(record: Record) -> str:
    """The worker's name for the record's file: its environment, and its dependency set's suffix (loads have none)."""
    name = records_mod.env_file_name(str(record["torch_version"]), str(record["variant"]), str(record["python"]))
    suffix = dependencies.set_suffix(record.get("dependency_set") or "") if record["kind"] not in LOAD_KINDS else ""
    return name[: -len(".jsonl")] + suffix + ".jsonl"


def report(merged: Merged, inputs: Sequence[str]) -> Dict[str, Any]:
    """What the merge did, as written to ``merge-report.json``: deterministic, no timestamps."""
    return {
        "inputs": list(inputs),
        "files": {name: len(rows) for name, rows in merged.files.items()},
        "cells": merged.cells,
        "duplicates_dropped": merged.duplicates,
        "conflicts": [
            {
                "identity": dict(zip(IDENTITY, conflict.identity)),
                "kept_from": conflict.kept_from,
                "dropped_from": list(conflict.dropped_from),
            }
            for conflict in merged.conflicts
        ],
        "flagged": [{"file": shard.path, "problems": list(shard.problems)} for shard in merged.flagged],
        "cleared_env_errors": [dict(zip((*ENV_KEY, "dependency_set"), key)) for key in merged.cleared_env_errors],
    }


def write(merged: Merged, inputs: Sequence[str], out: str) -> None:
    """Write the merged files and ``merge-report.json``, each replaced atomically."""
    os.makedirs(out, exist_ok=True)
    for name, rows in merged.files.items():
        _write_atomically(os.path.join(out, name), "".join(canonical(record) + "\n" for record in rows))
    text = json.dumps(report(merged, inputs), indent=2, sort_keys=True, default=str) + "\n"
    _write_atomically(os.path.join(out, REPORT_NAME), text)


def _write_atomically(path: str, text: str) -> None:
    handle, temporary = tempfile.mkstemp(prefix=".merge-", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def check_output_folder(out: str, inputs: Sequence[str]) -> None:
    """Refuse to mix the result with stale record files, unless the folder is itself an input."""
    if not os.path.isdir(out):
        if os.path.exists(out):
            raise MergeError("--out %s: exists and is not a folder" % out)
        return
    existing = set(os.path.realpath(p) for p in records_mod.iter_files(out))
    merged_in = set(os.path.realpath(p) for p in inputs)
    stale = sorted(existing - merged_in)
    if stale:
        raise MergeError(
            "--out %s already holds record files that are not being merged (e.g. %s); pass the folder as a shard"
            " too to merge into it, or choose an empty folder" % (out, stale[0])
        )


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shards", nargs="+", metavar="SHARD", help="record files or folders (searched recursively)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the merged records")
    parser.add_argument("--quiet", action="store_true", help="print only warnings")


@dataclass(frozen=True)
class MergeOptions:
    """The options of ``export-matrix merge``."""

    shards: Tuple[str, ...]
    out: str
    quiet: bool = False

    @classmethod
    def from_args(cls, namespace: argparse.Namespace) -> MergeOptions:
        return from_namespace(cls, namespace, shards=tuple(namespace.shards))


OPTIONS = MergeOptions


def main(options: MergeOptions) -> int:
    inputs = shard_files(list(options.shards))
    if not inputs:
        raise MergeError("no record files (*.jsonl) in %s" % " ".join(options.shards))
    check_output_folder(options.out, inputs)
    shards = [read_shard(path) for path in inputs]
    merged = merge(shards)
    write(merged, inputs, options.out)
    for shard in merged.flagged:
        for problem in shard.problems:
            print("export-matrix merge: warning: %s" % problem, file=sys.stderr)
    if not options.quiet:
        print(summary_line(merged, len(inputs), options.out))
    return 0


def summary_line(merged: Merged, inputs: int, out: str) -> str:
    text = "merged %s into %s in %s: %s, %s dropped, %s resolved" % (
        _count(inputs, "file"),
        _count(len(merged.files), "environment file"),
        out,
        _count(merged.cells, "cell"),
        _count(merged.duplicates, "duplicate"),
        _count(len(merged.conflicts), "conflict"),
    )
    if merged.flagged:
        text += ", %s flagged (see %s)" % (_count(len(merged.flagged), "shard"), REPORT_NAME)
    return text


def _count(number: int, noun: str) -> str:
    return "%d %s%s" % (number, noun, "" if number == 1 else "s")
