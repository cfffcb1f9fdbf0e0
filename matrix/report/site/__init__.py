"""The report as a static site beside the Markdown, in the report's folder ``site/``.

Written by ``export-matrix report`` from the same model as the Markdown pages (``Findings``); nothing is
judged again here:

- ``index.html`` (:mod:`.front`): the verdicts; what changed in the newest release and every regression and fix
  between releases (:mod:`matrix.report.transition_page`'s sections, filtered by :mod:`.changes`); the
  grid of case × release × mode, filtered in the page by a search over
  case names, tags and error text, and by tag, status, release, mode and the real-model pack; the real models
  with the library versions each release resolved (:mod:`.real_models`); the saved programs' epochs
  (:mod:`.saved`); the charts (:mod:`.charts`); the run and how to run it again (:mod:`.run`); the tables to
  download; a legend of every glyph (:mod:`.legend`);
- ``glossary.html`` (:mod:`.glossary`): the report's terms and glyphs;
- ``upgrade.html``, the transition pages and the detail pages (grid, failures, builds, ...): each page built once
  as a document (:mod:`matrix.report.publish`), beside its Markdown form; the upgrade page's chooser of any pair
  of builds, the pair kept in the address, is the site's own (:mod:`.upgrade`);
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
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set

import pandas as pd

from matrix.records import devices as by_device
from matrix.records.repro import Failure
from matrix.report import case_page, diff_files, files
from matrix.report import markdown as md
from matrix.report.findings import Findings
from matrix.report.site import badge, case, devices, downloads, front, glossary, upgrade

FOLDER = "site"
ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "assets")
COPIED = ("site.css", "site.js", upgrade.SCRIPT, case.TIPS)  # copied as they are; badge.svg is a template
# What a build writes in the site's folder, and so what a later build may remove from it.
_SUFFIXES = (".html", ".css", ".js", ".svg", ".png", ".parquet", downloads.CSV)
CSV = downloads.CSV


def write(
    out: str,
    f: Findings,
    parquet: Iterable[str] = (),
    roots: Optional[Sequence[str]] = None,
    shelf: Optional[diff_files.Shelf] = None,
    csv: bool = False,
) -> Set[str]:
    """Write the site under ``out/site``, with the gzipped CSV of each ``parquet`` table of ``out`` where ``csv``;
    returns the paths.

    The pages render ``f``'s model (:mod:`matrix.records.model`), as the Markdown pages do; paths are relative
    to ``out``, as the manifest lists them.
    ``roots``: the folders case pages read sources from (default: the project's ``cases/``); ``shelf`` keeps the
    graph diff files the case pages link, for the caller to write (:mod:`matrix.report.diff_files`).
    """
    listed = files.previous(out)
    tables = sorted(parquet)
    written = downloads.write_tables(out, FOLDER, tables) if csv else set()
    pages = {name: "cases/%s.html" % md.page_file(name) for name in sorted(set(map(str, f.cells["case"])))}
    written |= _write(out, "index.html", front.render(f, pages, downloads.names(tables), csv))
    written |= _write(out, glossary.PAGE, glossary.render(f.title))
    for name in COPIED:
        with open(os.path.join(ASSETS, name), encoding="utf-8") as source:
            written |= _write(out, name, source.read())
    written |= _write(out, "badge.svg", badge.render(*f.model.newest_pass_rate))
    shown_cells = f.cells[[c for c in case.COLUMNS if c in f.cells.columns]]
    rows = _by_case(shown_cells.assign(environment=f.labels.to_numpy()))
    moves = _by_case(f.moves)
    saved = _by_case(f.loads)
    # The compiled packages' loads (the aoti stage, then `load`) and the programs compiled on a newer release
    # (`load --aoti`), as the model judged them.
    packages, compiles = f.model.packages, f.model.compiles
    package_rows, compile_rows = _by_case(packages.table), _by_case(compiles.table)
    failures: Dict[str, List[Failure]] = case_page.by_case(f.model.repros, lambda failure: failure.case)
    for name, target in pages.items():
        text = case.render(
            name, rows[name], moves.get(name, []), saved.get(name, []), f.load_orders, roots, failures.get(name, []),
            package_rows.get(name, []), packages.orders, compile_rows.get(name, []), compiles.orders, shelf,
            devices.case_section(by_device.of_case(name, f.model.devices, f.model.elsewhere)),
        )  # fmt: skip
        written |= _write(out, target, text)
    files.remove_stale(out, listed, written, ours, _emptied)  # the site's files and CSV tables it wrote no more
    return written


def _write(out: str, relative: str, content: str) -> Set[str]:
    path = posixpath.join(FOLDER, relative)
    files.write_text(out, path, content)
    return {path}


def _by_case(frame: pd.DataFrame) -> Dict[str, List[Dict[str, Any]]]:
    return case_page.by_case(frame.to_dict("records"))


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
    return len(parts) == 1 and entry.endswith((CSV, ".csv"))  # what earlier builds wrote beside the Parquet


def _script(parts: List[str]) -> bool:
    """Whether a path under the site's folder names a copy of a repro script, as earlier builds made them:
    ``cases/NAME.repro/FILE.py``."""
    return len(parts) == 3 and parts[0] == "cases" and parts[1].endswith(files.SCRIPTS) and parts[2].endswith(".py")


def _emptied(entry: str) -> bool:
    """Whether a file's folder goes once empty: a repro script's copy, or a CSV table's."""
    return _script(entry.split("/")[1:]) or entry.startswith("%s/%s/" % (FOLDER, downloads.TABLES))
