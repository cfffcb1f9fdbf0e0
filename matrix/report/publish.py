"""Every page built as a document, written in both its forms: the Markdown file and the site's HTML page.

A builder returns :class:`~matrix.report.document.Page` objects; :func:`write` hands each to both writers, so the
two forms of a page are drawn from one document and cannot say different things. The site links a page in its HTML
form where it has one (every page written here, and the site pages still built on their own), else in Markdown.
"""

from __future__ import annotations

from typing import Collection, Iterable, Mapping, Optional, Set

from matrix.report import document, files
from matrix.report.writers import html, markdown


def write(
    out: str,
    pages: Iterable[document.Page],
    also_on_site: Collection[str] = (),
    widgets: Optional[Mapping[str, Mapping[str, str]]] = None,
    nav: Collection[str] = ("index",),
) -> Set[str]:
    """Write each page as ``NAME.md`` and ``site/NAME.html`` under ``out``; returns their paths.

    ``also_on_site``: names of the site's pages written elsewhere, which the HTML links in their HTML form;
    ``widgets``: per page name, the HTML of each of its widgets; ``nav``: the pages whose site form opens with a line
    of links to their sections.
    """
    pages = list(pages)
    site_pages = {p.name for p in pages} | set(also_on_site)
    written: Set[str] = set()
    for page in pages:
        written |= _write(out, markdown.page_path(page.name), markdown.write(page))
        drawn = html.write(page, site_pages, (widgets or {}).get(page.name), nav=page.name in nav)
        written |= _write(out, html.page_path(page.name, site_pages), drawn)
    return written


def _write(out: str, path: str, text: str) -> Set[str]:
    files.write_text(out, path, text)
    return {path}
