"""One page per release transition: everything that changed between two consecutive releases.

A page holds every regression, wrong result (a failing export that now gives wrong numbers),
fix, stage change, graph change (with a link to the graph's diff, the file the case's pages link too),
op drift and timing change found
between the two releases, and says what was compared:
how many cells, how many graphs could not be compared (hashes of different schemes) and
how many cells had enough runs for a timing claim. The front page links each page and
counts what it holds.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from matrix.records import graph_diffs, timings, transitions
from matrix.records.transitions import Step
from matrix.report import case_page, diff_files
from matrix.report import markdown as md

Row = Dict[str, Any]
MAX_OPS = 30
TITLES = {
    "regression": "Regressions",
    "wrong-result": "Now wrong numbers",
    "fix": "Fixes",
    "stage-regression": "Stage regressions",
    "stage-fix": "Stage fixes",
    "graph-change": "Graph changes",
    "op-drift": "Op drift",
    "slowdown": "Slowdowns",
    "speedup": "Speedups",
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
# What a section of status changes means, where its title does not say it all.
INTROS = {
    "wrong-result": "Exports that used to fail (or crash, or time out) and now give a program whose numbers differ"
    " from eager: a user who got an error now gets wrong numbers without one. Counted with the regressions.\n\n",
}
OP_PROGRAMS = {"exported": "exported", "decomposed": "decomposed", "export": "exported"}


def page(step: Step) -> str:
    """The file name of a step's page."""
    return md.transition_page(step.before, step.after)


def title(step: Step) -> str:
    """A step's title, naming the variants where each release of it has one."""
    before = {str(b.get("variant")) for b, _ in step.pairs}
    after = {str(a.get("variant")) for _, a in step.pairs}
    if len(before) == len(after) == 1:
        return md.transition_title(step.before, step.after, before.pop(), after.pop())
    return md.transition_title(step.before, step.after)


def render(step: Step, shelf: Optional[diff_files.Shelf] = None) -> str:
    """The page of one release transition; ``shelf`` keeps the graph diff files it links, for the build to write."""
    several = len({(b.get("variant"), a.get("variant")) for b, a in step.pairs}) > 1
    parts = ["# %s\n" % md.text(title(step)), "[← back to the matrix](index.md)\n", _overview(step)]
    parts.append(_status_moves(step, "regression", step.after, "the newer release", several))
    parts.append(_status_moves(step, "wrong-result", step.after, "the newer release", several))
    parts.append(_status_moves(step, "fix", step.before, "the older release, gone since", several))
    parts.append(_stage_moves(step, several))
    parts.append(_graph_changes(step, several, diff_files.Shelf() if shelf is None else shelf))
    parts.append(_op_drift(step, several))
    parts.append(_timings(step, several))
    return "\n".join(parts).rstrip("\n") + "\n"


def _overview(step: Step) -> str:
    variants = sorted({str(v) for pair in step.pairs for v in (pair[0].get("variant"), pair[1].get("variant"))})
    out = [
        "%d cells compared: the cases and modes with a cell in both releases (variant %s; where a release ran"
        " under several Pythons, the newest)." % (len(step.pairs), md.text(", ".join(variants))),
        "",
        md.table(
            ["kind", "count", "meaning"],
            [[md.text(kind), str(step.count(kind)), md.text(transitions.MEANING[kind])] for kind in transitions.KINDS],
            ["l", "r", "l"],
        ),
    ]
    unmatched = step.incomparable
    if unmatched:
        schemes = sorted({"%s → %s" % (_scheme(b), _scheme(a)) for b, a in unmatched})
        out.append(
            "%d cells pass in both releases but their graph hashes cannot be compared, as the records do not name"
            " the same hashing scheme (fingerprint version %s): no graph change or op drift is claimed for them.\n"
            % (len(unmatched), md.text(", ".join(schemes)))
        )
    out.append(
        "%d cells exported in both releases; %d of them have at least %d timed runs in each, which a slowdown or"
        " speedup needs.\n" % (len(step.exported), len(step.timed), timings.MIN_RUNS)
    )
    return "\n".join(out)


def _scheme(row: Row) -> str:
    value = transitions.version_of(row.get("fingerprint_version"))
    return "not recorded" if value is None else str(value)


def _variant_cell(move: Row) -> List[str]:
    old, new = move.get("variant_before"), move.get("variant")
    return [md.text(new if old == new or not isinstance(old, str) else "%s → %s" % (old, new))]


def error(kind: Any, message: Any, limit: int = 300) -> str:
    """``KeyError: the message`` (Markdown), the message cut to ``limit``; either part may be missing."""
    parts = [md.code(kind) if isinstance(kind, str) else ""]
    parts.append(md.text(message, limit) if isinstance(message, str) else "")
    return ": ".join(p for p in parts if p)


def _table(found: List[Row], several: bool, headers: List[str], cells: Callable[[Row], List[str]]) -> str:
    """A table of transitions: case and mode (and variant where ``several``), then ``cells`` of each under
    ``headers`` (escaped)."""
    rows = [
        [md.case_with(m["case"], m.get("with_set")), md.text(m["mode"])]
        + (_variant_cell(m) if several else [])
        + cells(m)
        for m in found
    ]
    return md.table(["case", "mode"] + (["variant"] if several else []) + headers, rows)


