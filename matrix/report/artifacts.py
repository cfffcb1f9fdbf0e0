"""The report's page on products used across releases (``artifacts.md`` and ``site/artifacts.html``), built once as a
document: one section per product (``matrix.contract.products``) whose records hold uses, drawn alike for each.

A section opens with the product's own words (``Product.about``) and its counts, then the parts its declaration names
(``Product.parts``), each drawn here the same way for every product: its epochs and what they say of upstream's
promise, where each making build's uses pass (``reach``), the share that passes per mode under its heatmap
(``shares``), the regressions between using releases and each use they affect, what a use costs, its failures, a
link to each case's grids (:func:`matrix.report.case_grids.section`, shown once, on the case's page) and what its
glyphs mean. What is shown is judged in :mod:`matrix.records` (the model's ``uses``,
:mod:`matrix.records.load_regressions`); this module only draws it, and writes each product's table
(``<name>.parquet``) and heatmaps (``charts/<name>-<mode>``) through :mod:`matrix.report.files`, so that rebuilding
from the same records changes nothing.

The front page's verdict line on each product's promise (:func:`verdict`) is worded here too, once: the product's
section says the same lines.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import pandas as pd

from matrix.contract.products import Product
from matrix.contract.schema import MODES, NO_RECORD
from matrix.records import artifacts as uses_table
from matrix.records import product_uses, store, tables, transitions
from matrix.records.epochs import Epoch, Pair
from matrix.records.failures import Sighting
from matrix.records.product_uses import ProductUses, Verdict
from matrix.report import case_grids, files, known_issues
from matrix.report import charts as charting
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import phrases as say
from matrix.report.writers.markdown import github_anchor

NAME = "artifacts"
TITLE = "Saved programs loaded on other releases"
# Regressions listed per product; the rest are counted (all are in the product's table's source records).
SHOWN_REGRESSIONS = 200
# Failures listed before the rest are counted, the uses named per failure, the longest failure quoted.
SHOWN_FAILURES = 20
SHOWN_USES = 6
CAUSE_LIMIT = 120
SHOWN_EXCEPTIONS = 3
# Bulky texts left out of the Parquet tables.
_BULKY = ("error_traceback", "stderr_tail")
# How an epoch's ``backward`` reads (records.epochs.BACKWARD).
OLDER_READ_NEWER = {"all": "yes", "some": "partly", "none": "no", "untried": "–"}


@dataclass(frozen=True)
class Written:
    """What the build wrote for the page, and what the front page shows of it: the saved programs' regressions."""

    files: Set[str]
    charts: Tuple[charting.Chart, ...] = ()
    regressions: int = 0  # load regressions: (saving environment, loading release) pairs, load_regressions.regressions
    affected: int = 0  # the programs they affect, each counted once per load regression
    load_regressions: Tuple[Dict[str, Any], ...] = ()  # records.load_regressions.regressions' rows


def shown(judged: Sequence[ProductUses]) -> List[ProductUses]:
    """The products the page has a section for: those whose records hold uses, in the declarations' order."""
    return [uses for uses in judged if not uses.empty]


def write(out: str, judged: Sequence[ProductUses], charts: bool = True) -> Written:
    """Write each shown product's table and heatmaps (``judged``: the model's ``uses``); returns the paths (relative
    to ``out``; none where no product has a use), the charts, and the saved programs' regressions for the front
    page."""
    written: Set[str] = set()
    drawn: List[charting.Chart] = []
    rows: Tuple[Dict[str, Any], ...] = ()
    for uses in shown(judged):
        drawn += heatmap_charts(uses, out) if charts else []
        # Without the bulky texts: those are on the case pages.
        kept = uses.table.drop(columns=list(_BULKY), errors="ignore")
        files.write_parquet(out, uses.product.table, tables.storable(kept))
        written.add(uses.product.table)
        if uses.regressions is not None:
            rows = tuple(uses.regressions.to_dict("records"))
    written |= {path for chart in drawn for path in chart.files}
    return Written(written, tuple(drawn), len(rows), int(sum(r["programs"] for r in rows)), rows)


def page(judged: Sequence[ProductUses], drawn: Sequence[charting.Chart] = (), known: Sequence[Sighting] = ()) -> d.Page:
    """The page of the model's ``uses``: a section per shown product, each with the heatmaps of ``drawn`` that are its
    own and the known issues of ``known`` (the model's) that label some of its failures."""
    sections = tuple(section(uses, drawn, known) for uses in shown(judged))
    lead = d.phrase("Each case's own grids, per product and mode with the errors its uses met, are on its page.")
    return d.Page(NAME, TITLE, sections, lead=lead)


