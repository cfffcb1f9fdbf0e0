"""The release transitions, built once as documents: one page per transition, and the front page's two sections
(what changed in the newest release; every transition counted, with every regression and fix).

A page holds every regression, wrong result (a failing export that now gives wrong numbers), fix, stage change,
graph change (with a link to the graph's diff, the file the case's pages link too), op drift and timing change
found between two releases, and says what was compared: how many cells, how many graphs could not be compared
(hashes of different schemes) and how many cells had enough runs for a timing claim.

Regressions and fixes are listed and counted per cell, one row per case and mode, wherever they are shown: the
front page's counts are the rows of its tables and of the transition pages. Op drift is counted per program (the
exported one, and the same decomposed to core ATen), in two columns.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from matrix.records import graph_diffs, timings, transitions
from matrix.records.transitions import Step
from matrix.report import case_page, diff_files
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import phrases as say

Row = Dict[str, Any]
MAX_OPS = 30
ERROR_LIMIT = 300
# Each kind's section on a transition page: its anchor and title. The stage changes share one section.
SECTIONS = {
    "regression": ("regressions", "Regressions"),
    "wrong-result": ("wrong-results", "Now wrong numbers"),
    "fix": ("fixes", "Fixes"),
    "stage-regression": ("stages", "Save/load and decomposition"),
    "stage-fix": ("stages", "Save/load and decomposition"),
    "graph-change": ("graph-changes", "Graph changes"),
    "op-drift": ("op-drift", "Op drift"),
    "slowdown": ("timings", "Slowdowns and speedups"),
    "speedup": ("timings", "Slowdowns and speedups"),
}
# What the front page, its transition table and the transition chart call the kinds counted as regressions
# (transitions.REGRESSIONS) and fixes (transitions.FIXES), in counts: "64 status regressions".
COUNTED = {
    "regression": "status regressions",
    "wrong-result": "now wrong numbers",
    "stage-regression": "stage regressions",
    "fix": "status fixes",
    "stage-fix": "stage fixes",
}
# What a section means, where its title does not say it all: its first paragraph.
INTROS = {
    "wrong-result": "Exports that used to fail (or crash, or time out) and now give a program whose numbers differ"
    " from eager: a user who got an error now gets wrong numbers without one. Counted with the regressions.",
    "stage-regression": "Cells that pass in both releases while a stage run on the exported program starts or stops"
    " failing; the error is the failing side's.",
    "op-drift": "Operators that appear in or vanish from the exported program, or from it decomposed to core ATen.",
}
OP_PROGRAMS = {"exported": "exported", "decomposed": "decomposed", "export": "exported"}
NOW_WRONG = " (now wrong numbers)"


def name(step: Step) -> str:
    """The page name (document.Page.name) of a step's page."""
    return say.transition_name(step.before, step.after)


def title(step: Step) -> str:
    """A step's title, naming the variants where each release of it has one."""
    variants = {(str(b.get("variant")), str(a.get("variant"))) for b, a in step.pairs}
    named = variants.pop() if len(variants) == 1 else ()  # one variant on each side
    return md.transition_title(step.before, step.after, *named)


def build(step: Step, shelf: Optional[diff_files.Shelf] = None) -> d.Page:
    """The page of one release transition; ``shelf`` keeps the graph diff files it links, for the build to write."""
    several = len({(b.get("variant"), a.get("variant")) for b, a in step.pairs}) > 1
    shelf = diff_files.Shelf() if shelf is None else shelf
    blocks: List[d.Block] = [*_overview(step)]
    blocks += [_status_moves(step, kind, several) for kind in ("regression", "wrong-result", "fix")]
    blocks += [_stage_moves(step, several), _graph_changes(step, several, shelf)]
    blocks += [_op_drift(step, several), _timings(step, several)]
    return d.Page(name(step), title(step), tuple(blocks), up=say.BACK)


