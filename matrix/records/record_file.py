"""One record file read into its kinds of record: cell records as a frame, the others as dicts.

:func:`read` parses a file (``cached_read`` keeps the parse beside it, :mod:`matrix.records.cache`);
a published report's cell table stands for the records it came from (:mod:`matrix.records.published`).
Cells get the identity defaults of records written before a key existed, a cell whose identity is not
text is skipped with a warning naming its line, and absolute paths in a record's text are cut.
"""

from __future__ import annotations

import itertools
import json
import operator
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import orjson
import pandas as pd

from matrix.contract import products as declared
from matrix.contract import records, stages
from matrix.contract.errors import UserError
from matrix.contract.schema import CELL_KEYS, IDENTITY, IDENTITY_DEFAULTS
from matrix.records import cache, published

# The keys of a cell record the tables read: every cell's, and those of each stage that writes its own (the opt-in
# aoti stage's; None where the stage did not run).
RECORD_KEYS = CELL_KEYS + stages.keys_of(stages.KNOWN)
# Columns whose values repeat from run to run of a cell (texts, names): sharing one string object per
# distinct value within a file keeps a large record set's memory close to its distinct content.
_SHARED_TEXT = (
    "torch_version", "variant", "python", "device", "source", "case", "case_file", "mode", "expected",
    "status", "failed_stage", "error_type", "error_message", "error_traceback", "gb_type", "graph_hash",
    "graph_text", "decompose_status", "decomposed_hash", "check_status", "serialize_status", "run_id", "env_id",
    "dependency_set", "with_set",
)  # fmt: skip
_TEXT_TYPES = {str, type(None)}


class StoreError(UserError):
    """A record folder that cannot be loaded; the message names the folder or file."""


def _columns(rows: List[Dict[str, Any]], keys: Sequence[str], shared: Dict[str, str]) -> Dict[str, List[Any]]:
    try:
        # Records written by the worker carry every key: transpose them in C.
        getter = operator.itemgetter(*keys)
        columns = dict(zip(keys, (list(c) for c in zip(*[getter(row) for row in rows]))))
    except KeyError:
        columns = {key: [row.get(key) for row in rows] for key in keys}
    for key in _SHARED_TEXT:
        values = columns[key]
        if set(map(type, values)) <= _TEXT_TYPES:
            # The usual case, done in C: only text and None, which never compare equal to each other.
            columns[key] = list(map(shared.setdefault, values, values))
        else:
            # Other values (numbers, lists) stay as they are: 1 == 1.0 == True must not merge.
            columns[key] = [shared.setdefault(v, v) if v.__class__ is str else v for v in values]
    return columns


@dataclass(frozen=True)
class FileRecords:
    """One record file's content: its cell records as a frame, the other records as dicts."""

    path: str
    cells: Optional[pd.DataFrame]  # columns CELL_KEYS; None when the file has no cell
    environments: List[Dict[str, Any]]
    env_errors: List[Dict[str, Any]]
    warnings: List[str]
    products: Dict[str, List[Dict[str, Any]]] = field(default_factory=dict)  # product name -> its records


def _loads(line: bytes) -> Any:
    """Parse one record line: orjson, about three times faster than the standard library,
    which is kept for what orjson refuses but the worker can write (NaN and Infinity)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def _parser_code() -> bytes:
    """The sources a file's parse depends on: a change to any of them parses every file again."""
    import matrix.contract.schema

    modules = (matrix.contract.schema, declared, stages, records, sys.modules[__name__])
    return b"".join(Path(str(module.__file__)).read_bytes() for module in modules)


CODE = _parser_code()


def cached_read(path: str) -> FileRecords:
    """A file's records: a record file's from the cache where its parse is current, a report's from its tables."""
    if os.path.basename(path) == published.CELLS:
        return _read_report(path)
    return cache.cached(path, read, CODE)


def _read_report(path: str) -> FileRecords:
    """A published report's tables (``path`` is its cell table) as the records they came from."""
    try:
        rows, warnings = published.read(os.path.dirname(path))
    except (OSError, ValueError) as exc:
        raise StoreError("%s: cannot read this report's tables: %s" % (path, exc))
    return _parsed(path, rows, warnings, list(range(1, len(rows) + 1)))


