"""The HTML site of a committed report, built beside its pages: ``nox -s site``.

The project commits its report's Markdown pages, charts and tables (``reports/latest``, whose tables hold the
AOTInductor selection's packages and compiles too), not its site, which is the form CI publishes to the reports
branch or GitHub Pages. This builds the site from the folder's own tables, compared with the baseline the folder
keeps (:mod:`.kept_baseline`), in a scratch folder,
and puts its ``site/`` (git-ignored) beside the committed pages, whose charts, tables, repro scripts and graph
diffs it links. The committed files are not touched. Before it says it is done, it checks that every relative
link of the site's pages names a file of the folder.
"""

from __future__ import annotations

import argparse
import os
import posixpath
import shutil
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple
from urllib.parse import unquote, urlsplit

from matrix.contract.errors import UserError
from matrix.records import published
from matrix.report import stamp
from matrix.report.build import build_report

SITE = "site"
# How many broken links an error names.
SHOWN = 5


class SiteError(UserError):
    """A folder that is not a report, or a site whose links the committed pages do not hold."""


def build(folder: str, notify: Optional[Callable[[str], None]] = None) -> str:
    """Build ``folder``'s site into ``folder/site/`` and return the path of its front page."""
    if not published.is_report(folder):
        raise SiteError(
            "%s: not a report folder (no %s and manifest): name a committed report" % (folder, published.CELLS)
        )
    with tempfile.TemporaryDirectory(prefix="export-matrix-site-") as scratch:
        out = os.path.join(scratch, os.path.basename(os.path.normpath(folder)))
        # The site carries the publication's stamp, as its Markdown pages do, not the day and commit it is built with.
        build_report([folder], out, notify=notify, made=stamp.read(folder))
        site = os.path.join(folder, SITE)
        if os.path.isdir(site):
            shutil.rmtree(site)
        shutil.copytree(os.path.join(out, SITE), site)
    missing = broken_html(folder, SITE)
    if missing:
        shown = "; ".join("%s -> %s" % pair for pair in missing[:SHOWN]) + ("; …" if len(missing) > SHOWN else "")
        raise SiteError(
            "%s: %d link%s of the site name no file of %s (%s): the committed pages were written by other report"
            " code; re-render them with `nox -s publish -- %s`"
            % (site, len(missing), "" if len(missing) == 1 else "s", folder, shown, folder)
        )
    return os.path.join(site, "index.html")


class _Targets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: List[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self.found += [value for name, value in attrs if name in ("href", "src") and value]


def html_targets(html: str) -> List[str]:
    """Every ``href`` and ``src`` of ``html``, as written."""
    parser = _Targets()
    parser.feed(html)
    return parser.found


def relative(target: str) -> bool:
    """Whether ``target`` names a file beside its page: not another site, nor a place in the same page."""
    parts = urlsplit(target)
    return not (parts.scheme or parts.netloc or not parts.path)


def resolve(page: str, target: str) -> str:
    """The path, relative to the report's folder, that ``target`` names from ``page`` (also relative to it)."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(urlsplit(target).path)))


def broken_html(report: str, under: str) -> List[Tuple[str, str]]:
    """The relative links of the HTML pages under ``report/under`` that name no file nor folder of ``report``:
    (page relative to ``report``, target as written)."""
    missing: List[Tuple[str, str]] = []
    for path in sorted(Path(report, under).rglob("*.html")):
        page = path.relative_to(report).as_posix()
        for target in filter(relative, html_targets(path.read_text(encoding="utf-8"))):
            found = resolve(page, target)
            if found.startswith("../") or not os.path.exists(os.path.join(report, *found.split("/"))):
                missing.append((page, target))
    return missing


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m matrix.report.published_site",
        description="Build the HTML site of a committed report folder into FOLDER/site/ from its own tables.",
    )
    parser.add_argument("folder", metavar="FOLDER", help="a committed report folder, e.g. reports/latest")
    args = parser.parse_args(argv)
    try:
        index = build(args.folder, notify=lambda line: print(line, file=sys.stderr, flush=True))
    except UserError as exc:
        print("error: %s" % exc, file=sys.stderr)
        return 2
    print("the site is in %s" % index)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
