"""The pages the front page links for the detail: status grid, strict vs non-strict, failures, claims, flaky cells,
the glossary and the comparison with the previous report.

Each page lies in the report folder next to ``index.md``, so that its links to case pages
and charts read as the front page's do. A page with nothing to show is not written, and
the front page does not link it.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.schema import MODES, STATUSES, Status
from matrix.records import store, tables
from matrix.records import verdicts as judged
from matrix.records.verdicts import Verdicts
from matrix.report import baseline, builds_page, candidate_page, glossary
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import phrases as say
from matrix.report import upgrade as upgrade_page
from matrix.report.findings import Findings

# The pages, by name (``grid.md`` and ``site/grid.html``).
GRID = "grid"
MODES_PAGE = "modes"
FAILURES = "failures"
CLAIMS = "claims"
FLAKY = "flaky"
WARNINGS = "warnings"
INSTALL_ERRORS = "install-errors"
DOCUMENTED = "documented-to-work"  # the claims page's section on the cells of cases documented to work
Row = Dict[str, Any]


def build(f: Findings) -> List[d.Page]:
    """The linked pages built as documents; a page with nothing to show is not built."""
    pages = [grid(f), modes(f), failures(f)]
    pages += [claims(f)] if claimed(f) else []
    pages += [flaky(f)] if not f.flaky.empty else []
    pages += [warnings(f)] if f.warnings else []
    pages += [install_errors(f)] if not f.env_errors.empty else []
    pages += [builds_page.build(f.builds)] if f.builds else []
    pages += [candidate_page.build(f.candidates)] if f.candidates else []
    if f.baseline is not None:
        pages.append(baseline.build(f.baseline, f.baseline_name, f.cells, f.figures_since))
    found = upgrade_page.newest(f.upgrades)
    pages += [upgrade_page.build(found, chooser=True)] if found is not None else []
    return pages


def _page(name: str, title: str, blocks: Sequence[d.Block]) -> d.Page:
    return d.Page(name, title, tuple(blocks), up=say.BACK)


def images(f: Findings, key: str) -> List[d.Image]:
    """The charts of ``key`` as images of a page."""
    return [d.Image(d.file(c.path), c.title) for c in f.charts.get(key, [])]


def _square(row: Optional[Dict[str, Any]]) -> d.Mark:
    if row is None:
        return d.Mark(None)
    return d.Mark(str(row["status"]), named=False, marks=md.marks(row))


def grid(f: Findings) -> d.Page:
    """Every case in every environment and mode, grouped by tag, with the counts per status."""
    cells = f.cells.assign(_env=f.labels)
    envs = list(dict.fromkeys(store.sort_cells(cells, release="release")["_env"]))
    shown = cells[["case", "_env", "mode", "status", "serialize_outcome", "decompose_outcome"]].to_dict("records")
    found = {(str(row["case"]), str(row["_env"]), str(row["mode"])): row for row in shown}
    by_tag: Dict[str, List[str]] = {}
    firsts = cells.drop_duplicates("case")
    for case, tags in zip(firsts["case"], firsts["tags"]):
        names = sorted(str(t) for t in tags) if tags is not None and not isinstance(tags, (str, float)) else []
        for tag in names or ["untagged"]:
            by_tag.setdefault(tag, []).append(str(case))
    modes = [m for m in MODES if m in set(cells["mode"])]
    said = "Each cell shows %s, one symbol per mode; cases with several tags appear under each." % " then ".join(modes)
    blocks: List[d.Block] = [d.Paragraph(d.phrase(said)), glossary.statuses(), _counts(f)]
    for tag in sorted(by_tag, key=lambda t: (t == "untagged", t)):
        rows = tuple(
            (say.case(case),)
            + tuple(d.joined([d.phrase(_square(found.get((case, env, m)))) for m in modes], " ") for env in envs)
            for case in sorted(by_tag[tag])
        )
        table = d.Table((d.Column("case"), *(d.Column(e, "c") for e in envs)), rows, wide=True)
        blocks.append(d.Section("tag-" + tag, "%s (%d)" % (tag, len(by_tag[tag])), (table,)))
    return _page(GRID, "Status grid", [*blocks, *images(f, "grid")])


def _counts(f: Findings) -> d.Section:
    summary = f.summary.to_dict("records")
    # Cells run with a --with set are rows of their own: name the set where any row has one.
    sets = any(isinstance(r.get("with_set"), str) and r["with_set"] for r in summary)
    env = ["release", "variant", "Python"] + (["--with"] if sets else []) + ["mode"]
    headers = env + ["%s %s" % (Status(s).symbol, s) for s in STATUSES] + ["cells", "pass rate"]
    rows = tuple(
        tuple(
            d.phrase(say.plain(v))
            for v in [r["release"], r["variant"], r["python"]] + ([r.get("with_set")] if sets else []) + [r["mode"]]
        )
        + tuple(d.phrase(str(int(r[s])) if r[s] else "") for s in STATUSES)
        + (d.phrase(str(int(r["cells"]))), d.phrase(md.percent(r["pass_rate"])))
        for r in summary
    )
    align = "l" * len(env) + "r" * (len(STATUSES) + 2)
    table = say.table(headers, rows, align, wide=True)
    return d.Section("cells-per-status-release-and-mode", "Cells per status, release and mode", (table,))


def modes(f: Findings) -> d.Page:
    """Every case whose strict and non-strict export end differently, grouped by outcome."""
    rows = [
        (say.case(case, with_set), d.phrase(variant), d.phrase(say.status(strict)), d.phrase(say.status(loose)),
         spans, d.phrase(say.clip(newest["strict_error" if strict != "pass" else "non-strict_error"], 200)))
        for (case, with_set, variant, strict, loose), spans, newest in _outcomes(
            f, f.disagreements, ["case", "with_set", "variant", "strict", "non-strict"])
    ]  # fmt: skip
    intro = "Cells where strict and non-strict export end differently (both applicable), grouped by outcome."
    headers = ["case", "variant", "strict", "non-strict", "releases", "error (newest release)"]
    title = "Strict vs non-strict (%d cells)" % len(f.disagreements)
    return _page(MODES_PAGE, title, [*_per_build(f), d.Paragraph(d.phrase(intro)), say.table(headers, rows)])


def _outcomes(f: Findings, cells: pd.DataFrame, by: Sequence[str]) -> Iterator[Tuple[Tuple[str, ...], d.Phrase, Row]]:
    """The rows of ``cells`` grouped by ``by``: each group's key, its releases as spans and its newest row."""
    order = store.ordered(f.cells["release"])
    for key, members in md.grouped(cells.to_dict("records"), by):
        yield key, d.phrase(md.release_spans([m["release"] for m in members], order)), members[-1]


