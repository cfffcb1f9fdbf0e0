"""The site's glossary, ``site/glossary.html``: the report's terms (:data:`matrix.report.glossary.SECTIONS`, the
Markdown glossary's) and the legends of every glyph, so that the site explains itself when published alone."""

from __future__ import annotations

from matrix.report import glossary
from matrix.report.site import legend
from matrix.report.site.markup import inline, page, text

PAGE = "glossary.html"


def _anchor(term: str) -> str:
    return "term-" + "".join(c if c.isalnum() else "-" for c in term.lower()).strip("-")


def render(title: str) -> str:
    """The page: a table of terms per section, then the glyphs of cells and of loads of saved programs."""
    body = [
        '<header><p><a href="index.html">← the matrix</a></p><h1>Glossary</h1>',
        "<p>The words the report uses, and what they count.</p></header>",
    ]
    for heading, terms in glossary.SECTIONS:
        rows = "".join(
            '<tr id="%s"><th>%s</th><td>%s</td></tr>' % (_anchor(term), inline(term), inline(meaning))
            for term, meaning in terms
        )
        body.append('<h2>%s</h2><table class="glossary">%s</table>' % (text(heading), rows))
    body.append("<h2>Statuses and marks</h2>%s<h3>Marks and signs</h3>%s" % (legend.statuses(), legend.marks()))
    body.append("<h2>Load statuses</h2><p>What loading a saved program on a release gave.</p>%s" % legend.loads())
    return page("Glossary · %s" % title, "\n".join(body), "")
