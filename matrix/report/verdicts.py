"""The front page's answers, in words: the verdicts it opens with, the saved-program epochs, the sample's confounds.

The judging is :mod:`matrix.records.verdicts`, :mod:`matrix.records.epochs` and
:mod:`matrix.records.confounds`; this module only words what they found. Every verdict is one
line with a link to its evidence (a case page, a transition page, ``artifacts.md``, a section of
the front page), and no paragraph runs much past :data:`LONGEST` characters: the detail lives on
the linked pages.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

from matrix.contract.schema import MODES, STAGES
from matrix.envs import releases as release_list
from matrix.records import confounds
from matrix.records import figures as headline
from matrix.records import verdicts as judged
from matrix.records.epochs import Epoch
from matrix.records.open_regressions import OpenRegression
from matrix.records.verdicts import Verdicts
from matrix.report import markdown as md
from matrix.report import pages
from matrix.report.artifacts import PAGE as ARTIFACTS_PAGE
from matrix.report.artifacts import failure
from matrix.report.forms import MARKDOWN, Form

# About the longest line of prose the front page holds.
LONGEST = 400
# Anchors of the front page's sections that verdicts point to.
SAVED_PROGRAMS = "#saved-programs-across-releases"
DOCUMENTED = "#documented-to-work"
BASELINE = "#since-the-previous-report"
TRANSITIONS = "#release-transitions"
# Names shown in one table cell or line before the rest are counted.
SHOWN_OPEN = 8
SHOWN_EXCEPTIONS = 3
SHOWN_CHANGES = 4
# The longest error quoted in the epochs table.
CAUSE_LIMIT = 120
STAGE_LABELS = dict(STAGES)
BACKWARD = {"all": "yes", "some": "partly", "none": "no", "untried": "–"}


def known_releases() -> List[str]:
    """The releases of the matrix, which the verdicts need to tell which minor series were not run."""
    return [release.version for release in release_list.default_matrix().releases]


def render(
    v: Verdicts,
    incomplete: str = "",
    builds: str = "",
    candidates: Sequence[str] = (),
    known: Sequence[str] = (),
    more: Sequence[str] = (),
) -> str:
    """The opening section: one line per answer, then the cells documented to work per release.

    ``incomplete`` and ``builds`` are the lines on incomplete builds and on builds of one release compared
    (:mod:`matrix.report.builds_page`), "" for none; ``candidates`` the lines on nightlies and release
    candidates (:mod:`matrix.report.candidate_page`), first: what a release manager reads before a release;
    ``known`` the lines on known upstream issues (:func:`matrix.report.known_issues.markdown_lines`).
    ``more``: lines of other verdicts (AOTInductor's, the upgrade's), after what broke in the newest release.
    """
    lines = [
        "## Verdicts\n",
        *candidates,
        _open_regressions(v),
        _in_newest(v),
        incomplete,
        *more,
        _unexpected(v),
        _unclaimed(v),
        _best(v),
        _epochs_line(v),
        *known,
        _since(v),
        _sample(v),
        _build_changes(v),
        builds,
    ]
    text = "\n".join(line for line in lines if line) + "\n"
    return text + "\n" + documented(v)


def _join(values: Iterable[str]) -> str:
    return ", ".join(values)


def _open_regressions(v: Verdicts) -> str:
    r = v.regressions
    newest = md.text(_join(r.newest)) or "the newest release"
    if not r.found:
        return "- **Still broken on %s**: no regression was found between releases ([transitions](%s))." % (
            newest,
            TRANSITIONS,
        )
    found = "1 regression" if r.found == 1 else "the %d regressions" % r.found
    head = "- **Still broken on %s**: %d of %s found between releases" % (newest, r.open_count, found)
    if r.open_cells:
        head += ", in %s" % md.plural(r.open_cells, "cell")
    tail = ["%d fixed since" % r.fixed] if r.fixed else []
    if r.unknown:
        tail.append("%d not run or not applicable on %s" % (r.unknown, newest))
    if not r.open:
        return "%s ([transitions](%s)); %s." % (head, TRANSITIONS, "; ".join(tail) or "none open")
    out = ["%s%s:" % (head, " (%s)" % "; ".join(tail) if tail else "")]
    for regression in r.open[:SHOWN_OPEN]:
        out.append("  - " + _open_line(regression))
    if len(r.open) > SHOWN_OPEN:
        out.append("  - … and %d more, each on its [transition page](%s)." % (len(r.open) - SHOWN_OPEN, TRANSITIONS))
    return "\n".join(out)


def _open_line(o: OpenRegression) -> str:
    step = md.link(
        md.transition_title(o.before, o.after, o.variant_before, o.variant), md.transition_page(o.before, o.after)
    )
    modes = md.text(_join(o.modes))
    build = " (the build changed there too)" if o.across_build_change else ""
    if o.kind == "stage-regression":
        stage = STAGE_LABELS.get(o.stage or "", o.stage or "a stage")
        return "%s %s: %s stopped working at %s%s; %s." % (
            md.case_with(o.case, o.with_set),
            modes,
            stage,
            step,
            build,
            stage_now(o, stage),
        )
    return "%s %s: %s → %s%s at %s%s; now %s." % (
        md.case_with(o.case, o.with_set),
        modes,
        md.status(o.status_before),
        md.status(o.status_after),
        " (now wrong numbers)" if o.kind == "wrong-result" else "",
        step,
        build,
        _join(md.status(s) for s in dict.fromkeys(o.now)),
    )


def stage_now(o: OpenRegression, stage: str, form: Form = MARKDOWN) -> str:
    """A stage regression on the newest release: the stage's outcome where the cell passes, else the cell's status;
    ``stage``: the stage's name as ``form`` shows it."""
    outcomes = o.stage_now or ("",) * len(o.now)
    if all(s == "pass" and out for s, out in zip(o.now, outcomes)):
        return "%s now %s" % (stage, _join(form.text(out) for out in dict.fromkeys(outcomes)))
    said = []
    for status, out in zip(o.now, outcomes):
        if status == "pass" and out:
            said.append("%s %s" % (stage, form.text(out)))
        else:
            said.append(form.status(status) + (" (%s %s)" % (stage, form.text(out)) if out else ""))
    return "now %s" % _join(dict.fromkeys(said))