def _per_build(f: Findings) -> List[d.Block]:
    """Per build, the cases run in both modes and how many end differently, and how (nothing where a mode was not
    run: the front page says so)."""
    counts = tables.mode_counts(f.cells, f.disagreements)
    if counts.empty or len(set(f.cells["mode"])) < 2:
        return []
    columns = ("both_modes", "disagree", "strict_only", "non_strict_only", "other")
    rows = [
        [d.phrase(str(label))] + [d.phrase(str(int(row[c]))) for c in columns]
        for label, row in zip(tables.environment_labels(counts).to_numpy(), counts.to_dict("records"))
    ]
    headers = ["release", "cases in both modes", "disagree", "only strict passes", "only non-strict passes", "other"]
    return [d.Paragraph(d.phrase("Per build: the cases run in both modes (both applicable), and how many end"
                                 " differently.")), say.table(headers, rows, "lrrrrr")]  # fmt: skip


def signature_table(f: Findings, limit: int = 0) -> d.Table:
    """The failure signatures, the most common first (``limit`` 0: all)."""
    order = store.ordered(f.cells["release"])
    shown = f.signatures if not limit else f.signatures.head(limit)
    rows = []
    for r in shown.to_dict("records"):
        error = d.phrase(d.Code(r["error_type"])) if r["error_type"] else d.phrase("no error recorded")
        if r["first_line"]:
            error = d.phrase(error, ": ", say.clip(r["first_line"], 160))
        said = [str(r["cells"]), str(r["cases"]), ", ".join(r["statuses"]), ", ".join(r["modes"])]
        rows.append((error, *(d.phrase(x) for x in said), d.phrase(md.release_spans(r["releases"], order))))
    headers = ("error class and first line", "cells", "cases", "statuses", "modes", "releases")
    return say.table(headers, rows, "lrrlll")