def _overview(step: Step) -> List[d.Block]:
    variants = sorted({str(v) for pair in step.pairs for v in (pair[0].get("variant"), pair[1].get("variant"))})
    said = (
        "%d cells compared: the cases and modes with a cell in both releases (variant %s; where a release ran under"
        " several Pythons, the newest)." % (len(step.pairs), ", ".join(variants))
    )
    rows = [(d.phrase(k), d.phrase(str(step.count(k))), d.phrase(transitions.MEANING[k])) for k in transitions.KINDS]
    out: List[d.Block] = [d.Paragraph(d.phrase(said)), say.table(["kind", "count", "meaning"], rows, "lrl")]
    unmatched = step.incomparable
    if unmatched:
        schemes = sorted({"%s → %s" % (_scheme(b), _scheme(a)) for b, a in unmatched})
        out.append(d.Paragraph(d.phrase(
            "%d cells pass in both releases but their graph hashes cannot be compared, as the records do not name"
            " the same hashing scheme (fingerprint version %s): no graph change or op drift is claimed for them."
            % (len(unmatched), ", ".join(schemes)))))  # fmt: skip
    timed = (
        "%d cells exported in both releases; %d of them have at least %d timed runs in each, which a slowdown or"
        " speedup needs." % (len(step.exported), len(step.timed), timings.MIN_RUNS)
    )
    return out + [d.Paragraph(d.phrase(timed))]


def _scheme(row: Row) -> str:
    value = transitions.version_of(row.get("fingerprint_version"))
    return "not recorded" if value is None else str(value)


def _variant(move: Row) -> d.Phrase:
    old, new = move.get("variant_before"), move.get("variant")
    return d.phrase(str(new) if old == new or not isinstance(old, str) else "%s → %s" % (old, new))


def _listed(step: Step, kinds: Sequence[str], several: bool, headers: List[str], cells: Callable[[Row], List[d.Phrase]],
           *above: d.Block) -> d.Section:  # fmt: skip
    """The section of ``kinds`` (the first names it): ``above``, then a table of the step's transitions of those
    kinds: case and mode (and variant where ``several``), then ``cells`` of each under ``headers``."""
    found = step.of(*kinds)
    columns = ["case", "mode"] + (["variant"] if several else []) + headers
    rows = tuple(
        tuple([say.case(m["case"], m.get("with_set")), d.phrase(str(m["mode"]))] + ([_variant(m)] if several else [])
              + cells(m))
        for m in found
    )  # fmt: skip
    return _section(kinds[0], len(found), [*above, d.Table(tuple(d.Column(c) for c in columns), rows)])


def _section(kind: str, count: int, blocks: Sequence[d.Block], said: str = "") -> d.Section:
    """A kind's section: its title with ``count`` (or what ``said``), its intro (:data:`INTROS`), then ``blocks``."""
    anchor, heading = SECTIONS[kind]
    intro = [d.Paragraph(d.phrase(INTROS[kind]))] if kind in INTROS else []
    return d.Section(anchor, "%s (%s)" % (heading, said or count), (*intro, *blocks))


def moved(before: Any, after: Any, kind: Any = None) -> d.Phrase:
    """A cell's status before, then after (``✓ pass → ✗ fail``), and whether it now gives wrong numbers (``kind``)."""
    return d.phrase(say.status(before), " → ", say.status(after), NOW_WRONG if kind == "wrong-result" else None)


def _status_moves(step: Step, kind: str, several: bool) -> d.Section:
    """A kind of status change, with the error of the newer release (a fix's: the older's, gone since)."""
    release = step.before if kind == "fix" else step.after
    which = "the older release, gone since" if kind == "fix" else "the newer release"
    return _listed(step, [kind], several, ["status", "error in %s (%s)" % (release, which)], lambda m: [
        moved(m["status_before"], m["status_after"]),
        say.error(m["error_type"], m["error_message"], ERROR_LIMIT)])  # fmt: skip


