"""What the report's pages show: the model judged once from the records (:mod:`matrix.records.model`), and what
the build drew and wrote for it (charts, the saved-programs page)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from matrix.records.model import Model
from matrix.report.charts import Chart
from matrix.report.stamp import Source, Stamp


@dataclass(frozen=True)
class Findings(Model):
    """Everything the front page and its linked pages show; the Markdown pages and the site render the same model.

    The findings are the model itself (``findings.cells`` is its cells), with what the build adds: so that a field
    of the model is declared once, in the model."""

    title: str = ""
    charts: Dict[str, List[Chart]] = field(default_factory=dict)
    artifacts: Any = None  # report.artifacts.Written, when the records hold loads of saved programs
    stamp: Optional[Stamp] = None  # the publication's: the tool's commit and the build date, said on the front page
    sources: Tuple[Source, ...] = ()  # the other runs whose stages' outcomes or products it shows

    @classmethod
    def of(cls, model: Model, **added: Any) -> Findings:
        """The findings of ``model``, with what the build adds (``title``, ``stamp``, ``sources``...)."""
        return cls(**{f.name: getattr(model, f.name) for f in dataclasses.fields(model)}, **added)

    def stamp_of(self, name: str) -> Optional[Stamp]:
        """The stamp of the run whose records of the stage or product ``name`` the report shows."""
        return next((source.stamp for source in self.sources if name in source.shows), self.stamp)
