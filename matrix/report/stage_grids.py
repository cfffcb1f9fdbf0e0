"""Each stage whose outcome is declared (``Stage.shown``), drawn from its declaration alone: on a case page, a grid
of its outcome per environment and mode; in the glossary, each outcome's glyph and meaning.

A square's glyph is the cell status that says the same (:func:`matrix.records.stage_outcomes.drawn`), its tooltip
the stage's label, the outcome, what it means and, where it failed, the declared detail fields. A new stage needs
nothing here.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, TypeVar

from matrix.contract.schema import MODES
from matrix.contract.stages import Stage
from matrix.records import stage_outcomes
from matrix.report import document as d
from matrix.report import phrases as say


def case_sections(rows: Sequence[Mapping[str, Any]]) -> List[d.Section]:
    """A section per stage that ran on some of a case's cells (``rows``, in report order, each with an
    ``environment`` label): its outcome per environment (rows) and mode (columns)."""
    return [_grid(stage, rows) for stage in stage_outcomes.ran(rows)]


T = TypeVar("T")


def by_environment(
    cells: Mapping[Tuple[str, str], T], empty: T
) -> Tuple[Tuple[str, ...], List[Tuple[str, Tuple[T, ...]]]]:
    """A case's ``cells`` keyed by (environment, mode) laid out as a table: the modes (in MODES order), then per
    environment (in the order first seen) what it has in each mode, ``empty`` where nothing."""
    modes = tuple(m for m in MODES if any(mode == m for _, mode in cells))
    environments = dict.fromkeys(env for env, _ in cells)
    return modes, [(env, tuple(cells.get((env, m), empty) for m in modes)) for env in environments]


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
    modes, by_env = by_environment(squares, d.Square(None))
    grid = d.Grid("environment ↓ mode →", modes, tuple((d.phrase(env), found) for env, found in by_env))
    said = d.phrase(
        "What the ", d.Code(stage.name), " stage gave in each environment and mode (run with ",
        d.Code("--stages …,%s" % stage.name), "). A square's tooltip says what its outcome means and, where it"
        " failed, what failed.",
    )  # fmt: skip
    means = (d.Paragraph(d.phrase("What each outcome here means:")), say.legend(outcomes(stage, seen), "outcome"))
    return d.Section("stage-" + stage.name, "%s outcome" % declared.label, (d.Paragraph(said), grid, *means))


def outcomes(
    stage: Stage, seen: Optional[Sequence[str]] = None, named: bool = False
) -> List[Tuple[d.Phrase, str, str]]:
    """Each of the stage's outcomes (or those ``seen``, in declared order): its glyph, name (after the stage's label
    where ``named``) and meaning, as :func:`matrix.report.phrases.legend` takes them."""
    declared = stage_outcomes.shown(stage)
    return [
        (d.phrase(d.Mark(stage_outcomes.drawn(stage, o), named=False)),
         "%s: %s" % (declared.label, o) if named else o, declared.meanings[o])
        for o in declared.outcomes if seen is None or o in seen
    ]  # fmt: skip


def glossary_section() -> d.Section:
    """The glossary's part on the stages with a declared outcome: per stage, each outcome's glyph and meaning."""
    said = d.phrase(
        "What a stage run on a passing cell's program gave, where the run selected it (run --stages …,NAME);"
        " an outcome that did not try (not applicable, skipped) is never a failure."
    )
    rows = [row for stage in stage_outcomes.SHOWN for row in outcomes(stage, named=True)]
    return d.Section("stage-outcomes", "Stage outcomes", (d.Paragraph(said), say.legend(rows, "outcome")))