def anchor(product: Product) -> str:
    """The id of a product's section: its title as GitHub makes an anchor of it."""
    return github_anchor(product.title)


def section(uses: ProductUses, drawn: Sequence[charting.Chart] = (), known: Sequence[Sighting] = ()) -> d.Section:
    """A product's section: its words, its counts, each part its declaration names, then the known issues that label
    some of its failures (still counted as failures)."""
    p, found = uses.product, uses.table
    counted = "%s %s on %s, %s on %s." % (
        d.plural(len(found.drop_duplicates(["saved", "case", "mode", "with_set"])), p.noun), p.made,
        _builds(found, "saved_torch_version", "saved_variant"), p.used, _builds(found, "torch_version", "variant"),
    )  # fmt: skip
    blocks: List[d.Block] = [d.Paragraph(d.phrase(p.about, " ", counted))]
    for part in p.parts:
        blocks += PARTS[part](uses, drawn)
    issues = [known_issues.verdict(s) for s in known if p.name in dict(s.counts)]
    if issues:
        blocks.append(d.Section(anchor(p) + "-known", "Known issues behind these failures", (d.Items(tuple(issues)),)))
    return d.Section(anchor(p), p.title, tuple(blocks))


def _builds(table: pd.DataFrame, version: str, variant: str) -> str:
    """``16 builds of 15 releases``: the builds (torch version and variant) of a side of a product's table."""
    builds = set(zip(table[version].astype(str), table[variant].astype(str)))
    releases = {transitions.base(v) for v, _ in builds}
    return "%s of %s" % (d.plural(len(builds), "build"), d.plural(len(releases), "release"))


def _epochs(uses: ProductUses, drawn: Sequence[charting.Chart]) -> List[d.Block]:
    noun = uses.product.noun
    intro = (
        "An epoch is a range of releases where a %s %s on any of them passes (%s and matches) on that release and"
        " every newer one of the range (for each pair, at least half of those tried; the cases that fail are the"
        " exceptions)." % (noun, uses.product.made, uses.product.used)
    )
    return [
        d.Section(anchor(uses.product) + "-epochs", "Epochs", (d.Paragraph(d.phrase(intro)), epochs(uses.epochs, noun)))
    ]


def epochs(found: Sequence[Epoch], noun: str = "program") -> d.Table:
    """The epochs of a product whose items are ``noun``, a row each, oldest first; each exception's case linked."""
    headers = [
        "epoch",
        noun + "s loaded",
        "loads that match",
        "older read newer",
        "exceptions",
        "older %ss fail" % noun,
    ]
    empty = "No %s was loaded on a release that made one." % noun
    return say.table(headers, (_epoch(e) for e in found), "lrrlll", empty=empty)


def _epoch(e: Epoch) -> Tuple[d.Phrase, ...]:
    cut = d.phrase("–")
    if e.cut is not None and e.cut_from is not None:
        cut = d.phrase("%s → %s: %s" % (e.cut_from, e.first, say.clip(e.cut.text, CAUSE_LIMIT)))
    exceptions = d.phrase("none")
    if e.exceptions:
        cases = list(dict.fromkeys(x.case for x in e.exceptions))
        named = [
            d.phrase(say.case(name), " (%s)" % ", ".join(x.mode for x in e.exceptions if x.case == name))
            for name in cases[:SHOWN_EXCEPTIONS]
        ]
        more = " … (+%d)" % (len(cases) - SHOWN_EXCEPTIONS) if len(cases) > SHOWN_EXCEPTIONS else None
        exceptions = d.phrase(d.Count(len(cases), "case"), ": ", d.joined(named), more)
    return (
        d.phrase(span(e)),
        d.phrase(str(e.programs) + (" (%d more not tried)" % e.untried if e.untried else "")),
        d.phrase("%d of %d" % (e.passed, e.tried)),
        d.phrase(OLDER_READ_NEWER.get(e.backward, e.backward)),
        exceptions,
        cut,
    )


def span(e: Epoch) -> str:
    """An epoch's releases: ``2.6.0–2.9.1``, or the one release."""
    return e.first if len(e.releases) == 1 else "%s–%s" % (e.first, e.last)


