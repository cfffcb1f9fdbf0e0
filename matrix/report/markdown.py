"""Markdown building blocks that keep record text inert: escaped table cells, safe fences.

Error messages and tracebacks come from the code under test and may hold anything:
``|`` and newlines would break a table, ``<script>`` or ``[x](http://…)`` would inject
HTML or links, backticks would close a code span, and terminal colour codes or other
control characters would end up raw in the file. Every piece of record text goes
through :func:`text` (Markdown inline), :func:`code`, :func:`html_text` (inside an HTML
element such as a ``<summary>``) or :func:`fence` (blocks) before it reaches a page; all
of them drop ANSI escape sequences and control characters (tabs and line breaks aside).

:func:`text` escapes only what Markdown would read as markup, so that the raw file stays
readable: ``<`` only where it could open a tag, comment or autolink, ``&`` only where it
could start an entity, ``>`` only where it could open a quote, ``@`` only inside what
could be an e-mail address; ``a < b && c > d`` stays as it is.
"""

from __future__ import annotations

import hashlib
import html
import math
import re
from typing import Any, Dict, Iterable, List, Sequence, Tuple

from matrix.contract.schema import STAGE_ERROR
from matrix.contract.stages import REPORTED
from matrix.records.scope import Scope
from matrix.report.document import plural

# Markdown punctuation gets a backslash, which reads better in the raw file and in diffs;
# "<" and "&" become entities, and only where they could start a tag or an entity.
_INLINE = {
    "&": "&amp;",
    "<": "&lt;",
    "[": "\\[",
    "]": "\\]",
    "|": "\\|",
    "`": "\\`",
    "\\": "\\\\",
    "*": "\\*",
    "~": "\\~",
}
_ALWAYS = "[]|`\\*~"
_INLINE_RE = re.compile(
    "["
    + re.escape(_ALWAYS)
    + "]"
    # "_" only emphasises at a word's edge; inside snake_case names it stays as it is.
    + "|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])"
    # A tag, comment, declaration or autolink starts with "<" and one of these.
    + "|<(?=[A-Za-z/!?]|$)"
    # An entity or character reference: &amp; &#38; &#x26;
    + "|&(?=#?[A-Za-z0-9]+;)"
)
# Bare URLs, www. names and e-mail addresses become links under GitHub's autolink
# extension; an entity in the trigger text keeps them plain text.
_AUTOLINK_RE = re.compile(r"(?i):(?=//)|(?<![a-z0-9])w(?=ww\.)|(?<=[a-z0-9._+-])@(?=[a-z0-9_-])")


# Terminal escape sequences (CSI such as colours, OSC such as titles and links, then the
# short forms: intermediates and one final byte), then every control character but tab,
# line feed and return.
_ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]"
)
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def plain(value: str) -> str:
    """``value`` without terminal escape sequences and control characters (tab and line breaks stay)."""
    return _CONTROL_RE.sub("", _ANSI_RE.sub("", value))


