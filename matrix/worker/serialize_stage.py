"""The serialize stage: the program saved before anything runs it, loaded back in the cell and run; where the
cell keeps it, loaded again in a process that never exported (the follow-up, ``cell_job.merge_fresh_load``).

Standard library only (torch is imported when the stage runs), Python 3.8 syntax.
"""

from __future__ import annotations

import io
from typing import List, Optional, Tuple

from ..contract.products import PROGRAM
from ..contract.schema import STAGE_ERROR, STAGE_OK, STAGE_SKIPPED
from . import compare
from .failure import one_line
from .stage import Fields, StageRun
from .steps import clone, timed


class SerializeStage(StageRun):
    def before(self) -> Fields:
        ctx = self.context
        if not (ctx.found.get("export.save") and ctx.found.get("export.load")):
            return dict(serialize_status=STAGE_SKIPPED, serialize_error="missing capability: export.save/export.load")
        import torch.export

        buffer = io.BytesIO()
        fields: Fields = {}
        try:
            timed(fields, "serialize_s", lambda: torch.export.save(ctx.program, buffer))
        except Exception as exc:
            return dict(fields, serialize_status=STAGE_ERROR, serialize_error="save: " + one_line(exc))
        buffer.seek(0)
        ctx.saved = buffer
        return fields

    def run(self) -> Fields:
        ctx = self.context
        if ctx.saved is None:
            return {}
        import torch.export

        buffer, case = ctx.saved, ctx.case
        fields: Fields = {}
        saved_s = ctx.record.get("serialize_s") or 0.0

        def round_trip() -> None:
            loaded = torch.export.load(buffer)
            actual = loaded.module()(*clone(case.example_args), **clone(case.example_kwargs))
            if ctx.record.get("check_status") == STAGE_OK:
                compare.leaves(ctx.expected, actual)

        try:
            timed(fields, "serialize_s", round_trip)
            fields["serialize_status"] = STAGE_OK
        except Exception as exc:
            fields.update(serialize_status=STAGE_ERROR, serialize_error="load: " + one_line(exc))
        finally:
            buffer.seek(0)  # kept with the cell's program afterwards
            fields["serialize_s"] = round(saved_s + (fields.get("serialize_s") or 0.0), 6)
        return fields

    def follow_ups(self, folder: Optional[str]) -> List[Tuple[str, str]]:
        # The program the cell kept, loaded again in a process that never exported.
        return [(PROGRAM.name, folder)] if folder and self.context.saved is not None else []


STAGE = SerializeStage
