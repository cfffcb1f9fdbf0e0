"""The site's real-model table: each model of ``real_models/`` by environment, its status per mode and the version of
each library it names that the environment resolved.

The rows are the Markdown section's (:mod:`matrix.report.real_models`): the same cells, environment order,
models whose libraries did not install and count of passes. Here a model's libraries are named once, beside
it, and each cell shows the versions alone, so that sixteen builds fit a laptop's width.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Sequence

from matrix.contract.schema import NO_RECORD, NoCell
from matrix.records import packages
from matrix.report import markdown as md
from matrix.report import real_models as pack
from matrix.report.findings import Findings
from matrix.report.site.markup import breakable, status_glyph, text

Row = Dict[str, Any]


def _libraries(rows: Sequence[Row]) -> List[str]:
    """The libraries a model names (its dependency set), in the set's order."""
    found: List[str] = []
    for row in rows:
        for name in packages.names(row.get("dependency_set")):
            if name not in found:
                found.append(name)
    return found


def _cell(rows: Sequence[Row], modes: Sequence[str], not_installed: bool) -> str:
    """One model in one environment: a glyph per mode (with its stage marks), then the versions resolved."""
    if not rows:
        return '<td class="none">%s</td>' % text(str(NoCell.ENV_ERROR) if not_installed else NO_RECORD)
    by_mode = {str(row["mode"]): row for row in rows}
    glyphs = "".join(
        status_glyph(by_mode[m]["status"]) + text(md.marks(by_mode[m])) if m in by_mode else NO_RECORD for m in modes
    )
    # Both modes of an environment usually ran in one run; one that knows its versions speaks for it.
    known = next((row for row in rows if packages.resolved(row.get("added_packages"))), rows[0])
    versions = [v or "–" for _, v in packages.named_versions(known.get("dependency_set"), known.get("added_packages"))]
    return "<td>%s%s</td>" % (glyphs, "<br><small>%s</small>" % text(", ".join(versions)) if versions else "")


def section(f: Findings, pages: Mapping[str, str]) -> str:
    """The section; "" when the records hold no real model."""
    laid = pack.pack(f)
    if laid is None:
        return ""
    envs, modes, by_cell, failed = laid.envs, laid.modes, laid.by_cell, laid.failed
    models = laid.names
    lines = []
    for case in models:
        mine = [row for env in envs for row in by_cell.get((case, env), [])]
        page = pages.get(case)
        # A long name may break after its "/" and "_", so that every release's column fits a 1,400 px window.
        shown = text(case).replace("/", "/<wbr>").replace("_", "_<wbr>")
        name = '<a href="%s">%s</a>' % (text(page), shown) if page else shown
        libraries = "<br><small>%s</small>" % text(", ".join(_libraries(mine))) if _libraries(mine) else ""
        cells_html = "".join(_cell(by_cell.get((case, env), []), modes, (case, env) in failed) for env in envs)
        lines.append("<tr><th>%s%s</th>%s</tr>" % (name, libraries, cells_html))
    # The Markdown's count of passes, a mode a line, so that the column stays as narrow as its cells.
    shares = "".join(
        '<td class="num">%s</td>' % text(laid.passes(env)).replace(" · ", "<br>").replace(" (", "<br>(") for env in envs
    )
    lines.append("<tr><th>passes</th>%s</tr>" % shares)
    head = "<th>model (libraries)</th>" + "".join("<th>%s</th>" % breakable(env) for env in envs)
    intro = (
        "Real architectures built in code with random weights (<code>cases/real_models/</code>), each with the"
        " libraries it names. Each cell shows the status in %s mode, then the version of each library that release"
        " resolved; %s where the model's libraries failed to install there. The last row counts the models that"
        " pass of those recorded, per mode." % (text(" then ".join(modes)), text(str(NoCell.ENV_ERROR)))
    )
    return "\n".join(
        [
            '<section id="real-models"><h2>Real models (%d)</h2>' % len(models),
            '<p>%s The whole pack in the grid: <a href="%s">the real-model pack</a>.</p>' % (intro, text("#pack=real")),
            '<div class="wide tall"><table class="models"><thead><tr>%s</tr></thead><tbody>%s</tbody></table></div>'
            % (head, "".join(lines)),
            "</section>",
        ]
    )
