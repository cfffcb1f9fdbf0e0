"""What a reader takes from a page, in either of its forms: the facts the both-forms tests compare.

The Markdown form is read as GitHub shows it (markdown-it, CommonMark with tables and HTML); both forms are then
read alike: their words in order (statuses and counts among them), each link's target (as the report page or file
it names, whichever form it points into) and each tooltip. What only the site has (a ``data-widget`` element, the
``<nav>`` line, the page shell's scripts and styles) is not a fact of the page.
"""

from __future__ import annotations

import posixpath
import re
from html.parser import HTMLParser
from typing import Any, List, Optional, Tuple
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt

Fact = Tuple[str, str]
_SKIPPED = {"nav", "script", "style", "title", "head"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Reader(HTMLParser):
    def __init__(self, here: str) -> None:
        super().__init__(convert_charrefs=True)
        self.here, self.facts, self.skip = here, [], []  # type: Tuple[str, List[Fact], List[str]]  # type: ignore
        self.words: List[str] = []

    def flush(self) -> None:
        said = " ".join(" ".join(self.words).split())
        if said:
            self.facts.append(("text", said))
        self.words = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        values = dict(attrs)
        if self.skip or tag in _SKIPPED or "data-widget" in values:
            if tag not in _VOID:
                self.skip.append(tag)
            return
        if tag in ("a", "span") and values.get("title"):
            self.flush()
            self.facts.append(("tip", " ".join(values["title"].split())))
        if tag == "a" and values.get("href") is not None:
            self.flush()
            self.facts.append(("link", target(self.here, values["href"])))
        if tag == "img":
            self.flush()
            self.facts.append(("image", target(self.here, values.get("src") or "")))

    def handle_endtag(self, tag: str) -> None:
        if self.skip:
            if self.skip[-1] == tag:
                self.skip.pop()
            return

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.words.append(data)


def target(here: str, href: str) -> str:
    """A link's target as a reader of either form follows it: ``page:NAME#anchor``, ``file:PATH`` or the address."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        return href
    anchor = "#" + parts.fragment if parts.fragment else ""
    if not parts.path:
        return "here" + anchor
    path = posixpath.normpath(posixpath.join(posixpath.dirname(here), unquote(parts.path)))
    if path.startswith("site/") and path.endswith(".html"):
        return "page:" + path[len("site/") : -len(".html")] + anchor
    if path.endswith(".md"):
        return "page:" + path[: -len(".md")] + anchor
    return "file:" + path + anchor


def facts(html: str, here: str) -> List[Fact]:
    """The facts of an HTML page at ``here`` (relative to the report's folder)."""
    reader = _Reader(here)
    reader.feed(html)
    reader.close()
    reader.flush()
    return _merged(reader.facts)


def markdown_facts(markdown: str, here: str) -> List[Fact]:
    """The facts of a Markdown page at ``here``, read as GitHub renders it."""
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    return facts(rendered, here)


def _merged(found: List[Fact]) -> List[Fact]:
    """Runs of text joined, so that where one form breaks a line the other does not, the words still compare."""
    out: List[Fact] = []
    for kind, value in found:
        if kind == "text" and out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + " " + value)
        else:
            out.append((kind, value))
    return [(k, re.sub(r"\s+", " ", v).strip()) for k, v in out]


def differences(markdown: List[Fact], html: List[Fact], limit: int = 5) -> Optional[str]:
    """Where two fact lists first part, in a few lines; None where they agree."""
    if markdown == html:
        return None
    for i, (a, b) in enumerate(zip(markdown, html)):
        if a != b:
            return "fact %d: Markdown %r, site %r" % (i, a, b)
    return "Markdown has %d facts, the site %d; the longer goes on with %r" % (
        len(markdown), len(html), (markdown + html)[min(len(markdown), len(html))],
    )  # fmt: skip
