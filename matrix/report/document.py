"""A page of the report as data: what it says, in what order, with which links, drawn by two writers.

A builder (one per page) takes the report's model and returns a :class:`Page`; every selection, grouping, order,
count and wording happens there, once. The writers (:mod:`matrix.report.writers.markdown` and
:mod:`matrix.report.writers.html`) only draw a page: neither decides what it says, so the Markdown pages and the site
cannot disagree. This module imports nothing of the report, so that a writer never stands on a builder.

The parts:

- inline: :class:`Text` (the report's words or record text; a writer escapes it), :class:`Code`, :class:`Strong`,
  :class:`Link`, :class:`Mark` (a status: its glyph, from the schema, and its name) and :class:`Count` (``3 fixes``);
  a *phrase* is a tuple of them, made with :func:`phrase` from strings and parts;
- blocks: :class:`Paragraph`, :class:`Items` (a list, each :class:`Item` with an optional title: a verdict),
  :class:`Table`, :class:`Grid` (squares of statuses with their tooltips and links), :class:`Details`,
  :class:`CodeBlock`, :class:`Image`, :class:`Widget` (what only the site has: its writer fills it, the Markdown
  writer leaves it out) and :class:`Section`, which nests;
- :class:`Target`: where a link goes, as a page of the report, a file the report wrote or an address outside it.
  Each writer turns it into a path of its own form (``cases/x.md`` or ``site/cases/x.html``), relative to the page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional, Tuple, Union


@dataclass(frozen=True)
class Target:
    """Where a link goes: a report page by its name (``index``, ``cases/NAME``, ``transition-A__B``), a file of the
    report's folder (``charts/grid.png``), or an address outside the report; ``anchor`` a section of it."""

    page: Optional[str] = None
    file: Optional[str] = None
    url: Optional[str] = None
    anchor: str = ""

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.page, self.file, self.url)) > 1:
            raise ValueError("a target is a page, a file or an address, not several: %r" % (self,))


def page(name: str, anchor: str = "") -> Target:
    return Target(page=name, anchor=anchor)


def file(path: str) -> Target:
    return Target(file=path)


def url(address: str) -> Target:
    return Target(url=address)


def here(anchor: str) -> Target:
    """A section of the page the link is on."""
    return Target(anchor=anchor)


@dataclass(frozen=True)
class Text:
    """Words: the report's own or a record's (an error message); a writer escapes them for its markup."""

    value: str


@dataclass(frozen=True)
class Code:
    value: str


@dataclass(frozen=True)
class Strong:
    parts: Phrase


@dataclass(frozen=True)
class Link:
    parts: Phrase
    target: Target


@dataclass(frozen=True)
class Mark:
    """A status as its glyph (``schema``'s, one per status) and, where ``named``, its name.

    ``kind`` names the status vocabulary: ``cell`` (Status) or ``load`` (LoadStatus); ``marks`` are the signs after
    the glyph (a failed later stage).
    """

    status: Optional[str]
    kind: str = "cell"
    named: bool = True
    marks: str = ""


@dataclass(frozen=True)
class Count:
    """A count and its noun: ``1 fix``, ``3 fixes``."""

    number: int
    one: str
    many: str = ""

    @property
    def words(self) -> str:
        return plural(self.number, self.one, self.many)


def plural(count: int, one: str, many: str = "") -> str:
    """``1 fix``, ``2 fixes``: a count and its noun, in plain text."""
    return "%d %s" % (count, one if count == 1 else (many or one + "s"))


Inline = Union[Text, Code, Strong, Link, Mark, Count]
Phrase = Tuple[Inline, ...]


def phrase(*parts: Union[str, Inline, Phrase, None]) -> Phrase:
    """A phrase from strings (the report's words), parts and phrases; None and "" are left out."""
    out: list = []
    for part in parts:
        if part is None or part == "":
            continue
        if isinstance(part, str):
            out.append(Text(part))
        elif isinstance(part, tuple):
            out.extend(part)
        else:
            out.append(part)
    return tuple(out)


def link(label: Union[str, Phrase], target: Target) -> Link:
    return Link(phrase(label), target)


def joined(phrases: Iterable[Phrase], separator: str = ", ") -> Phrase:
    """Phrases one after another, ``separator`` between them."""
    out: list = []
    for i, each in enumerate(phrases):
        if i:
            out.append(Text(separator))
        out.extend(each)
    return tuple(out)


@dataclass(frozen=True)
class Paragraph:
    parts: Phrase


@dataclass(frozen=True)
class Item:
    """A list item; a verdict where it has a ``title`` (drawn strong, before its phrase); ``items`` nest under it."""

    parts: Phrase
    title: str = ""
    items: Tuple[Item, ...] = ()


@dataclass(frozen=True)
class Items:
    items: Tuple[Item, ...]
    numbered: bool = False


@dataclass(frozen=True)
class Column:
    label: str
    align: str = "l"  # "l", "r" or "c"


@dataclass(frozen=True)
class Table:
    """Rows of phrases under their columns; ``empty`` is said where there is no row."""

    columns: Tuple[Column, ...]
    rows: Tuple[Tuple[Phrase, ...], ...]
    empty: str = "None."
    wide: bool = False  # a table the site lets scroll sideways (many columns)
    anchors: Tuple[str, ...] = ()  # an anchor per row ("" for none): a glossary's terms, linked one by one

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError("a row of %d cells under %d columns" % (len(row), len(self.columns)))


@dataclass(frozen=True)
class Square:
    """One square of a grid: a status (None: no record), its kind (``Mark.kind``), the signs after its glyph, its
    tooltip and where it links."""

    status: Optional[str]
    kind: str = "cell"
    marks: str = ""
    tip: str = ""
    target: Optional[Target] = None


@dataclass(frozen=True)
class Grid:
    """Squares of statuses: ``rows`` of (label, squares) under ``columns``; ``corner`` names the two axes."""

    corner: str
    columns: Tuple[str, ...]
    rows: Tuple[Tuple[Phrase, Tuple[Square, ...]], ...]

    def __post_init__(self) -> None:
        for _label, squares in self.rows:
            if len(squares) != len(self.columns):
                raise ValueError("a grid row of %d squares under %d columns" % (len(squares), len(self.columns)))


@dataclass(frozen=True)
class CodeBlock:
    text: str
    language: str = ""


@dataclass(frozen=True)
class Image:
    target: Target
    alt: str


@dataclass(frozen=True)
class Widget:
    """What only the site has (the grid's filters, the downloads, the badge): the HTML writer draws it from the
    widgets it is handed by ``name``; the Markdown writer leaves it out."""

    name: str


@dataclass(frozen=True)
class Details:
    """Blocks behind a summary, shown on a click."""

    summary: str
    blocks: Tuple[Block, ...]


@dataclass(frozen=True)
class Section:
    """A titled part of a page; ``id`` is its anchor. ``collapsed``: the site shows its body on a click."""

    id: str
    title: str
    blocks: Tuple[Block, ...]
    collapsed: bool = False


Block = Union[Paragraph, Items, Table, Grid, CodeBlock, Image, Widget, Details, Section]


@dataclass(frozen=True)
class Page:
    """One page of the report: its name (``index``, ``cases/NAME``: the Markdown file's path without ``.md``), its
    title, and its blocks; ``up`` is a link back to where a reader came from."""

    name: str
    title: str
    blocks: Tuple[Block, ...]
    lead: Phrase = field(default=())
    up: Optional[Link] = None
