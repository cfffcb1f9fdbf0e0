"""The decompose stage: the program decomposed to core ATen, and the fingerprint of what that gave.

Standard library only (torch is imported when the stage runs), Python 3.8 syntax.
"""

from __future__ import annotations

from ..contract.schema import STAGE_ERROR, STAGE_OK, STAGE_SKIPPED
from . import fingerprint
from .failure import one_line
from .stage import Fields, StageRun
from .steps import timed


class DecomposeStage(StageRun):
    def run(self) -> Fields:
        fields: Fields = {}
        if not self.context.found.get("run_decompositions"):
            return dict(decompose_status=STAGE_SKIPPED, decompose_error="missing capability: run_decompositions")
        try:
            decomposed = timed(fields, "decompose_s", self.context.program.run_decompositions)
            digest, ops, _, _ = fingerprint.fingerprint(decomposed)
            fields.update(decompose_status=STAGE_OK, decomposed_hash=digest, decomposed_ops=ops)
        except Exception as exc:
            fields.update(decompose_status=STAGE_ERROR, decompose_error=one_line(exc))
        return fields


STAGE = DecomposeStage
