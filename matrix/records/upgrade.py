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
could not try (not-applicable, untrusted, a case that cannot load). A case's verdict names what the
upgrade breaks: an export that passed on ``before`` and fails on ``after``, and every NO of the other
three questions.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from matrix.contract.schema import AOTI_TRIED, MODES, STAGE_OK, LoadStatus, Status
from matrix.records import artifacts, store

# The cases of the real-model pack (cases/real_models/).
PACK_PREFIX = "real_models/"
# Cell statuses that say the export did not give a program that reproduces eager.
_EXPORT_FAILS = (Status.MISMATCH.value, Status.FAIL.value, Status.CRASH.value, Status.TIMEOUT.value)


class Answer(str, enum.Enum):
    YES = "yes"
    NO = "no"
    NOT_TRIED = "not tried"


QUESTIONS = ("export", "saved", "package", "compile")
# What each question asks, for a pair "A → B".
ASKED = {
    "export": "exports on B (and did on A)",
    "saved": "a program saved on A loads and matches on B",
    "package": "a package compiled on A loads and matches on B",
    "compile": "a program exported on A compiles on B, its package loads and matches",
}


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
    return Answer.NO if status in AOTI_TRIED else Answer.NOT_TRIED


@dataclass(frozen=True)
class Found:
    """One record's outcome for a question: its status and, where it failed, the error's first line."""

    status: str
    error: str = ""


@dataclass(frozen=True)
class ModeAnswer:
    """The four questions for one case in one mode; None where no record answers."""

    mode: str
    before: Optional[Found]  # the cell on A
    after: Optional[Found]  # the cell on B
    saved: Optional[Found]  # A's saved program loaded on B
    package: Optional[Found]  # A's package loaded on B
    compiled: Optional[Found]  # A's program compiled on B

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
        """What the upgrade breaks in this mode, in words ("" when nothing)."""
        found = []
        if self.exported_before is Answer.YES and self.answer("export") is Answer.NO:
            found.append("export")
        found += [q for q in QUESTIONS[1:] if self.answer(q) is Answer.NO]
        return found


@dataclass(frozen=True)
class CaseAnswer:
    case: str
    modes: Tuple[ModeAnswer, ...]  # in MODES order, the modes either release ran

    @property
    def breaks(self) -> Tuple[Tuple[str, str], ...]:
        """(mode, question) of each thing the upgrade breaks."""
        return tuple((m.mode, q) for m in self.modes for q in m.broken())

    @property
    def verdict(self) -> str:
        """``breaks`` when the upgrade breaks something, ``fixed`` when an export failing on A passes on B,
        ``works`` when it exports on B in some mode, ``fails`` when it fails on both, else ``not tried``."""
        if self.breaks:
            return "breaks"
        after = [m.answer("export") for m in self.modes]
        if any(m.exported_before is Answer.NO and m.answer("export") is Answer.YES for m in self.modes):
            return "fixed"
        if Answer.YES in after:
            return "works"
        return "fails" if Answer.NO in after else "not tried"


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


def _found(row: Mapping[str, Any]) -> Found:
    status = str(row.get("status"))
    error = ""
    if status not in (Status.PASS.value, STAGE_OK):
        kind, message = row.get("error_type"), row.get("error_message")
        parts = [str(v) for v in (kind, message) if isinstance(v, str) and v]
        error = ": ".join(parts).split("\n", 1)[0]
    return Found(status, error)


class Upgrades:
    """The tables indexed once, so that any pair of builds is answered without scanning them again.

    ``cells`` is ``tables.cells`` (or the published ``cells.parquet``); ``loads``, ``packages`` and ``compiles``
    are the load, package and compile tables (each with ``saved_torch_version``, ``torch_version``, ``case``,
    ``mode``, ``status``); any may be empty. Rows of a ``--with`` set are left out: the answer is torch's alone.
    """

    def __init__(
        self,
        cells: pd.DataFrame,
        loads: Optional[pd.DataFrame] = None,
        packages: Optional[pd.DataFrame] = None,
        compiles: Optional[pd.DataFrame] = None,
    ) -> None:
        self.cells: Dict[Tuple[str, str, str], Found] = {}
        for row in _plain(cells, ("release", "case", "mode")):
            self.cells[(str(row["release"]), str(row["case"]), str(row["mode"]))] = _found(row)
        self.releases: Tuple[str, ...] = tuple(store.ordered(k[0] for k in self.cells))
        self.case_names: Tuple[str, ...] = tuple(sorted({k[1] for k in self.cells}))
        self.products = {
            "saved": _pairs(loads),
            "package": _pairs(packages),
            "compile": _pairs(compiles),
        }

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
                saved, package, compiled = (self.products[q].get(key) for q in ("saved", "package", "compile"))
                if a is None and b is None and saved is None and package is None and compiled is None:
                    continue
                modes.append(ModeAnswer(mode, a, b, saved, package, compiled))
            found.append(CaseAnswer(case, tuple(modes)))
        return Upgrade(before, after, tuple(found))


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
