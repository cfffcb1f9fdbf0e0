"""The report's page on saved programs loaded across releases: ``artifacts.md``, its heatmaps and table.

Written only when the records hold load records (``export-matrix load``). The page has a short
intro, a table of where the programs of each saving build load and match, a heatmap per mode
(share of artifacts that load and match, saving × loading release), the load regressions (one
per saving × loading release pair, then each program they affect), and per case a saving ×
loading grid of statuses with the errors behind them. Where the records hold loads of compiled packages
(``aoti-load``), the page ends with their section (:mod:`matrix.report.aoti_loads`: their epochs, shares
and each case's compiled × loaded grid), with heatmaps of their own and ``aoti_loads.parquet`` beside
``loads.parquet``; where they hold programs compiled on a newer release (``aoti-compile``, ``load --aoti``), their
exported × compiled shares and failures close it, with ``aoti_compiles.parquet``. Every file goes through
:mod:`matrix.report.files`, and the charts are drawn as the other charts are, so rebuilding
from the same records changes nothing.
"""

from __future__ import annotations

import math
import os
import textwrap
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import pandas as pd

from matrix.contract.products import COMPILE, PACKAGE, PROGRAM, Product
from matrix.contract.schema import MODES, NO_RECORD, first_line
from matrix.records import artifacts as loads_table
from matrix.records import load_regressions, tables, transitions
from matrix.records.aoti_compiles import Compiles
from matrix.records.aoti_loads import PackageLoads
from matrix.report import aoti_loads as package_page
from matrix.report import case_grids, files, shares
from matrix.report import charts as charting
from matrix.report import markdown as md

PAGE = "artifacts.md"
TABLE = "loads.parquet"
# Programs of the load regressions listed on the page; the rest are counted (all are in loads.parquet's source records).
SHOWN_REGRESSIONS = 200
# Pairs (saved → loaded) named per error of a case before the rest are counted.
SHOWN_PAIRS = 8
# Bulky texts left out of the Parquet table.
_BULKY = ("error_traceback", "stderr_tail")
SYMBOLS = shares.SYMBOLS


@dataclass(frozen=True)
class Written:
    """What the artifact page wrote, and what the front page shows of it."""

    files: Set[str]
    charts: Tuple[charting.Chart, ...] = ()
    regressions: int = 0  # load regressions: (saving environment, loading release) pairs, load_regressions.regressions
    affected: int = 0  # the programs they affect, each counted once per load regression
    load_regressions: Tuple[Dict[str, Any], ...] = ()  # records.load_regressions.regressions' rows


def write(
    out: str,
    table: pd.DataFrame,
    charts: bool = True,
    packages: Optional[PackageLoads] = None,
    compiles: Optional[Compiles] = None,
) -> Written:
    """Write the page (and its charts and tables) for the load table ``table`` (``Model.loads``, built once from
    ``Store.loads`` by :func:`matrix.records.artifacts.table`), the package loads ``packages``
    (:func:`matrix.records.aoti_loads.judge` of ``Store.aoti_loads``) and the compiles ``compiles``
    (:func:`matrix.records.aoti_compiles.judge` of ``Store.aoti_compiles``).

    Returns the paths written, relative to ``out`` (none when there is no usable load record),
    the summary and the charts.
    """
    held = packages if packages is not None and not packages.empty else None
    compiled = compiles if compiles is not None and not compiles.empty else None
    if table.empty and held is None and compiled is None:
        return Written(set())
    written: Set[str] = set()
    drawn: List[charting.Chart] = []
    rows: Tuple[Dict[str, Any], ...] = ()
    text = ""
    if not table.empty:
        grid = loads_table.heatmap(table)
        drawn = heatmap_charts(grid, table, out) if charts else []
        regressions = load_regressions.regressions(table)
        programs = load_regressions.program_regressions(table)
        text = render(table, grid, regressions, drawn, programs)
        _store(table, out, TABLE)
        written.add(TABLE)
        rows = tuple(regressions.to_dict("records"))
    mine: List[charting.Chart] = []
    products = ((held, PACKAGE, package_page.chart_title), (compiled, COMPILE, package_page.compile_chart_title))
    for uses, product, title in products:
        if uses is not None:
            mine += heatmap_charts(uses.shares, uses.table, out, title, product) if charts else []
            _store(uses.table, out, product.table)
            written.add(product.table)
    if held is not None or compiled is not None:
        drawn += mine
        text = (
            (text or "# Saved programs loaded on other releases\n") + "\n" + package_page.section(held, mine, compiled)
        )
    files.write_text(out, PAGE, text)
    written |= {PAGE} | {path for chart in drawn for path in chart.files}
    return Written(written, tuple(drawn), len(rows), int(sum(r["programs"] for r in rows)), rows)


