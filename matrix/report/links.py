"""The relative links of a report's HTML pages, and those that name no file: the check a site built beside
committed pages (:mod:`.published_site`) makes before it says it is done."""

from __future__ import annotations

import os
import posixpath
from html.parser import HTMLParser
from typing import Any, List, Tuple
from urllib.parse import unquote, urlsplit


class _Targets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: List[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.found.append(value)


def html_targets(html: str) -> List[str]:
    """Every ``href`` and ``src`` of ``html``, as written."""
    parser = _Targets()
    parser.feed(html)
    return parser.found


def relative(target: str) -> bool:
    """Whether ``target`` names a file beside its page: not another site, nor a place in the same page."""
    parts = urlsplit(target)
    return not (parts.scheme or parts.netloc or not parts.path)


def resolve(page: str, target: str) -> str:
    """The path, relative to the report's folder, that ``target`` names from ``page`` (also relative to it)."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(urlsplit(target).path)))


def broken_html(report: str, under: str) -> List[Tuple[str, str]]:
    """The relative links of the HTML pages under ``report/under`` that name no file nor folder of ``report``:
    (page relative to ``report``, target as written)."""
    missing: List[Tuple[str, str]] = []
    for top, _, names in sorted(os.walk(os.path.join(report, under))):
        for name in sorted(names):
            if not name.endswith(".html"):
                continue
            path = os.path.join(top, name)
            page = os.path.relpath(path, report).replace(os.sep, "/")
            with open(path, encoding="utf-8") as f:
                targets = html_targets(f.read())
            for target in targets:
                if not relative(target):
                    continue
                found = resolve(page, target)
                if found.startswith("../") or not os.path.exists(os.path.join(report, *found.split("/"))):
                    missing.append((page, target))
    return missing
