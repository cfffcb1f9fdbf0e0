"""From one release to a newer one: what the upgrade does to each case, judged from the report's tables.

For a pair of builds (``before``, ``after``, named as the cell table's ``release`` column) and each case
and mode, four questions, each answered from one table:

- **export**: the cell's status on ``before`` and on ``after`` (the cell table);
- **saved**: does a program saved on ``before`` load on ``after`` and reproduce its saved outputs (the
  load table, ``artifacts.table``);
- **package**: does an AOTInductor package compiled on ``before`` load and match on ``after`` (the
  package table, ``artifacts.table`` of products.PACKAGE);
- **compile**: does a program exported on ``before`` compile with AOTInductor on ``after``, its package
  load and match (the compile table, ``artifacts.table`` of products.COMPILE).

Each answer is YES, NO or NOT_TRIED. Not tried is never a failure: no record (a mode or stage that did
not run, a program that was never saved because its export failed) or a status that says the release
could not try (not-applicable, untrusted, a case that cannot load).

Each thing asked of a mode (the export, each stage run on the exported program, each product) is judged
from that mode's own records, on ``before`` and on ``after`` (:class:`Outcome`): for a product, ``before``
is the same product used on the release that made it (a program saved on A loaded on A; a package
compiled on A loaded on A; for a compile, A's own compile of its program), so that the upgrade breaks a
product only where it worked on the older build with its own files. A mode's verdict is judged from its
outcomes (:attr:`ModeAnswer.verdict`); a case's is the summary of its modes' (:attr:`CaseAnswer.verdict`,
each mode's in :attr:`CaseAnswer.by_verdict`). A stage whose outcome is declared (``Stage.shown``) is judged from
its declaration alone: its passing outcome is YES, another it tried NO, one that did not try not tried.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.products import COMPILE, PACKAGE, PROGRAM
from matrix.contract.schema import MODES, STAGE_ERROR, STAGE_OK, STAGES, LoadStatus, Status
from matrix.records import artifacts, known_issues, stage_outcomes, store
from matrix.records import packages as dependency_packages
from matrix.records.known_issues import KnownIssue

# The cases of the real-model pack (cases/real_models/).
PACK_PREFIX = "real_models/"
# Cell statuses that say the export did not give a program that reproduces eager.
_EXPORT_FAILS = (Status.MISMATCH.value, Status.FAIL.value, Status.CRASH.value, Status.TIMEOUT.value)


class Answer(str, enum.Enum):
    YES = "yes"
    NO = "no"
    NOT_TRIED = "not tried"


QUESTIONS = ("export", "saved", "package", "compile")
PRODUCTS = QUESTIONS[1:]
# The product each question of PRODUCTS asks about.
PRODUCT_OF = {"saved": PROGRAM, "package": PACKAGE, "compile": COMPILE}
# Where each thing shows a failure, as known_issues names it (a stage is named by its own label).
_ISSUE_STAGE = {"export": "export", **{q: p.stage for q, p in PRODUCT_OF.items()}}
# A compile's home (a program of A compiled on A) is A's own cell's stage that compiles it: the declared stage whose
# outcomes are the compile's.
_COMPILING = next(
    (label for label, s in stage_outcomes.BY_LABEL.items() if stage_outcomes.shown(s).outcomes == COMPILE.statuses), ""
)
# A mode's verdict, worst first: the upgrade breaks something; fixes something that failed on A; something fails on
# B that failed on A too; something fails on B that A did not try; everything tried on B works; nothing was tried.
VERDICTS = ("breaks", "fixed", "fails", "fails on B", "works", "not tried")
# A case's verdict summarises its modes': the first of this order that some mode has (a case that works in one mode
# and fails in the other "works", and says in which mode it fails: CaseAnswer.by_verdict).
CASE_ORDER = ("breaks", "fixed", "works", "fails on B", "fails", "not tried")


def export_answer(status: Optional[str]) -> Answer:
    """A cell status as an answer: pass is YES, a failing status NO, anything else (or none) not tried."""
    if status == Status.PASS.value:
        return Answer.YES
    return Answer.NO if status in _EXPORT_FAILS else Answer.NOT_TRIED


def load_answer(status: Optional[str]) -> Answer:
    """A load status (program or package) as an answer: tried loads that do not pass are NO."""
    if status == LoadStatus.PASS.value:
        return Answer.YES
    return Answer.NO if status is not None and artifacts.tried(status) else Answer.NOT_TRIED


def compile_answer(status: Optional[str]) -> Answer:
    """A compile status as an answer: ok is YES, a tried compile that did not match NO."""
    if status == STAGE_OK:
        return Answer.YES
    return Answer.NO if status in COMPILE.tried else Answer.NOT_TRIED


def stage_answer(outcome: Optional[str], label: str = "") -> Answer:
    """A stage's outcome on an exported program: for a declared one (its ``label``), its passing outcome is YES,
    another it tried NO; for the others (``decompose_status``), ok is YES, error NO; anything else not tried."""
    if label in stage_outcomes.BY_LABEL:
        declared = stage_outcomes.shown(stage_outcomes.BY_LABEL[label])
        if outcome == declared.passing:
            return Answer.YES
        return Answer.NO if declared.failed(outcome) else Answer.NOT_TRIED
    if outcome == STAGE_OK:
        return Answer.YES
    return Answer.NO if outcome == STAGE_ERROR else Answer.NOT_TRIED


@dataclass(frozen=True)
class Found:
    """One record's outcome for a question: its status and, where it failed, the error's first line.

    A cell's also holds what its row shows beside the export: each reported or declared stage that ran (label,
    outcome, error's first line), and the packages its dependency set names with the versions installed."""

    status: str
    error: str = ""
    stages: Tuple[Tuple[str, str, str], ...] = ()
    packages: Tuple[Tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Outcome:
    """One thing asked of a mode (``export``, a stage's label, or a product of PRODUCTS), on A and on B.

    For a product, ``before`` is the product used on the release that made it (its own files); ``error`` and
    ``issue`` are B's failure's first line and the known issue it matches, where B fails; ``since`` is, where A
    fails, the oldest release of the run of releases ending on A that fail alike (A itself where the run starts
    there)."""

    thing: str
    before: Answer
    after: Answer
    error: str = ""
    issue: Optional[KnownIssue] = None
    since: str = ""

    @property
    def change(self) -> str:
        """``broken`` (YES on A, NO on B), ``fixed`` (NO → YES), ``still fails`` (NO on both), ``fails on B`` (not
        tried on A), ``works`` (YES on B) or ``not tried`` (nothing on B)."""
        if self.after is Answer.NO:
            return {Answer.YES: "broken", Answer.NO: "still fails"}.get(self.before, "fails on B")
        if self.after is Answer.YES:
            return "fixed" if self.before is Answer.NO else "works"
        return "not tried"


@dataclass(frozen=True)
class ModeAnswer:
    """The four questions for one case in one mode; None where no record answers. ``outcomes``: each thing asked,
    judged from this mode's records alone (:class:`Outcome`)."""

    mode: str
    before: Optional[Found]  # the cell on A
    after: Optional[Found]  # the cell on B
    saved: Optional[Found]  # A's saved program loaded on B
    package: Optional[Found]  # A's package loaded on B
    compiled: Optional[Found]  # A's program compiled on B
    outcomes: Tuple[Outcome, ...] = ()
    # Each package the case's dependency set names whose version differs between A and B: (name, on A, on B).
    versions: Tuple[Tuple[str, str, str], ...] = ()

    def found(self, question: str) -> Optional[Found]:
        """The record that answers one of QUESTIONS (for export: the cell on B)."""
        return {"export": self.after, "saved": self.saved, "package": self.package, "compile": self.compiled}[question]

    def answer(self, question: str) -> Answer:
        """The answer to one of QUESTIONS (for export: on B)."""
        found = self.found(question)
        status = found.status if found else None
        return {"export": export_answer, "compile": compile_answer}.get(question, load_answer)(status)

    @property
    def exported_before(self) -> Answer:
        return export_answer(self.before.status if self.before else None)

    def broken(self) -> List[str]:
        """What the upgrade breaks in this mode: each thing that worked on A (a product: with A's own files) and
        fails on B."""
        return [o.thing for o in self.outcomes if o.change == "broken"]

    def outcome(self, thing: str) -> Optional[Outcome]:
        return next((o for o in self.outcomes if o.thing == thing), None)

    @functools.cached_property
    def verdict(self) -> str:
        """This mode's verdict (one of VERDICTS), from its own outcomes: the first that applies of ``breaks``
        (something broken), ``fixed`` (something that failed on A works on B), ``fails`` (something fails on B
        and failed on A too), ``fails on B`` (something fails on B that A did not try), ``works`` (something
        works on B), else ``not tried``."""
        changes = {o.change for o in self.outcomes}
        for verdict, change in (("breaks", "broken"), ("fixed", "fixed"), ("fails on B", "fails on B"),
                                ("fails", "still fails"), ("works", "works")):  # fmt: skip
            if change in changes:
                return verdict
        return "not tried"


@dataclass(frozen=True)
class CaseAnswer:
    case: str
    modes: Tuple[ModeAnswer, ...]  # in MODES order, the modes either release ran

    @property
    def breaks(self) -> Tuple[Tuple[str, str], ...]:
        """(mode, thing) of each thing the upgrade breaks."""
        return tuple((m.mode, q) for m in self.modes for q in m.broken())

    @property
    def by_verdict(self) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
        """Each verdict its modes have and those modes, in CASE_ORDER: what the case's verdict summarises."""
        said = [(m.mode, m.verdict) for m in self.modes]
        found = ((v, tuple(mode for mode, mine in said if mine == v)) for v in CASE_ORDER)
        return tuple((v, modes) for v, modes in found if modes)

    @property
    def verdict(self) -> str:
        """The summary of the modes' verdicts: the first of CASE_ORDER that some mode has (``not tried`` without
        a mode). ``works`` is said where some mode works and none breaks or fixes anything: :attr:`by_verdict`
        says which modes fail."""
        found = self.by_verdict
        return found[0][0] if found else "not tried"


@dataclass(frozen=True)
class Tally:
    """One question in one mode over a set of cases: how many were tried and how many answered YES."""

    question: str
    mode: str
    yes: int
    tried: int
    yes_before: int = 0  # export only: those that passed on A
    tried_before: int = 0


@dataclass(frozen=True)
class Upgrade:
    """The answer for a pair of builds: each case (name order) and the tallies of every case and of the pack."""

    before: str
    after: str
    cases: Tuple[CaseAnswer, ...]

    def of(self, names: Iterable[str]) -> Tuple[CaseAnswer, ...]:
        wanted = set(names)
        return tuple(c for c in self.cases if c.case in wanted)

    @property
    def pack(self) -> Tuple[CaseAnswer, ...]:
        """The real-model pack's cases."""
        return tuple(c for c in self.cases if c.case.startswith(PACK_PREFIX))

    def tallies(self, cases: Optional[Sequence[CaseAnswer]] = None) -> Tuple[Tally, ...]:
        """Per question and mode, over ``cases`` (default every case): YES of tried. A mode no case was tried in
        for a question has no tally: it did not run, which is not "0 of N"."""
        chosen = self.cases if cases is None else cases
        found = []
        for question in QUESTIONS:
            for mode in MODES:
                answers = [m for c in chosen for m in c.modes if m.mode == mode]
                tried = [m for m in answers if m.answer(question) is not Answer.NOT_TRIED]
                before = [m for m in answers if m.exported_before is not Answer.NOT_TRIED]
                if not tried and not (question == "export" and before):
                    continue
                yes = sum(m.answer(question) is Answer.YES for m in tried)
                if question == "export":
                    yes_before = sum(m.exported_before is Answer.YES for m in before)
                    found.append(Tally(question, mode, yes, len(tried), yes_before, len(before)))
                else:
                    found.append(Tally(question, mode, yes, len(tried)))
        return tuple(found)


def _first_line(*parts: Any) -> str:
    return ": ".join(str(v) for v in parts if isinstance(v, str) and v).split("\n", 1)[0]


def _found(row: Mapping[str, Any]) -> Found:
    status = str(row.get("status"))
    error = ""
    if status not in (Status.PASS.value, STAGE_OK):
        error = _first_line(row.get("error_type"), row.get("error_message"))
    stages = tuple(
        (label, str(row[name + "_status"]), _first_line(row.get(name + "_error")))
        for name, label in STAGES
        if isinstance(row.get(name + "_status"), str)
    ) + stage_outcomes.said(row)
    added = row.get("added_packages")
    if isinstance(added, str):  # a published table keeps it as JSON text
        added = json.loads(added) if added.startswith("{") else None
    named = tuple((n, v) for n, v in dependency_packages.named_versions(row.get("dependency_set"), added) if v)
    return Found(status, error, stages, named)


# The cell columns an answer reads besides the status and the error's.
_CELL_EXTRA = ("dependency_set", "added_packages", *stage_outcomes.COLUMNS,
               *(name + suffix for name, _ in STAGES for suffix in ("_status", "_error")))  # fmt: skip


class Upgrades:
    """The tables indexed once, so that any pair of builds is answered without scanning them again.

    ``cells`` is ``tables.cells`` (or the published ``cells.parquet``); ``loads``, ``packages`` and ``compiles``
    are the load, package and compile tables (each with ``saved_torch_version``, ``torch_version``, ``case``,
    ``mode``, ``status``); any may be empty. Rows of a ``--with`` set are left out: the answer is torch's alone.
    ``issues``: the known issues that label a failure (default: the shipped file's).
    """

    def __init__(
        self,
        cells: pd.DataFrame,
        loads: Optional[pd.DataFrame] = None,
        packages: Optional[pd.DataFrame] = None,
        compiles: Optional[pd.DataFrame] = None,
        issues: Optional[Sequence[KnownIssue]] = None,
    ) -> None:
        self.cells: Dict[Tuple[str, str, str], Found] = {}
        for row in _plain(cells, ("release", "case", "mode", *_CELL_EXTRA)):
            self.cells[(str(row["release"]), str(row["case"]), str(row["mode"]))] = _found(row)
        self.releases: Tuple[str, ...] = tuple(store.ordered(k[0] for k in self.cells))
        self.case_names: Tuple[str, ...] = tuple(sorted({k[1] for k in self.cells}))
        self.products = {
            "saved": _pairs(loads),
            "package": _pairs(packages),
            "compile": _pairs(compiles),
        }
        self.issues = tuple(known_issues.load() if issues is None else issues)
        # Each (thing, case, mode, release)'s run of failing releases: every pair from that release asks again.
        self._runs: Dict[Tuple[str, str, str, str], str] = {}

    def pairs(self) -> List[Tuple[str, str]]:
        """Every (older, newer) pair of the builds, in version order."""
        return [(a, b) for i, a in enumerate(self.releases) for b in self.releases[i + 1 :]]

    def answer(self, before: str, after: str, cases: Optional[Iterable[str]] = None) -> Upgrade:
        """The answer for ``before`` → ``after`` over ``cases`` (default every case of the cell table)."""
        names = sorted(set(cases)) if cases is not None else list(self.case_names)
        found = []
        for case in names:
            modes = []
            for mode in MODES:
                a, b = self.cells.get((before, case, mode)), self.cells.get((after, case, mode))
                key = (before, after, case, mode)
                saved, package, compiled = (self.products[q].get(key) for q in PRODUCTS)
                if a is None and b is None and saved is None and package is None and compiled is None:
                    continue
                mine = ModeAnswer(mode, a, b, saved, package, compiled)
                outcomes = tuple(self._outcomes(mine, before, after, case))
                modes.append(dataclasses.replace(mine, outcomes=outcomes, versions=_versions(a, b)))
            found.append(CaseAnswer(case, tuple(modes)))
        return Upgrade(before, after, tuple(found))

    def home(self, question: str, release: str, *, case: str, mode: str) -> Answer:
        """A product of ``release`` used on ``release`` itself (its own files): the saved program or package loaded
        there; for a compile, the release's own compile of its program (its cell's stage that compiles it), else
        its own package's load."""
        if question == "compile":
            cell = self.cells.get((release, case, mode))
            own = next((o for label, o, _ in cell.stages if label == _COMPILING), None) if cell else None
            if own is not None:
                return compile_answer(own)
            question = "package"
        used = self.products[question].get((release, release, case, mode))
        return load_answer(used.status if used else None)

    def _outcomes(self, m: ModeAnswer, before: str, after: str, case: str) -> Iterable[Outcome]:
        """Each thing asked of ``m``: the export and each stage where either side tried it, each product used on B."""
        for thing in ("export", *_labels(m), *PRODUCTS):
            if thing in PRODUCTS:
                b = m.answer(thing)
                if b is Answer.NOT_TRIED:  # A's product not used on B: nothing the upgrade did to it
                    continue
            else:
                b = self.on(thing, after, case, m.mode)
            a = self.on(thing, before, case, m.mode)
            if a is Answer.NOT_TRIED and b is Answer.NOT_TRIED:
                continue
            error, issue, since = "", None, ""
            if b is Answer.NO:
                error = self._error(m, thing)
                stage = _ISSUE_STAGE.get(thing, thing)
                issue = known_issues.label(stage, None, error, after, before, self.issues) if error else None
            if a is Answer.NO:
                key = (thing, case, m.mode, before)
                since = self._runs[key] if key in self._runs else self._runs.setdefault(key, self._since(key))
            yield Outcome(thing, a, b, error, issue, since)

    def on(self, thing: str, release: str, case: str, mode: str) -> Answer:
        """What ``release`` itself says of a thing: its cell's export or stage (a stage says nothing where the export
        failed: it runs on the exported program), or a product it made, used on itself (:meth:`home`)."""
        if thing in PRODUCTS:
            return self.home(thing, release, case=case, mode=mode)
        cell = self.cells.get((release, case, mode))
        if thing == "export" or cell is None:
            return export_answer(cell.status if cell else None)
        if cell.status != Status.PASS.value:
            return Answer.NOT_TRIED
        return stage_answer(next((o for label, o, _ in cell.stages if label == thing), None), thing)

    def _error(self, m: ModeAnswer, thing: str) -> str:
        if thing == "export":
            return m.after.error if m.after else ""
        if thing in PRODUCTS:
            found = m.found(thing)
            return found.error if found else ""
        return next((e for label, _, e in (m.after.stages if m.after else ()) if label == thing), "")

    def _since(self, key: Tuple[str, str, str, str]) -> str:
        """The oldest release of the run of releases ending on ``release`` where the thing fails (:meth:`on`)."""
        thing, case, mode, release = key
        since = release
        for older in reversed(self.releases[: self.releases.index(release)] if release in self.releases else ()):
            if self.on(thing, older, case, mode) is not Answer.NO:
                break
            since = older
        return since


def _labels(m: ModeAnswer) -> List[str]:
    """The labels of the stages that ran on A's or B's cell: STAGES' in their order, then the declared ones'."""
    ran = [stage[0] for cell in (m.before, m.after) if cell is not None for stage in cell.stages]
    return [label for label in (*(label for _, label in STAGES), *stage_outcomes.BY_LABEL) if label in ran]


def _versions(a: Optional[Found], b: Optional[Found]) -> Tuple[Tuple[str, str, str], ...]:
    """The packages named on both cells whose versions differ: (name, on A, on B)."""
    if a is None or b is None:
        return ()
    newer = dict(b.packages)
    return tuple((name, v, newer[name]) for name, v in a.packages if name in newer and newer[name] != v)


def _plain(frame: Optional[pd.DataFrame], columns: Sequence[str]) -> List[Dict[str, Any]]:
    """The rows of torch alone (no ``--with`` set), with only ``columns`` and the error's (what an answer reads)."""
    if frame is None or frame.empty:
        return []
    if "with_set" in frame.columns:
        frame = frame[[not isinstance(v, str) or not v for v in frame["with_set"]]]
    wanted = [c for c in (*columns, "status", "error_type", "error_message") if c in frame.columns]
    return frame[wanted].to_dict("records")


def _pairs(table: Optional[pd.DataFrame]) -> Dict[Tuple[str, str, str, str], Found]:
    """A product table by (made on, used on, case, mode); a later row of the same key wins, as in the table."""
    found: Dict[Tuple[str, str, str, str], Found] = {}
    for row in _plain(table, ("saved_torch_version", "torch_version", "case", "mode")):
        key = (str(row["saved_torch_version"]), str(row["torch_version"]), str(row["case"]), str(row["mode"]))
        found[key] = _found(row)
    return found


def newest_pair(releases: Sequence[str]) -> Optional[Tuple[str, str]]:
    """The two newest builds of ``releases`` (version order), or None with fewer than two."""
    ordered = store.ordered(releases)
    return (ordered[-2], ordered[-1]) if len(ordered) >= 2 else None


@dataclass(frozen=True)
class Disagreement:
    """A cell that one of the front page's two verdicts on B names and the other does not, and why.

    ``said_by``: ``upgrade`` (upgrading A → B breaks it, yet it did not regress in B) or ``regressed`` (it
    regressed in B, yet the upgrade from A does not break it). ``why`` is the reason, alike for every cell it
    holds for, so that a reader meets it once; ``what``, this cell's part of it (what broke, or what failed)."""

    case: str
    mode: str
    said_by: str
    why: str
    what: str = ""


def agreement(found: Upgrade, regressed: Iterable[Tuple[str, str]], previous: str) -> Tuple[Disagreement, ...]:
    """Where "upgrading A → B breaks" (``found``) and "regressed in B" (``regressed``: the (case, mode) of B's open
    regressions, which judge the cells of the transition ``previous`` → B) name different cells, each with why.

    The regressions judge a cell's export and stages; the upgrade also judges the products made on A, which no
    transition judges. A regression in B that the upgrade does not break failed on A already (or A did not try it);
    an upgrade's break of a cell that did not regress in B broke in a release between A and B."""
    modes = {(c.case, m.mode): m for c in found.cases for m in c.modes}
    wanted = set(regressed)
    said: List[Disagreement] = []
    for (case, mode), m in sorted(modes.items()):
        broken = m.broken()
        cells = [t for t in broken if t not in PRODUCTS]
        if (case, mode) in wanted:
            continue
        if cells and previous != found.before:
            why = "broke in a release after %s, up to %s" % (found.before, previous)
        elif cells:
            why = "not among %s's open regressions" % found.after
        elif broken:
            why = "what broke is a product made on %s, which the regressions do not judge" % found.before
        else:
            continue
        said.append(Disagreement(case, mode, "upgrade", why, ", ".join(cells or broken)))
    for case, mode in sorted(wanted):
        mine = modes.get((case, mode))
        if mine is not None and mine.broken():
            continue
        failing = [o for o in (mine.outcomes if mine else ()) if o.change == "still fails"]
        if not failing:
            said.append(Disagreement(case, mode, "regressed", "not tried on %s" % found.before))
        else:
            what = "%s, since %s" % (failing[0].thing, failing[0].since)
            said.append(Disagreement(case, mode, "regressed", "failing on %s already" % found.before, what))
    return tuple(said)
