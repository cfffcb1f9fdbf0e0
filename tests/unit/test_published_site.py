"""`nox -s site`: the HTML site of a committed report, built beside its pages from its own tables."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict

import pytest

from matrix.report import build as report
from matrix.report import published_site

from . import links_support
from conftest import history, write_by_release


def contents(folder: Path) -> Dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture()
def publication(tmp_path: Path) -> Path:
    """A report as the project commits it: built against a baseline, then without its site."""
    old = write_by_release(tmp_path / "old", [r for r in history() if r.get("torch_version") != "2.6.0"])
    new = write_by_release(tmp_path / "new", history())
    earlier = tmp_path / "latest@abc1234"
    report.build_report([str(old)], str(earlier), charts=False)
    published = tmp_path / "latest"
    report.build_report([str(new)], str(published), baseline=str(earlier))
    return published


def test_the_site_built_from_the_committed_tables_is_the_published_one_and_leaves_the_pages_alone(
    publication: Path, tmp_path: Path
):
    site = publication / published_site.SITE
    as_published = contents(site)
    assert "index.html" in as_published and any(name.startswith("cases/") for name in as_published)
    for path in sorted(site.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    site.rmdir()
    committed = contents(publication)
    index = published_site.build(str(publication))
    assert index == os.path.join(str(publication), "site", "index.html")
    assert contents(site) == as_published  # the comparison with the kept baseline included
    assert "latest@abc1234" in (site / "index.html").read_text(encoding="utf-8")
    assert {k: v for k, v in contents(publication).items() if not k.startswith("site/")} == committed
    assert links_support.broken(publication) == []


def test_a_site_whose_links_the_pages_do_not_hold_is_an_error_naming_them(publication: Path):
    linked = sorted(links_support.relative(publication / "site", r"^\.\./charts/.*\.png$"))
    assert linked
    chart = publication / "charts" / Path(linked[0]).name
    chart.unlink()
    with pytest.raises(published_site.SiteError, match=r"name no file of .*latest.*charts/.*\.png.*nox -s publish"):
        published_site.build(str(publication))


def test_a_folder_that_is_not_a_report_is_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    records = write_by_release(tmp_path / "records", history())
    assert published_site.main([str(records)]) == 2
    assert (
        capsys.readouterr().err
        == "error: %s: not a report folder (no cells.parquet and manifest): name a committed report\n" % records
    )


def test_every_link_of_the_committed_report_resolves_without_its_site():
    folder = Path(__file__).resolve().parents[2] / "reports" / "latest"
    assert (folder / "index.md").is_file()
    assert len(links_support.links(folder)) > 100
    # The site is built where it is read (git-ignored): the pages must not need it.
    assert [link for link in links_support.broken(folder) if not link[0].startswith("site/")] == []
    assert [
        link for link in links_support.links(folder) if "site/" in link[1] and not link[0].startswith("site/")
    ] == []
