"""The run journal: which cells a run started, so that a runner killed mid-cell can resume past it.

Beside each record file, ``NAME.jsonl.journal`` gets a line before a cell runs. A cell
that was started but has no record was running when the runner itself died: a case that
kills its parent, the OOM killer, a power cut. On resume such a cell is recorded as a
crash that names it, instead of being run again and killing every resume in turn.

The journal file is also the run's lock: two runs writing one record file at once would
record every cell twice.
"""

from __future__ import annotations

import json
import os
from typing import IO, Any, Dict, List, Optional, Set, Tuple

from ..contract.errors import UserError

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows: no lock there
    fcntl = None  # type: ignore[assignment]

Key = Tuple[str, str, int]
SUFFIX = ".journal"


class Busy(UserError):
    """Another run is writing the same record file."""


class Journal:
    """Started cells of one record file, and the lock that makes this run its only writer."""

    def __init__(self, record_path: str) -> None:
        self.path = record_path + SUFFIX
        folder = os.path.dirname(self.path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        self._file: IO[str] = open(self.path, "a+", encoding="utf-8")
        if fcntl is not None:
            try:
                # A POSIX record lock, not flock: forked cells do not inherit it, so a cell that
                # outlives a killed runner does not keep the next run out.
                fcntl.lockf(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                self._file.close()
                raise Busy(
                    "%s is being written by another run (its lock is %s); wait for it, or use another --out"
                    % (record_path, self.path)
                )

    def started(self) -> Dict[Key, Dict[str, Any]]:
        """The cells this journal says were started, with their journal entries (the last one wins)."""
        self._file.seek(0)
        found: Dict[Key, Dict[str, Any]] = {}
        for line in self._file:
            try:
                entry = json.loads(line)
                key = (str(entry["case"]), str(entry["mode"]), int(entry.get("run") or 0))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut by a kill says nothing
            found[key] = entry
        return found

    def start(self, key: Key, run_id: str, started_at: str, alone: bool = True) -> None:
        """Note a cell as started; ``alone`` when no other cell of this run is in flight beside it."""
        entry = {"case": key[0], "mode": key[1], "run": key[2], "run_id": run_id, "started_at": started_at}
        entry["alone"] = alone
        self._file.seek(0, os.SEEK_END)
        self._file.write(json.dumps(entry, sort_keys=True) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()  # closing releases the lock

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def interrupted(started: Dict[Key, Dict[str, Any]], done: Set[Key], wanted: Optional[List[Key]] = None) -> List[Key]:
    """The started cells without a record, among ``wanted`` (all when None), in journal order."""
    keys = [key for key in started if key not in done]
    if wanted is not None:
        chosen = set(wanted)
        keys = [key for key in keys if key in chosen]
    return keys


def culprits(started: Dict[Key, Dict[str, Any]], keys: List[Key]) -> Tuple[List[Key], List[Key]]:
    """Interrupted cells split into those that ran alone (the runner died of them) and suspects.

    When cells ran side by side, any of them may have killed the runner: the suspects are
    run again, one at a time and before anything else, so that the next death names one.
    """
    alone = [key for key in keys if started[key].get("alone", True)]
    return alone, [key for key in keys if key not in set(alone)]
