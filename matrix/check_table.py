"""What ``export-matrix check`` prints: a table per case, the notes under it, and the summaries after them."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .contract.case import CaseInfo
from .contract.schema import STATUSES, NoCell, Status, passes
from .records import stage_outcomes
from .records.channel import is_candidate

ERROR_WIDTH = 90


# What a row's status column can hold: a cell's status, or why there is no cell.
Shown = Union[Status, NoCell]


def shown(status: str) -> Shown:
    """A status text as the schema value it names (ValueError for one the schema does not know)."""
    return Status(status) if status in STATUSES else NoCell(status)


@dataclass(frozen=True)
class Row:
    """One line of the table: a release and mode, and what happened."""

    torch: str
    variant: str
    python: str
    mode: str
    status: Shown
    graph_hash: Optional[str] = None
    export_s: Optional[float] = None
    error: Optional[str] = None
    diagnosis: Tuple[Dict[str, Any], ...] = ()  # draft_export's problems, for a failed export
    packages: str = ""  # the versions of the case's dependencies in this environment, e.g. "transformers 4.57.6"
    # The fields of each stage with a declared outcome (Stage.shown) that the cell's run selected; {} for none.
    stages: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "status", shown(self.status))
        object.__setattr__(self, "diagnosis", tuple(self.diagnosis))


def short_error(error_type: Any, message: Any) -> Optional[str]:
    kind = str(error_type).rsplit(".", 1)[-1] if error_type else ""
    text = ": ".join(part for part in (kind, str(message or "").strip()) if part)
    if not text:
        return None
    return text if len(text) <= ERROR_WIDTH else text[: ERROR_WIDTH - 1] + "…"


HEADERS = ("torch", "variant", "python", "mode", "status", "graph hash", "export s", "error")


def seconds(value: Any) -> str:
    return "%.2f" % value if isinstance(value, (int, float)) and not isinstance(value, bool) else ""


def error_text(row: Row) -> str:
    """The error column: the cell's error, else what failed in the first stage with a declared outcome that did."""
    failed = stage_outcomes.failed(row.stages)
    if row.error or not failed:
        return row.error or ""
    said = "%s %s" % (stage_outcomes.shown(failed[0]).label, stage_outcomes.error_line(row.stages, failed[0]))
    return said if len(said) <= ERROR_WIDTH else said[: ERROR_WIDTH - 1] + "…"


def format_rows(rows: Sequence[Row], fmt: str = "text") -> str:
    """The table as plain text, Markdown or JSON."""
    if fmt == "json":
        return json.dumps([asdict(r) for r in rows], indent=1, sort_keys=True)
    from tabulate import tabulate

    ran = stage_outcomes.ran(r.stages for r in rows)  # a column per stage that ran, its outcome
    table = [
        (r.torch, r.variant, r.python, r.mode, r.status, r.graph_hash or "", seconds(r.export_s),
         *(stage_outcomes.outcome(r.stages, s) or "" for s in ran), error_text(r))
        for r in rows
    ]  # fmt: skip
    headers = HEADERS[:-1] + tuple(stage_outcomes.shown(s).label for s in ran) + HEADERS[-1:]
    text = tabulate(table, headers=headers, tablefmt="github" if fmt == "markdown" else "simple", disable_numparse=True)
    notes = package_lines(rows) + diagnosis_lines(rows)
    return text + ("\n\n" + "\n".join(notes) if notes else "")


def package_lines(rows: Sequence[Row]) -> List[str]:
    """Under the table: the versions of the case's dependencies that each release resolved."""
    seen: Dict[str, str] = {}
    for row in rows:
        if row.packages and row.torch not in seen:
            seen[row.torch] = row.packages
    return ["with torch %s: %s" % (torch, packages) for torch, packages in seen.items()]