def _store(table: pd.DataFrame, out: str, name: str) -> None:
    """A load table as Parquet, without the bulky texts (those are on the case pages)."""
    stored = tables.storable(table.drop(columns=[c for c in _BULKY if c in table.columns]))
    path = files.target(out, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    stored.to_parquet(path, index=False, **files.PARQUET)


REACH_HEADERS = ["saved on", "programs", "all load and match on", "some load and match on", "none loads and matches on"]
NOT_TRIED = "not tried"


def reach_rows(table: pd.DataFrame, limit: int = 160) -> List[List[str]]:
    """Per saving environment, where its programs load and match, in plain text (the page escapes it).

    The columns of :data:`REACH_HEADERS`, then :data:`NOT_TRIED` where any environment has loads not
    tried; loading environments as runs (``2.5.1–2.9.1``), a failure cut to ``limit`` characters.
    """
    _, loaded_order = loads_table.orders(table)
    found = loads_table.reach(table)
    untried = any(r.untried or r.untrusted for r in found)
    rows = []
    for r in found:
        row = [r.saved, str(r.artifacts), md.release_spans(r.passing, loaded_order) or "–"]
        row.append(_partial(r, loaded_order, limit))
        row.append(_failing(r, loaded_order, limit))
        rows.append(row + ([_untried(r, loaded_order)] if untried else []))
    return rows


def _partial(r: loads_table.Reach, order: Sequence[str], limit: int) -> str:
    """``1 of 2 on 2.5.0 (the others most often run-error: TypeError: bad)``; environments that load as many of
    the programs are named together."""
    if not r.partial:
        return "–"
    by_count: Dict[Tuple[int, int], List[str]] = {}
    for p in r.partial:
        by_count.setdefault((p.passed, p.tried), []).append(p.loaded)
    counts = "; ".join(
        "%d of %d on %s" % (passed, tried, md.release_spans(loaded, order))
        for (passed, tried), loaded in by_count.items()
    )
    return "%s (the others most often %s)" % (counts, _cause(r.partial_cause, limit))


def _failing(r: loads_table.Reach, order: Sequence[str], limit: int) -> str:
    if not r.failing:
        return "–"
    where = "from %s on" % r.failing_from if r.failing_from is not None else md.release_spans(r.failing, order)
    return "%s (%s)" % (where, _cause(r.failing_cause, limit))


def _untried(r: loads_table.Reach, order: Sequence[str]) -> str:
    said = []
    if r.untried:
        said.append("%s: no torch.export.load" % md.release_spans(r.untried, order))
    if r.untrusted:
        where = ", none tried on %s" % md.release_spans(r.unsigned, order) if r.unsigned else ""
        said.append(
            "%s untrusted (no signature, or one that does not match: load --trust)%s"
            % (md.plural(r.untrusted, "load"), where)
        )
    return "; ".join(said) or "–"


def reach_table(table: pd.DataFrame) -> str:
    """The table of :func:`reach_rows`, escaped."""
    rows = reach_rows(table)
    headers = REACH_HEADERS + ([NOT_TRIED] if rows and len(rows[0]) > len(REACH_HEADERS) else [])
    align = ["l", "r"] + ["l"] * (len(headers) - 2)
    return md.table(headers, [[md.text(cell) for cell in row] for row in rows], align)


def _builds(table: pd.DataFrame, version: str, variant: str) -> str:
    """``16 builds of 15 releases``: the builds (torch version and variant) of a side of the load table."""
    builds = set(zip(table[version].astype(str), table[variant].astype(str)))
    releases = {transitions.base(v) for v, _ in builds}
    return "%s of %s" % (md.plural(len(builds), "build"), md.plural(len(releases), "release"))


def failure(found: loads_table.Failure) -> str:
    """A failing load in a few words: ``load-error: RuntimeError: Serialized version … does not match …``."""
    return found.text


def _cause(found: Optional[loads_table.Failure], limit: int) -> str:
    if found is None:
        return "no failure recorded"
    text = failure(found)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status(value: Any) -> str:
    """A load status as its symbol and name."""
    if not isinstance(value, str):
        return NO_RECORD
    return "%s %s" % (SYMBOLS.get(value, "?"), md.text(value))


def render(
    table: pd.DataFrame,
    grid: pd.DataFrame,
    regressions: pd.DataFrame,
    drawn: Sequence[charting.Chart] = (),
    programs: Optional[pd.DataFrame] = None,
) -> str:
    """The page's Markdown; ``regressions`` and ``programs`` are records.load_regressions' ``regressions`` and
    ``program_regressions`` of ``table`` (the latter computed here when not given)."""
    orders = loads_table.orders(table)
    parts = [
        "# Saved programs loaded on other releases\n",
        "Each cell that exported and passed its check on a release saved its program with"
        " `torch.export.save`, with its inputs and eager's outputs on that release (`export-matrix run"
        " --artifacts`). `export-matrix load` loads each of them on every release, runs it on those"
        " inputs and compares with those outputs. %s saved on %s, loaded on %s."
        % (
            md.plural(len(table.drop_duplicates(["saved", "case", "mode", "with_set"])), "artifact"),
            _builds(table, "saved_torch_version", "saved_variant"),
            _builds(table, "torch_version", "variant"),
        )
        + "\n",
        "## Where each build's programs load\n",
        "One row per saving build; loading builds as runs of consecutive ones (2.6.0–2.9.1).\n",
        reach_table(table),
        "## Share that loads and matches\n",
        "Rows: the release that saved the program; columns: the release that loaded it. Each square:"
        " artifacts that passed of those the loading release tried; a load not tried (%s, %s) is no"
        " failure and is left out.\n" % (shares.NOT_APPLICABLE, shares.UNTRUSTED),
    ]
    corner = "saved on ↓ / loaded on →"
    parts += shares.per_mode(grid, drawn, _chart_title, lambda rows: shares.table(rows, *orders, corner), "###")
    parts.append("## Load regressions\n")
    parts.append(
        "A load regression: a loading release that does worse with the artifacts saved on one release than"
        " the loading release before it (pass > mismatch > run-error > load-error = crash = timeout). A change"
        " of format counts once per saving release it breaks, however many programs that release saved: %s,"
        " affecting %s.\n"
        % (md.plural(len(regressions), "load regression"), md.plural(int(regressions["programs"].sum()), "program"))
    )
    parts.append(breaks(regressions))
    parts.append("### Programs affected\n")
    if programs is None:
        programs = load_regressions.program_regressions(table)
    parts.append(_regressions(programs))
    parts.append("## Statuses\n")
    parts.append(legend())
    parts.append("Each case's own grid, saved × loaded per mode with the errors its loads met, is on its page.\n")
    return "\n".join(parts)


def legend() -> str:
    """The load statuses: symbol, name and meaning."""
    return case_grids.legend_markdown(PROGRAM, SYMBOLS)


def breaks(regressions: pd.DataFrame) -> str:
    """The load regressions as a table: saving release, the two loading releases, the programs affected and why."""
    if regressions.empty:
        return "_None._\n"
    rows = [
        [
            md.text(row["saved"]),
            md.text("%s → %s" % (row["before"], row["after"])),
            md.text(affected(row)),
            md.text(break_failure(row, limit=300)),
        ]
        for row in regressions.to_dict("records")
    ]
    return md.table(["saved on", "loaded on", "programs affected", "most common failure"], rows, ["l", "l", "l", "l"])


def affected(row: Dict[str, Any]) -> str:
    """How many of a saving release's programs a load regression affects: ``all 214 that 2.7.1 loaded``."""
    programs, loaded, before = int(row["programs"]), int(row["loaded_before"]), row["before"]
    if programs != loaded:
        return "%d of the %d that %s loaded" % (programs, loaded, before)
    return "the one %s loaded" % before if programs == 1 else "all %d that %s loaded" % (programs, before)


def break_failure(row: Dict[str, Any], limit: int = 160) -> str:
    """A load regression's most common failure, as plain text, with how many of its programs share it."""
    if not isinstance(row.get("status"), str):
        return "no failure recorded"
    text = _cause(loads_table.Failure.of(row), limit)
    sharing, programs = int(row["sharing"]), int(row["programs"])
    return text if sharing == programs else "%s (%d of the %d)" % (text, sharing, programs)


def _regressions(moves: pd.DataFrame) -> str:
    if moves.empty:
        return "_None._\n"
    rows = []
    for move in moves.head(SHOWN_REGRESSIONS).to_dict("records"):
        rows.append(
            [
                md.text(move["saved"]),
                md.text(move["case"]),
                md.text(move["mode"]),
                md.text("%s → %s" % (move["before"], move["after"])),
                "%s → %s" % (status(move["status_before"]), status(move["status_after"])),
                _error(move),
            ]
        )
    text = md.table(["saved on", "case", "mode", "loaded on", "status", "error"], rows)
    if len(moves) > SHOWN_REGRESSIONS:
        text += "\n… and %d more.\n" % (len(moves) - SHOWN_REGRESSIONS)
    return text


def _error(row: Dict[str, Any]) -> str:
    parts = []
    if isinstance(row.get("error_type"), str) and row["error_type"]:
        parts.append(md.code(row["error_type"]))
    message = first_line(row.get("error_message"), limit=None)
    if message:
        parts.append(md.text(message, limit=200))
    return " ".join(parts)


def _chart_title(mode: str) -> str:
    return "Saved programs that load and match: %s" % mode


def heatmap_charts(
    grid: pd.DataFrame,
    table: pd.DataFrame,
    out: str,
    title: Callable[[str], str] = _chart_title,
    product: Product = PROGRAM,
) -> List[charting.Chart]:
    """One heatmap per mode of a ``product``'s uses: making × using release, coloured by the share that passes; the
    chart of a mode is ``title(mode)``, its file ``charts/<name>-<mode>`` (``artifacts`` for programs, else the
    product's name: ``aoti-loads``)."""
    name = "artifacts" if product is PROGRAM else product.name.replace("_", "-")
    rows, columns = product.made + " on", product.used + " on"
    if grid.empty:
        return []
    charting.prepare()
    saved_order, loaded_order = loads_table.orders(table)
    drawn = []
    for mode in [m for m in MODES if m in set(grid["mode"])]:
        figure = _heatmap(grid[grid["mode"] == mode], saved_order, loaded_order, title(mode), rows, columns)
        written = charting.save(figure, out, "%s-%s" % (name, mode))
        drawn.append(charting.Chart(written[0], title(mode), tuple(written)))
    return drawn


# About how many characters of the default title font one inch of figure holds.
TITLE_CHARS_PER_INCH = 10


@charting.with_settings
def _heatmap(
    grid: pd.DataFrame,
    saved_order: List[str],
    loaded_order: List[str],
    title: str,
    rows: str = "saved on",
    columns: str = "loaded on",
) -> Any:
    from matplotlib import colormaps

    saved = [label for label in saved_order if label in set(grid["saved"])]
    loaded = [label for label in loaded_order if label in set(grid["loaded"])]
    cells = {(row["saved"], row["loaded"]): row for row in grid.to_dict("records")}
    values = [[_share(cells.get((s, l))) for l in loaded] for s in saved]  # noqa: E741
    colours = colormaps[charting.SCALE].with_extremes(bad=charting.NO_VALUE_COLOR)
    width = max(5.5, 2.4 + 0.55 * len(loaded))
    height = max(2.8, 1.9 + 0.38 * len(saved))
    figure = charting.new_figure(width, height)
    ax = figure.subplots()
    image = ax.imshow(values, cmap=colours, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
    for y, s in enumerate(saved):
        for x, l in enumerate(loaded):  # noqa: E741
            row = cells.get((s, l))
            if row is not None and row["total"]:
                # White on the dark end of the scale, black on the light end.
                ink = "white" if row["share"] < 0.5 else "black"
                ax.text(x, y, "%d/%d" % (row["passed"], row["total"]), ha="center", va="center", fontsize=7, color=ink)
    ax.set_xticks(range(len(loaded)), [charting.label(v) for v in loaded], rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(saved)), [charting.label(v) for v in saved], fontsize=8)
    ax.set_xlabel(columns)
    ax.set_ylabel(rows)
    # A title wider than the plot is cut at the figure's edge: wrapped to the plot's width instead.
    ax.set_title(textwrap.fill(title, width=max(30, int((width - 1.6) * TITLE_CHARS_PER_INCH))))
    figure.colorbar(image, ax=ax, label="share that passes", fraction=0.05)
    return figure


def _share(row: Optional[Dict[str, Any]]) -> float:
    if row is None or not row["total"]:
        return math.nan
    return float(row["share"])
