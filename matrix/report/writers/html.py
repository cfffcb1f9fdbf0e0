"""The HTML writer: a :class:`~matrix.report.document.Page` as a page of the site, in the report's ``site/`` folder.

A page named ``cases/NAME`` is ``site/cases/NAME.html``. A link to a page the site does not have goes to its
Markdown form, one folder up; a file of the report (a chart, a table, a repro script) is linked where the report
wrote it. Widgets (what only the site has) are drawn from the HTML handed in by name, each in an element marked
``data-widget`` so that a reader of both forms can tell them from the page's facts.
"""

from __future__ import annotations

from typing import Collection, Mapping, Optional

from matrix.report import document as d
from matrix.report.site.markup import page as shell
from matrix.report.site.markup import text
from matrix.report.writers import colour, glyph, resolve

FOLDER = "site"
# A table, in a box that scrolls sideways where it is wider than the window; a summary and what it hides.
WIDE = '<div class="wide"><table%s><thead><tr>%s</tr></thead><tbody>%s</tbody></table></div>'
DETAILS = "<details><summary>%s</summary>%s</details>"


def write(
    page: d.Page, site_pages: Collection[str], widgets: Optional[Mapping[str, str]] = None, nav: bool = False
) -> str:
    """The page's HTML, whole. ``site_pages``: the names of the pages the site has; ``widgets``: the HTML of each
    :class:`~matrix.report.document.Widget` by name; ``nav``: a line of links to the page's sections at its top."""
    writer = _Writer(page_path(page.name, site_pages), site_pages, widgets or {})
    head = ["<header>", "<h1>%s</h1>" % text(page.title)]
    if page.lead:
        head.append('<p class="lead">%s</p>' % writer.phrase(page.lead))
    if page.up is not None:
        head.append("<p>%s</p>" % writer.phrase((page.up,)))
    if nav:
        links = ['<a href="#%s">%s</a>' % (text(s.id), text(s.title)) for s in page.blocks if isinstance(s, d.Section)]
        head.append("<nav>%s</nav>" % " · ".join(links))
    head.append("</header>")
    body = "\n".join(head + [writer.block(b, 2) for b in page.blocks])
    return shell(page.title, body, "../" * page.name.count("/"))


def page_path(name: str, site_pages: Collection[str]) -> str:
    """Where a page is, relative to the report's folder: the site's HTML where it has one, else the Markdown."""
    return "%s/%s.html" % (FOLDER, name) if name in site_pages else name + ".md"


class _Writer:
    def __init__(self, here: str, site_pages: Collection[str], widgets: Mapping[str, str]) -> None:
        self.here, self.site_pages, self.widgets = here, site_pages, widgets

    def target(self, target: d.Target) -> str:
        return text(resolve(target, self.here, lambda name: page_path(name, self.site_pages)))

    def mark(self, status: Optional[str], kind: str, marks: str = "", tip: str = "") -> str:
        css = " ".join(c for c in ("st", colour(status, kind), "staged" if marks else "") if c)
        title = ' title="%s"' % text(tip) if tip else ""
        return '<span class="%s"%s>%s</span>' % (css, title, text(glyph(status, kind) + marks))

    def inline(self, part: d.Inline) -> str:
        if isinstance(part, d.Text):
            return text(part.value)
        if isinstance(part, d.Code):
            return "<code>%s</code>" % text(part.value)
        if isinstance(part, d.Strong):
            return "<strong>%s</strong>" % self.phrase(part.parts)
        if isinstance(part, d.Link):
            # A file of the report (a table, a repro script, a diff) downloads under its own name.
            saved = " download" if part.target.file is not None else ""
            return '<a href="%s"%s>%s</a>' % (self.target(part.target), saved, self.phrase(part.parts))
        if isinstance(part, d.Mark):
            shown = self.mark(part.status, part.kind, part.marks)
            return "%s %s" % (shown, text(part.status)) if part.named and part.status else shown
        if isinstance(part, d.Count):
            return text(part.words)
        raise TypeError("not an inline part: %r" % (part,))

    def phrase(self, parts: d.Phrase) -> str:
        return "".join(self.inline(part) for part in parts)

    def square(self, square: d.Square) -> str:
        if square.target is None:
            return self.mark(square.status, square.kind, square.marks, square.tip)
        shown = self.mark(square.status, square.kind, square.marks)
        title = ' title="%s"' % text(square.tip) if square.tip else ""
        return '<a href="%s"%s>%s</a>' % (self.target(square.target), title, shown)

    def block(self, block: d.Block, level: int) -> str:
        if isinstance(block, d.Section):
            heading = "<h%d>%s</h%d>" % (min(level, 6), text(block.title), min(level, 6))
            body = "".join(self.block(b, level + 1) for b in block.blocks)
            inner = DETAILS % (heading, body) if block.collapsed else heading + body
            return '<section id="%s">%s</section>' % (text(block.id), inner)
        if isinstance(block, d.Paragraph):
            return "<p>%s</p>" % self.phrase(block.parts)
        if isinstance(block, d.Items):
            tag = "ol" if block.numbered else "ul"
            return "<%s>%s</%s>" % (tag, "".join(self.item(i) for i in block.items), tag)
        if isinstance(block, d.Table):
            if not block.rows:
                return "<p><em>%s</em></p>" % text(block.empty)
            head = "".join('<th class="%s">%s</th>' % (c.align, text(c.label)) for c in block.columns)
            ids = [' id="%s"' % text(a) if a else "" for a in block.anchors] + [""] * len(block.rows)
            rows = "".join(
                "<tr%s>%s</tr>" % (ids[i], "".join('<td class="%s">%s</td>' % (c.align, self.phrase(cell))
                                                   for c, cell in zip(block.columns, row)))
                for i, row in enumerate(block.rows)
            )  # fmt: skip
            return WIDE % ("", head, rows)
        if isinstance(block, d.Grid):
            head = "<th>%s</th>" % text(block.corner) + "".join("<th>%s</th>" % text(c) for c in block.columns)
            rows = "".join(
                "<tr><th>%s</th>%s</tr>" % (self.phrase(label), "".join("<td>%s</td>" % self.square(s) for s in sq))
                for label, sq in block.rows
            )
            return WIDE % (' class="grid"', head, rows)
        if isinstance(block, d.Details):
            body = "".join(self.block(b, level + 1) for b in block.blocks)
            return DETAILS % (text(block.summary), body)
        if isinstance(block, d.CodeBlock):
            language = ' class="language-%s"' % text(block.language) if block.language else ""
            return "<pre><code%s>%s</code></pre>" % (language, text(block.text))
        if isinstance(block, d.Image):
            return '<p><img src="%s" alt="%s"></p>' % (self.target(block.target), text(block.alt))
        if isinstance(block, d.Widget):
            return '<div data-widget="%s">%s</div>' % (text(block.name), self.widgets.get(block.name, ""))
        raise TypeError("not a block: %r" % (block,))

    def item(self, item: d.Item) -> str:
        said = self.phrase(item.parts)
        if item.title:
            said = "<strong>%s</strong>%s" % (text(item.title), ": " + said if said else "")
        nested = "<ul>%s</ul>" % "".join(self.item(i) for i in item.items) if item.items else ""
        return "<li>%s%s</li>" % (said, nested)
