"""The report's glossary, built once for ``glossary.md`` and ``site/glossary.html``: one line per term the front page
uses, then the glyphs and marks of cells, of loads of saved programs and of compiled packages.

The kinds of change between releases take their meaning from :data:`matrix.records.transitions.MEANING`
and the statuses theirs from the schema, so that the glossary says what the judging code does.
"""

from __future__ import annotations

from typing import List, Tuple

from matrix.contract.products import PACKAGE, PROGRAM, Product
from matrix.contract.schema import NO_RECORD, STAGES, NoCell, Status
from matrix.records.transitions import MEANING
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import phrases as say
from matrix.report import stage_grids
from matrix.report.writers.markdown import github_anchor as markdown_anchor

PAGE = "glossary.md"

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
    ("%s and %s" % (md.STAGE_MARKS["serialize"], md.STAGE_MARKS["decompose"]),
     "marks after a status symbol: the program failed save/load (%s) or decomposition (%s)"
     % (md.STAGE_MARKS["serialize"], md.STAGE_MARKS["decompose"])),
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

_SAVED = (
    ("saved program", "the program of a passing cell, saved with torch.export.save with its inputs and eager's"
     " outputs; `export-matrix load` loads it on every build, runs it and compares"),
    ("epoch", "a range of releases where a program saved on any of them loads and matches on that release and"
     " every newer one of the range, for at least half of the programs of each pair"),
    ("exception", "a case whose saved programs fail inside their epoch"),
    ("load regression", "a loading release that does worse with the programs saved on one release than the"
     " loading release before it; counted once per saving release"),
)  # fmt: skip

_AOTI = (
    ("AOTInductor", "torch's ahead-of-time compiler: it turns an exported program into a package of compiled"
     " C++ (a shared library, or from 2.5 on a `.pt2` archive) that runs without Python tracing"),
    ("package", "what AOTInductor compiled for a passing cell's program (the `aoti` stage), kept with its inputs"
     " and eager's outputs; `export-matrix load` loads it on every build, runs it and compares"),
    ("compiled on, loaded on", "the build that compiled a package, and the build that loaded it: a package's pair"),
    ("backward promise", "upstream's promise that a package compiled on %s or later loads and matches on every"
     " newer release; kept on a pair where every package tried loaded and matched, else broken. Older releases"
     " loading newer packages are not promised" % PACKAGE.promised_from),
    ("own packages", "a release loading the packages it compiled itself; the promise takes it for granted, so a"
     " release that fails here is named as an exception"),
    ("compile of an older program", "a program exported and saved on an older release, compiled with AOTInductor"
     " on a newer one, its package loaded and run there (`load --aoti`)"),
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
    ("Saved programs", _SAVED),
    ("AOTInductor packages and upgrades", _AOTI),
    ("Comparing reports", _REPORTS),
)
TERMS = tuple(term for _, terms in SECTIONS for term, _ in terms)


NAME = "glossary"  # the page: glossary.md and site/glossary.html


def _term(words: str) -> d.Phrase:
    """Prose with code spans (a word between backticks) as code."""
    return d.phrase(*(d.Code(part) if i % 2 else part for i, part in enumerate(words.split("`"))))


def _statuses() -> d.Table:
    rows = [(d.phrase(d.Mark(s.value, named=False)), d.phrase(s.value), d.phrase(s.meaning)) for s in Status]
    rows.append((d.phrase(NO_RECORD), d.phrase("no record"),
                 d.phrase("the cell was not run (or its environment failed to install)")))  # fmt: skip
    rows += [
        (d.phrase(md.STAGE_MARKS[stage]), d.phrase("%s fails" % label), d.phrase(md.STAGE_MEANING[stage]))
        for stage, label in STAGES
    ]
    rows.append((d.phrase(str(NoCell.ENV_ERROR)), d.phrase("not installed"),
                 d.phrase("the libraries this case needs failed to install there")))  # fmt: skip
    return say.table(["", "status", "meaning"], rows)


def _uses(product: Product) -> d.Table:
    """What a grid of ``product``'s uses shows: each status with its glyph and meaning, then no record."""
    rows = [
        (d.phrase(d.Mark(s, "load", named=False)), d.phrase(s), d.phrase(product.meaning[s])) for s in product.statuses
    ]
    rows.append((d.phrase(NO_RECORD), d.phrase("no record"),
                 d.phrase("this release did not load this %s" % product.noun)))  # fmt: skip
    return say.table(["", "status", "meaning"], rows)


def page() -> d.Page:
    """The glossary: a table of terms per section, then the status glyphs and stage marks of cells, of saved programs'
    loads and of compiled packages' loads."""
    blocks: List[d.Block] = [d.Paragraph(d.phrase("The words the report uses, and what they count."))]
    for title, terms in SECTIONS:
        rows = [(d.phrase(d.Strong(_term(term))), _term(meaning)) for term, meaning in terms]
        anchors = tuple("term-" + markdown_anchor(term) for term, _ in terms)  # a term can be linked: #term-epoch
        table = say.table(["term", "meaning"], rows, anchors=anchors)
        blocks.append(d.Section(markdown_anchor(title), title, (table,)))
    blocks += [
        d.Section("statuses-and-marks", "Statuses and marks", (_statuses(),)),
        d.Section("load-statuses", "Load statuses", (
            d.Paragraph(d.phrase("What loading a saved program on a release gave.")), _uses(PROGRAM))),
        d.Section("package-statuses", "Package statuses", (
            d.Paragraph(d.phrase("What loading a compiled package on a release gave.")), _uses(PACKAGE))),
        stage_grids.glossary_section(),
    ]  # fmt: skip
    return d.Page(NAME, "Glossary", tuple(blocks), up=d.link("← back to the matrix", d.page("index")))