def _stage_moves(step: Step, several: bool) -> d.Section:
    return _listed(step, ["stage-regression", "stage-fix"], several, ["stage", "change", "error"], lambda m: [
        d.phrase(transitions.STAGE_LABELS.get(m["stage"], m["stage"])), d.phrase(say.plain(m["detail"])),
        say.error(None, m["error_message"], ERROR_LIMIT)])  # fmt: skip


def _graph_changes(step: Step, several: bool, shelf: diff_files.Shelf) -> d.Section:
    found = step.of("graph-change")
    pairs = {_place(a, b.get("variant")): (b, a) for b, a in step.pairs}
    items = []
    for m in found:
        variant = d.phrase(" · ", _variant(m)) if several else None
        hashes = d.phrase(d.Code(str(m["hash_before"])), " → ", d.Code(str(m["hash_after"])))
        line = d.phrase(say.case(m["case"], m.get("with_set")), " · ", str(m["mode"]), variant, " · ", hashes, " · ")
        # The unified diff of the two cells' graphs, as the case's pages show it; None where a text is missing.
        before, after = pairs.get(_place(m, m["variant_before"]), ({}, {}))
        old, new = before.get("graph_text"), after.get("graph_text")
        lines = graph_diffs.diff_lines(old, new) if isinstance(old, str) and isinstance(new, str) else None
        label = "graph diff"
        if lines is None and isinstance(m.get(graph_diffs.CARRIED), str):
            # The texts are missing: the diff an earlier report kept for this very change.
            lines = str(m[graph_diffs.CARRIED]).splitlines()
            label = "graph diff (kept from %s)" % m.get(graph_diffs.CARRIED_FROM)
        if lines:
            where = shelf.put(str(m["case"]), lines)
            said = d.phrase(d.link(label, d.file(where)), " (%s)" % diff_files.excerpt(lines).counts())
        else:
            said = d.phrase(case_page.SAME_TEXT if lines is not None else "No graph text recorded.")
        items.append(d.Item(d.phrase(line, said)))
    blocks: List[d.Block] = [d.Items(tuple(items))] if items else [d.Paragraph(d.phrase("None."))]
    return _section("graph-change", len(found), blocks)


def _place(row: Row, variant_before: Any) -> Tuple[str, ...]:
    """Where a graph change is: the case, mode, the two variants and the ``--with`` set of a cell pair (``row`` the
    newer cell, or the change itself)."""
    return (str(row["case"]), str(row["mode"]), str(variant_before), str(row.get("variant")), case_page.with_set(row))


def _ops(values: Any) -> d.Phrase:
    names = list(values) if values is not None and not isinstance(values, (str, float)) else []
    shown = d.joined(d.phrase(d.Code(str(v))) for v in names[:MAX_OPS])
    return d.phrase(shown, " … (+%d)" % (len(names) - MAX_OPS) if len(names) > MAX_OPS else None)


def _op_drift(step: Step, several: bool) -> d.Section:
    return _listed(step, ["op-drift"], several, ["program", "added", "removed"], lambda m: [
        d.phrase(OP_PROGRAMS.get(str(m["stage"]), str(m["stage"]))), _ops(m["added"]), _ops(m["removed"])])  # fmt: skip


def rule() -> str:
    """The timing rule, in words."""
    return (
        "A slowdown or speedup is claimed only when each release has at least %d timed runs of the cell, the median"
        " export time changes by at least ×%.1f and %d ms, and a one-sided Mann-Whitney test on the runs gives"
        " p ≤ %s (with %d runs each: the two ranges of times do not overlap)."
        % (timings.MIN_RUNS, timings.SLOW_RATIO, round(timings.SLOW_MIN_S * 1000), timings.MAX_P, timings.MIN_RUNS)
    )


def runs_phrase(fewest: int, most: int) -> str:
    """How many runs the cells had: ``1 run each``, ``3 runs each``, ``1 to 5 runs per cell``."""
    if fewest == most:
        return "%d run%s each" % (most, "" if most == 1 else "s")
    return "%d to %d runs per cell" % (fewest, most)


