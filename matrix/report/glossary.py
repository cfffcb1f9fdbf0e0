"""The report's glossary, built once for ``glossary.md`` and ``site/glossary.html``: one line per term the front page
uses, then the glyphs and marks of cells, of loads of saved programs and of compiled packages.

The kinds of change between releases take their meaning from :data:`matrix.records.transitions.MEANING`
and the statuses theirs from the schema, so that the glossary says what the judging code does.
"""

from __future__ import annotations

from typing import List, Sequence, Tuple

from matrix.contract.products import PACKAGE, PRODUCTS, PROGRAM, Product
from matrix.contract.schema import NO_RECORD, NoCell, Status
from matrix.contract.stages import REPORTED
from matrix.records.transitions import MEANING
from matrix.report import document as d
from matrix.report import phrases as say
from matrix.report import stage_grids
from matrix.report.writers.markdown import github_anchor as markdown_anchor

_MATRIX = (
    ("case", "a small program that torch.export is tried on: one module under `cases/` with a model, example"
     " inputs, tags and the support its documentation claims"),
    ("mode", "how a case is exported: `strict` (traced by TorchDynamo) or `non-strict` (traced in Python); each"
     " cell passes `strict=` explicitly"),
    ("release", "a torch version without its local tag: 2.13.0+cpu and 2.13.0+cu130 are two builds of release"
     " 2.13.0"),
    ("variant", "the wheel index a build comes from: `pypi` (PyPI's default wheels), `cpu`, or a CUDA index such"
     " as `cu126`"),
    ("build", "one release from one variant, named by its full version (2.13.0+cu130); the release column of a"
     " table names the build, with its variant"),
    ("series", "the builds of one variant in version order (PyPI's, the CPU index's, each CUDA index's):"
     " transitions compare consecutive releases of one series, never two variants"),
    ("build comparison", "another variant's build of a release (2.13.0+cpu) against PyPI's build of it"
     " (2.13.0+cu130), cell by cell: a difference there is the build's, not the release's"),
    ("candidate", "a build from a pre-release channel (a nightly, a release candidate): judged on its own against"
     " the newest release of its family, first on the page, never in the release verdicts"),
    ("incomplete build", "a build whose torch installed but some dependency set of its cases could not be had:"
     " marked (incomplete) wherever named, and left out of every transition and verdict"),
    ("environment", "a build installed under one Python, with the packages its cases need and any `--with` set"),
    ("cell", "one case in one mode in one environment: what the matrix records a status for. A matrix holds at"
     " most cases × modes × environments cells; one without a record was not run there, or its environment failed"
     " to install"),
    ("env-error", "an environment that failed to install (torch, or the libraries some cases need); the cells"
     " it would have run have no record"),
    ("record", "one line of the JSON Lines a run writes; a cell run several times has one record per run"),
    ("status", "a cell's outcome, one of the statuses below"),
    ("pass rate", "passing cells over applicable ones (not-applicable and case-error left out), per"
     " environment and mode; a pass counts whether or not its program saves, loads and decomposes"),
    ("stage", "a step run on the program of a cell that exported: save/load (torch.export.save, then load) and"
     " decomposition (run_decompositions to core ATen)"),
    (" and ".join(s.mark for s in REPORTED), "marks after a status symbol: the program failed %s"
     % " or ".join("%s (%s)" % (s.label, s.mark) for s in REPORTED)),
    ("claim", "the support a case's documentation states: `supported`, `strict-only`, `non-strict-only`,"
     " `not-supported-yet` or `fails`; an ExportDB case takes the level of each release's own ExportDB where it"
     " names one, else the case's `expected`"),
    ("documented to work", "a cell whose claim says it passes: `supported`, or `strict-only` / `non-strict-only`"
     " in that mode"),
    ("unexpected failure", "a failing cell (mismatch, fail, crash, timeout) of a case documented to work"),
    (
        "failing with no claim",
        "a failing cell of a case whose documentation claims nothing there: counted on its own, as neither an"
        " expected nor an unexpected failure",
    ),
    ("real models", "the cases under `cases/real_models/`: real architectures built in code with random"
     " weights, each run with the libraries it names"),
    ("failure signature", "failing cells grouped by error class and the first line of the message"),
    ("flaky cell", "a cell whose repeated runs ended with different statuses"),
)  # fmt: skip

