"""What the report's pages show: the model judged once from the records (:mod:`matrix.records.model`), and what
the build drew and wrote for it (charts, the saved-programs page)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Generic, List, Optional, Tuple, TypeVar

import pandas as pd

from matrix.records.baseline import BaselineComparison
from matrix.records.builds import BuildComparison
from matrix.records.candidate import Verdict
from matrix.records.completeness import IncompleteBuild
from matrix.records.model import Model, PassRate
from matrix.records.scope import Scope
from matrix.records.transitions import Step
from matrix.records.verdicts import Verdicts
from matrix.report.charts import Chart
from matrix.report.stamp import Source, Stamp

T = TypeVar("T")


class _OfModel(Generic[T]):
    """A field of the model, read through the findings under its own name (``findings.cells``)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, findings: Any, owner: type) -> T:
        return getattr(findings.model, self.name)


@dataclass(frozen=True)
class Findings:
    """Everything the front page and its linked pages show; the Markdown pages and the site render the same model."""

    title: str
    model: Model
    charts: Dict[str, List[Chart]] = field(default_factory=dict)
    artifacts: Any = None  # report.artifacts.Written, when the records hold loads of saved programs
    stamp: Optional[Stamp] = None  # the publication's: the tool's commit and the build date, said on the front page
    sources: Tuple[Source, ...] = ()  # the other runs whose stages' outcomes or products it shows

    def stamp_of(self, name: str) -> Optional[Stamp]:
        """The stamp of the run whose records of the stage or product ``name`` the report shows."""
        return next((source.stamp for source in self.sources if name in source.shows), self.stamp)

    cells = _OfModel[pd.DataFrame]()  # tables.cells
    labels = _OfModel[pd.Series]()  # environment label per row of cells
    environments = _OfModel[pd.DataFrame]()
    env_errors = _OfModel[pd.DataFrame]()
    moves = _OfModel[pd.DataFrame]()  # transitions.collect
    steps = _OfModel[Tuple[Step, ...]]()  # the release transitions, oldest first
    summary = _OfModel[pd.DataFrame]()  # tables.summary
    pass_rates = _OfModel[Tuple[PassRate, ...]]()
    disagreements = _OfModel[pd.DataFrame]()
    claims = _OfModel[pd.DataFrame]()
    flaky = _OfModel[pd.DataFrame]()
    stage_failures = _OfModel[pd.DataFrame]()  # tables.stage_failures
    signatures = _OfModel[pd.DataFrame]()  # tables.signatures
    loads = _OfModel[pd.DataFrame]()  # records.artifacts.table
    load_orders = _OfModel[Tuple[List[str], List[str]]]()
    runs = _OfModel[int]()  # cell records behind the cells (after replacing re-runs)
    warnings = _OfModel[Tuple[str, ...]]()
    baseline = _OfModel[Optional[BaselineComparison]]()
    baseline_name = _OfModel[Optional[str]]()
    scope = _OfModel[Scope]()  # releases, builds, cases, modes and cells, counted apart
    incomplete = _OfModel[Tuple[IncompleteBuild, ...]]()  # builds that lack a dependency set
    builds = _OfModel[Tuple[BuildComparison, ...]]()  # each build of another variant against PyPI's of its release
    candidates = _OfModel[Tuple[Verdict, ...]]()  # each nightly or release candidate against the newest release
    verdicts = _OfModel[Verdicts]()  # records.verdicts.judge: what the front page opens with
