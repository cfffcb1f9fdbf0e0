"""Every page built as a document, written in both its forms: the Markdown file and the site's HTML page.

A builder returns :class:`~matrix.report.document.Page` objects; :func:`write` hands each to both writers, so the
two forms of a page are drawn from one document and cannot say different things. The site links a page in its HTML
form where it has one (every page written here), else in Markdown.
"""

from __future__ import annotations

from typing import Collection, Iterable, Mapping, Optional, Set

from matrix.report import document, files
from matrix.report.writers import html, markdown


def write(
    out: str,
    pages: Iterable[document.Page],
    widgets: Optional[Mapping[str, Mapping[str, str]]] = None,
    nav: Collection[str] = ("index",),
) -> Set[str]:
    """Write each page as ``NAME.md`` and ``site/NAME.html`` under ``out``; returns their paths.

    ``widgets``: per page name, the HTML of each of its widgets; ``nav``: the pages whose site form opens with a line
    of links to their sections.
    """
    pages = list(pages)
    site_pages = {p.name for p in pages}
    written: Set[str] = set()
    for page in pages:
        drawn = html.write(page, site_pages, (widgets or {}).get(page.name), nav=page.name in nav)
        forms = {markdown.page_path(page.name): markdown.write(page), html.page_path(page.name, site_pages): drawn}
        for path, text in forms.items():
            files.write_text(out, path, text)
        written |= set(forms)
    return written
