"""What the report's pages show, computed once from the records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import pandas as pd

from matrix.records import tables
from matrix.records.transitions import Step
from matrix.records.verdicts import Verdicts
from matrix.report.charts import Chart


@dataclass(frozen=True)
class Findings:
    """Everything the front page and its linked pages show."""

    title: str
    cells: pd.DataFrame  # tables.cells
    labels: pd.Series  # environment label per row of cells
    environments: pd.DataFrame
    env_errors: pd.DataFrame
    moves: pd.DataFrame  # transitions.find
    summary: pd.DataFrame
    disagreements: pd.DataFrame
    claims: pd.DataFrame
    flaky: pd.DataFrame
    runs: int  # cell records behind the cells (after replacing re-runs)
    warnings: Tuple[str, ...] = ()
    baseline: Optional[tables.BaselineComparison] = None
    baseline_name: Optional[str] = None
    charts: Dict[str, List[Chart]] = field(default_factory=dict)
    steps: Tuple[Step, ...] = ()  # the release transitions, oldest first
    stage_failures: pd.DataFrame = field(default_factory=pd.DataFrame)  # tables.stage_failures
    signatures: pd.DataFrame = field(default_factory=pd.DataFrame)  # tables.signatures
    artifacts: Any = None  # report.artifacts.Written, when the records hold loads of saved programs
    verdicts: Optional[Verdicts] = None  # report.verdicts.judge: what the front page opens with
