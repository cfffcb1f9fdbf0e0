"""The job kinds the batch engine runs, and what a job kind must provide.

A job is what an isolated process needs to do one item of a batch (a cell of ``run``, an
artifact of ``load``), and nothing else. A job kind is a class that provides (:class:`Job`):

- ``KIND``: its name, the key it has in :data:`KINDS` and in its messages;
- ``from_fields(fields)``: the job rebuilt from ``dataclasses.asdict`` of it, after a trip
  through JSON (a frozen dataclass of plain values, as :func:`.messages.message` sends it);
- ``run()``: do the job, in the isolated process; returns the record fields it found. A result
  may ask for a follow-up (``messages.FOLLOW_UP``), whose merge is named in :data:`MERGES`.

Every kind is listed in :data:`KINDS`, by name: the cell's, a program's load, and those each product's use brings
(``Use.kinds`` and ``Use.merges``, :mod:`.uses`): a product's job is its class, in the module its declaration
names, and a line in its use.
The kinds import :mod:`.messages`, never the engine; the engine (:mod:`.batch`, :mod:`.pristine`,
:mod:`.child`) imports this registry; the commands (:mod:`.runner`, :mod:`.loader`) import both.

Standard library only (a job imports torch when it runs), Python 3.8 syntax.
"""

from __future__ import annotations

from typing import Any, ClassVar, Dict, Protocol, Type, runtime_checkable

from . import uses
from .cell_job import CellJob, merge_fresh_load
from .load_job import LoadJob
from .messages import Message, Result
from .use import Merge


@runtime_checkable
class Job(Protocol):
    """What a job kind must provide (see the module's docstring)."""

    KIND: ClassVar[str]

    @classmethod
    def from_fields(cls, fields: Dict[str, Any]) -> Job: ...

    def run(self) -> Result: ...


# The job kinds: message name -> job class.
KINDS: Dict[str, Type[Job]] = {CellJob.KIND: CellJob, LoadJob.KIND: LoadJob, **uses.KINDS}
# The merges a follow-up may name: name -> how its result folds into the first job's.
MERGES: Dict[str, Merge] = {"fresh-load": merge_fresh_load, **uses.MERGES}


def work(message: Message) -> Result:
    """Run a job message in the isolated process (every backend calls this)."""
    return KINDS[message["job"]].from_fields(message["fields"]).run()


def merge(name: str, result: Result, second: Result, follow: Dict[str, Any]) -> None:
    """Fold ``second``, the result of a follow-up, into ``result`` by the merge ``name``."""
    MERGES[name](result, second, follow)