def failures(f: Findings) -> d.Page:
    """Every failure signature (error class and first line of the message), the most common first."""
    intro = (
        "Cells that failed (mismatch, fail, crash, timeout), grouped by the error class and the first line of"
        " its message. Each case's page has the full messages and tracebacks."
    )
    title = "Failure signatures (%d)" % len(f.signatures)
    return _page(FAILURES, title, [d.Paragraph(d.phrase(intro)), signature_table(f)])


# Who made a claim (tables.documented_claims' ``claimed_by``), in the claims table's words.
CLAIMED_BY = {
    tables.BY_RELEASE: "the release's own ExportDB",
    tables.BY_CASE_FOR_RELEASE: "the case file (the release's ExportDB names none)",
    tables.BY_CASE: "the case file",
}


def claims(f: Findings) -> d.Page:
    """Cells whose outcome contradicts their documented claim, each with who made the claim."""
    rows = [
        (say.case(case), d.phrase(claim), d.phrase(CLAIMED_BY.get(by, by)), d.phrase(mode), d.phrase(variant),
         d.phrase(say.status(status)), spans, d.phrase(say.clip(newest["error"], 200)))
        for (case, claim, by, mode, variant, status), spans, newest in _outcomes(
            f, f.claims, ["case", "claim", "claimed_by", "mode", "variant", "status"])
    ]  # fmt: skip
    intro = d.phrase(
        "Cells whose outcome contradicts their documented claim. A case that stands for an ExportDB example is"
        " judged against the support level that release's own ExportDB gives it, as ExportDB's documented levels"
        " change between releases; where a release's records name none (it bundles no example of that name, or"
        " the records come from before per-release claims were recorded), the case's ",
        d.Code("expected"),
        " stands in, and the table says so. Other cases: the case's ",
        d.Code("expected"),
        ". A claim covers both modes unless it names one; ",
        d.Code("supported"),
        " means passes.",
    )
    headers = ["case", "claim", "claimed by", "mode", "variant", "observed", "releases", "error (newest release)"]
    title = "Documented claim vs observed (%d cells)" % len(f.claims)
    table = say.table(headers, rows, wide=True)
    return _page(CLAIMS, title, [b for b in (d.Paragraph(intro), table, documented(f.verdicts)) if b is not None])


def claimed(f: Findings) -> bool:
    """Whether a case claims whether it works (the claims page is written)."""
    return bool(f.cells["expected"].map(lambda v: isinstance(v, str)).any()) or bool(f.verdicts and f.verdicts.expected)


