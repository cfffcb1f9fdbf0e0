"""The front page's answers, as document parts: the verdicts it opens with, the saved-program epochs, the sample's
confounds; built once for the Markdown page and the site.

The judging is :mod:`matrix.records.verdicts`, :mod:`matrix.records.epochs` and
:mod:`matrix.records.confounds`; this module only words what they found. Every verdict is one
item with a link to its evidence (a case page, a transition page, ``artifacts.md``, a section of
the front page), and no paragraph runs much past :data:`LONGEST` characters: the detail lives on
the linked pages.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

from matrix.contract.schema import STAGES
from matrix.envs import releases as release_list
from matrix.records import confounds
from matrix.records import figures as headline
from matrix.records.open_regressions import OpenRegression
from matrix.records.verdicts import Verdicts
from matrix.report import artifacts, pages, transition_page
from matrix.report import document as d
from matrix.report import phrases as say

# About the longest line of prose the front page holds.
LONGEST = 400
# Anchors of the front page's sections that verdicts point to.
SAVED_PROGRAMS = d.here("saved-programs-across-releases")
DOCUMENTED = d.page(pages.CLAIMS, pages.DOCUMENTED)
BASELINE = d.here("since-the-previous-report")
TRANSITIONS = d.here("changes")
# Names shown in one table cell or line before the rest are counted.
SHOWN_OPEN = 8
SHOWN_CHANGES = 4
STAGE_LABELS = dict(STAGES)


def known_releases() -> List[str]:
    """The releases of the matrix, which the verdicts need to tell which minor series were not run."""
    return [release.version for release in release_list.default_matrix().releases]


def section(
    v: Verdicts,
    first: Sequence[d.Item] = (),
    more: Sequence[d.Item] = (),
    known: Sequence[d.Item] = (),
    last: Sequence[d.Item] = (),
) -> d.Section:
    """The opening section: one item per answer (the cells documented to work per release are on the claims page,
    :func:`matrix.report.pages.documented`).

    ``first``: what a release manager reads before a release (each candidate's line, the newest release's pass
    rate); ``more``: other verdicts (incomplete builds, AOTInductor's, the upgrade's, the devices'), after what
    broke in the newest release; ``known``: the known issues' lines; ``last``: the builds of one release compared.
    """
    items = [
        *first,
        _open_regressions(v),
        _in_newest(v),
        *more,
        _unexpected(v),
        _unclaimed(v),
        _best(v),
        _epochs_line(v),
        *known,
        *_since(v),
        _sample(v),
        _build_changes(v),
        *last,
    ]
    return d.Section("verdicts", "Verdicts", (d.Items(tuple(i for i in items if i is not None)),))


def _open_regressions(v: Verdicts) -> d.Item:
    r = v.regressions
    newest = ", ".join(r.newest) or "the newest release"
    title = "Still broken on %s" % newest
    if not r.found:
        return d.Item(d.phrase("no regression was found between releases (", _transitions(), ")."), title)
    found = "1 regression" if r.found == 1 else "the %d regressions" % r.found
    head = "%d of %s found between releases" % (r.open_count, found)
    if r.open_cells:
        head += ", in %s" % d.plural(r.open_cells, "cell")
    tail = ["%d fixed since" % r.fixed] if r.fixed else []
    if r.unknown:
        tail.append("%d not run or not applicable on %s" % (r.unknown, newest))
    if not r.open:
        said = d.phrase(head, " (", _transitions(), "); %s." % ("; ".join(tail) or "none open"))
        return d.Item(said, title)
    listed = _listed(r.open, ", each on its ", d.link("transition page", TRANSITIONS), ".")
    return d.Item(d.phrase(head, " (%s)" % "; ".join(tail) if tail else None, ":"), title, listed)


def _listed(found: Sequence[OpenRegression], *more: Union[str, d.Inline]) -> Tuple[d.Item, ...]:
    """The first :data:`SHOWN_OPEN` regressions of ``found``, a line each, then how many more, followed by ``more``."""
    listed = [d.Item(_open_line(o)) for o in found[:SHOWN_OPEN]]
    if len(found) > SHOWN_OPEN:
        listed.append(d.Item(d.phrase("… and %d more" % (len(found) - SHOWN_OPEN), *more)))
    return tuple(listed)


def _transitions() -> d.Link:
    return d.link("transitions", TRANSITIONS)


def _open_line(o: OpenRegression) -> d.Phrase:
    step = say.between(o.before, o.after, o.variant_before, o.variant)
    build = " (the build changed there too)" if o.across_build_change else None
    head = d.phrase(say.case(o.case, o.with_set), " ", ", ".join(o.modes), ": ")
    if o.kind == "stage-regression":
        stage = STAGE_LABELS.get(o.stage or "", o.stage or "a stage")
        return d.phrase(head, "%s stopped working at " % stage, step, build, "; ", stage_now(o, stage), ".")
    moved = transition_page.moved(o.status_before, o.status_after, o.kind)
    return d.phrase(head, moved, " at ", step, build, "; now ", say.statuses(o.now), ".")


def stage_now(o: OpenRegression, stage: str) -> d.Phrase:
    """A stage regression on the newest release: the stage's outcome where the cell passes, else the cell's
    status."""
    outcomes = o.stage_now or ("",) * len(o.now)
    if all(s == "pass" and out for s, out in zip(o.now, outcomes)):
        return d.phrase("%s now %s" % (stage, ", ".join(dict.fromkeys(outcomes))))
    said: List[d.Phrase] = []
    for status, out in zip(o.now, outcomes):
        if status == "pass" and out:
            one = d.phrase("%s %s" % (stage, out))
        else:
            one = d.phrase(say.status(status), " (%s %s)" % (stage, out) if out else None)
        if one not in said:
            said.append(one)
    return d.phrase("now ", d.joined(said))


def _in_newest(v: Verdicts) -> Optional[d.Item]:
    """What regressed in the newest release: the open regressions that broke there."""
    r = v.regressions
    if not r.found:
        return None
    title = "Regressed in %s" % (", ".join(r.newest) or "the newest release")
    if not r.in_newest:
        return d.Item(d.phrase("nothing broke there (", _transitions(), ")."), title)
    cells = len({(o.case, o.variant, o.with_set, m) for o in r.in_newest for m in o.modes})
    listed = _listed(r.in_newest, " (", _transitions(), ").")
    return d.Item(d.phrase(say.count(cells, "cell"), " broke there:"), title, listed)


def _unexpected(v: Verdicts) -> d.Item:
    if not v.expected:
        said = d.phrase("no case in these records carries a documented claim (", d.Code("expected"), ").")
        return d.Item(said, "Unexpected failures")
    why = "failing cells of cases documented to work / all failing cells"
    return _per_build(v, "unexpected", "Unexpected failures", why)


def _unclaimed(v: Verdicts) -> Optional[d.Item]:
    """The failing cells of cases that claim nothing: a failure there can be neither expected nor unexpected."""
    if not v.expected:
        return None
    title = "Failing with no claim"
    if not any(e.unclaimed for e in v.expected):
        return d.Item(d.phrase("none: every failing cell is of a case that claims whether it works."), title)
    why = (
        "failing cells of cases whose documentation claims nothing there, so that no failure of theirs counts as"
        " unexpected / all failing cells"
    )
    return _per_build(v, "unclaimed", title, why)


def _per_build(v: Verdicts, field: str, title: str, why: str) -> d.Item:
    """Per build, its cells counted in ``field`` over its failing cells; where that runs past :data:`LONGEST`, the
    newest build's and the range. ``why``: what the counts are."""
    counts = [(name, sum(getattr(e, field) for e in mine), sum(e.failing for e in mine))
              for name, mine in pages.by_environment(v)]  # fmt: skip
    claims = d.link("claims", d.page(pages.CLAIMS))
    said = " · ".join("%s %d/%d" % (name, bad, failing) for name, bad, failing in counts)
    if len(said) + len(why) <= LONGEST:
        return d.Item(d.phrase(said, " (%s; " % why, claims, ")."), title)
    name, bad, failing = counts[-1]
    spread = "%d/%d on %s, %d to %d per build" % (
        bad, failing, name, min(c[1] for c in counts), max(c[1] for c in counts),
    )  # fmt: skip
    return d.Item(d.phrase(spread, " (%s; " % why, claims, ", ", d.link("per build", DOCUMENTED), ")."), title)


def _best(v: Verdicts) -> Optional[d.Item]:
    if not v.best:
        return None
    # The newest first: of releases that pass as much, the newest is the one to pick.
    best = [(b.mode, say.first_of(b.environments[::-1]), b.passed, b.cases) for b in v.best]
    said = "; ".join("%s: %s (%d of %d)" % found for found in best)
    said_where = d.phrase(said, " (", d.link("per build", DOCUMENTED), ").")
    return d.Item(said_where, "Passes the most of what is documented to work")


def _epochs_line(v: Verdicts) -> Optional[d.Item]:
    if not v.epochs:
        return None
    newest = v.epochs[-1]
    older = "; %d of %d programs saved before %s load on %s" % (
        newest.older_passed, newest.older_tried, newest.first, newest.last) if newest.older_tried else ""  # fmt: skip
    spans, every = " · ".join(artifacts.span(e) for e in v.epochs), d.link("every pair", d.page(artifacts.NAME))
    said = d.phrase("load across ", say.count(len(v.epochs), "epoch"), ": ", spans,
                    " (", d.link("epochs", SAVED_PROGRAMS), ", ", every, ")%s." % older)  # fmt: skip
    return d.Item(said, "Saved programs")


def _since(v: Verdicts) -> List[d.Item]:
    """What changed since the previous report, with the regressions and fixes between releases that are new and
    gone, and the headline figures that moved, each linking the section that says more."""
    b = v.baseline
    if b is None:
        said = d.phrase("no baseline given (", d.Code("report --baseline DIR"), ").")
        return [d.Item(said, "Since the previous report")]
    counted = "%s changed status (%s, %s), %d new and %d vanished cells; %d new and %d gone regressions or fixes" % (
        d.plural(b.changed, "cell"), d.plural(b.regressions, "regression"), d.plural(b.fixes, "fix", "fixes"),
        b.new_cells, b.vanished_cells, b.new_transitions, b.gone_transitions,
    )  # fmt: skip
    more = d.link("since the previous report", BASELINE)
    found = [d.Item(d.phrase(counted, " between releases (", more, ")."), "Since %s" % b.name)]
    if b.figures is not None and b.figures.moved:
        lead = "with no cell changed" if b.figures.same_cells else "since then"
        said = d.phrase("%s: %s (" % (lead, headline.short(b.figures)), d.link("what moved each", BASELINE), ").")
        found.append(d.Item(said, "Headline figures moved"))
    return found


def _sample(v: Verdicts) -> Optional[d.Item]:
    s = v.sample
    if not s.minors:
        return None
    if not s.not_run:
        return d.Item(d.phrase("every minor release from %s to %s was run." % (s.minors[0], s.minors[-1])), "Sample")
    said = "%d of %d minor releases from %s to %s were run (not run: %s): consecutive means consecutive in this" % (
        len(s.run), len(s.minors), s.minors[0], s.minors[-1], ", ".join(s.not_run),
    )  # fmt: skip
    return d.Item(d.phrase(said, " sample (", _transitions(), ")."), "Sample")


def _build_changes(v: Verdicts) -> Optional[d.Item]:
    changes = v.sample.build_changes
    if not changes:
        return None
    shown = [
        d.phrase(say.between(c.before, c.after), " %s → %s (%s, %s)" % (
            c.build_before, c.build_after, d.plural(c.regressions, "regression"), d.plural(c.fixes, "fix", "fixes")))
        for c in changes[:SHOWN_CHANGES]
    ]  # fmt: skip
    more = " and %d more" % (len(changes) - SHOWN_CHANGES) if len(changes) > SHOWN_CHANGES else ""
    said = d.phrase(d.joined(shown, "; "), more, ": a change across them mixes release and build.")
    return d.Item(said, "Build changes")


def epochs_section(v: Optional[Verdicts]) -> Tuple[d.Block, ...]:
    """The saved-program epochs: a sentence on the rule and the table (the saved-programs page's, of the programs), for
    the front page's saved-programs section."""
    if v is None or not v.epochs:
        return ()
    intro = (
        "An epoch is a range of releases where a program saved on any of them loads and matches on that release"
        " and every newer one of the range (for each pair, at least half of the programs; the cases that fail"
        " are the exceptions). Older releases do not always read newer programs."
    )
    return d.Paragraph(d.phrase(intro)), artifacts.epochs(v.epochs)


def strict_note(v: Optional[Verdicts]) -> d.Phrase:
    """Where the default of ``export(strict=...)`` changes in the sample, and what that means for the modes."""
    if v is None or not v.sample.strict_flips:
        return ()
    without = [found.release for found in v.sample.strict_defaults if found.mode is not None and not found.keyword]
    said: List[d.Phrase] = []
    unrun = set(v.sample.not_run)
    for before, after in v.sample.strict_flips:
        between = [m for m in v.sample.minors if m in unrun and _minor_between(m, before.release, after.release)]
        said.append(
            d.phrase(
                d.Code("export()"), " defaults to %s up to %s and to %s from %s" % (
                    before.mode, before.release, after.mode, after.release,
                ), " (%s, between them, not run)" % _and(between) if between else None,
            )
        )  # fmt: skip
    note = d.phrase(d.joined(said, "; "), ".")
    if without:
        note += d.phrase(" %s: no " % ", ".join(without), d.Code("strict"), " keyword, always strict.")
    return d.phrase(
        note, " Each cell passes ", d.Code("strict="), " explicitly, so a column means the same mode on every release;"
        " a caller who leaves it out gets the default's column.",
    )  # fmt: skip


def _and(values: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return values[0] if len(values) == 1 else "%s and %s" % (", ".join(values[:-1]), values[-1])


def _minor_between(minor: str, older: str, newer: str) -> bool:
    key = confounds.minor_key
    try:
        return key(release_list.minor_of(older)) < key(minor) < key(release_list.minor_of(newer))
    except release_list.ReleaseError:
        return False
