"""One Markdown page per case: what it is, its status everywhere, how its graph changed, its errors."""

from __future__ import annotations

import ast
import os
import posixpath
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from matrix.contract.schema import MODES, STAGE_ERROR, STAGES, Status
from matrix.records import failures, graph_diffs, packages, store
from matrix.records.transitions import version_of
from matrix.report import diff_files
from matrix.report import markdown as md

# Long tracebacks and graphs stay readable; the tail of a traceback is where the error is.
TRACEBACK_LINES = 80


def default_roots() -> Tuple[str, ...]:
    """The case folders shown by default: ``cases/`` of the current folder (where `run` finds cases by default),
    and of the checkout this package runs from (absent when it is installed)."""
    checkout = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "cases")
    return tuple(dict.fromkeys([os.path.abspath("cases"), checkout]))


def locate(case_file: Any, roots: Sequence[str]) -> Optional[str]:
    """The file a record's ``case_file`` names, only if it lies inside one of ``roots``; else None.

    ``case_file`` is record data, not a path to follow: an absolute one must resolve
    (links included) to inside a root. A relative one never resolves against the
    current folder; the worker records it relative to where it ran, e.g.
    ``cases/tutorial/x.py`` for the root ``cases``, so it is tried under each root with
    as many of its leading folders dropped as match the root's own trailing folders.
    """
    if not isinstance(case_file, str) or not case_file or "\0" in case_file:
        return None
    for root in roots:
        named, base = os.path.abspath(root), os.path.realpath(root)
        if os.path.isabs(case_file):
            candidates = [case_file]
        else:
            parts = posixpath.normpath(case_file.replace(os.sep, "/")).split("/")
            tail = named.split(os.sep)
            candidates = [
                os.path.join(named, *parts[k:])
                for k in range(min(len(parts) - 1, len(tail)), -1, -1)
                if parts[:k] == tail[len(tail) - k :]
            ]
        for candidate in candidates:
            path = os.path.realpath(candidate)
            if path != base and os.path.commonpath([base, path]) == base and os.path.isfile(path):
                return path
    return None


def read_source(case_file: Any, roots: Sequence[str]) -> Tuple[Optional[str], Optional[str]]:
    """The case's source and docstring, or (None, None) when the file is not inside a case root (any more)."""
    path = locate(case_file, roots)
    if path is None:
        return None, None
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError):
        return None, None
    return source, docstring(source)


def docstring(source: str) -> Optional[str]:
    """The module's docstring, else the first class's (ExportDB puts it on the model)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found = ast.get_docstring(tree)
    if found:
        return found
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and ast.get_docstring(node):
            return ast.get_docstring(node)
    return None


Row = Dict[str, Any]


def by_case(items: Iterable[Any], case: Callable[[Any], Any] = lambda row: row["case"]) -> Dict[str, List[Any]]:
    """Records (or anything ``case`` names the case of) by the name of their case, each case's in their order."""
    found: Dict[str, List[Any]] = {}
    for item in items:
        found.setdefault(str(case(item)), []).append(item)
    return found


