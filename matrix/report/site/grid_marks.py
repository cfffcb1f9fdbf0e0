"""What the front page's grid marks on a cell besides its status, and the filters that find those cells.

- A cell that exported but whose program failed a later stage (save/load, decomposition, AOTInductor:
  :func:`matrix.records.failures.failed_stages`) carries a mark, and the ``failing`` filter finds it as it
  finds a failing status, so that the verdicts' still-broken cases and the filter agree.
- A cell whose graph changed or whose ops drifted since the previous release of its series (a transition of
  :mod:`matrix.records.transitions` into that cell's environment) is found by a filter of its own.
- A case's packages (its dependency set, its ``--with`` set) are searched with its name, tags and errors.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence, Tuple

import pandas as pd

from matrix.records.packages import requirements
from matrix.report.case_page import with_set

STAGE_FAILURE = "stage-failure"  # the filter value for cells whose program failed a later stage
# The transitions that become filters (since the previous release of the cell's series), with the filter's words.
MOVE_FILTERS = (("graph-change", "graph changed"), ("op-drift", "ops drifted"))
MOVE_KINDS = tuple(kind for kind, _ in MOVE_FILTERS)
ENV = ("release", "variant", "python", "with_set")


def packages(row: Mapping[str, Any]) -> List[str]:
    """The requirements a cell ran with beside torch: its case's dependency set and its ``--with`` set."""
    return list(dict.fromkeys(r for key in ("dependency_set", "with_set") for r in requirements(row.get(key))))


def moves_by_cell(
    moves: pd.DataFrame, cells: pd.DataFrame, labels: pd.Series, position: Mapping[Tuple[str, str], int]
) -> Dict[str, Dict[str, List[str]]]:
    """Per case, per grid column (as text), the kinds of MOVE_KINDS whose transition ends in that column's cell.

    A transition names the environment it ends in by release, variant, Python and ``--with`` set; the grid's
    column is that environment's label (``labels``, aligned with ``cells``) and the transition's mode.
    """
    if moves is None or moves.empty or cells.empty:
        return {}
    label_of: Dict[Tuple[str, ...], str] = {}
    for env, label in zip(cells[list(ENV)].astype(str).itertuples(index=False, name=None), labels.astype(str)):
        label_of.setdefault(tuple(env), label)
    chosen = moves[moves["kind"].isin(MOVE_KINDS)]
    found: Dict[str, Dict[str, List[str]]] = {}
    for move in chosen.to_dict("records"):
        env = (str(move["after"]), str(move["variant"]), str(move["python_after"]), with_set(move))
        label = label_of.get(env)
        column = position.get((label, str(move["mode"]))) if label is not None else None
        if column is None:
            continue
        kinds = found.setdefault(str(move["case"]), {}).setdefault(str(column), [])
        if move["kind"] not in kinds:
            kinds.append(str(move["kind"]))
    return found


def status_choices(any_failure: str) -> Sequence[Tuple[str, str]]:
    """The status filter's choices beyond the statuses themselves: any failure, a later stage, the moves."""
    return [(any_failure, "any failure"), (STAGE_FAILURE, "a later stage fails"), *MOVE_FILTERS]
