"""The Markdown writer: a :class:`~matrix.report.document.Page` as a GitHub-flavoured Markdown file.

A page named ``cases/NAME`` is the file ``cases/NAME.md``; links are relative to it. Record text is escaped by
:mod:`matrix.report.markdown`'s helpers, so an error message cannot break a table or inject a link. A grid is a
table of glyphs whose tooltips are the links' titles.
"""

from __future__ import annotations

import html
import re
from typing import List, Optional
from urllib.parse import quote

from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report.writers import glyph, resolve


def page_path(name: str) -> str:
    return name + ".md"


def write(page: d.Page) -> str:
    """The page's Markdown."""
    writer = _Writer(page_path(page.name))
    out = ["# %s\n" % md.text(page.title)]
    if page.lead:
        out.append(writer.phrase(page.lead) + "\n")
    if page.up is not None:
        out.append(writer.phrase((page.up,)) + "\n")
    out.extend(writer.block(block, 2) for block in page.blocks)
    return "\n".join(part for part in out if part).rstrip("\n") + "\n"


def github_anchor(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


class _Writer:
    def __init__(self, here: str) -> None:
        self.here = here

    def target(self, target: d.Target) -> str:
        return quote(resolve(target, self.here, page_path), safe="/#+:?=&%~")

    def inline(self, part: d.Inline) -> str:
        if isinstance(part, d.Text):
            return md.text(part.value)
        if isinstance(part, d.Code):
            return md.code(part.value)
        if isinstance(part, d.Strong):
            return "**%s**" % self.phrase(part.parts)
        if isinstance(part, d.Link):
            return "[%s](%s)" % (self.phrase(part.parts), self.target(part.target))
        if isinstance(part, d.Mark):
            shown = glyph(part.status, part.kind) + part.marks
            return "%s %s" % (shown, md.text(part.status)) if part.named and part.status else shown
        if isinstance(part, d.Count):
            return md.text(part.words)
        raise TypeError("not an inline part: %r" % (part,))

    def phrase(self, parts: d.Phrase) -> str:
        return "".join(self.inline(part) for part in parts)

    def square(self, square: d.Square) -> str:
        shown = glyph(square.status, square.kind) + square.marks
        if square.target is None:
            return '<span title="%s">%s</span>' % (md.html_text(square.tip), shown) if square.tip else shown
        title = ' "%s"' % _title(square.tip) if square.tip else ""
        return "[%s](%s%s)" % (shown, self.target(square.target), title)

    def block(self, block: d.Block, level: int) -> str:
        if isinstance(block, d.Section):
            # An anchor of its own where GitHub's would differ, on the line above (a heading may follow a paragraph).
            anchor = "" if github_anchor(block.title) == block.id else '<a id="%s"></a>\n' % block.id
            head = "%s%s %s\n" % (anchor, "#" * min(level, 6), md.text(block.title))
            return "\n".join([head] + [b for b in (self.block(b, level + 1) for b in block.blocks) if b])
        if isinstance(block, d.Paragraph):
            return self.phrase(block.parts) + "\n"
        if isinstance(block, d.Items):
            return "\n".join(self.items(block.items, 0, block.numbered)) + "\n"
        if isinstance(block, d.Table):
            if not block.rows:
                return "_%s_\n" % md.text(block.empty)
            ids = ['<a id="%s"></a>' % a if a else "" for a in block.anchors] + [""] * len(block.rows)
            return md.table(
                [md.text(c.label) for c in block.columns],
                ([ids[i] + self.phrase(row[0])] + [self.phrase(cell) for cell in row[1:]]
                 for i, row in enumerate(block.rows)),
                [c.align for c in block.columns],
            )  # fmt: skip
        if isinstance(block, d.Grid):
            return md.table(
                [md.text(block.corner)] + [md.text(c) for c in block.columns],
                ([self.phrase(label)] + [self.square(s) for s in squares] for label, squares in block.rows),
                ["l"] + ["c"] * len(block.columns),
            )
        if isinstance(block, d.Details):
            body = "\n".join(self.block(b, level + 1) for b in block.blocks).rstrip("\n")
            return "<details><summary>%s</summary>\n\n%s\n\n</details>\n" % (md.html_text(block.summary), body)
        if isinstance(block, d.CodeBlock):
            return md.fence(block.text, block.language)
        if isinstance(block, d.Image):
            return "![%s](%s)\n" % (md.text(block.alt), self.target(block.target))
        if isinstance(block, d.Widget):
            return ""
        raise TypeError("not a block: %r" % (block,))

    def items(self, items: tuple[d.Item, ...], depth: int, numbered: bool) -> List[str]:
        lines: List[str] = []
        for i, item in enumerate(items, 1):
            bullet = "%d." % i if numbered else "-"
            said = self.phrase(item.parts)
            if item.title:
                said = "**%s**%s" % (md.text(item.title), ": " + said if said else "")
            lines.append("%s%s %s" % ("  " * depth, bullet, said))
            lines.extend(self.items(item.items, depth + 1, False))
        return lines


def _title(tip: Optional[str]) -> str:
    """A link's title: one line, as entities (which a title decodes), so that nothing in it reads as markup."""
    # "|" as an entity too: a table row ends its cell at a bare one, even inside a link's title.
    plain = html.escape(md.plain(tip or "").replace("\\", "\\\\"), quote=True).replace("|", "&#124;")
    return re.sub(r"\s*(\r\n|\r|\n)\s*", " ", plain)
