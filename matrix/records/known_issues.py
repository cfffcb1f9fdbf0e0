"""Failures of torch that upstream knows of, or that this project reads as torch's: their signatures, kept as data
in ``known_issues.toml``, and the one function that labels a failure with the issue it matches (:func:`label`).
An entry with an upstream reference (``link``) is a known upstream issue; one without is unconfirmed, and says so
(:attr:`KnownIssue.kind`, :attr:`KnownIssue.words`).

A labelled failure is still a failure: every count and verdict keeps it; the label only says where upstream tracks
it. Entries are read into frozen :class:`KnownIssue` values; a malformed file or entry is a
:class:`KnownIssueError` naming the file and the entry. The file ships with the package (beside the code that reads
it, as ``envs/releases.toml`` does), so a user's own report labels the same failures as the published one.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from matrix.contract import schema, stages
from matrix.contract.errors import UserError
from matrix.contract.products import PRODUCTS
from matrix.envs import releases

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

DATA = Path(__file__).with_name("known_issues.toml")
# Where a failure shows, as the report names it: the export, a cell's later stages (save/load, decomposition, and
# each stage whose outcome is declared, by its label: aoti, ONNX), and each product's use on another release
# (products.Product.stage: a saved program's load; an AOTInductor package's compile, load or run).
STAGES = tuple(
    dict.fromkeys(
        (
            "export",
            *(label for _, label in schema.STAGES),
            *(s.shown.label for s in stages.SHOWN if s.shown),
            *(p.stage for p in PRODUCTS),
        )
    )
)
FIELDS = ("id", "summary", "link", "stages", "error_type", "message", "releases", "made_on")
_ISSUE_LINK = re.compile(r"^https://github\.com/([^/\s]+/[^/\s]+)/(?:issues|pull)/(\d+)$")


class KnownIssueError(UserError):
    """A malformed known-issues file; the message names the file and the entry."""


@dataclass(frozen=True)
class KnownIssue:
    """One failure signature and the upstream issue that tracks it."""

    id: str
    summary: str
    link: str  # "" where no upstream issue is known
    stages: Tuple[str, ...]
    error_type: str
    message: str  # a regular expression, searched for in the error's message
    releases: Tuple[str, ...]  # "2.10": every 2.10 patch and build
    made_on: Tuple[str, ...] = ()  # where set, the releases that made the program or package

    @property
    def reference(self) -> str:
        """``pytorch/pytorch#173706`` for a GitHub issue, else the link itself ("" for none)."""
        found = _ISSUE_LINK.match(self.link)
        return "%s#%s" % found.groups() if found else self.link

    @property
    def confirmed(self) -> bool:
        """Whether upstream tracks it: an entry without an upstream reference is only this project's reading of a
        failure, not yet upstream's."""
        return bool(self.link)

    @property
    def kind(self) -> str:
        """What the entry is, as a verdict's heading names it."""
        return "Known upstream issue" if self.confirmed else "Unconfirmed issue"

    @property
    def words(self) -> str:
        """The label a reader sees beside the failure: the issue, or that it is unconfirmed (none upstream on
        record)."""
        if not self.confirmed:
            return "unconfirmed, no upstream issue on record"
        return "known upstream issue %s" % self.reference

    def matches(self, stage: str, error_type: Any, message: Any, release: Any, made_on: Any = None) -> bool:
        """Whether a failure at ``stage`` on ``release`` (of a program or package made on ``made_on``) is this one.

        ``error_type`` may be None where the record keeps the error as one line of text
        (``load: RuntimeError: boom``); its class is then looked for in that line.
        """
        text = message if isinstance(message, str) else ""
        kind = error_type if isinstance(error_type, str) and error_type else None
        if stage not in self.stages:
            return False
        if kind is not None:
            if kind != self.error_type:
                return False
        elif self.error_type + ":" not in text:
            return False
        if re.search(self.message, text) is None or not _in(release, self.releases):
            return False
        return not self.made_on or _in(made_on, self.made_on)


def _in(release: Any, wanted: Sequence[str]) -> bool:
    """Whether a release (``2.10.0+cu128``) is one of ``wanted`` (``2.10``, ``2.10.0``)."""
    version = _version(release) if isinstance(release, str) else None
    return version is not None and any(version[: len(w)] == w for w in (_parts(x) for x in wanted))


