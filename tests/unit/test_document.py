"""The report's document and its two writers: one page, drawn as Markdown and as the site's HTML, says the same."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from matrix.contract.schema import Status
from matrix.report import document as d
from matrix.report import glossary
from matrix.report.writers import glyph
from matrix.report.writers import html as html_writer
from matrix.report.writers import markdown as md_writer

from .forms_support import differences, facts, markdown_facts

HOSTILE = "RuntimeError: a | b `x` <script>alert(1)</script> [link](http://evil) *bold* _u_"


def _page() -> d.Page:
    case = d.page("cases/models__cond")
    return d.Page(
        name="cases/models__cond",
        title="models/cond",
        lead=d.phrase("A case with ", d.Count(3, "fix", "fixes"), " and ", d.Code("torch.cond"), "."),
        up=d.link("← the matrix", d.page("index")),
        blocks=(
            d.Section(
                "history",
                "History",
                (
                    d.Paragraph(d.phrase("Now ", d.Mark("fail"), " on ", d.Strong(d.phrase("2.15.0")), ".")),
                    d.Items(
                        (
                            d.Item(d.phrase("2 of 3 ", d.link("releases", d.page("index", "verdicts"))), title="Still"),
                            d.Item(
                                d.phrase(HOSTILE), items=(d.Item(d.phrase("nested ", d.Mark("pass", named=False))),)
                            ),
                        )
                    ),
                    d.Table(
                        (d.Column("release"), d.Column("status"), d.Column("error"), d.Column("count", "r")),
                        (
                            (d.phrase("2.14.1"), d.phrase(d.Mark("pass")), d.phrase(), d.phrase("1")),
                            (d.phrase("2.15.0"), d.phrase(d.Mark("fail")), d.phrase(HOSTILE), d.phrase("2")),
                        ),
                    ),
                    d.Table((d.Column("x"),), (), empty="No row here."),
                ),
            ),
            d.Section(
                "grid",
                "Saved × loaded",
                (
                    d.Grid(
                        "saved ↓ loaded →",
                        ("2.14.1", "2.15.0"),
                        (
                            (
                                d.phrase("2.14.1"),
                                (
                                    d.Square("pass", "load", tip="ok", target=case),
                                    d.Square("load-error", "load", tip=HOSTILE, target=case),
                                ),
                            ),
                            (d.phrase("2.15.0"), (d.Square(None), d.Square("pass", "load", marks="ˢ", tip="t"))),
                        ),
                    ),  # fmt: skip
                    d.Details("the traceback", (d.CodeBlock("Traceback\n  ```boom```\n" + HOSTILE),)),
                    d.Image(d.file("charts/grid.png"), "the grid"),
                    d.Widget("filters"),
                ),
                collapsed=True,
            ),
        ),
    )


def test_both_forms_carry_the_same_facts() -> None:
    page = _page()
    markdown = md_writer.write(page)
    site = html_writer.write(page, {"index", "cases/models__cond"}, {"filters": "<p>only the site</p>"})
    found_md = markdown_facts(markdown, "cases/models__cond.md")
    found_html = facts(site, "site/cases/models__cond.html")
    assert differences(found_md, found_html) is None
    # What a reader relies on is there, in order: the links resolve to the pages and files they name in both forms.
    links = [value for kind, value in found_md if kind in ("link", "image")]
    assert links == [
        "page:index",
        "page:index#verdicts",
        "page:cases/models__cond",
        "page:cases/models__cond",
        "file:charts/grid.png",
    ]
    tips = [value for kind, value in found_md if kind == "tip"]
    assert tips == ["ok", " ".join(HOSTILE.split()), "t"]
    words = " ".join(value for kind, value in found_md if kind == "text")
    assert "3 fixes" in words and glyph("fail") + " fail" in words and "No row here." in words
    assert HOSTILE in words  # record text shown as it was, never as markup
    assert "only the site" not in words and "only the site" in site


def test_record_text_cannot_inject_markup() -> None:
    page = _page()
    markdown, site = md_writer.write(page), html_writer.write(page, {"index"})
    shown = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    for form in (shown, site):
        assert "<script>" not in form and 'href="http://evil"' not in form


def test_a_page_the_site_lacks_is_linked_in_its_markdown_form() -> None:
    page = d.Page("upgrade", "Upgrade", (d.Paragraph(d.phrase(d.link("claims", d.page("claims")))),))
    site = html_writer.write(page, {"upgrade"})
    assert 'href="../claims.md"' in site
    assert facts(site, "site/upgrade.html")[1] == ("link", "page:claims")


def test_one_glyph_per_status_from_the_schema() -> None:
    glyphs = [glyph(s.value) for s in Status]
    assert len(set(glyphs)) == len(glyphs)
    site = html_writer.write(d.Page("x", "x", (d.Paragraph(d.phrase(d.Mark("case-error"))),)), {"x"})
    assert Status.CASE_ERROR.symbol in site and Status.CASE_ERROR.symbol in md_writer.write(
        d.Page("x", "x", (d.Paragraph(d.phrase(d.Mark("case-error"))),))
    )


def test_a_malformed_table_is_refused_where_it_is_built() -> None:
    with pytest.raises(ValueError, match="2 cells under 1 columns"):
        d.Table((d.Column("a"),), ((d.phrase("x"), d.phrase("y")),))


def test_a_glossary_term_is_an_anchor_in_both_forms_and_a_code_block_names_its_language() -> None:
    """A link to ``glossary#term-epoch`` lands on the term in either form; a code block keeps its language on the
    site; a link to a file of the report downloads it there."""
    page = glossary.page()
    markdown = md_writer.write(page)
    html = html_writer.write(page, {"glossary"})
    for term in ("cell", "epoch", "regression"):
        assert '| <a id="term-%s"></a>**%s** |' % (term, term) in markdown
        assert '<tr id="term-%s">' % term in html
    table = d.Paragraph(d.phrase(d.link("t", d.file("t.parquet"))))
    shown = d.Page("x", "x", (d.CodeBlock("print(1)", "python"), table))
    drawn = html_writer.write(shown, {"x"})
    assert '<pre><code class="language-python">print(1)</code></pre>' in drawn
    assert '<a href="../t.parquet" download>t</a>' in drawn