def render(
    case: str,
    rows: List[Row],
    moves: List[Row],
    roots: Sequence[str] = (),
    reproduce: str = "",
    kept: Optional[Mapping[Tuple[str, ...], Row]] = None,
    shelf: Optional[diff_files.Shelf] = None,
    devices: str = "",
) -> str:
    """The page of one case.

    ``rows`` are its cells in report order (release, variant, python, mode) as dicts with
    the graph and traceback texts and an ``environment`` label; ``moves`` its transitions;
    ``roots`` the folders its source may be shown from; ``reproduce`` the section on reproducing
    its failures (:func:`matrix.report.repro.markdown`), shown after its errors; ``kept`` the graph
    diffs earlier reports kept (``graph_diffs.carried``), shown where the texts are missing; ``shelf`` keeps
    the diff files the page links (:mod:`.diff_files`), for the build to write; ``devices`` the section on the
    builds that also ran the case on another device (:func:`matrix.report.devices_page.case_markdown`), after its
    repros.
    """
    first = rows[-1]
    source, doc = read_source(first["case_file"], roots)
    parts = ["# %s\n" % md.text(case), "[← back to the matrix](../index.md)\n"]
    if doc:
        parts.append("\n".join("> " + md.text(line) if line.strip() else ">" for line in doc.splitlines()) + "\n")
    parts.append(_facts(first))
    parts.append("## Status\n")
    parts.append(_status_table(rows))
    needs = _dependencies(rows)
    if needs:
        parts.append("## Dependencies\n")
        parts.append(needs)
    if moves:
        parts.append("## Transitions\n")
        parts.append(
            md.table(
                ["releases", "mode", "variant", "kind", "detail"],
                [
                    [
                        md.link(
                            md.transition_title(m["before"], m["after"], m.get("variant_before"), m.get("variant")),
                            "../" + md.transition_page(m["before"], m["after"]),
                        ),
                        md.text(m["mode"]),
                        md.text(m["variant"]),
                        md.text(m["kind"]),
                        md.text(m["detail"], limit=300),
                    ]
                    for m in moves
                ],
            )
        )
    diffs = _graph_diffs(case, rows, kept, shelf if shelf is not None else diff_files.Shelf())
    if diffs:
        parts.append("## Graph changes\n")
        parts.extend(diffs)
    errors = _errors(rows)
    if errors:
        parts.append("## Errors\n")
        parts.extend(errors)
    if reproduce:
        parts.append(reproduce)
    if devices:
        parts.append(devices)
    diagnosed = _diagnoses(rows)
    if diagnosed:
        parts.append("## What draft_export found\n")
        parts.append(
            "Where export failed on a release that has `torch.export.draft_export`, the cell ran it too:"
            " it exports anyway and lists every problem it met, with the line of the case it points at.\n"
        )
        parts.append(diagnosed)
    parts.append("## Source\n")
    if not isinstance(first["case_file"], str):
        parts.append("_%s_\n" % NO_CASE_FILE)
    elif source is None:
        parts.append("_%s_\n" % (NOT_FOUND % md.code(first["case_file"])))
    else:
        parts.append("%s, %s:\n\n%s" % (md.code(first["case_file"]), AS_IT_IS, md.fence(source, "python")))
    return "\n".join(parts)


# What a page says of a case that carries no claim (no ``expected``).
NO_CLAIM = (
    "none: no source this case follows documents whether it exports, so its failures count as failing with no"
    " claim, neither expected nor unexpected (for an ExportDB case, a release's own ExportDB may still name one)"
)
# What a page says of a case's source: the records name its file but keep no copy or hash of what ran.
NO_CASE_FILE = "The records name no case file."
NOT_FOUND = (
    "The source is not available: the case file %s is not a file in the case folders this report was built with."
)
AS_IT_IS = "as it is where this report was built (the records keep no copy of the source that ran)"


def _facts(row: Row) -> str:
    facts = []
    for label, key in (("tags", "tags"), ("requires", "requires")):
        if _listed(row[key]):
            facts.append("- %s: %s" % (label, ", ".join(md.code(v) for v in sorted(str(v) for v in row[key]))))
    if isinstance(row["source"], str):
        facts.append("- source: %s" % md.text(row["source"]))
    facts.append("- claim: %s" % (md.text(row["expected"]) if isinstance(row["expected"], str) else NO_CLAIM))
    return "\n".join(facts) + "\n"