def _promise(uses: ProductUses, drawn: Sequence[charting.Chart]) -> List[d.Block]:
    """What the records say of the promise the product's declaration names: the front page's verdict lines."""
    said = [d.Item(d.phrase(words), title) for v in product_uses.verdicts([uses]) for title, words in lines(v)]
    return [d.Section(anchor(uses.product) + "-promise", "Upstream's promise", (d.Items(tuple(said)),))] if said else []


def _reach(uses: ProductUses, drawn: Sequence[charting.Chart]) -> List[d.Block]:
    """Per making build, where its uses pass; using builds as runs of consecutive ones (2.6.0–2.9.1)."""
    p, order = uses.product, list(uses.used)
    found = uses_table.reach(uses.table)
    untried = any(r.untried or r.untrusted for r in found)
    rows = []
    for r in found:
        row = [r.saved, str(r.artifacts), md.release_spans(r.passing, order) or "–", _partial(r, order),
               _failing(r, order)] + ([_untried(r, order, p)] if untried else [])  # fmt: skip
        rows.append([d.phrase(cell) for cell in row])
    headers = ["%s on" % p.made, "%ss" % p.noun, "all pass on", "some pass on", "none passes on"]
    headers += ["not tried"] if untried else []
    intro = "One row per build that %s them; the builds that %s them as runs of consecutive ones (2.6.0–2.9.1)." % (
        p.made, p.used)  # fmt: skip
    blocks = (d.Paragraph(d.phrase(intro)), say.table(headers, rows, "lr" + "l" * (len(headers) - 2)))
    return [d.Section(anchor(p) + "-reach", "Where each build's %ss pass" % p.noun, blocks)]


def _partial(r: uses_table.Reach, order: Sequence[str]) -> str:
    """``1 of 2 on 2.5.0 (the others most often run-error: TypeError: bad)``; builds that pass as many are named
    together."""
    if not r.partial:
        return "–"
    by_count: Dict[Tuple[int, int], List[str]] = {}
    for p in r.partial:
        by_count.setdefault((p.passed, p.tried), []).append(p.loaded)
    counts = "; ".join("%d of %d on %s" % (*n, md.release_spans(used, order)) for n, used in by_count.items())
    return "%s (the others most often %s)" % (counts, _cause(r.partial_cause))


def _failing(r: uses_table.Reach, order: Sequence[str]) -> str:
    if not r.failing:
        return "–"
    where = "from %s on" % r.failing_from if r.failing_from is not None else md.release_spans(r.failing, order)
    return "%s (%s)" % (where, _cause(r.failing_cause))


def _untried(r: uses_table.Reach, order: Sequence[str], p: Product) -> str:
    said = []
    if r.untried:
        said.append("%s: %s" % (md.release_spans(r.untried, order), p.meaning["not-applicable"]))
    if r.untrusted:
        where = ", none tried on %s" % md.release_spans(r.unsigned, order) if r.unsigned else ""
        said.append("%s untrusted (no signature, or one that does not match: load --trust)%s"
                    % (d.plural(r.untrusted, "use"), where))  # fmt: skip
    return "; ".join(said) or "–"


def _cause(found: Optional[uses_table.Failure], limit: int = 160) -> str:
    return "no failure recorded" if found is None else say.clip(found.text, limit)


def _shares(uses: ProductUses, drawn: Sequence[charting.Chart]) -> List[d.Block]:
    """Per mode, its heatmap and the squares: made down, used across."""
    p = uses.product
    counts = " / ".join(["past %s" % step for step in p.steps] + ["passed"]) + (" of tried" if p.steps else " / tried")
    said = (
        "Rows: the release that %s the %s; columns: the release that %s it. Each square: %s; where none was tried,"
        " the glyph of why (see the statuses), which is no failure." % (p.made, p.noun, p.used, counts)
    )
    charts = {chart.title: chart for chart in drawn}
    blocks: List[d.Block] = [d.Paragraph(d.phrase(said))]
    for mode in [m for m in MODES if m in set(uses.shares["mode"])]:
        chart = charts.get(chart_title(p, mode))
        rows = uses.shares[uses.shares["mode"] == mode]
        mine: List[d.Block] = [d.Image(d.file(chart.path), chart.title)] if chart is not None else []
        mine.append(shares_table(rows, uses))
        blocks.append(d.Section("%s-%s" % (anchor(p), mode), mode, tuple(mine)))
    return [d.Section(anchor(p) + "-shares", "Share that passes", tuple(blocks))]


