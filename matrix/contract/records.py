"""Records: append-only JSON Lines with a schema version, flushed as they are produced."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import IO, Any, Callable, Dict, Iterator, List, Tuple

from .errors import UserError
from .schema import CELL_KEYS, SCHEMA_VERSION

# An absolute path (two parts or more), not part of a URL: kept as its last part in record text.
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])(?:/[^\s:'\"()/]+){2,}/?")


def without_paths(text: Any) -> Any:
    """Record text with every absolute path cut to its last part, so records hold no path of a machine.

    ``/root/.cache/envs/x/site-packages/torch/export/__init__.py`` becomes ``__init__.py``; URLs
    and relative paths stay. Anything but text is returned as it is.
    """
    if not isinstance(text, str) or "/" not in text:
        return text
    return _ABSOLUTE_PATH.sub(lambda m: m.group(0).rstrip("/").rsplit("/", 1)[-1], text)


class RecordFileError(UserError):
    """A record file that cannot be read: names the file and line."""


class Writer:
    """Appends one JSON object per line and flushes it to disk at once."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._terminate_partial_line()
        self._written: List[str] = []
        self._file = self._open()

    def _open(self) -> IO[str]:
        folder = os.path.dirname(self.path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        return open(self.path, "a", encoding="utf-8")

    def _terminate_partial_line(self) -> None:
        # A run killed mid-write leaves a line without newline; start ours on a fresh line.
        try:
            with open(self.path, "rb") as f:
                f.seek(0, os.SEEK_END)
                if f.tell() == 0:
                    return
                f.seek(-1, os.SEEK_END)
                last = f.read(1)
        except FileNotFoundError:
            return
        if last != b"\n":
            with open(self.path, "ab") as f:
                f.write(b"\n")

    def write(self, record: Dict[str, Any]) -> None:
        line = json.dumps(record, sort_keys=True, default=str) + "\n"
        self._written.append(line)
        self._file.write(line)
        self._file.flush()
        os.fsync(self._file.fileno())
        if os.fstat(self._file.fileno()).st_nlink == 0:
            self._recreate()

    def _recreate(self) -> None:
        # Something (a case, a cleanup) deleted the file under us: what this run wrote would
        # vanish with it. Write it again to a new file of the same name and go on.
        sys.stderr.write("warning: %s was deleted during the run; writing this run's records again\n" % self.path)
        self._file.close()
        self._file = self._open()
        self._file.writelines(self._written)
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read(path: str, loads: Callable[[bytes], Any] = json.loads) -> Tuple[List[Dict[str, Any]], List[str]]:
    """All records of a file, and a warning per unreadable (e.g. truncated) line.

    ``loads`` parses one line (UTF-8 bytes); the host passes a faster parser than the
    standard library's. A record with a schema version this code does not know is
    refused with an error that says what to do, rather than misread.
    """
    records, warnings, _ = read_numbered(path, loads)
    return records, warnings


def read_numbered(
    path: str, loads: Callable[[bytes], Any] = json.loads
) -> Tuple[List[Dict[str, Any]], List[str], List[int]]:
    """``read``, and the line number of each record, for messages that name a record's line."""
    records: List[Dict[str, Any]] = []
    warnings: List[str] = []
    lines: List[int] = []
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = loads(line)
            except ValueError:  # also bad UTF-8: UnicodeDecodeError is a ValueError
                warnings.append("%s:%d: skipped an unreadable line (a run killed while writing?)" % (path, number))
                continue
            if not isinstance(record, dict):
                warnings.append("%s:%d: skipped a line that is not a JSON object" % (path, number))
                continue
            version = record.get("schema_version")
            if version != SCHEMA_VERSION:
                raise RecordFileError(
                    "%s:%d: record schema version %r is not supported (this is torch-export-matrix with schema %d);"
                    " upgrade torch-export-matrix or re-run the matrix" % (path, number, version, SCHEMA_VERSION)
                )
            records.append(record)
            lines.append(number)
    return records, warnings, lines


def iter_files(folder: str) -> Iterator[str]:
    """The record files in a folder, recursively, sorted."""
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".jsonl"):
                yield os.path.join(root, name)


def done_keys(path: str, device: str = "cpu") -> Tuple[set, List[str]]:
    """The (case, mode, run) keys already recorded in a file on ``device``, for resuming; malformed cells are warned
    about. A cell run on another device is not this one (a record without a device ran on the CPU)."""
    if not os.path.exists(path):
        return set(), []
    records, warnings = read(path)
    keys = set()
    for record in records:
        if record.get("kind") != "cell" or (record.get("device") or "cpu") != device:
            continue
        case, mode, run = record.get("case"), record.get("mode"), record.get("run") or 0
        if not isinstance(case, str) or not isinstance(mode, str) or not isinstance(run, int):
            warnings.append("%s: skipped a cell record without a usable case, mode and run" % path)
            continue
        keys.add((case, mode, run))
    return keys, warnings


# What a file or folder name keeps as it is: letters, digits and ``._+-`` (options.safe_name's set).
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")


def name_part(text: str) -> str:
    """``text`` as part of a file or folder name: ``/`` as ``_``, any other character but letters, digits and
    ``._+-`` as ``-``. A dated channel word names its build until installed (``nightly:2026-01-15``), and a
    colon is no part of a file name on Windows nor of an artifact's; a name that was safe stays as it was."""
    return _NAME_UNSAFE.sub("-", text.replace("/", "_"))


def env_file_name(torch_version: str, variant: str, python: str) -> str:
    """The record file of one environment: ``torch-2.4.1+cpu_cpu_py3.11.jsonl``, its parts made safe (``name_part``)."""
    return "torch-%s_%s_py%s.jsonl" % (name_part(torch_version), name_part(variant), name_part(python))


def empty_cell(**values: Any) -> Dict[str, Any]:
    """A cell record with every key of the schema, None where ``values`` gives nothing."""
    unknown = set(values) - set(CELL_KEYS)
    if unknown:
        raise KeyError("unknown cell record keys: %s" % sorted(unknown))
    record: Dict[str, Any] = {key: None for key in CELL_KEYS}
    record.update(values, schema_version=SCHEMA_VERSION, kind="cell")
    return record