def _status_table(rows: List[Row]) -> str:
    cell: Dict[Tuple[str, str], str] = {}
    order: List[str] = []
    for row in rows:
        env = str(row["environment"])
        if env not in order:
            order.append(env)
        text = md.status(row["status"])
        if isinstance(row["error_type"], str):
            text += " " + md.code(row["error_type"])
        for stage, label in STAGES:
            if row.get(stage + "_outcome") == STAGE_ERROR:
                text += " · %s %s fails" % (md.STAGE_MARKS[stage], label)
        if isinstance(row.get("aoti_status"), str):
            # The opt-in AOTInductor stage: its outcome, and what the compile took.
            took = row.get("aoti_compile_s")
            seconds = " (compiled in %.1f s)" % took if isinstance(took, (int, float)) and took == took else ""
            text += " · AOTInductor %s%s" % (md.text(row["aoti_status"]), seconds)
        if row["flaky"] is True:
            text += " (flaky: %s)" % md.text(row["statuses"])
        if row["status"] == Status.NOT_APPLICABLE and _listed(row["missing"]):
            text += " (lacks %s)" % ", ".join(md.code(v) for v in row["missing"])
        cell[(env, row["mode"])] = text
    modes = [m for m in MODES if any(key[1] == m for key in cell)]
    return md.table(
        ["environment", *modes], [[md.text(env)] + [cell.get((env, m), md.NO_RECORD) for m in modes] for env in order]
    )


def _listed(value: Any) -> bool:
    return value is not None and not isinstance(value, (str, float)) and len(value) > 0


def _graph_diffs(
    case: str, rows: List[Row], kept: Optional[Mapping[Tuple[str, ...], Row]], shelf: diff_files.Shelf
) -> List[str]:
    """Unified diffs of the graph between consecutive releases (among those with a graph) where it changed.

    A diff that several transitions share (both modes, or the same change again) is shown once, titled with
    every transition it applies to: its first lines, and a link to the whole, a file kept on ``shelf``. Where
    the records lack the texts of a pair of graphs, the diff an earlier report kept for those very two graphs
    (``kept``: ``graph_diffs.carried``) is shown, its title naming where it was kept.
    """
    found: List[Tuple[Place, List[str]]] = []
    # Rows come in release order; where a release ran under several Pythons the newest (last) stands for it.
    # A case run with several --with sets has a series per set: each compared with itself.
    series: Dict[Tuple[str, str, str], Dict[str, Row]] = {}
    for row in rows:
        if _has_text(row) or (kept and isinstance(row.get("graph_hash"), str)):
            series.setdefault((str(row["variant"]), with_set(row), str(row["mode"])), {})[str(row["release"])] = row
    variants = sorted({variant for variant, _, _ in series})
    for variant, requested, mode in sorted(series, key=lambda k: (k[0], k[1], _mode_index(k[2]))):
        previous: Optional[Row] = None
        rest = (", " + variant if len(variants) > 1 else "") + _bracketed(requested)
        for row in series[(variant, requested, mode)].values():
            if previous is not None and previous["graph_hash"] != row["graph_hash"] and _comparable(previous, row):
                place = (str(previous["release"]), str(row["release"]), mode, rest)
                if _has_text(previous) and _has_text(row):
                    found.append((place, graph_diffs.diff_lines(previous["graph_text"], row["graph_text"])))
                else:
                    held = (kept or {}).get(_pair_key(previous, row))
                    if held is not None:
                        source = " (kept from %s)" % held["kept_from"]
                        found.append(((*place[:3], rest + source), str(held["diff"]).splitlines()))
            previous = row
    return [
        "### %s\n\n%s" % (md.text(title), diff_block(case, lines, shelf) if lines else "_%s_\n" % SAME_TEXT)
        for title, lines in distinct_diffs(found)
    ]


def diff_block(case: str, lines: List[str], shelf: diff_files.Shelf) -> str:
    """A diff on a case's page: its first lines, then a link to the whole (a file of its own)."""
    shelf.put(case, lines)
    part = diff_files.excerpt(lines)
    label = "the whole diff" if part.cut else "the diff as a file"
    shown = md.fence("\n".join(part.shown + (("…",) if part.cut else ())), "diff")
    return "%s\n%s (%s)\n" % (shown, md.link(label, diff_files.link(case, lines, md.page_name(case))), part.counts())


def _has_text(row: Row) -> bool:
    return isinstance(row.get("graph_text"), str) and bool(row["graph_text"])