def text(value: Any) -> str:
    """Record text made safe for a table cell or a line of prose: one line, no markup, no HTML."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    escaped = _INLINE_RE.sub(lambda m: _INLINE.get(m.group(0), "\\_"), plain(str(value)))
    escaped = _AUTOLINK_RE.sub(lambda m: "&#%d;" % ord(m.group(0)), escaped)
    # Text that starts a line of prose would open a block quote with ">".
    escaped = re.sub(r"^(\s*)>", r"\1\\>", escaped)
    # A table row is one line: show line breaks rather than letting them end the row.
    return re.sub(r"\r\n|\r|\n", " ⏎ ", escaped)


def code(value: Any) -> str:
    """A short identifier (op name, exception class) as inline code, whatever backticks it holds."""
    raw = "" if value is None else plain(str(value)).replace("\r", " ").replace("\n", " ")
    if not raw:
        return ""
    # A code span cannot hold a "|" inside a table row on every renderer; name it instead.
    if "|" in raw:
        return text(raw)
    run = max((len(m) for m in re.findall("`+", raw)), default=0)
    ticks = "`" * (run + 1)
    pad = " " if raw.startswith("`") or raw.endswith("`") or run else ""
    return "%s%s%s%s%s" % (ticks, pad, raw, pad, ticks)


def fence(body: str, language: str = "") -> str:
    """A fenced code block whose fence is longer than any backtick run in the body."""
    body = plain(body)
    run = max((len(m) for m in re.findall("`{3,}", body)), default=0)
    ticks = "`" * max(3, run + 1)
    body = body.replace("\r\n", "\n").replace("\r", "\n")
    if not body.endswith("\n"):
        body += "\n"
    return "%s%s\n%s%s\n" % (ticks, language, body, ticks)


def html_text(value: Any) -> str:
    """Plain text for inside an HTML element (where Markdown is not parsed): entities, one line, and ``|`` as an
    entity: a table cell holding the element ends at a bare ``|`` wherever it stands (an error's ``INT32 | INT16``)."""
    if value is None:
        return ""
    escaped = html.escape(plain(str(value)), quote=True).replace("|", "&#124;")
    return re.sub(r"\s*(\r\n|\r|\n)\s*", " ⏎ ", escaped)


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], align: Sequence[str]) -> str:
    """A pipe table from already-escaped cells; ``align`` holds "l", "r" or "c" per column."""
    marks = {"l": ":---", "r": "---:", "c": ":---:"}
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(marks[a] for a in align) + " |"]
    lines += ["| " + " | ".join(cell if cell else " " for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def transition_title(before: Any, after: Any, variant_before: Any = None, variant: Any = None) -> str:
    """``2.4.1 → 2.5.0``, or ``2.9.1 (pypi) → 2.13.0+cpu (cpu)`` across variants (plain text)."""
    if isinstance(variant_before, str) and isinstance(variant, str) and variant_before != variant:
        return "%s (%s) → %s (%s)" % (before, variant_before, after, variant)
    return "%s → %s" % (before, after)


# A release name that names its transition page as it is: digits, letters and ".+-" between them.
_PLAIN_RELEASE = re.compile(r"[0-9A-Za-z]+(?:[.+-][0-9A-Za-z]+)*")


def transition_page(before: Any, after: Any) -> str:
    """The page of the transition between two releases, relative to the report folder.

    ``transition-2.8.0__2.9.1.md`` for plain release names; other names keep a readable cut
    of their safe characters and take a hash of both names, so distinct pairs get distinct pages.
    """
    names = [str(before), str(after)]
    if all(_PLAIN_RELEASE.fullmatch(name) for name in names) and sum(map(len, names)) <= MAX_PAGE_NAME - 20:
        return "transition-%s__%s.md" % tuple(names)
    readable = re.sub(r"[^A-Za-z0-9.+-]+", "-", "__".join(names)).strip(".+-")[:_KEPT_OF_OTHER] or "releases"
    digest = hashlib.sha256("\0".join(names).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return "transition-%s~%s.md" % (readable, digest)


# A case name whose parts (split at "/") are runs of lower-case letters and digits joined
# by single "._-" names its page as it is, the parts joined by "__". Those file names never
# hold "__" inside a part nor "~", so the two forms cannot meet, and a file system that
# ignores case cannot merge two of them.
_PLAIN_PART = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")
# Longest plain file name (without ".md"); longer names are cut and take a hash.
MAX_PAGE_NAME = 100
_KEPT_OF_OTHER = 60


def page_file(case: str) -> str:
    """The file name (one path component, without ".md") of a case's page; distinct cases get distinct names.

    Other names (upper case, "/" at an edge, "..", "__", spaces, NUL, TeX or anything
    else, or too long) keep a readable cut of their safe characters followed by "~" and
    a hash of the whole name.
    """
    parts = case.split("/")
    if all(_PLAIN_PART.fullmatch(part) for part in parts):
        name = "__".join(parts)
        if len(name) <= MAX_PAGE_NAME:
            return name
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", case).strip("._-")[:_KEPT_OF_OTHER].rstrip("._-") or "case"
    digest = hashlib.sha256(case.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return "%s~%s" % (readable, digest)


def grouped(rows: Iterable[Dict[str, Any]], by: Sequence[str]) -> List[Tuple[Tuple[str, ...], List[Dict[str, Any]]]]:
    """Rows grouped by the ``by`` keys (as text), groups sorted by key, rows in their given order."""
    groups: Dict[Tuple[str, ...], List[Dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(str(row[k]) for k in by), []).append(row)
    return sorted(groups.items())


def marks(row: Dict[str, Any]) -> str:
    """The marks after a cell's status symbol: one per stage that failed on its exported program."""
    return "".join(stage.mark for stage in REPORTED if row.get(stage.name + "_outcome") == STAGE_ERROR)


def release_spans(chosen: Iterable[str], order: Sequence[str]) -> str:
    """Releases as runs of consecutive releases of ``order``: ``2.1.2–2.3.1, 2.5.0`` (plain text)."""
    wanted = set(chosen)
    parts: List[str] = []
    run: List[str] = []
    for release in list(order) + [None]:  # type: ignore[list-item]
        if release is not None and release in wanted:
            run.append(release)
            continue
        if run:
            parts.append(run[0] if len(run) == 1 else "%s–%s" % (run[0], run[-1]))
            run = []
    extra = sorted(wanted - set(order))
    return ", ".join(parts + extra)


def percent(value: Any) -> str:
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "–"
    return "%.1f%%" % (100 * value)


# --- counts in words (plain text, for the Markdown pages and the site alike) ---------------------------------------


def releases_and_builds(scope: Scope) -> str:
    """``15 releases, 16 builds``: the builds of one release (2.13.0+cpu, 2.13.0+cu130) count once as a release."""
    return "%s, %s" % (plural(len(scope.releases), "release"), plural(len(scope.builds), "build"))


def build_names(scope: Scope) -> List[str]:
    """Each build by its version, with its variant where another build has the same version."""
    versions = [version for version, _ in scope.builds]
    return [
        version if versions.count(version) == 1 else "%s (%s)" % (version, variant) for version, variant in scope.builds
    ]


def cells_counted(scope: Scope) -> str:
    """The cells and the product they are part of: ``5008 cells of 157 cases × 2 modes × 16 builds = 5024 (16
    without a record)``; environments stand for builds where a build ran under several Pythons or --with sets."""
    within = (
        plural(len(scope.builds), "build")
        if scope.one_environment_per_build
        else "%s (builds × Pythons × --with sets)" % plural(scope.environments, "environment")
    )
    product = "%s × %s × %s" % (plural(scope.cases, "case"), plural(scope.modes, "mode"), within)
    if not scope.unrecorded:
        return "%s: %s" % (plural(scope.cells, "cell"), product)
    return "%s of %s = %d (%d without a record)" % (
        plural(scope.cells, "cell"),
        product,
        scope.possible,
        scope.unrecorded,
    )
