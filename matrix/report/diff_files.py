"""Graph diffs stored once each, as files beside the case pages: ``cases/NAME.diffs/DIGEST.diff``.

A case's Markdown page, its site page and the transition pages each show a graph change; the diff itself is
written once, named by a digest of its lines, so that every page showing the same diff links the same file
(the Markdown and the site, and a transition page, alike). A page shows the diff's first lines and links the
whole of it, with its counts of added and removed lines. A ``.diff`` file is plain text: GitHub shows it with
its added and removed lines coloured, a browser shows it as text.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass
from typing import Dict, Sequence, Set, Tuple

from matrix.report import files
from matrix.report import markdown as md

SUFFIX = files.DIFFS  # a case page's folder of diffs: cases/NAME.diffs/
SHOWN_LINES = 12  # the lines of a diff a page shows before linking the whole


@dataclass(frozen=True)
class Excerpt:
    """What a page shows of a diff: its first lines, and what the whole holds."""

    shown: Tuple[str, ...]
    lines: int  # in the whole diff
    added: int
    removed: int

    @property
    def cut(self) -> bool:
        return len(self.shown) < self.lines

    def counts(self) -> str:
        """``240 lines, +118 −117``: the size of the whole diff, for the link to it."""
        return "%d line%s, +%d −%d" % (self.lines, "" if self.lines == 1 else "s", self.added, self.removed)


def excerpt(lines: Sequence[str], limit: int = SHOWN_LINES) -> Excerpt:
    """The first ``limit`` lines of a unified diff, with the counts of the whole."""
    added = sum(1 for line in lines if line.startswith("+"))
    removed = sum(1 for line in lines if line.startswith("-"))
    return Excerpt(tuple(lines[:limit]), len(lines), added, removed)


def path(case: str, lines: Sequence[str]) -> str:
    """Where a case's diff is stored, relative to the report folder: named by a digest of its lines."""
    digest = hashlib.sha256(_content(lines).encode("utf-8")).hexdigest()[:16]
    return posixpath.join("cases", md.page_file(case) + SUFFIX, digest + ".diff")


def _content(lines: Sequence[str]) -> str:
    return "\n".join(lines) + "\n"


class Shelf:
    """The diff files the pages of one build link: each put by every page that shows it, written once."""

    def __init__(self) -> None:
        self._texts: Dict[str, str] = {}

    def put(self, case: str, lines: Sequence[str]) -> str:
        """Keep a case's diff to write; its path relative to the report folder."""
        where = path(case, lines)
        self._texts[where] = _content(lines)
        return where

    def paths(self) -> Set[str]:
        return set(self._texts)

    def write(self, out: str) -> Set[str]:
        """Write every diff kept into the report folder ``out``; their paths."""
        for where, text in sorted(self._texts.items()):
            files.write_text(out, where, text)
        return self.paths()