def _pair_key(before: Row, after: Row) -> Tuple[str, ...]:
    """The key of a kept diff (graph_diffs.KEY) between two cells of a case."""
    named = dict(
        case=before["case"], mode=before["mode"], with_set=with_set(after), variant_before=before["variant"],
        before=before["release"], variant=after["variant"], after=after["release"],
        hash_before=before["graph_hash"], hash_after=after["graph_hash"],
    )  # fmt: skip
    return graph_diffs.key_of(named)


# Where a diff applies: (release before, release after, mode, the rest of its title: variant, --with set).
Place = Tuple[str, str, str, str]
SAME_TEXT = "No line of the two graph texts differs."


def distinct_diffs(found: Iterable[Tuple[Place, List[str]]]) -> List[Tuple[str, List[str]]]:
    """Each distinct diff once, in the order first found, with a title naming every transition it applies to."""
    groups: Dict[Tuple[str, ...], List[Place]] = {}
    for place, lines in found:
        groups.setdefault(tuple(lines), []).append(place)
    return [(transitions_title(places), list(lines)) for lines, places in groups.items()]


def transitions_title(places: Sequence[Place]) -> str:
    """``2.5.0 → 2.6.0, strict and non-strict; 2.6.0 → 2.7.0, strict``: the modes of one pair of releases joined."""
    modes: Dict[Tuple[str, str, str], List[str]] = {}
    for before, after, mode, rest in places:
        modes.setdefault((before, after, rest), []).append(mode)
    return "; ".join(
        "%s → %s, %s%s" % (before, after, " and ".join(named), rest) for (before, after, rest), named in modes.items()
    )


def _comparable(before: Row, after: Row) -> bool:
    """Whether two graphs were fingerprinted by the same scheme, so that their difference is the program's."""
    version = version_of(before.get("fingerprint_version"))
    return version is not None and version == version_of(after.get("fingerprint_version"))


def _mode_index(mode: str) -> int:
    return MODES.index(mode) if mode in MODES else len(MODES)


def _errors(rows: List[Row]) -> List[str]:
    """One collapsed block per distinct error (mode, status, class, first line), with the releases it shows in.

    A stage that failed on an exported program (save/load, decomposition, aoti) is an error of its own,
    named after the stage. A failure that a known upstream issue labels names it.
    """
    order = store.ordered(row["release"] for row in rows)
    # Keyed (0: an error, 1: a stage; the mode's place, mode, --with set, status, class, message): the errors
    # first, then the stages, each by mode.
    groups: Dict[Tuple[int, int, str, str, str, str, str], List[Row]] = {}
    for row in rows:
        place = (_mode_index(str(row["mode"])), str(row["mode"]), with_set(row))
        if isinstance(row["error_type"], str) or row["status"] in ("crash", "timeout"):
            key = (0, *place, str(row["status"]), _str(row["error_type"]), _str(row["error_message"]))
            groups.setdefault(key, []).append(row)
        for label in failures.failed_stages(row):
            groups.setdefault((1, *place, "%s fails" % label, "", failures.stage_line(row, label)), []).append(row)
    parts = []
    for (stage, _, mode, requested, status, kind, message), members in sorted(groups.items(), key=lambda g: g[0]):
        summary = "%s%s — %s%s%s" % (
            " · ".join([mode, status] + ([] if stage else [kind])),
            (": " + _clip(message, 300)) if message else "",
            md.release_spans([str(r["release"]) for r in members], order),
            _bracketed(requested),
            _known(members, status[: -len(" fails")] if stage else failures.EXPORT),
        )
        if stage:
            parts.append(md.details(summary, md.fence(message, "text") if message else "_No error recorded._"))
            continue
        # The newest release that kept a traceback speaks for the group.
        newest = next((r for r in reversed(members) if _str(r["error_traceback"])), members[-1])
        body = []
        for label, value in (
            ("traceback (%s)" % newest["release"], _tail(newest["error_traceback"])),
            ("check", _str(newest["check_detail"])),
            ("stderr", _tail(newest["stderr_tail"])),
        ):
            if value:
                body.append("%s:\n\n%s" % (md.text(label), md.fence(value, "text")))
        parts.append(md.details(summary, "\n".join(body) or "_No traceback recorded._"))
    return parts


