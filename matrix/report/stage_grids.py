"""Each stage whose outcome is declared (``Stage.shown``), drawn from its declaration alone: on a case page, a grid
of its outcome per environment and mode; in the glossary, each outcome's glyph and meaning.

A square's glyph is the cell status that says the same (:func:`matrix.records.stage_outcomes.drawn`), its tooltip
the stage's label, the outcome, what it means and, where it failed, the declared detail fields. A new stage needs
nothing here.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from matrix.contract.schema import MODES
from matrix.contract.stages import Stage
from matrix.records import stage_outcomes
from matrix.report import document as d


def case_sections(rows: Sequence[Mapping[str, Any]]) -> List[d.Section]:
    """A section per stage that ran on some of a case's cells (``rows``, in report order, each with an
    ``environment`` label): its outcome per environment (rows) and mode (columns)."""
    return [_grid(stage, rows) for stage in stage_outcomes.ran(rows)]


def _grid(stage: Stage, rows: Sequence[Mapping[str, Any]]) -> d.Section:
    declared = stage_outcomes.shown(stage)
    squares: Dict[Tuple[str, str], d.Square] = {}
    seen: List[str] = []  # the outcomes the grid shows, which its table says in words
    for row in rows:
        found = stage_outcomes.outcome(row, stage)
        if found is not None:
            square = d.Square(stage_outcomes.drawn(stage, found), tip=stage_outcomes.tip(row, stage))
            squares[(str(row["environment"]), str(row["mode"]))] = square
            seen.append(found)
    environments = list(dict.fromkeys(env for env, _ in squares))
    modes = tuple(m for m in MODES if any(mode == m for _, mode in squares))
    grid = d.Grid(
        "environment ↓ mode →",
        modes,
        tuple((d.phrase(env), tuple(squares.get((env, m), d.Square(None)) for m in modes)) for env in environments),
    )
    said = d.phrase(
        "What the ", d.Code(stage.name), " stage gave in each environment and mode (run with ",
        d.Code("--stages …,%s" % stage.name), "). A square's tooltip says what its outcome means and, where it"
        " failed, what failed.",
    )  # fmt: skip
    return d.Section(
        "stage-" + stage.name,
        "%s outcome" % declared.label,
        (d.Paragraph(said), grid, d.Paragraph(d.phrase("What each outcome here means:")), outcomes_table(stage, seen)),
    )


def outcomes_table(stage: Stage, outcomes: Optional[Sequence[str]] = None) -> d.Table:
    """Each of the stage's outcomes (or those of ``outcomes``, in declared order): its glyph, name and meaning."""
    declared = stage_outcomes.shown(stage)
    chosen = [o for o in declared.outcomes if outcomes is None or o in outcomes]
    rows = tuple(
        (d.phrase(d.Mark(stage_outcomes.drawn(stage, o), named=False)), d.phrase(o), d.phrase(declared.meanings[o]))
        for o in chosen
    )
    return d.Table((d.Column(""), d.Column("outcome"), d.Column("meaning")), rows)


def glossary_section() -> d.Section:
    """The glossary's part on the stages with a declared outcome: per stage, each outcome's glyph and meaning."""
    blocks: List[d.Block] = [
        d.Paragraph(d.phrase(
            "What a stage run on a passing cell's program gave, where the run selected it (run --stages …,NAME);"
            " an outcome that did not try (not applicable, skipped) is never a failure."
        ))
    ]  # fmt: skip
    for stage in stage_outcomes.SHOWN:
        blocks += [d.Paragraph(d.phrase(d.Strong(d.phrase(stage_outcomes.shown(stage).label)))), outcomes_table(stage)]
    return d.Section("stage-outcomes", "Stage outcomes", tuple(blocks))