def not_timed(steps: Sequence[Step]) -> Optional[str]:
    """Why no slowdown or speedup can be claimed over ``steps``, e.g. ``not assessed: 1 run each``;
    None where some pair of cells has the runs a claim needs."""
    if any(step.timed for step in steps):
        return None
    fewest, most = timings.repeats(cell.get("runs") for step in steps for pair in step.pairs for cell in pair)
    if not most:
        return "not assessed: no two releases compared"
    if most < timings.MIN_RUNS:
        return "not assessed: %s" % runs_phrase(fewest, most)
    return "not assessed: no cell exported with %d timed runs in both releases" % timings.MIN_RUNS


def _timings(step: Step, several: bool) -> d.Section:
    missing, said = not_timed([step]), d.Paragraph(d.phrase(rule()))
    if missing is not None:
        return _section("slowdown", 0, [said], missing)
    return _listed(step, ["slowdown", "speedup"], several, ["kind", "evidence"],
                   lambda m: [d.phrase(str(m["kind"])), d.phrase(m["detail"])], said)  # fmt: skip


# --- the front page's sections -------------------------------------------------------------------------------------


def change(m: Row) -> d.Phrase:
    """What changed in a cell: its statuses (and whether it now gives wrong numbers), or the stage that started or
    stopped failing."""
    if str(m["kind"]).startswith("stage-"):
        return d.phrase(say.status(m.get("status_after")), ", ", say.plain(m.get("detail")))
    return moved(m.get("status_before"), m.get("status_after"), m["kind"])


CHANGE_LIMIT = 200


def changes_table(found: Sequence[Row]) -> d.Table:
    """One row per regression (case and mode), with its transition, kind, change and the newer release's error."""
    columns = ("transition", "case", "mode", "kind", "change", "error in the newer release")
    rows = tuple(
        (
            d.phrase(say.transition(m, SECTIONS[str(m["kind"])][0])),
            say.case(m["case"], m.get("with_set")),
            d.phrase(str(m["mode"])),
            d.phrase(str(m["kind"])),
            change(m),
            say.error(m.get("error_type"), say.plain(m.get("error_message")).split("\n", 1)[0], CHANGE_LIMIT),
        )
        for m in found
    )
    return d.Table(tuple(d.Column(c) for c in columns), rows, wide=True)


def regressions(steps: Sequence[Step]) -> List[Row]:
    """Every regression of ``steps`` (transitions.REGRESSIONS), one per case and mode, step by step."""
    return [m for step in steps for m in step.of(*transitions.REGRESSIONS)]


def fixes(steps: Sequence[Step]) -> List[Row]:
    return [m for step in steps for m in step.of(*transitions.FIXES)]


def newest_section(steps: Sequence[Step], newest_builds: Sequence[str]) -> d.Section:
    """What changed in the newest release: its regressions, each a row per case and mode, and the number of its fixes,
    linking the transition page that lists them (the front page lists what a reader acts on)."""
    into = [s for s in steps if s.after in newest_builds]
    heading = "What changed in %s" % (", ".join(newest_builds) or "the newest release")
    if not into:
        said = "Nothing to compare it with: no older release ran the same cases in the same variant."
        return d.Section("newest", heading, (d.Paragraph(d.phrase(said)),))
    regressed, fixed = regressions(into), fixes(into)
    last = into[-1]
    lead = d.phrase(
        "Compared with %s: " % ", ".join(dict.fromkeys(s.before for s in into)),
        d.link(d.phrase(d.Count(len(regressed), "cell"), " regressed"), d.page(name(last), "regressions")),
        ", ",
        d.link(d.phrase(d.Count(len(fixed), "cell"), " fixed"), d.page(name(last), "fixes")),
        " (one per case and mode).",
    )
    # Where none regressed, the lead says so: an empty table would only repeat it.
    table = (d.Section("newest-regressed", "Regressed", (changes_table(regressed),)),) if regressed else ()
    return d.Section("newest", heading, (d.Paragraph(lead), *table))