def shares_table(rows: pd.DataFrame, uses: ProductUses) -> d.Table:
    """One mode's squares of a product's shares, made down and used across, in the product's orders."""
    p = uses.product
    cells = {(row["saved"], row["loaded"]): row for row in rows.to_dict("records")}
    used = [label for label in uses.used if label in set(rows["loaded"])]
    body = [
        [d.phrase(made)] + [square(cells.get((made, label)), p) for label in used]
        for made in uses.made
        if made in set(rows["saved"])
    ]
    corner = "%s on ↓ / %s on →" % (p.made, p.used)
    return say.table([corner, *used], body, "l" + "c" * len(used), wide=True)


def square(row: Optional[Dict[str, Any]], product: Product) -> d.Phrase:
    """``3/4`` (passed of tried), ``3/3/2 of 3`` for a product with steps (past each, then passed, of tried); where
    none was tried, the glyph of why; the no-record mark where nothing is recorded."""
    if row is None:
        return d.phrase(NO_RECORD)
    why = product_uses.untried(row, product)
    if why is not None:
        # An outcome drawn with another status's glyph, or with none of its own, says its own word.
        status, kind = case_grids.shown(why)
        return d.phrase(d.Mark(status, kind, named=False), None if status == why else " " + why)
    if not product.steps:
        return d.phrase("%d/%d" % (row["passed"], row["total"]))
    return d.phrase("%s of %d" % ("/".join(str(row[c]) for c in (*product.steps, "passed")), row["total"]))


def _regressions(uses: ProductUses, drawn: Sequence[charting.Chart]) -> List[d.Block]:
    """The regressions between using releases, counted once per making release, then each use they affect."""
    p, found, moves = uses.product, uses.regressions, uses.affected
    if found is None or moves is None:
        return []
    said = (
        "A %s regression: a release that does worse with the %ss %s on one release than the release before it (pass"
        " > mismatch > run-error > load-error = crash = timeout). A change of format counts once per release it"
        " breaks, however many %ss that release %s: %s, affecting %s."
        % (p.kind, p.noun, p.made, p.noun, p.made, d.plural(len(found), "%s regression" % p.kind),
           d.plural(int(found["programs"].sum()) if not found.empty else 0, p.noun))
    )  # fmt: skip
    rows = [
        [d.phrase(r["saved"]), d.phrase("%s → %s" % (r["before"], r["after"])), d.phrase(affected(r)),
         d.phrase(break_failure(r, limit=300))]
        for r in found.to_dict("records")
    ]  # fmt: skip
    headers = ["%s on" % p.made, "%s on" % p.used, "%ss affected" % p.noun, "most common failure"]
    blocks: List[d.Block] = [d.Paragraph(d.phrase(said)), say.table(headers, rows)]
    listed = [
        [d.phrase(m["saved"]), say.case(m["case"]), d.phrase(m["mode"]),
         d.phrase("%s → %s" % (m["before"], m["after"])),
         d.phrase(_mark(m["status_before"]), " → ", _mark(m["status_after"])),
         say.error(m.get("error_type"), m.get("error_message"), 200)]
        for m in moves.head(SHOWN_REGRESSIONS).to_dict("records")
    ]  # fmt: skip
    affected_blocks: List[d.Block] = [say.table(["%s on" % p.made, "case", "mode", "%s on" % p.used, "status", "error"],
                                                listed)]  # fmt: skip
    if len(moves) > SHOWN_REGRESSIONS:
        affected_blocks.append(d.Paragraph(d.phrase("… and %d more." % (len(moves) - SHOWN_REGRESSIONS))))
    title = "%ss affected" % p.noun.capitalize()
    blocks.append(d.Section(anchor(p) + "-affected", title, tuple(affected_blocks)))
    return [d.Section(anchor(p) + "-regressions", "Regressions", tuple(blocks))]


def _mark(status: Any) -> d.Mark:
    return d.Mark(*case_grids.shown(status))


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
    text = _cause(uses_table.Failure.of(row), limit)
    sharing, programs = int(row["sharing"]), int(row["programs"])
    return text if sharing == programs else "%s (%d of the %d)" % (text, sharing, programs)