def documented(v: Optional[Verdicts]) -> Optional[d.Section]:
    """The cells of cases documented to work, per release and mode, over a denominator stated once."""
    if v is None or not v.expected:
        return None
    counts: Dict[str, List[int]] = {}
    for e in v.expected:
        counts.setdefault(e.mode, []).append(e.cases)
    modes = [m for m in MODES if m in counts]
    fewest, most = {m: min(counts[m]) for m in modes}, {m: max(counts[m]) for m in modes}
    counted = ", ".join("%d in %s mode" % (most[m], m) if fewest[m] == most[m]
                    else "%d to %d in %s mode, per build" % (fewest[m], most[m], m) for m in modes)  # fmt: skip
    intro = d.phrase(
        "Cases documented to work (their claim is ", d.Code("supported"), ", or ", d.Code("strict-only"), " / ",
        d.Code("non-strict-only"), " for that mode; for an ExportDB case, the claim of that release's own ExportDB"
        " where it names one, else the case's ", d.Code("expected"), "): %s. Each release is counted against all of"
        " them: a case it did not run, or could not (not applicable), counts as not passing. Ran: those it ran."
        % counted,
    )  # fmt: skip
    unrun = [m for m in MODES if m not in v.modes]
    if unrun:
        intro += d.phrase(" Not run: %s mode, so it is not counted here." % " and ".join(unrun))
    rows = []
    for name, found in by_environment(v):
        mine = {e.mode: e for e in found}
        cells = [name] + [_passed(mine.get(m)) for m in modes]
        cells += [" / ".join(str(mine[m].ran) if m in mine else "–" for m in modes)]
        cells += [str(sum(getattr(e, k) for e in found)) for k in ("unexpected", "unclaimed", "failing")]
        rows.append([d.phrase(c) for c in cells])
    headers = ["release"] + ["%s: pass" % m for m in modes] + ["ran (%s)" % " / ".join(modes)]
    headers += ["unexpected failures", "failing with no claim", "all failing cells"]
    table = say.table(headers, rows, "l" + "r" * (len(modes) + 4))
    return d.Section(DOCUMENTED, "Documented to work", (d.Paragraph(intro), table))


def _passed(e: Optional[judged.Expected]) -> str:
    if e is None:
        return "–"
    return "%d of %d (%s)" % (e.passed, e.cases, md.percent(e.rate))


def by_environment(v: Verdicts) -> List[Tuple[str, List[judged.Expected]]]:
    """The rows of ``v.expected`` by environment, in their order."""
    found: Dict[str, List[judged.Expected]] = {}
    for e in v.expected:
        found.setdefault(e.environment, []).append(e)
    return list(found.items())


def flaky(f: Findings) -> d.Page:
    """Cells whose repeated runs ended differently."""
    rows = [
        [d.phrase(say.plain(r[k])) for k in ("release", "variant", "python")]
        + [say.case(r["case"], r.get("with_set")), d.phrase(say.plain(r["mode"])), d.phrase(say.status(r["status"]))]
        + [d.phrase(say.plain(r["statuses"]))]
        for r in f.flaky.to_dict("records")
    ]
    intro = "Cells whose repeated runs ended differently; the most common status (ties: the worse) is reported."
    headers = ["release", "variant", "Python", "case", "mode", "status", "runs"]
    return _page(FLAKY, "Flaky cells (%d)" % len(f.flaky), [d.Paragraph(d.phrase(intro)), say.table(headers, rows)])


def warnings(f: Findings) -> d.Page:
    """Every warning met while reading the records."""
    items = d.Items(tuple(d.Item(d.phrase(say.clip(w, None))) for w in f.warnings))
    return _page(WARNINGS, "Record warnings (%d)" % len(f.warnings), [items])


def install_errors(f: Findings) -> d.Page:
    """Each environment that failed to install, with its error, then what the installer said for each."""
    keys = ("torch_version", "variant", "python")
    rows = [
        [d.phrase(str(r.get(k))) for k in keys] + [d.phrase(r.get("dependency_set") or "torch alone"),
         d.phrase(d.Code(r["error_type"])), d.phrase(say.clip(r["error_message"], 300))]
        for r in f.env_errors.to_dict("records")
    ]  # fmt: skip
    blocks: List[d.Block] = [say.table(["release", "variant", "Python", "environment", "error", "message"], rows)]
    for r in f.env_errors.to_dict("records"):
        if isinstance(r.get("installer_output"), str) and r["installer_output"].strip():
            name = "torch %s %s py%s: installer output" % (r["torch_version"], r["variant"], r["python"])
            blocks.append(d.Details(name, (d.CodeBlock(r["installer_output"], "text"),)))
    return _page(INSTALL_ERRORS, "Environments that failed to install", blocks)