def _in_newest(v: Verdicts) -> str:
    """What regressed in the newest release: the open regressions that broke there."""
    r = v.regressions
    if not r.found:
        return ""
    newest = md.text(_join(r.newest)) or "the newest release"
    if not r.in_newest:
        return "- **Regressed in %s**: nothing broke there ([transitions](%s))." % (newest, TRANSITIONS)
    cells = len({(o.case, o.variant, o.with_set, m) for o in r.in_newest for m in o.modes})
    out = ["- **Regressed in %s**: %s broke there:" % (newest, md.plural(cells, "cell"))]
    out += ["  - " + _open_line(o) for o in r.in_newest[:SHOWN_OPEN]]
    if len(r.in_newest) > SHOWN_OPEN:
        out.append("  - … and %d more ([transitions](%s))." % (len(r.in_newest) - SHOWN_OPEN, TRANSITIONS))
    return "\n".join(out)


def _unexpected(v: Verdicts) -> str:
    if not v.expected:
        return "- **Unexpected failures**: no case in these records carries a documented claim (`expected`)."
    return _per_build(
        v,
        "unexpected",
        "- **Unexpected failures** (failing cells of cases documented to work / all failing cells; [claims](%s)): "
        % pages.CLAIMS,
    )


def _unclaimed(v: Verdicts) -> str:
    """The failing cells of cases that claim nothing: a failure there can be neither expected nor unexpected."""
    if not v.expected:
        return ""
    if not any(e.unclaimed for e in v.expected):
        return "- **Failing with no claim**: none: every failing cell is of a case that claims whether it works."
    head = (
        "- **Failing with no claim** (failing cells of cases whose documentation claims nothing there, so that no"
        " failure of theirs counts as unexpected / all failing cells; [claims](%s)): " % pages.CLAIMS
    )
    return _per_build(v, "unclaimed", head)


def _per_build(v: Verdicts, field: str, head: str) -> str:
    """``head``, then per build its cells counted in ``field`` over its failing cells; where that runs past
    :data:`LONGEST`, the newest build's and the range."""
    counts = [(name, sum(getattr(e, field) for e in mine), sum(e.failing for e in mine)) for name, mine in _by_env(v)]
    line = head + " · ".join("%s %d/%d" % (md.text(name), bad, failing) for name, bad, failing in counts) + "."
    if len(line) <= LONGEST:
        return line
    name, bad, failing = counts[-1]
    return head + "%d/%d on %s, %d to %d per build ([per build](%s))." % (
        bad,
        failing,
        md.text(name),
        min(c[1] for c in counts),
        max(c[1] for c in counts),
        DOCUMENTED,
    )


def _by_env(v: Verdicts) -> List[Tuple[str, List[judged.Expected]]]:
    """The rows of ``v.expected`` by environment, in their order."""
    found: Dict[str, List[judged.Expected]] = {}
    for e in v.expected:
        found.setdefault(e.environment, []).append(e)
    return list(found.items())


def _names(values: Sequence[str], shown: int = 3) -> str:
    """Names in their order, after ``shown`` of them a count of the rest."""
    text = _join(md.text(v) for v in values[:shown])
    return text + (" and %d more" % (len(values) - shown) if len(values) > shown else "")