def _count(step: Step, kind: str, program: str = "") -> d.Phrase:
    """A step's transitions of ``kind`` ("" for none), linking the page's section that lists them; of the op drifts,
    those of ``program``."""
    count = sum(1 for m in step.of(kind) if not program or m.get("stage") == program)
    return d.phrase(d.link(str(count), d.page(name(step), SECTIONS[kind][0]))) if count else d.phrase()


def steps_table(steps: Sequence[Step]) -> d.Table:
    """Per transition: the cells compared and the changes of each kind, each count linking the page's section."""
    kinds = [(COUNTED[k], k, "") for k in transitions.REGRESSIONS + transitions.FIXES]
    kinds += [("graph changes", "graph-change", "")]
    kinds += [("op drift: %s" % program, "op-drift", program) for program in ("exported", "decomposed")]
    if not_timed(steps) is None:  # some cell has the runs a timing claim needs
        kinds += [("slower", "slowdown", ""), ("faster", "speedup", "")]
    rows = tuple(
        (d.phrase(d.link(title(s), d.page(name(s)))), d.phrase(str(len(s.pairs))))
        + tuple(
            _count(s, kind, program) if s.timed or kind not in ("slowdown", "speedup") else d.phrase("–")
            for _, kind, program in kinds
        )
        for s in steps
    )
    columns = (d.Column("transition"), d.Column("cells compared", "r"), *(d.Column(h, "r") for h, _, _ in kinds))
    return d.Table(columns, rows, wide=True)


def changes_section(steps: Sequence[Step], charts: Sequence[d.Image] = ()) -> d.Section:
    """Every release transition counted, each linking its page, then every regression, a row per case and mode, and
    the number of fixes (each is on its transition's page); ``charts``: the images drawn of them. The site filters the
    regressions' table (the widget ``change-filters``)."""
    if not steps:
        return d.Section("changes", "Changes between releases", (d.Paragraph(d.phrase("No two releases compared.")),))
    untimed = not_timed(steps)
    timing = (
        "Slowdowns and speedups %s. " % untimed
        if untimed is not None
        else "Slower and faster: – where no cell has the runs a timing claim needs. "
    )
    regressed, fixed = regressions(steps), fixes(steps)
    # Two paragraphs: what is counted, then how graphs, op drift and timings are judged (one would run too long).
    worse, better = (", ".join(COUNTED[k] for k in kinds) for kinds in (transitions.REGRESSIONS, transitions.FIXES))
    intro = (
        "Each release compared with the one before it, case by case and mode by mode (%d transitions): regressions"
        " are cells that got worse (%s), fixes cells that got better (%s). Each transition's page lists every change"
        " with its error, graph diff or timing evidence." % (len(steps), worse, better)
    )
    judged = (
        "Graphs are compared only when both hashes come from the same hashing scheme. Op drift is counted per"
        " program: the exported one, and the same decomposed to core ATen. %s%s" % (timing, rule())
    )
    # The fixes are counted, each on its transition's page: the front page lists what a reader acts on.
    every_fix = d.Paragraph(d.phrase("Each on its transition's page: the table above links every count."))
    return d.Section("changes", "Changes between releases", (
        d.Paragraph(d.phrase(intro)), d.Paragraph(d.phrase(judged)), steps_table(steps), *charts,
        d.Widget("change-filters"),
        d.Section("every-regression", "Regressions (%s)" % d.Count(len(regressed), "cell").words,
                  (changes_table(regressed),)),
        d.Section("every-fix", "Fixes (%s)" % d.Count(len(fixed), "cell").words, (every_fix,)),
    ))  # fmt: skip


def sections(
    steps: Sequence[Step], newest_builds: Sequence[str], charts: Sequence[d.Image] = ()
) -> Tuple[d.Section, d.Section]:
    """The front page's two sections on transitions, built once for both forms: what changed in the newest release
    (``newest_builds``), and every transition with every regression and fix (``charts`` drawn of them)."""
    return newest_section(steps, newest_builds), changes_section(steps, charts)