def _cost(uses: ProductUses, drawn: Sequence[charting.Chart]) -> List[d.Block]:
    """Per using build: compiles timed, median and longest compile, median package load and size."""
    number = lambda value, form: form % value if isinstance(value, (int, float)) and value == value else "–"  # noqa
    rows = [
        [d.phrase(str(x)) for x in (r["loaded"], r["compiles"], "%.1f" % r["compile_s_median"],
                                    "%.1f" % r["compile_s_max"], number(r["load_s_median"], "%.2f"),
                                    number(r["package_mb_median"], "%.1f"))]
        for r in uses.cost.to_dict("records")
    ]  # fmt: skip
    headers = ["%s on" % uses.product.used, "compiles", "median s", "longest s", "package load s (median)",
               "package MB (median)"]  # fmt: skip
    table = say.table(headers, rows, "lrrrrr", empty="No compile finished.")
    return [d.Section(anchor(uses.product) + "-cost", "What a compile costs", (table,))]


def _failures(uses: ProductUses, drawn: Sequence[charting.Chart]) -> List[d.Block]:
    """Every failure of the product's uses, the most common first, with the uses it hit."""
    p, groups = uses.product, product_uses.failures(uses.table, uses.product)
    items = []
    for failure, hit in groups[:SHOWN_FAILURES]:
        named = ", ".join("%s (%s) %s → %s" % use for use in hit[:SHOWN_USES])
        named += " … (+%d)" % (len(hit) - SHOWN_USES) if len(hit) > SHOWN_USES else ""
        items.append(d.Item(d.phrase(say.clip(failure.text, 300), " — ", named)))
    if len(groups) > SHOWN_FAILURES:
        more = "… and %d other failures (%s holds every one)" % (len(groups) - SHOWN_FAILURES, p.table)
        items.append(d.Item(d.phrase(more)))
    none = d.Paragraph(d.phrase("None: every %s tried passed." % p.noun))
    return [d.Section(anchor(p) + "-failures", "Failures", (d.Items(tuple(items)),) if items else (none,))]


def _cases(uses: ProductUses, drawn: Sequence[charting.Chart]) -> List[d.Block]:
    """A link to each case's grids, which its page shows (said once, there)."""
    p = uses.product
    cases = sorted(set(uses.table["case"].astype(str)))
    links = d.Items(tuple(d.Item(d.phrase(d.link(c, say.case_page(c, case_grids.anchor(p))))) for c in cases))
    said = "%s on ↓, %s on →, per mode, with the failures under each grid, on each case's page:" % (
        p.made.capitalize(), p.used)  # fmt: skip
    return [d.Section(anchor(p) + "-cases", "Each case's %ss" % p.noun, (d.Paragraph(d.phrase(said)), links))]


def _legend(uses: ProductUses, drawn: Sequence[charting.Chart]) -> List[d.Block]:
    return [d.Section(anchor(uses.product) + "-statuses", "Statuses", (case_grids.legend(uses.product),))]


PARTS: Dict[str, Callable[[ProductUses, Sequence[charting.Chart]], List[d.Block]]] = {
    "epochs": _epochs, "promise": _promise, "reach": _reach, "shares": _shares, "regressions": _regressions,
    "cost": _cost, "failures": _failures, "cases": _cases, "legend": _legend,
}  # fmt: skip


def chart_title(product: Product, mode: str) -> str:
    return "%s that load and match: %s" % (product.many, mode)


def heatmap_charts(uses: ProductUses, out: str) -> List[charting.Chart]:
    """One heatmap per mode of a product's uses: making × using release, coloured by the share that passes; the
    chart of a mode is :func:`chart_title`, its file ``charts/<product name>-<mode>``."""
    p = uses.product
    if uses.shares.empty:
        return []
    charting.prepare()
    drawn = []
    for mode in [m for m in MODES if m in set(uses.shares["mode"])]:
        title = chart_title(p, mode)
        rows = uses.shares[uses.shares["mode"] == mode]
        figure = _heatmap(rows, list(uses.made), list(uses.used), title, p.made + " on", p.used + " on")
        written = charting.save(figure, out, "%s-%s" % (p.name.replace("_", "-"), mode))
        drawn.append(charting.Chart(written[0], title, tuple(written)))
    return drawn


# About how many characters of the default title font one inch of figure holds.
TITLE_CHARS_PER_INCH = 10


@charting.settings()
def _heatmap(grid: pd.DataFrame, saved_order: List[str], loaded_order: List[str], title: str, rows: str,
             columns: str) -> Any:  # fmt: skip
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


# The front page's verdict lines on each product (records.product_uses.verdicts, the model's ``promises``).
VERDICT_CAUSE = 70  # characters of a failure named in a verdict


