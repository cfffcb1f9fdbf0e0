"""The diagnose stage: a failed export explained by ``draft_export`` (:mod:`.diagnosis`), within its budget
(--diagnosis-budget) and a share of the cell's --timeout, reused from the result cache where it was kept.

Standard library only (torch is imported when the stage runs), Python 3.8 syntax.
"""

from __future__ import annotations

from typing import Any, Optional

from ..contract.stages import DIAGNOSIS_SHARE
from . import exportdb
from .stage import Fields, StageRun


class DiagnoseStage(StageRun):
    def failed(self) -> Fields:
        from .diagnosis import budget, diagnose_failure

        ctx = self.context
        deadline = DIAGNOSIS_SHARE * ctx.timeout  # seconds into the cell by which the diagnosis must end
        if deadline <= 0:  # a cell run without a --timeout (called directly): no time for a diagnosis
            return {}
        spent = sum(ctx.record.get(key) or 0.0 for key in ("load_s", "eager_s", "export_s"))
        seconds = budget(self.budget or 0.0, deadline, spent)
        return diagnose_failure(ctx.case, ctx.mode, ctx.found, seconds, ctx.record, self.kept_diagnoses())

    def kept_diagnoses(self) -> Optional[Any]:
        """Where this cell's diagnosis is reused from and kept (``diagnosis.Kept``); None with the cache off."""
        ctx = self.context
        if not ctx.cache:
            return None
        from .diagnosis import Kept

        cell = {
            "case": ctx.info.name, "source": ctx.info.source, "mode": ctx.mode, "device": ctx.device,
            "dependency_set": ctx.dependency_set,
        }  # fmt: skip
        return Kept(ctx.cache, exportdb.source_file(ctx.info), cell, ctx.origin, ctx.private)


STAGE = DiagnoseStage