def _status_moves(step: Step, kind: str, release: str, which: str, several: bool) -> str:
    found = step.of(kind)
    table = _table(
        found,
        several,
        ["status", md.text("error in %s (%s)" % (release, which))],
        lambda m: [
            "%s → %s" % (md.status(m["status_before"]), md.status(m["status_after"])),
            error(m["error_type"], m["error_message"]),
        ],
    )
    return "## %s (%d)\n\n%s%s" % (TITLES[kind], len(found), INTROS.get(kind, ""), table)


def _stage_moves(step: Step, several: bool) -> str:
    found = step.of("stage-regression", "stage-fix")
    table = _table(
        found,
        several,
        ["stage", "change", "error"],
        lambda m: [
            md.text(transitions.STAGE_LABELS.get(m["stage"], m["stage"])),
            md.text(m["detail"]),
            error(None, m["error_message"]),
        ],
    )
    intro = (
        "Cells that pass in both releases while a stage run on the exported program starts or stops failing;"
        " the error is the failing side's.\n\n"
    )
    return "## Save/load and decomposition (%d)\n\n%s%s" % (len(found), intro, table)


def _graph_changes(step: Step, several: bool, shelf: diff_files.Shelf) -> str:
    found = step.of("graph-change")
    texts: Dict[Tuple[str, str, str, str, str], Tuple[Row, Row]] = {
        (str(a["case"]), str(a["mode"]), str(b.get("variant")), str(a.get("variant")), case_page.with_set(a)): (b, a)
        for b, a in step.pairs
    }
    out = ["## Graph changes (%d)\n" % len(found)]
    if not found:
        out.append("_None._\n")
    for m in found:
        line = "%s · %s" % (md.case_with(m["case"], m.get("with_set")), md.text(m["mode"]))
        if several:
            line += " · " + _variant_cell(m)[0]
        line += " · %s → %s" % (md.code(m["hash_before"]), md.code(m["hash_after"]))
        pair = texts.get(
            (str(m["case"]), str(m["mode"]), str(m["variant_before"]), str(m["variant"]), case_page.with_set(m))
        )
        lines = _diff(pair) if pair is not None else None
        label = "graph diff"
        if lines is None and isinstance(m.get(graph_diffs.CARRIED), str):
            # The texts are missing: the diff an earlier report kept for this very change.
            lines = str(m[graph_diffs.CARRIED]).splitlines()
            label = "graph diff (kept from %s)" % m.get(graph_diffs.CARRIED_FROM)
        if lines:
            shelf.put(str(m["case"]), lines)
            link = md.link(label, diff_files.link(str(m["case"]), lines, page(step)))
            out.append("%s · %s (%s)\n" % (line, link, diff_files.excerpt(lines).counts()))
        elif lines is not None:
            out.append("%s · _%s_\n" % (line, case_page.SAME_TEXT))
        else:
            out.append("%s · _No graph text recorded._\n" % line)
    return "\n".join(out)


def _diff(pair: Tuple[Row, Row]) -> Optional[List[str]]:
    """The unified diff of the two cells' graphs, as the case's pages show it; None where a text is missing."""
    before, after = pair
    old, new = before.get("graph_text"), after.get("graph_text")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    return graph_diffs.diff_lines(old, new)


def _ops(values: Any) -> str:
    names = list(values) if values is not None and not isinstance(values, (str, float)) else []
    shown = ", ".join(md.code(v) for v in names[:MAX_OPS])
    return shown + (" … (+%d)" % (len(names) - MAX_OPS) if len(names) > MAX_OPS else "")


def _op_drift(step: Step, several: bool) -> str:
    found = step.of("op-drift")
    table = _table(
        found,
        several,
        ["program", "added", "removed"],
        lambda m: [md.text(OP_PROGRAMS.get(str(m["stage"]), m["stage"])), _ops(m["added"]), _ops(m["removed"])],
    )
    intro = "Operators that appear in or vanish from the exported program, or from it decomposed to core ATen.\n\n"
    return "## Op drift (%d)\n\n%s%s" % (len(found), intro, table)


def rule() -> str:
    """The timing rule, in words."""
    return (
        "A slowdown or speedup is claimed only when each release has at least %d timed runs of the cell, the median"
        " export time changes by at least ×%.1f and %d ms, and a one-sided Mann-Whitney test on the runs gives"
        " p ≤ %s (with %d runs each: the two ranges of times do not overlap)."
        % (
            timings.MIN_RUNS,
            timings.SLOW_RATIO,
            round(timings.SLOW_MIN_S * 1000),
            timings.MAX_P,
            timings.MIN_RUNS,
        )
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


def _timings(step: Step, several: bool) -> str:
    found = step.of("slowdown", "speedup")
    missing = not_timed([step])
    if missing is not None:
        return "## Slowdowns and speedups (%s)\n\n%s\n" % (md.text(missing), rule())
    table = _table(found, several, ["kind", "evidence"], lambda m: [md.text(m["kind"]), md.text(m["detail"])])
    return "## Slowdowns and speedups (%d)\n\n%s\n\n%s" % (len(found), rule(), table)