def read(path: str) -> FileRecords:
    try:
        rows, warnings, lines = records.read_numbered(path, loads=_loads)
    except records.RecordFileError as exc:
        raise StoreError(str(exc))
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError("%s: cannot read this record file: %s" % (path, exc))
    return _parsed(path, rows, warnings, lines)


def _parsed(path: str, rows: List[Dict[str, Any]], warnings: List[str], lines: List[int]) -> FileRecords:
    """The records ``rows`` of the file ``path`` (read at ``lines``) sorted by kind, their identities checked."""
    cells: List[Dict[str, Any]] = []
    environments: List[Dict[str, Any]] = []
    env_errors: List[Dict[str, Any]] = []
    made: Dict[str, List[Dict[str, Any]]] = {product.name: [] for product in declared.PRODUCTS}
    by_kind = {"cell": cells, "environment": environments, "env-error": env_errors}
    by_kind.update({product.kind: made[product.name] for product in declared.PRODUCTS})
    unknown: Dict[str, int] = {}
    for row in rows:
        kind = row.get("kind")
        found = by_kind.get(kind) if isinstance(kind, str) else None
        if found is not None:
            found.append(row)
        else:
            unknown[str(kind)] = unknown.get(str(kind), 0) + 1
    for kind, count in sorted(unknown.items()):
        warnings.append("%s: skipped %d record(s) of unknown kind %r" % (path, count, kind))
    for row in cells:
        for key, default in IDENTITY_DEFAULTS.items():
            if row.get(key) is None:
                row[key] = default  # a record written before the key existed
    if cells and not _identities_are_text(cells):
        cells = _text_identities(path, rows, lines, warnings)
    for row in itertools.chain(cells, env_errors, *made.values()):
        _cut_paths(row)
    frame = pd.DataFrame(_columns(cells, RECORD_KEYS, {}), dtype=object) if cells else None
    return FileRecords(path, frame, environments, env_errors, warnings, made)


# A cell's identity fields other than ``run`` (which is read as a number): they are grouped,
# sorted and hashed, so anything but text (missing, a number, a list) cannot be reported.
_TEXT_IDENTITY = tuple(key for key in IDENTITY if key != "run")


def _identities_are_text(cells: List[Dict[str, Any]]) -> bool:
    """Whether every cell holds text in every identity field; checked in C, as for most files it holds."""
    try:
        values = map(operator.itemgetter(*_TEXT_IDENTITY), cells)
        return set(map(type, itertools.chain.from_iterable(values))) == {str}
    except KeyError:
        return False


def _text_identities(
    path: str, rows: List[Dict[str, Any]], lines: List[int], warnings: List[str]
) -> List[Dict[str, Any]]:
    """The cell records of ``rows`` whose identity fields are text; a warning naming the line for each other."""
    kept: List[Dict[str, Any]] = []
    for row, line in zip(rows, lines):
        if row.get("kind") != "cell":
            continue
        odd = [
            "%s %s" % (key, "missing" if row.get(key) is None else "is a %s" % type(row[key]).__name__)
            for key in _TEXT_IDENTITY
            if not isinstance(row.get(key), str)
        ]
        if not odd:
            kept.append(row)
            continue
        warnings.append("%s:%d: skipped a cell record whose identity is not text (%s)" % (path, line, ", ".join(odd)))
    return kept


# Free text a record may carry from the machine it ran on (messages, tracebacks, output).
_MACHINE_TEXT = (
    "error_message", "error_traceback", "stderr_tail", "check_detail", "serialize_error", "decompose_error",
    "installer_output", "case_module", "artifact_error", "serialize_in_process_error", "serialize_fresh_error",
)  # fmt: skip


def _cut_paths(row: Dict[str, Any]) -> None:
    """Absolute paths in a record's text cut to their last part, as the worker now records them.

    Records written before it did still name folders of the machine that ran them; a report
    built from them (and published) must not.
    """
    for key in _MACHINE_TEXT:
        value = row.get(key)
        if isinstance(value, str) and "/" in value:
            row[key] = records.without_paths(value)