def diagnosis_lines(rows: Sequence[Row]) -> List[str]:
    """Under the table: per failing row, one line per problem kind that draft_export found."""
    lines: List[str] = []
    for row in rows:
        if not row.diagnosis:
            continue
        lines.append("draft_export on %s %s:" % (row.torch, row.mode))
        kinds: Dict[str, List[Dict[str, Any]]] = {}
        for problem in row.diagnosis:
            kinds.setdefault(str(problem.get("kind")), []).append(problem)
        for kind, problems in sorted(kinds.items()):
            first = problems[0]
            count = sum(int(p.get("count") or 1) for p in problems)
            where = " at %s" % first["frame"] if first.get("frame") else ""
            more = " (and %d more)" % (len(problems) - 1) if len(problems) > 1 else ""
            lines.append("  %s ×%d: %s%s%s" % (kind, count, first.get("message"), where, more))
    return lines


def show(checked: Sequence[Tuple[CaseInfo, Sequence[Row]]], fmt: str, fail_on: str) -> Tuple[Any, ...]:
    """Print the tables of the cases checked and what follows them; the candidates' verdicts, judged once."""
    several = len(checked) > 1
    judged: Tuple[Any, ...] = ()  # candidate.Verdict, of the last case
    for number, (info, rows) in enumerate(checked):
        if fmt != "json":
            if several:
                print(("\n" if number else "") + heading(info, fmt))
            print(format_rows(rows, fmt))
            verdict = passing_summary(rows)
            if verdict and fmt == "text":
                print(verdict)
        judged = judge([(info, rows)], fail_on)
        for one_verdict in judged:
            print(candidate_summary(one_verdict), file=sys.stderr if fmt == "json" else sys.stdout)
    if several:
        judged = judge(checked, fail_on)
    if fmt == "json":
        print(format_rows(checked[0][1], "json") if not several else json_by_case(checked))
    elif several:
        print("\n" + cases_summary(checked))
        for one_verdict in judged:
            print(candidate_summary(one_verdict, by_case=True))
    if fmt != "json":
        answer = upgrade_summary(checked, fmt)
        if answer:
            print("\n" + answer)
    return judged


def judge(checked: Sequence[Tuple[CaseInfo, Sequence[Row]]], fail_on: str) -> Tuple[Any, ...]:
    """Each candidate among the rows (a nightly, a release candidate) against the newest release checked:
    ``candidate.Verdict``s; none judged where there is no candidate and ``--fail-on`` is never."""
    if fail_on == "never" and not any(is_candidate(r.torch, r.variant) for _, rows in checked for r in rows):
        return ()
    from .records import candidate  # pandas: only where a candidate is judged

    return candidate.judge(cell_tables(checked))


def progress(row: Row, case: Optional[str]) -> None:
    """One line on stderr as a row arrives: its release, its case where there are several, its mode and status."""
    after = "".join("  %s %s" % said[:2] for said in stage_outcomes.said(row.stages))
    named = "%-20s " % case if case else ""
    print("  %-14s %s%-10s %s%s" % (row.torch, named, row.mode, row.status, after), file=sys.stderr, flush=True)


def heading(info: CaseInfo, fmt: str) -> str:
    """The line above a case's table when several are checked."""
    if fmt == "markdown":
        return "### %s\n\n`%s`\n" % (info.name, info.path)
    return "== %s (%s)" % (info.name, info.path)


def json_by_case(checked: Sequence[Tuple[CaseInfo, Sequence[Row]]]) -> str:
    """The rows of several cases as one JSON object: each case's name, its rows."""
    return json.dumps({info.name: [asdict(r) for r in rows] for info, rows in checked}, indent=1, sort_keys=True)


def cases_summary(checked: Sequence[Tuple[CaseInfo, Sequence[Row]]]) -> str:
    """After several tables: how many cases pass on every release checked, and which do not."""
    short = [info.name for info, rows in checked if passing_summary(rows) is not None]
    text = "%d cases: %d pass on every release checked" % (len(checked), len(checked) - len(short))
    if short:
        text += "; %d do%s not: %s" % (len(short), "es" if len(short) == 1 else "", ", ".join(short))
    return text


def cell_tables(checked: Sequence[Tuple[CaseInfo, Sequence[Row]]]) -> Any:
    """The rows of every case checked as one cell table (a DataFrame)."""
    import pandas as pd

    return pd.concat([cell_table(rows, info.name) for info, rows in checked], ignore_index=True)


