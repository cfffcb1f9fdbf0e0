"""The front page and what it carries (verdicts, the run, the glossary, the devices page, the failure signatures):
each built once as a document, so that its Markdown file and its site page say the same, in the same order."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Dict, List

import pytest

from matrix.records import verdicts as judged
from matrix.records.failures import Sighting
from matrix.records.known_issues import KnownIssue
from matrix.report import build as report
from matrix.report import document as d
from matrix.report import known_issues, published_site, stamp
from matrix.report import verdicts as worded
from matrix.report.writers import html as html_writer
from matrix.report.writers import markdown as md_writer

from .forms_support import Fact, differences, facts, markdown_facts
from .test_devices_page import on_two_devices
from .test_site import records_with_everything
from .test_verdicts import verdicts
from conftest import history, report_cell, write_by_release

PAGES = ("index", "glossary", "failures", "devices")


def both_forms(out: Path) -> Dict[str, List[Fact]]:
    """Each of this module's pages the report wrote, read in both forms; they must carry the same facts."""
    found = {}
    for name in PAGES:
        if not (out / (name + ".md")).is_file():
            continue
        markdown = markdown_facts((out / (name + ".md")).read_text(encoding="utf-8"), name + ".md")
        site = facts((out / "site" / (name + ".html")).read_text(encoding="utf-8"), "site/%s.html" % name)
        assert differences(markdown, site) is None, (name, differences(markdown, site))
        found[name] = markdown
    return found


def words(found: List[Fact]) -> str:
    """The page's words as a reader reads them: a link's words run on into the punctuation after them."""
    return re.sub(r" ([.:,;)])", r"\1", " ".join(value for kind, value in found if kind in ("text", "link-text")))


def links(found: List[Fact]) -> List[str]:
    return [value for kind, value in found if kind == "link"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A report with loads, a real model, an incomplete-free history and a baseline to compare with."""
    root = tmp_path_factory.mktemp("front")
    earlier = write_by_release(root / "old", [r for r in history() if r.get("torch_version") != "2.6.0"])
    report.build_report([str(earlier)], str(root / "latest@abc1234"), charts=False)
    rows = history() + [report_cell(r, "works", "pass", expected="supported") for r in ("2.4.1", "2.5.0", "2.6.0")]
    folders = records_with_everything(root / "records") + [write_by_release(root / "claims", rows)]
    out = root / "report"
    report.build_report([str(f) for f in folders], str(out), baseline=str(root / "latest@abc1234"))
    return out


def test_the_front_page_glossary_and_failures_say_the_same_in_both_forms(built: Path):
    found = both_forms(built)
    assert set(found) == {"index", "glossary", "failures"}
    # The sections a reader expects, in this order in both forms, and the links that lead to their detail.
    order = ["Verdicts", "Cases", "What changed in 2.6.0", "The run", "Summary", "Real models (1)"]
    order += ["Top failure signatures", "Strict vs non-strict", "Changes between releases"]
    order += ["Saved programs across releases"]
    order += ["Tables", "More", "Since the previous report"]
    markdown = re.findall(r"^## (.+)$", (built / "index.md").read_text(encoding="utf-8"), re.M)
    site = re.findall(r"<h2>([^<]+)</h2>", (built / "site" / "index.html").read_text(encoding="utf-8"))
    assert markdown == order and [name for name in site if name in order] == order
    assert {"page:glossary", "page:failures", "page:upgrade", "here#changes"} <= set(links(found["index"]))
    assert "page:cases/breaks" in links(found["index"])
    assert "Statuses and marks" in words(found["glossary"]) and "Load statuses" in words(found["glossary"])


def test_passes_the_most_names_the_newest_build_first_in_both_forms():
    best = (judged.Best("strict", ("2.4.1", "2.5.0", "2.6.0", "2.7.0"), 2, 2),)
    page = d.Page("index", "t", (worded.section(dataclasses.replace(verdicts(), best=best)),))
    markdown = markdown_facts(md_writer.write(page), "index.md")
    assert differences(markdown, facts(html_writer.write(page, {"index"}), "site/index.html")) is None
    said = re.search(r"Passes the most of what is documented to work: strict: ([^(]+) \(", words(markdown))
    assert said is not None and said.group(1) == "2.7.0, 2.6.0, 2.5.0 and 1 more"


def test_since_the_previous_report_counts_gone_regressions_and_links_the_full_comparison_in_both_forms(built: Path):
    index = both_forms(built)["index"]
    said = words(index)
    assert re.search(r"Since latest@abc1234: .*; \d+ new and \d+ gone regressions or fixes between releases", said)
    assert "here#since-the-previous-report" in links(index) and "page:baseline" in links(index)


def test_the_run_is_cited_as_one_thing_and_says_how_to_make_it_again(built: Path):
    index = both_forms(built)["index"]
    said, made = words(index), stamp.read(str(built))
    assert made is not None and made.date in said
    assert "How to cite: torch.export compatibility matrix (%s; cells run " % made.words() in said
    # The runs whose records it shows, each kind with its days; then the commands, the checkout first.
    assert re.search(r"cells \d+ 2025-03-01 to 2025-03-02", said) and "loads of saved programs" in said
    commands = said[said.index("Run it again") :]
    assert commands.index("git checkout") < commands.index("nox -s run load") < commands.index("export-matrix report")


def test_a_site_built_later_beside_the_committed_report_carries_its_stamp(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    made = stamp.read(str(built))
    assert made is not None
    monkeypatch.setenv(stamp.EPOCH, "1767484800")  # another day: 2026-01-04
    published_site.build(str(built))
    site = (built / "site" / "index.html").read_text(encoding="utf-8")
    assert made.words()[1:] in site and "2026-01-04" not in site
    both_forms(built)


def test_the_devices_page_says_the_same_in_both_forms(tmp_path: Path):
    out = tmp_path / "report"
    report.build_report([str(write_by_release(tmp_path / "records", on_two_devices()))], str(out), charts=False)
    found = both_forms(out)
    assert "devices" in found and "page:devices" in links(found["index"])
    devices = words(found["devices"])
    assert "heals" in devices and "pass" in devices and "export-matrix check cases/heals.py" in devices


def _said(item: d.Item) -> str:
    page = d.Page("index", "t", (d.Items((item,)),))
    markdown = markdown_facts(md_writer.write(page), "index.md")
    assert differences(markdown, facts(html_writer.write(page, {"index"}), "site/index.html")) is None
    return words(markdown)


def test_an_issue_with_no_upstream_reference_is_unconfirmed_not_known_upstream():
    issue = KnownIssue("ours", "cannot load its packages", "", ("aoti",), "RuntimeError", "x", ("2.5",))
    said = _said(known_issues.verdict(Sighting(issue, ("2.5.1",), (("cells", 9),))))
    assert said == (
        "t Unconfirmed issue: 2.5.1 cannot load its packages: no upstream issue on record. Labelled, and still"
        " counted as failures: 9 cells."
    )
    assert not issue.confirmed and issue.kind == "Unconfirmed issue"  # the model says it; the verdict words it
    upstream = KnownIssue("up", "breaks", "https://github.com/pytorch/pytorch/issues/1", ("aoti",), "E", "x", ("2.5",))
    said = _said(known_issues.verdict(Sighting(upstream, ("2.5.1",), (("cells", 1),))))
    assert said == (
        "t Known upstream issue: 2.5.1 breaks: pytorch/pytorch#1. Labelled, and still counted as failures: 1 cell."
    )
    assert upstream.confirmed and upstream.kind == "Known upstream issue"
