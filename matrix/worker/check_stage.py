"""The check stage: run the exported program on every input and compare with eager, the outputs and the inputs
after the call alike. A difference makes the cell a mismatch.

Standard library only (torch is imported when the stage runs), Python 3.8 syntax.
"""

from __future__ import annotations

from ..contract.schema import STAGE_ERROR, STAGE_MISMATCH, STAGE_OK, STAGE_SKIPPED, Status, first_line
from . import compare
from .failure import describe_error
from .stage import Fields, StageRun
from .steps import clone, timed

MISMATCH = Status.MISMATCH.value


class CheckStage(StageRun):
    def run(self) -> Fields:
        ctx = self.context
        fields: Fields = {}
        case, info = ctx.case, ctx.info
        inputs = [(case.example_args, case.example_kwargs, ctx.expected)]
        inputs += [(args, case.example_kwargs, out) for args, out in zip(case.extra_args, ctx.expected_extra)]

        def check() -> None:
            module = ctx.program.module()
            for number, (args, kwargs, out) in enumerate(inputs):
                given = (clone(args), clone(kwargs))
                actual = compare.call(module, number, given[0], given[1])
                if info.skip_check is None:
                    compare.outputs(number, out, actual)
                    try:
                        compare.leaves(ctx.calls[number], given)
                    except AssertionError as exc:
                        detail = str(exc).strip().replace("output", "argument", 1)
                        raise compare.Mismatch("input %d, after the call, differs from eager's: %s" % (number, detail))
            fields["checked_inputs"] = len(inputs)

        try:
            timed(fields, "check_s", check)
        except compare.Mismatch as exc:
            fields.update(check_status=STAGE_MISMATCH, check_detail=str(exc)[:2000], status=MISMATCH)
            fields.update(failed_stage="check", error_type="AssertionError", error_message=first_line(str(exc)))
            return fields
        except Exception as exc:
            fields.update(describe_error(exc), check_status=STAGE_ERROR, status=MISMATCH, failed_stage="check")
            fields["check_detail"] = "the exported program raised where eager did not"
            return fields
        if info.skip_check is not None:
            fields.update(check_status=STAGE_SKIPPED, check_detail=info.skip_check)
        else:
            fields["check_status"] = STAGE_OK
        return fields


STAGE = CheckStage