@functools.cache
def _version(release: str) -> Optional[Tuple[int, ...]]:
    """A release's numbers (``2.10.0+cu128``: 2, 10, 0), None for what is not a torch version; a table names a
    handful of releases many times over."""
    try:
        return tuple(releases.version_key(release).release) if release else None
    except releases.ReleaseError:
        return None


def _parts(release: str) -> Tuple[int, ...]:
    return tuple(int(p) for p in release.split("."))


def parse(table: Mapping[str, Any], source: str) -> Tuple[KnownIssue, ...]:
    """The entries of a parsed known-issues file; ``source`` names it in errors."""
    entries = table.get("issue", [])
    unknown = sorted(set(table) - {"issue"})
    if unknown or not isinstance(entries, list):
        raise KnownIssueError("%s: expected only [[issue]] entries, found %s" % (source, ", ".join(unknown) or "issue"))
    found: List[KnownIssue] = []
    for number, entry in enumerate(entries, 1):
        found.append(_entry(entry, "%s: [[issue]] %s" % (source, _name(entry, number))))
    ids = [issue.id for issue in found]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise KnownIssueError("%s: id %s is used more than once" % (source, ", ".join(map(repr, twice))))
    return tuple(found)


def _name(entry: Any, number: int) -> str:
    given = entry.get("id") if isinstance(entry, dict) else None
    return repr(given) if isinstance(given, str) and given else "number %d" % number


def _entry(entry: Any, where: str) -> KnownIssue:
    if not isinstance(entry, dict):
        raise KnownIssueError("%s: not a table" % where)
    extra = sorted(set(entry) - set(FIELDS))
    if extra:
        raise KnownIssueError("%s: unknown field %s (fields: %s)" % (where, ", ".join(extra), ", ".join(FIELDS)))
    text: Dict[str, str] = {}
    for key in ("id", "summary", "link", "error_type", "message"):
        value = entry.get(key)
        if not isinstance(value, str) or (not value and key != "link"):
            raise KnownIssueError("%s: %s must be %stext" % (where, key, "" if key == "link" else "non-empty "))
        text[key] = value
    if text["link"] and not text["link"].startswith("https://"):
        raise KnownIssueError('%s: link must be an https:// address or ""' % where)
    try:
        re.compile(text["message"])
    except re.error as error:
        raise KnownIssueError("%s: message is not a regular expression (%s)" % (where, error)) from None
    lists: Dict[str, Tuple[str, ...]] = {}
    for key in ("stages", "releases", "made_on"):
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise KnownIssueError("%s: %s must be a list of text" % (where, key))
        lists[key] = tuple(value)
    if not lists["stages"] or not lists["releases"]:
        raise KnownIssueError("%s: stages and releases must each name at least one" % where)
    odd = [s for s in lists["stages"] if s not in STAGES]
    if odd:
        raise KnownIssueError("%s: unknown stage %s (stages: %s)" % (where, ", ".join(odd), ", ".join(STAGES)))
    for key in ("releases", "made_on"):
        bad = [r for r in lists[key] if not re.fullmatch(r"\d+(\.\d+){1,2}", r)]
        if bad:
            raise KnownIssueError("%s: %s takes releases like 2.10 or 2.10.0, not %s" % (where, key, ", ".join(bad)))
    return KnownIssue(
        id=text["id"],
        summary=text["summary"],
        link=text["link"],
        stages=lists["stages"],
        error_type=text["error_type"],
        message=text["message"],
        releases=lists["releases"],
        made_on=lists["made_on"],
    )


@functools.cache
def load(path: Path = DATA) -> Tuple[KnownIssue, ...]:
    """The known issues of ``path``, read once per process."""
    try:
        with open(path, "rb") as f:
            table = tomllib.load(f)
    except OSError as error:
        raise KnownIssueError("%s: cannot be read (%s)" % (path, error.strerror)) from None
    except tomllib.TOMLDecodeError as error:
        raise KnownIssueError("%s: not valid TOML (%s)" % (path, error)) from None
    return parse(table, str(path))


def label(
    stage: str,
    error_type: Any,
    message: Any,
    release: Any,
    made_on: Any = None,
    issues: Optional[Iterable[KnownIssue]] = None,
) -> Optional[KnownIssue]:
    """The known issue a failure matches (the first in the file), or None; see :meth:`KnownIssue.matches`."""
    for issue in load() if issues is None else issues:
        if issue.matches(stage, error_type, message, release, made_on):
            return issue
    return None
