"""The pages the front page links for the detail: status grid, strict vs non-strict, failures, claims, flaky cells,
the glossary and the comparison with the previous report.

Each page lies in the report folder next to ``index.md``, so that its links to case pages
and charts read as the front page's do. A page with nothing to show is not written, and
the front page does not link it.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

from matrix.contract.schema import MODES, STATUSES
from matrix.records import store, tables
from matrix.report import baseline, builds_page, candidate_page, parts
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import upgrade as upgrade_page
from matrix.report.findings import Findings

GRID = "grid.md"
MODES_PAGE = "modes.md"
FAILURES = "failures.md"
CLAIMS = "claims.md"
FLAKY = "flaky.md"
WARNINGS = "warnings.md"
INSTALL_ERRORS = "install-errors.md"
BACK = "[← back to the matrix](index.md)\n"


def render(f: Findings) -> Dict[str, str]:
    """The linked pages by file name (relative to the report folder)."""
    pages = {GRID: grid(f), MODES_PAGE: modes(f)}
    if f.cells["expected"].map(lambda v: isinstance(v, str)).any():
        pages[CLAIMS] = claims(f)
    if not f.flaky.empty:
        pages[FLAKY] = flaky(f)
    if f.warnings:
        pages[WARNINGS] = warnings(f)
    if installer_outputs(f):
        pages[INSTALL_ERRORS] = install_errors(f)
    if f.builds:
        pages[builds_page.PAGE] = builds_page.render(f.builds)
    if f.candidates:
        pages[candidate_page.PAGE] = candidate_page.render(f.candidates)
    if upgrade_page.newest(f.model.upgrades) is not None:
        pages[upgrade_page.PAGE] = upgrade_page.render(upgrade_page.newest(f.model.upgrades))
    if f.baseline is not None:
        pages[baseline.PAGE] = baseline.page(f.baseline, f.baseline_name, f.cells, f.model.figures_since)
    return pages


def charts(f: Findings, key: str) -> str:
    return "".join("\n![%s](%s)\n" % (md.text(c.title), c.path) for c in f.charts.get(key, []))


def grid(f: Findings) -> str:
    """Every case in every environment and mode, grouped by tag, with the counts per status."""
    cells = f.cells.assign(_env=f.labels)
    envs = list(dict.fromkeys(store.sort_cells(cells, release="release")["_env"]))
    shown = cells[["case", "_env", "mode", "status", "serialize_outcome", "decompose_outcome"]].to_dict("records")
    symbol = {(str(row["case"]), str(row["_env"]), str(row["mode"])): md.marked(row) for row in shown}
    by_tag: Dict[str, List[str]] = {}
    firsts = cells.drop_duplicates("case")
    for case, tags in zip(firsts["case"], firsts["tags"]):
        names = sorted(str(t) for t in tags) if tags is not None and not isinstance(tags, (str, float)) else []
        for tag in names or ["untagged"]:
            by_tag.setdefault(tag, []).append(str(case))
    modes = [m for m in MODES if m in set(cells["mode"])]
    out = [
        "# Status grid\n",
        BACK,
        "Each cell shows %s, one symbol per mode; cases with several tags appear under each.\n" % " then ".join(modes),
        md.legend(),
        _counts(f),
    ]
    for tag in sorted(by_tag, key=lambda t: (t == "untagged", t)):
        rows = [
            [md.case_link(case)] + ["".join(symbol.get((case, env, m), md.NO_RECORD) for m in modes) for env in envs]
            for case in sorted(by_tag[tag])
        ]
        out.append("## %s (%d)\n" % (md.text(tag), len(by_tag[tag])))
        out.append(md.table(["case"] + [md.text(e) for e in envs], rows, ["l"] + ["c"] * len(envs)))
    out.append(charts(f, "grid"))
    return "\n".join(out).rstrip("\n") + "\n"


def _counts(f: Findings) -> str:
    summary = f.summary.to_dict("records")
    # Cells run with a --with set are rows of their own: name the set where any row has one.
    sets = any(isinstance(r.get("with_set"), str) and r["with_set"] for r in summary)
    env = ["release", "variant", "Python"] + (["--with"] if sets else []) + ["mode"]
    headers = env + ["%s %s" % (md.SYMBOLS[s], s) for s in STATUSES]
    rows = [
        [md.text(r["release"]), md.text(r["variant"]), md.text(r["python"])]
        + ([md.text(r.get("with_set"))] if sets else [])
        + [md.text(r["mode"])]
        + [str(int(r[s])) if r[s] else "" for s in STATUSES]
        + [str(int(r["cells"])), md.percent(r["pass_rate"])]
        for r in summary
    ]
    body = md.table(headers + ["cells", "pass rate"], rows, ["l"] * len(env) + ["r"] * (len(STATUSES) + 2))
    return "## Cells per status, release and mode\n\n" + body


def modes(f: Findings) -> str:
    """Every case whose strict and non-strict export end differently, grouped by outcome."""
    order = store.ordered(f.cells["release"])
    rows = []
    for (case, with_set, variant, strict, loose), members in md.grouped(
        f.disagreements.to_dict("records"), ["case", "with_set", "variant", "strict", "non-strict"]
    ):
        newest = members[-1]
        error = newest["strict_error"] if strict != "pass" else newest["non-strict_error"]
        rows.append(
            [
                md.case_with(case, with_set),
                md.text(variant),
                md.status(strict),
                md.status(loose),
                md.spans([m["release"] for m in members], order),
                md.text(error, 200),
            ]
        )
    intro = "Cells where strict and non-strict export end differently (both applicable), grouped by outcome.\n\n"
    table = md.table(["case", "variant", "strict", "non-strict", "releases", "error (newest release)"], rows)
    return "# Strict vs non-strict (%d cells)\n\n%s\n%s%s" % (len(f.disagreements), BACK, intro, table)


def signature_rows(f: Findings, limit: int = 0) -> List[Tuple[d.Phrase, ...]]:
    """Rows of the failure-signature table, the most common first (``limit`` 0: all)."""
    order = store.ordered(f.cells["release"])
    shown = f.signatures if not limit else f.signatures.head(limit)
    rows = []
    for r in shown.to_dict("records"):
        error = d.phrase(d.Code(r["error_type"]) if r["error_type"] else "no error recorded")
        if r["first_line"]:
            line = str(r["first_line"])
            error += d.phrase(": " + (line if len(line) <= 160 else line[:159] + "…"))
        said = [str(r["cells"]), str(r["cases"]), ", ".join(r["statuses"]), ", ".join(r["modes"])]
        rows.append((error, *(d.phrase(x) for x in said), d.phrase(md.release_spans(r["releases"], order))))
    return rows


SIGNATURE_HEADERS = ["error class and first line", "cells", "cases", "statuses", "modes", "releases"]
SIGNATURE_ALIGN = "lrrlll"


def failures(f: Findings) -> d.Page:
    """Every failure signature (error class and first line of the message), the most common first."""
    intro = (
        "Cells that failed (mismatch, fail, crash, timeout), grouped by the error class and the first line of"
        " its message. Each case's page has the full messages and tracebacks."
    )
    table = parts.table(SIGNATURE_HEADERS, signature_rows(f), SIGNATURE_ALIGN)
    return d.Page(
        FAILURES[: -len(".md")], "Failure signatures (%d)" % len(f.signatures), (d.Paragraph(d.phrase(intro)), table),
        up=d.link("← back to the matrix", d.page("index")),
    )  # fmt: skip


# Who made a claim (tables.documented_claims' ``claimed_by``), in the claims table's words.
CLAIMED_BY = {
    tables.BY_RELEASE: "the release's own ExportDB",
    tables.BY_CASE_FOR_RELEASE: "the case file (the release's ExportDB names none)",
    tables.BY_CASE: "the case file",
}


def claims(f: Findings) -> str:
    """Cells whose outcome contradicts their documented claim, each with who made the claim."""
    order = store.ordered(f.cells["release"])
    rows = [
        [
            md.case_link(case),
            md.text(claim),
            md.text(CLAIMED_BY.get(by, by)),
            md.text(mode),
            md.text(variant),
            md.status(status),
            md.spans([m["release"] for m in members], order),
            md.text(members[-1]["error"], 200),
        ]
        for (case, claim, by, mode, variant, status), members in md.grouped(
            f.claims.to_dict("records"), ["case", "claim", "claimed_by", "mode", "variant", "status"]
        )
    ]
    intro = (
        "Cells whose outcome contradicts their documented claim. A case that stands for an ExportDB example is"
        " judged against the support level that release's own ExportDB gives it, as ExportDB's documented levels"
        " change between releases; where a release's records name none (it bundles no example of that name, or"
        " the records come from before per-release claims were recorded), the case's `expected` stands in, and"
        " the table says so. Other cases: the case's `expected`. A claim covers both modes unless it names one;"
        " `supported` means passes.\n\n"
    )
    headers = ["case", "claim", "claimed by", "mode", "variant", "observed", "releases", "error (newest release)"]
    table = md.table(headers, rows)
    return "# Documented claim vs observed (%d cells)\n\n%s\n%s%s" % (len(f.claims), BACK, intro, table)


def flaky(f: Findings) -> str:
    """Cells whose repeated runs ended differently."""
    rows = [
        [
            md.text(r["release"]),
            md.text(r["variant"]),
            md.text(r["python"]),
            md.case_with(r["case"], r.get("with_set")),
            md.text(r["mode"]),
            md.status(r["status"]),
            md.text(r["statuses"]),
        ]
        for r in f.flaky.to_dict("records")
    ]
    intro = "Cells whose repeated runs ended differently; the most common status (ties: the worse) is reported.\n\n"
    table = md.table(["release", "variant", "Python", "case", "mode", "status", "runs"], rows)
    return "# Flaky cells (%d)\n\n%s\n%s%s" % (len(f.flaky), BACK, intro, table)


def warnings(f: Findings) -> str:
    """Every warning met while reading the records."""
    shown = "\n".join("- %s" % md.text(w) for w in f.warnings)
    return "# Record warnings (%d)\n\n%s\n%s\n" % (len(f.warnings), BACK, shown)


def installer_outputs(f: Findings) -> List[Tuple[str, str]]:
    found = []
    for r in f.env_errors.to_dict("records"):
        if isinstance(r.get("installer_output"), str) and r["installer_output"].strip():
            name = "torch %s %s py%s: installer output" % (r["torch_version"], r["variant"], r["python"])
            found.append((name, r["installer_output"]))
    return found


def install_errors(f: Findings) -> str:
    """What the installer said for each environment that failed to install."""
    blocks = [md.details(name, md.fence(output, "text")) for name, output in installer_outputs(f)]
    return "# Installer output of the environments that failed to install\n\n%s\n%s" % (BACK, "\n".join(blocks))
