"""The front page's real-models section: the models of ``real_models/`` by release, with their libraries' versions.

The pack builds real architectures (torchvision, transformers, timm) from code with random
weights; what a user asks of it is "does my kind of model export on the release I care
about, and with which version of its library". One row per model, one column per
environment (release, and ``--with`` set where there is one): the status in each mode and
the version of each library the model names that this release resolved.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import pandas as pd

from matrix.contract.schema import MODES, NO_RECORD, NoCell
from matrix.records import packages, store
from matrix.report import document as d
from matrix.report import markdown as md
from matrix.report import phrases as say
from matrix.report.findings import Findings

# The case folder of the pack: a case whose name starts with it is a real model.
PREFIX = "real_models/"


def section(f: Findings) -> Optional[d.Section]:
    """The section; None when the records hold no real model."""
    if f.cells.empty:
        return None
    cells = f.cells.assign(_env=f.labels.to_numpy())
    cells = cells[cells["case"].map(lambda case: isinstance(case, str) and case.startswith(PREFIX))]
    if cells.empty:
        return None
    envs = list(dict.fromkeys(store.sort_cells(cells, release="release")["_env"]))  # the columns
    modes = [m for m in MODES if m in set(cells["mode"])]
    by_cell: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}  # (model, environment) -> its cells, one per mode
    for row in cells.to_dict("records"):
        by_cell.setdefault((str(row["case"]), str(row["_env"])), []).append(row)
    failed = not_installed(f, cells)
    names = sorted({case for case, _ in by_cell})
    rows = []
    for case in names:
        mine = [row for env in envs for row in by_cell.get((case, env), [])]
        # A model's libraries are named once, beside it, and each cell shows their versions: every column fits.
        named = list(dict.fromkeys(name for row in mine for name in packages.names(row.get("dependency_set"))))
        model = d.phrase(say.case(case), " (%s)" % ", ".join(named) if named else None)
        rows.append([model] + [_cell(by_cell.get((case, env), []), modes, (case, env) in failed) for env in envs])
    # The last row: per environment, the models that pass of those recorded there, then those not installed there.
    passes = [share(cells[cells["_env"] == env], modes, sum(1 for _, e in failed if e == env)) for env in envs]
    rows.append([d.phrase(d.Strong(d.phrase("passes")))] + [d.phrase(said) for said in passes])
    intro = d.phrase(
        "Real architectures built in code with random weights (", d.Code("cases/real_models/"), "), each with the"
        " libraries it names beside it. Each cell shows %s, then the version of each library that release resolved;"
        " %s where the model's libraries failed to install there. The last row counts the models that pass of those"
        " recorded, per mode. Status glyphs as in the " % (" then ".join(modes), NoCell.ENV_ERROR),
        d.link("glossary", d.page("glossary", "statuses-and-marks")), ".",
    )  # fmt: skip
    table = say.table(["model", *envs], rows, wide=True)
    title = "Real models (%d)" % len(names)
    return d.Section("real-models", title, (d.Paragraph(intro), table))


def not_installed(f: Findings, cells: pd.DataFrame) -> Set[Tuple[str, str]]:
    """The (model, environment) pairs without a cell because the model's set could not be had there (the sets the
    model's incomplete builds lack).

    A model's set in an environment it has no cell in is the one it had elsewhere with the same
    ``--with`` set: its own PEP 723 block is the same on every release.
    """
    failed = {(b.release, b.variant, m.python, m.dependency_set) for b in f.incomplete for m in b.missing}
    sets = {(case, w): s for case, w, s in zip(cells["case"], cells["with_set"], cells["dependency_set"])}
    envs = cells[["_env", "release", "variant", "python", "with_set"]].drop_duplicates("_env")
    held = set(zip(cells["case"], cells["_env"]))
    return {
        (str(case), str(env))
        for case in set(cells["case"])
        for env, release, variant, python, requested in envs.itertuples(index=False, name=None)
        if (case, env) not in held and (release, variant, python, sets.get((case, requested))) in failed
    }


def _cell(rows: List[dict], modes: List[str], not_installed: bool = False) -> d.Phrase:
    """One model in one environment: a status glyph per mode (with its stage marks), then its libraries' versions."""
    if not rows:
        return d.phrase(str(NoCell.ENV_ERROR) if not_installed else NO_RECORD)
    status = {str(row["mode"]): row for row in rows}
    glyphs = [d.Mark(status[m]["status"], named=False, marks=md.marks(status[m])) if m in status else NO_RECORD
              for m in modes]  # fmt: skip
    # Both modes of an environment usually ran in one run; one that knows its versions speaks for it.
    known = next((row for row in rows if packages.resolved(row.get("added_packages"))), rows[0])
    versions = [v or "–" for _, v in packages.named_versions(known.get("dependency_set"), known.get("added_packages"))]
    return d.phrase(d.joined((d.phrase(g) for g in glyphs), " "), " " + ", ".join(versions) if versions else None)


def share(cells: pd.DataFrame, modes: List[str], not_installed: int = 0) -> str:
    """``12/17 · 14/17``: per mode, the models that pass of those recorded here; then those that did not install."""
    passes = (cells["status"] == "pass").groupby(cells["mode"])
    said = {mode: "%d/%d" % (passed.sum(), len(passed)) for mode, passed in passes}
    missing = " (%d: %s)" % (not_installed, NoCell.ENV_ERROR) if not_installed else ""
    return " · ".join(said.get(mode, NO_RECORD) for mode in modes) + missing