def _best(v: Verdicts) -> str:
    if not v.best:
        return ""
    # The newest first: of releases that pass as much, the newest is the one to pick.
    parts = ["%s: %s (%d of %d)" % (b.mode, _names(b.environments[::-1]), b.passed, b.cases) for b in v.best]
    return "- **Passes the most of what is documented to work**: %s ([per build](%s))." % (
        "; ".join(parts),
        DOCUMENTED,
    )


def _epochs_line(v: Verdicts) -> str:
    if not v.epochs:
        return ""
    spans = " · ".join(md.text(span(e)) for e in v.epochs)
    newest = v.epochs[-1]
    line = "- **Saved programs** load across %s: %s ([epochs](%s), [every pair](%s))." % (
        md.plural(len(v.epochs), "epoch"),
        spans,
        SAVED_PROGRAMS,
        ARTIFACTS_PAGE,
    )
    if newest.older_tried:
        line = line[:-1] + "; %d of %d programs saved before %s load on %s." % (
            newest.older_passed,
            newest.older_tried,
            md.text(newest.first),
            md.text(newest.last),
        )
    return line


def _since(v: Verdicts) -> str:
    b = v.baseline
    if b is None:
        return "- **Since the previous report**: no baseline given (`report --baseline DIR`)."
    return (
        "- **Since %s**: %s changed status (%s, %s), %d new and %d vanished cells; %d new and %d"
        " gone regressions or fixes between releases ([since the previous report](%s))."
        % (
            md.code(b.name),
            md.plural(b.changed, "cell"),
            md.plural(b.regressions, "regression"),
            md.plural(b.fixes, "fix", "fixes"),
            b.new_cells,
            b.vanished_cells,
            b.new_transitions,
            b.gone_transitions,
            BASELINE,
        )
    ) + _figures_moved(b)


def _figures_moved(b: judged.SinceBaseline) -> str:
    """The headline figures that moved since the baseline, on a line of their own; what moved each is in the
    baseline's section."""
    if b.figures is None or not b.figures.moved:
        return ""
    lead = "with no cell changed" if b.figures.same_cells else "since then"
    return "\n- **Headline figures moved** %s: %s ([what moved each](#since-the-previous-report))." % (
        lead,
        md.text(headline.short(b.figures)),
    )


def _sample(v: Verdicts) -> str:
    s = v.sample
    if not s.minors:
        return ""
    if not s.not_run:
        return "- **Sample**: every minor release from %s to %s was run." % (s.minors[0], s.minors[-1])
    return (
        "- **Sample**: %d of %d minor releases from %s to %s were run (not run: %s): consecutive means"
        " consecutive in this sample ([transitions](%s))."
        % (len(s.run), len(s.minors), s.minors[0], s.minors[-1], md.text(_join(s.not_run)), TRANSITIONS)
    )


def _build_changes(v: Verdicts) -> str:
    changes = v.sample.build_changes
    if not changes:
        return ""
    shown = [
        "%s %s → %s (%s, %s)"
        % (
            md.link(md.transition_title(c.before, c.after), md.transition_page(c.before, c.after)),
            md.text(c.build_before),
            md.text(c.build_after),
            md.plural(c.regressions, "regression"),
            md.plural(c.fixes, "fix", "fixes"),
        )
        for c in changes[:SHOWN_CHANGES]
    ]
    more = " and %d more" % (len(changes) - SHOWN_CHANGES) if len(changes) > SHOWN_CHANGES else ""
    return "- **Build changes**: %s%s: a change across them mixes release and build." % ("; ".join(shown), more)


def documented(v: Verdicts) -> str:
    """The cells of cases documented to work, per release and mode, over a denominator stated once."""
    if not v.expected:
        return ""
    counts: Dict[str, List[int]] = {}
    for e in v.expected:
        counts.setdefault(e.mode, []).append(e.cases)
    modes = [m for m in MODES if m in counts]
    counted = _join(
        "%d in %s mode" % (min(counts[m]), m)
        if min(counts[m]) == max(counts[m])
        else "%d to %d in %s mode, per build" % (min(counts[m]), max(counts[m]), m)
        for m in modes
    )
    intro = (
        "Cases documented to work (their claim is `supported`, or `strict-only` / `non-strict-only` for that mode;"
        " for an ExportDB case, the claim of that release's own ExportDB where it names one, else the case's"
        " `expected`): %s. Each release is counted against all of them: a case it did not run, or could not (not"
        " applicable), counts as not passing. *Ran*: those it ran." % counted
    )
    rows = []
    for name, found in _by_env(v):
        mine = {e.mode: e for e in found}
        rows.append(
            [md.text(name)]
            + [_passed(mine.get(m)) for m in modes]
            + [" / ".join(str(mine[m].ran) if m in mine else "–" for m in modes)]
            + [str(sum(e.unexpected for e in found)), str(sum(e.unclaimed for e in found))]
            + [str(sum(e.failing for e in found))]
        )
    headers = ["release"] + ["%s: pass" % m for m in modes] + ["ran (%s)" % " / ".join(modes)]
    headers += ["unexpected failures", "failing with no claim", "all failing cells"]
    table = md.table(headers, rows, ["l"] + ["r"] * (len(modes) + 4))
    unrun = [m for m in MODES if m not in v.modes]
    if unrun:
        intro += " Not run: %s mode, so it is not counted here." % " and ".join(unrun)
    return "### Documented to work\n\n%s\n\n%s" % (intro, table)