# The columns of ``tables.cells`` that a candidate verdict reads.
CELL_COLUMNS = (
    "release", "variant", "python", "with_set", "case", "mode", "status", "graph_hash", "error_type", "error_message",
)  # fmt: skip


def cell_table(rows: Sequence[Row], case: str) -> Any:
    """The table's rows as cells (``CELL_COLUMNS``), a DataFrame."""
    import pandas as pd

    cells = [
        (row.torch, row.variant, row.python, "", case, row.mode, str(row.status.value), row.graph_hash, None, row.error)
        for row in rows
    ]
    return pd.DataFrame(cells, columns=list(CELL_COLUMNS))


def candidate_summary(v: Any, by_case: bool = False) -> str:
    """One line per candidate (a ``candidate.Verdict``): ``candidate 2.16.0.dev20260115+cpu (nightly-cpu) vs
    2.15.0+cpu (cpu): regresses (strict: pass → fail)``, each build with its variant, as a candidate may carry the
    release's own version; ``by_case``: each cell named by its case too (``my_model strict: pass → fail``)."""
    head = "candidate %s (%s) vs %s (%s): " % (v.candidate, v.variant, v.reference, v.reference_variant)
    if not v.compared:
        return head + "nothing to compare"
    if not v.broken:
        return head + "no regression"
    cells = ["%s %s" % (m.get("case"), m["mode"]) if by_case else m["mode"] for m in v.broken]
    return head + "regresses (%s)" % "; ".join("%s: %s" % (c, m.get("detail")) for c, m in zip(cells, v.broken))


def upgrade_summary(checked: Sequence[Tuple[CaseInfo, Sequence[Row]]], fmt: str = "text") -> Optional[str]:
    """The report's upgrade answer (``records.upgrade``) from the oldest release checked to the newest, in its
    words: each case's verdict, then the export tallies (``check`` uses no product on another release, so the
    products' questions are left out). ``fmt`` markdown makes it a list. None with fewer than two releases."""
    from .records import upgrade  # pandas: only where two releases are compared
    from .report import upgrade as words

    found = upgrade.Upgrades(cell_tables(checked))
    if len(found.releases) < 2:
        return None
    answer = found.answer(found.releases[0], found.releases[-1])
    lines = ["upgrade %s → %s:" % (answer.before, answer.after)]
    for case in answer.cases:
        broken = words.breaks_words(case)
        lines.append("  %s: %s%s" % (case.case, words.case_words(case), " (%s)" % broken if broken else ""))
    # check makes no product that another release uses (it saves no program and loads none across releases): the
    # products' questions are not asked, rather than said "not run" on every pair.
    lines += ["  %s" % line for line in words.tallies_words(answer, asked=upgrade.QUESTIONS[:1])]
    if fmt == "markdown":
        lines = [lines[0]] + ["- " + line.strip() for line in lines[1:]]
    return "\n".join(lines)


def passing_summary(rows: Sequence[Row]) -> Optional[str]:
    """For a case that fails somewhere: where it passes, and from which release on it keeps passing.

    Releases are taken in the order of the rows (the order asked, oldest first for the
    usual selections); a release passes as the report says (``schema.passes``): every mode that exists
    there passes (a not-applicable mode does not count against it).
    """
    statuses: Dict[str, List[Shown]] = {}
    variants: Dict[str, set] = {}
    for row in rows:
        variants.setdefault(row.torch, set()).add(row.variant)
    for row in rows:
        # Two builds of one version (a release and its candidate) are named apart by their variants.
        label = row.torch if len(variants[row.torch]) == 1 else "%s (%s)" % (row.torch, row.variant)
        statuses.setdefault(label, []).append(row.status)
    labels = list(statuses)
    passing = [label for label in labels if passes(statuses[label])]
    if len(passing) == len(labels):
        return None
    if not passing:
        return "passes on none of the releases checked (%s)" % ", ".join(labels)
    text = "passes on %s" % ", ".join(passing)
    if labels[-1] not in passing:
        return text + "; fails on the newest release checked (%s)" % labels[-1]
    since = labels[-1]
    for label in reversed(labels):
        if label not in passing:
            break
        since = label
    return text + "; keeps passing from %s on" % since
