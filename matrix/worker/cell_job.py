"""The ``cell`` job: one (case, mode, run) cell exported and checked in an isolated process.

A job kind of the batch engine (:data:`.jobs.KINDS`), run for ``run`` (:mod:`.runner`). A cell
that kept its program asks for a follow-up (``messages.FOLLOW_UP``): the program loaded again
by a load job (:mod:`.load_job`) in a process that never exported, which
:func:`merge_fresh_load` (``"fresh-load"`` in :data:`.jobs.MERGES`) folds into the cell's record.
Each stage says which products it kept for such a follow-up (``stage.StageRun.follow_ups``): a cell whose aoti
stage kept a package asks for its load too; the last follow-up removes a folder kept for the follow-ups alone.

Standard library only (torch is imported when the job runs), Python 3.8 syntax.
"""

from __future__ import annotations

import dataclasses
import shutil
from typing import Any, ClassVar, Dict, Optional, Tuple

from ..contract.case import CaseInfo
from ..contract.schema import ARTIFACT_SAVED, STAGE_ERROR, STAGE_MISMATCH, STAGE_OK, LoadStatus
from . import exportdb, reads
from .messages import FOLLOW_UP
from .sources import loader_for
from .uses import fresh_load


@dataclasses.dataclass(frozen=True)
class CellJob:
    """Everything an isolated process needs to run one cell: it keeps no other state."""

    KIND: ClassVar[str] = "cell"

    info: CaseInfo
    mode: str
    device: str
    stages: Tuple[str, ...]
    found: Dict[str, bool]
    timeout: float = 0.0  # the cell's --timeout, of which a diagnosis may take a share
    artifacts: Optional[str] = None  # where a passing cell keeps its program
    variant: str = ""
    scratch: Optional[str] = None  # else where it keeps it for the fresh load alone
    dependency_set: str = ""  # the packages beside torch it runs with, recorded with its program
    with_set: str = ""  # the part of them that --with added: each set keeps its program in a folder of its own
    budgets: Dict[str, float] = dataclasses.field(default_factory=dict)  # stage -> its budget option's seconds
    cache: Optional[str] = None  # the result cache's folder, where diagnoses are reused and kept; None: off
    origin: str = ""  # "<torch_version>/<run_id>": what a diagnosis kept by this cell names

    @classmethod
    def from_fields(cls, fields: Dict[str, Any]) -> CellJob:
        info = dict(fields["info"])
        info.update({key: tuple(info[key]) for key in ("tags", "requires", "dependencies", "inputs")})
        return cls(**dict(fields, info=CaseInfo(**info), stages=tuple(fields["stages"])))

    def run(self) -> Dict[str, Any]:
        from ..contract.layout import Target
        from .cell import FOLLOW_UPS, run_cell

        root = self.artifacts or self.scratch
        target = Target(root, self.variant, self.device, self.dependency_set, self.with_set) if root else None
        loader = loader_for(self.info.source)
        recording = reads.start(self.info.inputs)  # None without isolation, where nothing recorded could be trusted
        record = run_cell(
            self.info, self.mode, self.found, loader, self.device, self.stages, target, budgets=self.budgets,
            timeout=self.timeout, cache=self.cache, origin=self.origin, private=(self.artifacts, self.scratch),
            dependency_set=self.dependency_set,
        )  # fmt: skip
        if recording is not None:  # before the follow-ups: they run in processes of their own
            case_file = exportdb.source_file(self.info)
            record[reads.READS] = recording.finish(case_file, (self.artifacts, self.scratch, self.cache))
        kept = record.pop(FOLLOW_UPS, [])
        if not self.artifacts and record.get("artifact") == ARTIFACT_SAVED:
            record["artifact"] = None  # kept for the fresh loads alone, not for other releases
        follows = [fresh_load(folder, discard=False, product=product) for product, folder in kept]
        if follows:
            follows[-1]["discard"] = not self.artifacts  # the last one removes a folder kept for them alone
            record[FOLLOW_UP] = follows[0] if len(follows) == 1 else follows
        return record


# The result key that carries a kept program's fresh load to the runner; never a record field.
FRESH_LOAD = "fresh_load"


def merge_fresh_load(cell: Dict[str, Any], load: Dict[str, Any], follow: Dict[str, Any]) -> None:
    """Fold a fresh load of a cell's program into its record: where the two disagree, the fresh load wins."""
    if follow.get("discard"):
        shutil.rmtree(follow["folder"], ignore_errors=True)
    cell.update(
        serialize_in_process_status=cell.get("serialize_status"),
        serialize_in_process_error=cell.get("serialize_error"),
        serialize_fresh_s=round((load.get("load_s") or 0.0) + (load.get("run_s") or 0.0), 6),
    )
    status = load.get("status")
    if status == LoadStatus.PASS.value:
        fresh, error = STAGE_OK, None
    else:
        fresh = STAGE_MISMATCH if status == LoadStatus.MISMATCH.value else STAGE_ERROR
        error = "fresh process: %s: %s: %s" % (status, load.get("error_type"), load.get("error_message"))
    cell.update(serialize_fresh_status=fresh, serialize_fresh_error=error, serialize_status=fresh)
    cell["serialize_error"] = error
    if not follow.get("discard"):
        # A program kept in --artifacts: ``load`` on this build reuses this load (runner.RunBatch.finished).
        cell[FRESH_LOAD] = load
