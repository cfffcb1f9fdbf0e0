"""The baseline a report was compared with, kept in the report's folder (``baseline/``).

A report built with ``--baseline DIR`` keeps the tables it compared with: the baseline's cell table, its
transitions, its headline figures and its name. A later build from the report's own tables (its site, built
where it is read, or a re-render) finds them there and repeats the same comparison without the earlier
report at hand. The folder is itself a baseline folder that ``--baseline`` takes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Sequence, Set

from matrix.records import published
from matrix.records.figures import FILE as FIGURES
from matrix.records.figures import dumps
from matrix.report import files

FOLDER = "baseline"
NAME = "baseline.json"  # {"name": ...}: the name the report gives its baseline, e.g. latest@69f785a
TABLES = (published.CELLS, "transitions.parquet")


@dataclass(frozen=True)
class Kept:
    """A baseline's files as read, before the report folder that may hold them is written over."""

    name: str
    tables: Mapping[str, bytes]  # file name -> contents


def read(folder: str) -> Kept:
    """The tables of the baseline folder ``folder`` (its cell table is there: records.baseline.read_baseline
    checked it), and the name a report gives it."""
    tables = {name: Path(folder, name).read_bytes() for name in TABLES if Path(folder, name).is_file()}
    return Kept(name=name_of(folder), tables=tables)


def name_of(folder: str) -> str:
    """The baseline's name: the one kept beside its tables, else its folder's name."""
    stored = files.read_json(os.path.join(folder, NAME))
    name = stored.get("name") if isinstance(stored, dict) else None
    return name if isinstance(name, str) and name else os.path.basename(os.path.normpath(folder))


def stored(record_dirs: Sequence[str]) -> Optional[str]:
    """The baseline kept in the one report folder among ``record_dirs``, when they are exactly one such folder
    and it keeps one: what a build from a report's own tables compares with unless told otherwise."""
    if len(record_dirs) != 1 or not published.is_report(record_dirs[0]):
        return None
    folder = os.path.join(record_dirs[0], FOLDER)
    return folder if os.path.isfile(os.path.join(folder, published.CELLS)) else None


def write(out: str, kept: Kept, figures: Optional[Mapping[str, int]]) -> Set[str]:
    """Keep ``kept`` and the baseline's headline ``figures`` in ``out/baseline/``; the paths written, relative to
    ``out``."""
    texts = {NAME: json.dumps({"name": kept.name}, indent=2) + "\n"}
    if figures is not None:
        texts[FIGURES] = dumps(figures)
    stored = {**kept.tables, **{name: text.encode("utf-8") for name, text in texts.items()}}
    for name, data in sorted(stored.items()):
        files.write_bytes(out, "%s/%s" % (FOLDER, name), data)
    return {"%s/%s" % (FOLDER, name) for name in stored}
