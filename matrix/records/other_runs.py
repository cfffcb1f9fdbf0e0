"""The opt-in stages' outcomes and the follow-up products of another run, joined to a report's own records.

An opt-in stage (``Stage.default`` False) is often run apart, on fewer releases or modes, so that the default run
stays cheap. Its outcomes belong on the cells the report already has: each of the other run's cells gives its
opt-in stage fields to the report's cell of the same identity (``schema.IDENTITY`` less the run number), where that
cell has none of its own. The other run's cells are not added: the report's cell counts stay its own. The follow-up
products (every declared product but the saved programs, which the report's own run made) join whole. Nothing here
names a stage or a product: it walks the declarations.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Dict, List, Tuple

import pandas as pd

from matrix.contract import products, stages
from matrix.contract.schema import IDENTITY
from matrix.records import devices
from matrix.records.store import Store, release_key

# A cell of one run matches the cell of another run with the same release, build, set, device, case and mode.
MATCH = tuple(key for key in IDENTITY if key != "run")
OPT_IN = tuple(stage for stage in stages.DECLARED if not stage.default)
# The saved programs come first in the declared order; every product after them is made from them, by a stage or a
# load option of the run that holds it.
FOLLOW_UPS = products.PRODUCTS[1:]


@dataclass(frozen=True)
class Joined:
    """The records with another run's part joined; what that run gave, and what it had that matched nothing."""

    store: Store
    stages: Tuple[str, ...]  # the opt-in stages whose outcomes it gave to at least one cell
    products: Tuple[str, ...]  # the follow-up products it holds records of
    unmatched: int  # its cells holding an opt-in stage's outcome that no cell of the records matches


def join(loaded: Store, other: Store) -> Joined:
    """``loaded`` with ``other``'s opt-in stage fields on the matching cells and its follow-up products added."""
    cells = loaded.cells
    given: List[str] = []
    unmatched = pd.Series(False, index=other.cells.index)
    if not other.cells.empty:
        own = pd.MultiIndex.from_frame(cells[list(MATCH)].astype(str))
        theirs = other.cells.assign(case=_report_names(cells, other.cells))
        theirs = theirs.assign(_key=list(pd.MultiIndex.from_frame(theirs[list(MATCH)].astype(str))))
        cells = cells.copy()
        for stage in OPT_IN:
            keys = [key for key in stage.keys if key in theirs.columns]
            carrying = theirs[theirs[keys].notna().any(axis=1)] if keys else theirs.iloc[:0]
            if carrying.empty:
                continue
            # The latest run of a cell wins, as the store's own rule keeps the latest record.
            by_key = carrying.sort_values("run").drop_duplicates("_key", keep="last").set_index("_key")
            unmatched[carrying.index[~carrying["_key"].isin(set(own))]] = True
            present = set(by_key.index)
            found = pd.Series([key in present for key in own], index=cells.index)
            lacking = found & cells[[k for k in keys if k in cells.columns]].isna().all(axis=1)
            if lacking.any():
                given.append(stage.name)
                rows = by_key.loc[[own[i] for i, hit in enumerate(lacking) if hit], keys]
                for key in keys:
                    cells.loc[lacking, key] = rows[key].to_numpy()
    tables: Dict[str, pd.DataFrame] = dict(loaded.products)
    for product in FOLLOW_UPS:
        frames = [f for f in (loaded.products[product.name], other.products[product.name]) if not f.empty]
        if frames:
            tables[product.name] = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    joined = dataclasses.replace(loaded, cells=cells, products=tables, warnings=loaded.warnings + other.warnings)
    held = tuple(p.name for p in FOLLOW_UPS if not other.products[p.name].empty)
    return Joined(joined, tuple(given), held, int(unmatched.sum()))


def _report_names(cells: pd.DataFrame, theirs: pd.DataFrame) -> pd.Series:
    """The case of each of the other run's cells by the report's name for its case file, where the report holds that
    file, else by its own name. A case's name depends on the folder a run was given: ``run`` names
    ``cases/tutorial/x.py`` ``tutorial/x`` from the case root, ``check cases/tutorial`` names it ``x``; the file
    is the same case."""
    if "case_file" not in cells.columns or "case_file" not in theirs.columns:
        return theirs["case"]
    known = cells[["case_file", "case"]].dropna().drop_duplicates("case_file")
    names = dict(zip(known["case_file"].map(os.path.normpath), known["case"]))
    files = theirs["case_file"].map(lambda path: os.path.normpath(path) if isinstance(path, str) and path else "")
    return files.map(names).fillna(theirs["case"]).where(files != "", theirs["case"])


Builds = Tuple[Tuple[str, str, str], ...]


def ran(other: Store, report: pd.DataFrame) -> Tuple[Builds, Tuple[str, ...], Tuple[str, ...]]:
    """What the other run ran, all of it, as a command that runs it again needs it: the builds its cells ran on, as
    (device, torch version, variant) in release order; its cases (by the names of the ``report``'s cells, as
    :func:`join` matches them) and its modes, sorted."""
    cells = other.cells
    if cells.empty:
        return (), (), ()
    found = set(zip(devices.of(cells), cells["torch_version"].astype(str), cells["variant"].astype(str)))
    builds = tuple(sorted(found, key=lambda build: (build[0], release_key(build[1]), build[2])))
    cases = tuple(sorted(set(_report_names(report, cells).astype(str))))
    return builds, cases, tuple(sorted(set(cells["mode"].astype(str))))