def _passed(e: Optional[judged.Expected]) -> str:
    if e is None:
        return "–"
    return "%d of %d (%s)" % (e.passed, e.cases, md.percent(e.rate))


def epochs_section(v: Optional[Verdicts], cases: Sequence[str] = ()) -> str:
    """The saved-program epochs: a sentence on the rule and the table, for the front page's saved-programs section."""
    if v is None or not v.epochs:
        return ""
    linked = set(str(c) for c in cases)
    intro = (
        "An epoch is a range of releases where a program saved on any of them loads and matches on that release"
        " and every newer one of the range (for each pair, at least half of the programs; the cases that fail"
        " are the exceptions). Older releases do not always read newer programs."
    )
    rows = []
    for e in v.epochs:
        rows.append(
            [
                md.text(span(e)),
                str(e.programs) + (" (%d more not tried)" % e.untried if e.untried else ""),
                "%d of %d" % (e.passed, e.tried),
                BACKWARD.get(e.backward, e.backward),
                _exceptions(e, linked),
                _cut(e),
            ]
        )
    headers = ["epoch", "programs loaded", "loads that match", "older read newer", "exceptions", "older programs fail"]
    return intro + "\n\n" + md.table(headers, rows, ["l", "r", "r", "l", "l", "l"])


def span(e: Epoch) -> str:
    return e.first if len(e.releases) == 1 else "%s–%s" % (e.first, e.last)


def _exceptions(e: Epoch, linked: Set[str]) -> str:
    if not e.exceptions:
        return "none"
    cases = list(dict.fromkeys(found.case for found in e.exceptions))
    named = []
    for case in cases[:SHOWN_EXCEPTIONS]:
        modes = [x.mode for x in e.exceptions if x.case == case]
        label = md.case_link(case) if case in linked else md.text(case)
        named.append("%s (%s)" % (label, md.text(_join(modes))))
    more = " … (+%d)" % (len(cases) - SHOWN_EXCEPTIONS) if len(cases) > SHOWN_EXCEPTIONS else ""
    return "%s: %s%s" % (md.plural(len(cases), "case"), ", ".join(named), more)


def _cut(e: Epoch) -> str:
    if e.cut is None or e.cut_from is None:
        return "–"
    return "%s → %s: %s" % (md.text(e.cut_from), md.text(e.first), md.text(failure(e.cut), CAUSE_LIMIT))


def strict_note(v: Optional[Verdicts]) -> str:
    """Where the default of ``export(strict=...)`` changes in the sample, and what that means for the modes."""
    if v is None:
        return ""
    flips = v.sample.strict_flips
    if not flips:
        return ""
    known = [d for d in v.sample.strict_defaults if d.mode is not None]
    without = [d.release for d in known if not d.keyword]
    parts = []
    unrun = set(v.sample.not_run)
    for before, after in flips:
        between = [m for m in v.sample.minors if m in unrun and _minor_between(m, before.release, after.release)]
        parts.append(
            "`export()` defaults to %s up to %s and to %s from %s%s"
            % (
                md.text(before.mode),
                md.text(before.release),
                md.text(after.mode),
                md.text(after.release),
                " (%s, between them, not run)" % md.text(_and(between)) if between else "",
            )
        )
    note = "; ".join(parts) + "."
    if without:
        note += " %s: no `strict` keyword, always strict." % md.text(_join(without))
    return (
        note + " Each cell passes `strict=` explicitly, so a column means the same mode on every release; a caller"
        " who leaves it out gets the default's column."
    )


def _and(values: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return values[0] if len(values) == 1 else "%s and %s" % (", ".join(values[:-1]), values[-1])


def _minor_between(minor: str, older: str, newer: str) -> bool:
    key = confounds.minor_key
    try:
        return key(release_list.minor_of(older)) < key(minor) < key(release_list.minor_of(newer))
    except release_list.ReleaseError:
        return False
