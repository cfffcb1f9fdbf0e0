"""What the report tests share: the records of a large matrix, and reading a written page's prose."""

from __future__ import annotations

from typing import Any, Dict, List

from conftest import report_cell, report_environment

RELEASES = ["2.%d.0" % minor for minor in range(1, 16)]
ERRORS = [
    ("torch._dynamo.exc.Unsupported", "Dynamic control flow is not supported at the moment."),
    ("torch._dynamo.exc.UserError", "Constraints violated (batch)! See more details below."),
    ("RuntimeError", "Cannot call numel() on tensor with symbolic sizes/strides"),
    ("torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode", "Could not guard on data-dependent u0"),
]
TIMED_CASES = {"case_003": 1.0, "case_010": 3.0}  # export time grows ×1 or ×3 at 2.8.0, over 5 runs


def large_history() -> List[Dict[str, Any]]:
    """15 releases × 130 cases × 2 modes: cases born late, fixed, broken for a release, drifting graphs,
    programs that stop saving or decomposing, and two cases timed over 5 runs."""
    rows: List[Dict[str, Any]] = []
    for index, release in enumerate(RELEASES):
        rows.append(report_environment(release, "2025-03-01T10:00:00+00:00"))
        for number in range(130):
            case = "case_%03d" % number
            for mode in ("strict", "non-strict"):
                works = (number * 7) % 17 - (2 if mode == "non-strict" else 0)
                if index < number % 4:
                    status = "not-applicable"
                elif index < works or (number % 9 == 0 and index == number % 13 + 1):
                    status = "fail"
                else:
                    status = "pass"
                extra: Dict[str, Any] = {"tags": ["tag%d" % (number % 6)]}
                if status == "fail":
                    kind, message = ERRORS[number % len(ERRORS)]
                    extra.update(error_type=kind, error_message=message + "\nmore detail %d" % index)
                if status == "pass":
                    ops = ["aten.add.Tensor"] + (["aten.mul.Tensor"] if index // 5 else [])
                    text = "".join("%s(x)\n" % op for op in ops) + "# scheme %d\n" % (index // 5)
                    extra.update(
                        graph_hash="%016x" % (index // 5 + 1),
                        graph_text=text,
                        ops=ops,
                        decomposed_ops=ops,
                        serialize_status="error" if number % 31 == 0 and index >= 10 else "ok",
                        serialize_error="load: RuntimeError: cannot load" if number % 31 == 0 else None,
                        decompose_status="error" if number % 37 == 5 and index == 12 else "ok",
                        decompose_error="KeyError: aten.sym_size" if number % 37 == 5 else None,
                    )
                runs = 5 if case in TIMED_CASES else 1
                for run in range(runs):
                    slower = TIMED_CASES.get(case, 1.0) if index >= 7 else 1.0
                    seconds = 0.2 * slower * (1 + run / 50)
                    rows.append(report_cell(release, case, status, mode, run=run, export_s=seconds, **extra))
    return rows


def paragraphs(text: str) -> List[str]:
    """The page's prose: each list item and each run of plain lines.

    Table rows, headings, images, HTML lines (``<details>``) and fenced blocks (tracebacks, graphs) are no prose.
    """
    found: List[str] = []
    current: List[str] = []
    fenced = False
    for line in text.splitlines() + [""]:
        plain = line.strip()
        if plain.startswith(("```", "~~~")):
            fenced = not fenced
        prose = plain and not fenced and not plain.startswith(("|", "#", "![", "<", "```", "~~~"))
        if not prose or plain.startswith(("- ", "* ")):
            if current:
                found.append(" ".join(current))
            current = [plain] if prose else []
            continue
        current.append(plain)
    return found