def verdict(found: Sequence[Verdict]) -> Tuple[d.Item, ...]:
    """The verdicts' lines, each a titled item linking the product's section of the saved-programs page."""
    items = []
    for v in found:
        every = d.link("every pair", d.page(NAME, anchor(v.product)))
        items += [d.Item(d.phrase(said, " (", every, ")"), title=title) for title, said in lines(v)]
    return tuple(items)


def _modes(v: Verdict) -> str:
    """``non-strict mode; strict mode not run``: the modes tried, and those that were not."""
    unrun = [m for m in MODES if m not in v.modes]
    said = "%s mode" % " and ".join(v.modes) if v.modes else "no mode"
    return said + ("; %s mode not run" % " and ".join(unrun) if unrun else "")


def _failed(p: Pair) -> str:
    """``2.6.0 → 2.10.0: 0 of 9 pass (the failure)``: said beside "broken", a bare count would read as the broken
    ones; a release's own uses name it once."""
    cause = say.clip(p.failure, VERDICT_CAUSE)
    pair = p.made if p.made == p.used else "%s → %s" % (p.made, p.used)
    return "%s: %d of %d pass (%s)" % (pair, p.passed, p.tried, cause)


def _by_maker(pairs: Sequence[Pair], order: Sequence[str]) -> str:
    """``2.6.0 → 2.7.1–2.15.0; 2.7.1 → 2.8.0–2.15.0``: the using builds of each making build, as spans; ``each of
    2.6.0–2.14.1 on every newer build up to 2.15.0`` where every making build reached every newer one."""
    used: Dict[str, List[str]] = {}
    for p in pairs:
        used.setdefault(p.made, []).append(p.used)
    every = all(
        made in order and sorted(loaded, key=order.index) == list(order[order.index(made) + 1 :])
        for made, loaded in used.items()
    )
    makers = [made for made in order if made in used]
    if every and len(makers) == len(used) and len(makers) > 1 and makers == list(order[: len(makers)]):
        return "each of %s on every newer build up to %s" % (md.release_spans(makers, order), order[-1])
    return "; ".join("%s → %s" % (made, md.release_spans(loaded, order)) for made, loaded in used.items())


def lines(v: Verdict) -> List[Tuple[str, str]]:
    """A product's verdict lines, (title, text)."""
    p = v.product
    if v.promise is None:
        broken = [pair for pair in v.pairs if not pair.kept]
        said = "%s on %d of %s" % (p.promise, len(v.pairs) - len(broken), d.plural(len(v.pairs), "pair"))
        said += "; not on %s" % "; ".join(_failed(pair) for pair in broken) if broken else ""
        return [("%s (%s)" % (p.many, _modes(v)), said + ".")]
    # A product upstream promises something of: the promise pair by pair, then the exceptions.
    w, found = v.promise, []
    order = store.ordered(label for pair in w.covered for label in (pair.made, pair.used))
    if w.covered or w.own:
        if not w.covered:
            said = "no %s %s on %s or later was %s on a newer release" % (p.noun, p.made, w.promised_from, p.used)
        elif not w.broken:
            tried = "the 1 pair tried" if len(w.covered) == 1 else "all %d pairs tried" % len(w.covered)
            said = "kept on %s (%s): %s" % (tried, p.promise, _by_maker(w.covered, order))
        else:
            said = "broken on %d of the %s tried (%s): %s; kept: %s" % (
                len(w.broken), d.plural(len(w.covered), "pair"), p.promise,
                "; ".join(_failed(pair) for pair in w.broken), _by_maker([x for x in w.covered if x.kept], order),
            )  # fmt: skip
        found.append(("%s, backward promise (%s)" % (p.many, _modes(v)), said + "."))
    if w.own:
        if w.own_failing:
            said = "%d of %d releases do not load every %s they %s themselves: %s." % (
                len(w.own_failing), len(w.own), p.noun, p.made, "; ".join(_failed(pair) for pair in w.own_failing)
            )  # fmt: skip
        else:
            said = "every one of the %d releases loads the %ss it %s." % (len(w.own), p.noun, p.made)
        if w.before:
            said += " %s before %s (not promised), %s on a newer release: kept on %d of %s." % (
                p.made.capitalize(), w.promised_from, p.used, sum(x.kept for x in w.before),
                d.plural(len(w.before), "pair"),
            )  # fmt: skip
        if w.older:
            said += " %s on an older release (not promised): kept on %d of %s." % (
                p.used.capitalize(), sum(x.kept for x in w.older), d.plural(len(w.older), "pair")
            )  # fmt: skip
        found.append(("%s, exceptions" % p.many, said))
    return found
