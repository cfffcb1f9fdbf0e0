"""What the report's pages show: the model judged once from the records (:mod:`matrix.records.model`), and what
the build drew and wrote for it (charts, the saved-programs page)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

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
from matrix.report.stamp import Stamp


@dataclass(frozen=True)
class Findings:
    """Everything the front page and its linked pages show; the Markdown pages and the site render the same model."""

    title: str
    model: Model
    charts: Dict[str, List[Chart]] = field(default_factory=dict)
    artifacts: Any = None  # report.artifacts.Written, when the records hold loads of saved programs
    stamp: Optional[Stamp] = None  # the tool's commit and the build date, said in the front pages' header only

    @property
    def cells(self) -> pd.DataFrame:  # tables.cells
        return self.model.cells

    @property
    def labels(self) -> pd.Series:  # environment label per row of cells
        return self.model.labels

    @property
    def environments(self) -> pd.DataFrame:
        return self.model.environments

    @property
    def env_errors(self) -> pd.DataFrame:
        return self.model.env_errors

    @property
    def moves(self) -> pd.DataFrame:  # transitions.collect
        return self.model.moves

    @property
    def steps(self) -> Tuple[Step, ...]:  # the release transitions, oldest first
        return self.model.steps

    @property
    def summary(self) -> pd.DataFrame:  # tables.summary
        return self.model.summary

    @property
    def pass_rates(self) -> Tuple[PassRate, ...]:
        return self.model.pass_rates

    @property
    def disagreements(self) -> pd.DataFrame:
        return self.model.disagreements

    @property
    def claims(self) -> pd.DataFrame:
        return self.model.claims

    @property
    def flaky(self) -> pd.DataFrame:
        return self.model.flaky

    @property
    def stage_failures(self) -> pd.DataFrame:  # tables.stage_failures
        return self.model.stage_failures

    @property
    def signatures(self) -> pd.DataFrame:  # tables.signatures
        return self.model.signatures

    @property
    def loads(self) -> pd.DataFrame:  # records.artifacts.table
        return self.model.loads

    @property
    def load_orders(self) -> Tuple[List[str], List[str]]:
        return self.model.load_orders

    @property
    def runs(self) -> int:  # cell records behind the cells (after replacing re-runs)
        return self.model.runs

    @property
    def warnings(self) -> Tuple[str, ...]:
        return self.model.warnings

    @property
    def baseline(self) -> Optional[BaselineComparison]:
        return self.model.baseline

    @property
    def baseline_name(self) -> Optional[str]:
        return self.model.baseline_name

    @property
    def scope(self) -> Scope:  # releases, builds, cases, modes and cells, counted apart
        return self.model.scope

    @property
    def incomplete(self) -> Tuple[IncompleteBuild, ...]:  # builds that lack a dependency set
        return self.model.incomplete

    @property
    def builds(self) -> Tuple[BuildComparison, ...]:  # each build of another variant against PyPI's of its release
        return self.model.builds

    @property
    def candidates(self) -> Tuple[Verdict, ...]:  # each nightly or release candidate against the newest release
        return self.model.candidates

    @property
    def verdicts(self) -> Verdicts:  # records.verdicts.judge: what the front page opens with
        return self.model.verdicts