_CHANGES = (
    ("transition", "two consecutive releases of a series compared cell by cell: same case, mode, variant"
     " series and `--with` set"),
    ("sample", "the releases run; consecutive means consecutive in the sample, so a minor release that was not"
     " run can lie between two that were"),
    ("build change", "a transition within one series between builds of different kinds (CUDA → CPU, as one"
     " index may serve both): a change across it may come from the build rather than the release"),
    ("regression", "a cell that got worse between two releases: a status regression, now wrong numbers or a"
     " stage regression"),
    ("status regression", MEANING["regression"]),
    ("now wrong numbers", MEANING["wrong-result"]),
    ("stage regression", MEANING["stage-regression"]),
    ("fix", "a cell that got better between two releases: a status fix or a stage fix"),
    ("status fix", MEANING["fix"]),
    ("stage fix", MEANING["stage-fix"]),
    ("graph change", MEANING["graph-change"]),
    ("op drift", MEANING["op-drift"] + "; counted once per program, so a cell whose exported and decomposed"
     " programs both change counts twice"),
    ("slowdown, speedup", "%s; %s" % (MEANING["slowdown"], MEANING["speedup"])),
)  # fmt: skip

_UPGRADES = (
    ("upgrade answer", "from build A to a newer build B, per case and mode: does it export on B (and did it on A),"
     " does a program saved on A load and match on B, does a package compiled on A load and match on B, does a"
     " program exported on A compile on B; `breaks` when what worked on A fails on B: the export, a stage run on"
     " its program (an outcome that did not try never counts), or a program or package of A that loaded and"
     " matched on A itself"),
    ("not run", "a mode or stage with no record: said as such, never counted as 0 of N"),
)  # fmt: skip

_REPORTS = (
    ("previous report", "the earlier report given as `report --baseline DIR` (for `nox -s publish`, the previous"
     " publication in git history); the front page counts what changed since and which headline figures moved"
     " and why, its own page lists every change"),
    ("new cell, vanished cell", "a cell only in this report, or only in the previous one"),
    ("`--with` set", "packages added to an environment with `run --with`; its cells are rows of their own, never"
     " compared with cells run without it"),
)  # fmt: skip

SECTIONS: Tuple[Tuple[str, Tuple[Tuple[str, str], ...]], ...] = (
    ("The matrix", _MATRIX),
    ("Changes between releases", _CHANGES),
    # Each product's own words (contract/products.py), then what an upgrade asks of them.
    ("Made on one release, used on another", (
        *((t, m % {"promised_from": p.promised_from}) for p in PRODUCTS for t, m in p.terms), *_UPGRADES)),
    ("Comparing reports", _REPORTS),
)  # fmt: skip
TERMS = tuple(term for _, terms in SECTIONS for term, _ in terms)


NAME = "glossary"  # the page: glossary.md and site/glossary.html


def statuses() -> d.Table:
    """Every cell status's glyph, name and meaning, no record, the marks of a failed stage, and a failed install."""
    rows = [(d.phrase(d.Mark(s.value, named=False)), s.value, s.meaning) for s in Status]
    rows.append((d.phrase(NO_RECORD), "no record", "the cell was not run (or its environment failed to install)"))
    rows += [(d.phrase(stage.mark), "%s fails" % stage.label, stage.meaning) for stage in REPORTED]
    rows.append((d.phrase(str(NoCell.ENV_ERROR)), "not installed", "the libraries this case needs failed to install"
                 " there"))  # fmt: skip
    return say.legend(rows)


def _loads(products: Sequence[Product]) -> d.Table:
    """What loading each of ``products`` (whose uses are loads) gave: a status's glyph, then what it means for each."""
    rows = [
        (d.phrase(d.Mark(s, "load", named=False)), d.phrase(s), *(d.phrase(p.meaning[s]) for p in products))
        for s in products[0].statuses
    ]
    rows.append((d.phrase(NO_RECORD), d.phrase("no record"),
                 *(d.phrase("this release did not load this %s" % p.noun) for p in products)))  # fmt: skip
    return say.table(["", "status", *(p.many for p in products)], rows)


def page() -> d.Page:
    """The glossary: a table of terms per section, then the status glyphs and stage marks of cells, of saved programs'
    loads and of compiled packages' loads."""
    blocks: List[d.Block] = [d.Paragraph(d.phrase("The words the report uses, and what they count."))]
    for title, terms in SECTIONS:
        rows = [(d.phrase(d.Strong(say.prose(term))), say.prose(meaning)) for term, meaning in terms]
        anchors = tuple("term-" + markdown_anchor(term) for term, _ in terms)  # a term can be linked: #term-epoch
        table = say.table(["term", "meaning"], rows, anchors=anchors)
        blocks.append(d.Section(markdown_anchor(title), title, (table,)))
    blocks += [
        d.Section("statuses-and-marks", "Statuses and marks", (statuses(),)),
        d.Section("load-statuses", "Load statuses", (
            d.Paragraph(d.phrase("What loading a saved program or a compiled package on a release gave.")),
            _loads((PROGRAM, PACKAGE)))),
        stage_grids.glossary_section(),
    ]  # fmt: skip
    return d.Page(NAME, "Glossary", tuple(blocks), up=say.BACK)