def _known(members: List[Row], stage: str) -> str:
    """`` · known upstream issue pytorch/pytorch#173706`` where a known issue labels the group's failure on one of
    its releases (the releases it names), else ""."""
    found = [failures.cell_issues(row).get(stage) for row in members]
    named = list(dict.fromkeys(issue.words for issue in found if issue is not None))
    return "".join(" · " + words for words in named)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _tail(value: Any, lines: int = TRACEBACK_LINES) -> str:
    text = _str(value)
    kept = text.splitlines()
    if len(kept) > lines:
        return "\n".join(["… (%d lines above)" % (len(kept) - lines)] + kept[-lines:])
    return text


def _diagnoses(rows: List[Row]) -> str:
    """One table row per (release, mode, problem) that draft_export found for a failed export."""
    table = []
    for row in rows:
        problems = row.get("diagnosis")
        if not isinstance(problems, (list, tuple)):
            continue
        for problem in problems:
            if isinstance(problem, dict):
                table.append(
                    [
                        md.text(str(row["release"]) + _bracketed(with_set(row))),
                        md.text(str(row["mode"])),
                        md.text(str(problem.get("kind"))),
                        md.text(_clip(str(problem.get("message")), 200)),
                        md.code(str(problem["frame"])) if problem.get("frame") else "",
                        str(problem.get("count") or 1),
                    ]
                )
    if not table:
        return ""
    return md.table(["release", "mode", "problem", "message", "where", "times"], table)


def with_set(row: Row) -> str:
    """The cell's ``--with`` set ("" for none, or for a record that predates it)."""
    value = row.get("with_set")
    return value if isinstance(value, str) else ""


def _bracketed(requested: str) -> str:
    return " [%s]" % requested if requested else ""


def _dependencies(rows: List[Row]) -> str:
    """What the case needs besides torch, and which version of each named package ran in each environment.

    Empty for a case of torch alone. Versions come from the environment record of the run that
    recorded the cell; ``–`` where none is known (the set did not install there).
    """
    if not any(packages.requirements(row.get("dependency_set")) for row in rows):
        return ""
    own = next((packages.declared(r.get("dependency_set"), with_set(r)) for r in rows if r.get("dependency_set")), ())
    requested = list(dict.fromkeys(with_set(row) for row in rows if with_set(row)))
    facts = ["- declared by the case (PEP 723): %s" % (", ".join(md.code(r) for r in own) or "nothing")]
    if requested:
        facts.append("- added with `--with`: %s" % "; ".join(md.code(r) for r in requested))
    environments: Dict[str, Row] = {}
    for row in rows:
        env = str(row["environment"])
        # Both modes of an environment usually share one run; one that knows its versions speaks for it.
        if env not in environments or (environments[env].get("added_packages") is None and row.get("added_packages")):
            environments[env] = row
    names = list(dict.fromkeys(name for row in environments.values() for name in packages.names(row["dependency_set"])))
    table = []
    everything = []
    for env, row in environments.items():
        versions = packages.resolved(row.get("added_packages"))
        named = packages.names(row["dependency_set"])  # a package of another --with set is blank here
        table.append([md.text(env)] + [md.text(versions.get(name, "–")) if name in named else "" for name in names])
        if versions:
            listed = ", ".join("%s %s" % (name, version) for name, version in sorted(versions.items()))
            everything.append([md.text(env), md.text(listed)])
    parts = [
        "\n".join(facts) + "\n",
        "The version of each package the set names that ran in each environment"
        " (–: not known, e.g. the set did not install there):\n",
        md.table(["environment", *(md.code(name) for name in names)], table),
    ]
    if everything:
        parts.append(
            md.details(
                "every package each environment added to torch", md.table(["environment", "packages"], everything)
            )
        )
    return "\n".join(parts)
