"""The site's AOTInductor verdicts: :mod:`matrix.report.aoti_verdict`'s lines as list items, each linking the
packages' epochs below."""

from __future__ import annotations

from typing import List

from matrix.report import aoti_verdict
from matrix.report.findings import Findings
from matrix.report.site.markup import text


def lines(f: Findings) -> List[str]:
    """One ``<li>`` per line of the verdict; none without packages or compiles."""
    return [
        '<li class="aoti-verdict"><strong>%s</strong>: %s <a href="#aoti-epochs">every pair</a></li>'
        % (text(title), text(said))
        for title, said in aoti_verdict.lines(f.model.aoti)
    ]
