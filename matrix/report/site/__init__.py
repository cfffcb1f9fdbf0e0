"""The report as a static site beside the Markdown, in the report's folder ``site/``.

Written by ``export-matrix report`` from the same model as the Markdown pages (``Findings``); nothing is
judged again here:

- ``index.html``, ``glossary.html``, ``devices.html``, ``failures.html``: the pages built once as documents
  (:mod:`matrix.report.publish` writes them in both forms); this package draws only the front page's widgets
  (:mod:`.front`): the grid of case × release × mode, filtered in the page by a search over case names, tags and
  error text, and by tag, status, release, mode and the real-model pack; every regression and fix between releases
  with its filters (:mod:`.changes`); the CSV downloads and the badge;
- ``upgrade.html``, the transition pages and the detail pages (grid, failures, builds, ...): each page built once
  as a document, beside its Markdown form; the upgrade page's chooser of any pair of builds, the pair kept in the
  address, is the site's own (:mod:`.upgrade`);
- ``cases/NAME.html`` (:mod:`.case`), NAME as the case's Markdown page's: its history across releases, errors,
  graph diffs, packages beside torch, repros (each linked where the report wrote it, ``../../cases/NAME.repro/``),
  saved × loaded grid, and where the records hold them compiled × loaded and exported × compiled grids;
- ``badge.svg`` (:mod:`.badge`): the newest release's pass rate;
- ``tables/`` (:mod:`.downloads`): each table of the report as gzipped CSV, where the build is asked for them
  (``--csv``: publishing to the reports branch or GitHub Pages); the report committed in the project offers the
  Parquet alone.

The site stores no second copy of what the report wrote beside its Markdown: its pages show the charts of
``charts/``, link each Parquet table and each repro script where the report wrote them, one folder up
(``../charts/``, ``../cells.parquet``, ``../cases/NAME.repro/``). It works within the report's folder,
published whole (the reports branch, GitHub Pages). The pages load nothing but the report's files: the grid's
data is embedded in the page, so the site works from ``file://``, where a page may not fetch a file, as from a
web server, with no network. Like every file of the report, these are listed in the report's manifest, and a
later build removes those it does not write again (the copies earlier builds made among them).
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import Iterable, List, Set

from matrix.report import files
from matrix.report.findings import Findings
from matrix.report.site import badge, downloads, upgrade

FOLDER = "site"
ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")
TIPS = "tips.js"  # adds each case page grid square's row and column to its tooltip
COPIED = ("site.css", "site.js", upgrade.SCRIPT, TIPS)  # copied as they are; badge.svg is a template
# The widget that brings the tooltips' script into a case page.
TIPS_WIDGET = '<script src="../%s"></script>' % TIPS
# What a build writes in the site's folder, and so what a later build may remove from it.
_SUFFIXES = (".html", ".css", ".js", ".svg", ".png", ".parquet", downloads.CSV)


def write(out: str, f: Findings, parquet: Iterable[str] = (), csv: bool = False, pages: Iterable[str] = ()) -> Set[str]:
    """Write the site under ``out/site``, with the gzipped CSV of each ``parquet`` table of ``out`` where ``csv``;
    returns the paths.

    The pages render ``f``'s model (:mod:`matrix.records.model`), as the Markdown pages do; paths are relative
    to ``out``, as the manifest lists them. ``pages``: what the build wrote of the site's pages besides (the case
    pages, both forms of one document: :mod:`matrix.report.case_page`), which stay.
    """
    listed = files.previous(out)
    written = downloads.write_tables(out, FOLDER, parquet) if csv else set()
    texts = {name: Path(ASSETS, name).read_text(encoding="utf-8") for name in COPIED}
    texts["badge.svg"] = badge.render(*f.newest_pass_rate)
    for name, content in texts.items():
        files.write_text(out, posixpath.join(FOLDER, name), content)
    written |= {posixpath.join(FOLDER, name) for name in texts} | set(pages)
    files.remove_stale(out, listed, written, ours, _emptied)  # the site's files and CSV tables it wrote no more
    return written


def ours(entry: str) -> bool:
    """Whether a manifest entry names a file of the site (the copies of charts, tables and repro scripts earlier
    builds made there among them), or a CSV table earlier builds wrote beside the Parquet: what :func:`write` may
    remove."""
    if "\0" in entry or "\\" in entry or entry.startswith("/") or posixpath.normpath(entry) != entry:
        return False
    parts = entry.split("/")
    if ".." in parts or any(part.startswith(".") for part in parts):
        return False
    if parts[0] == FOLDER:
        return entry.endswith(_SUFFIXES) or _script(parts[1:])
    return len(parts) == 1 and entry.endswith((downloads.CSV, ".csv"))  # what earlier builds wrote beside the Parquet


def _script(parts: List[str]) -> bool:
    """Whether a path under the site's folder names a copy of a repro script, as earlier builds made them:
    ``cases/NAME.repro/FILE.py``."""
    return len(parts) == 3 and parts[0] == "cases" and parts[1].endswith(files.SCRIPTS) and parts[2].endswith(".py")


def _emptied(entry: str) -> bool:
    """Whether a file's folder goes once empty: a repro script's copy, or a CSV table's."""
    return _script(entry.split("/")[1:]) or entry.startswith("%s/%s/" % (FOLDER, downloads.TABLES))
