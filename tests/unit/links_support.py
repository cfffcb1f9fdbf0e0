"""Every relative link of a built report: the Markdown pages' links (as markdown-it reads them, inline HTML
included) and the site's ``href``/``src``, each resolved from its page's folder."""

from __future__ import annotations

import re
from pathlib import Path
from typing import List, Tuple
from urllib.parse import urlsplit

from markdown_it import MarkdownIt

from matrix.report import published_site as links_html


def _markdown_targets(text: str) -> List[str]:
    found: List[str] = []
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        for child in [token, *(token.children or [])]:
            if child.type in ("link_open", "image"):
                found.append(str(child.attrs.get("href") or child.attrs.get("src") or ""))
            elif child.type in ("html_inline", "html_block"):
                found.extend(links_html.html_targets(child.content))
    return found


def links(report: Path) -> List[Tuple[str, str]]:
    """Every relative link of the report's pages: (page, target as written), pages relative to ``report``."""
    found: List[Tuple[str, str]] = []
    for page in sorted(report.rglob("*")):
        if page.suffix == ".md":
            targets = _markdown_targets(page.read_text(encoding="utf-8"))
        elif page.suffix == ".html":
            targets = links_html.html_targets(page.read_text(encoding="utf-8"))
        else:
            continue
        for target in targets:
            if not links_html.relative(target):
                continue  # another site, or a place in the same page
            found.append((page.relative_to(report).as_posix(), target))
    return found


def broken(report: Path) -> List[Tuple[str, str]]:
    """The relative links that name no file (nor folder) of the report."""
    missing = []
    for page, target in links(report):
        path = links_html.resolve(page, target)
        if path.startswith("../") or not (report / path).exists():
            missing.append((page, target))
    return missing


def relative(report: Path, pattern: str) -> List[str]:
    """The relative link targets that match ``pattern``."""
    return [target for _, target in links(report) if re.search(pattern, target)]


def linked_diffs(report: Path, page: str) -> str:
    """The text of every graph diff file the page ``page`` (relative to ``report``) links, in the page's order."""
    texts = []
    for source, target in links(report):
        if source == page and urlsplit(target).path.endswith(".diff"):
            path = links_html.resolve(page, target)
            texts.append((report / path).read_text(encoding="utf-8"))
    return "".join(texts)
