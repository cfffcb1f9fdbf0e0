"""Finding the cell a repro is written for: a cell id among records, narrowed to one build and environment.

A cell id (``torch-2.7.1+cpu/strict/models/m``) names a version, a mode and a case, not a build:
a release candidate carries the number of the release it precedes (``2.7.1+cpu`` from the test
channel's index, variant ``test-cpu``, beside the release's ``cpu``), and one build may have run
in several Pythons and ``--with`` sets, and on the CPU and a GPU. Where an id matches more than one,
:func:`find` names each with the options that choose it (``--variant``, ``--python``, ``--with``,
``--device``) instead of picking one.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from typing import Any, Dict, List, NamedTuple, Optional

import pandas as pd

from matrix.contract.errors import FAILED
from matrix.contract.schema import Status, cell_id
from matrix.envs import releases
from matrix.records import packages, tables
from matrix.records.channel import channel_of
from matrix.records.repro import Cell, ReproError, variant_of


class Place(NamedTuple):
    """What tells the environments of one cell id apart: the build's variant, the Python, the ``--with`` set, the
    device."""

    variant: str
    python: str
    with_set: str
    device: str

    @classmethod
    def of(cls, row: Dict[str, Any]) -> Place:
        with_set, device = row["with_set"], row.get("device")
        return cls(
            str(row["variant"]), str(row["python"]), with_set if isinstance(with_set, str) else "",
            device if isinstance(device, str) and device else "cpu",
        )  # fmt: skip


WHERE = Place._fields


@dataclass(frozen=True)
class Narrowing:
    """What the options ask of a cell beside its id (None or "": anything)."""

    python: Optional[str] = None
    with_set: str = ""
    variant: Optional[str] = None
    device: Optional[str] = None

    @property
    def text(self) -> str:
        """The options as given: ``--variant test-cpu --python 3.11 --with a==1 --device cuda``."""
        parts = (["--variant %s" % self.variant] if self.variant else []) + (
            ["--python %s" % self.python] if self.python else []
        )
        device = " --device %s" % self.device if self.device else ""
        return (" ".join(parts) + _with_options(self.with_set) + device).strip()


def find(
    raw: pd.DataFrame,
    wanted: str,
    where: str,
    narrowing: Narrowing = Narrowing(),
    environments: Optional[pd.DataFrame] = None,
) -> Cell:
    """The cell ``wanted`` (a cell id) among ``raw`` cell records (``Store.cells``), its runs summarised as the
    report summarises them, with its build's git version from ``environments`` (``Store.environments``).

    ReproError naming the cell and ``where`` (the folders) when it is not there, when several builds or
    environments recorded it (each named with the options that choose it), when its runs come from builds
    of two commits, or when it did not fail.
    """
    if raw.empty:
        raise ReproError("%s: no cell records there" % where)
    ids = [cell_id(str(t), str(m), str(c)) for t, m, c in zip(raw["torch_version"], raw["mode"], raw["case"])]
    mine = raw[[i == wanted for i in ids]]
    if mine.empty:
        raise ReproError("no cell %s in %s%s" % (wanted, where, _nearby(raw, ids, wanted)))
    chosen = _narrowed(mine, narrowing)
    if chosen.empty:
        raise ReproError("%s is in %s, but not with %s" % (wanted, where, narrowing.text))
    commits = git_versions(environments)
    places = sorted({Place.of(row) for row in chosen.reindex(columns=list(WHERE)).to_dict("records")})
    if len(places) > 1:
        raise ReproError(several(wanted, where, places, _commits_by_place(mine, commits)))
    built = sorted({commits[r] for r in chosen["run_id"] if isinstance(r, str) and r in commits})
    if len(built) > 1:
        raise ReproError(
            "%s: its runs in %s were recorded by builds of %d commits of one version (git %s), a candidate"
            " rebuilt under its number: run the cell again with --force, or give --results the record file of"
            " one build" % (wanted, where, len(built), ", ".join(b[:12] for b in built))
        )
    cell = replace(Cell.from_row(tables.cells(chosen).to_dict("records")[0]), git_version=built[0] if built else None)
    return _failing(cell, wanted, where)


def _narrowed(mine: pd.DataFrame, narrowing: Narrowing) -> pd.DataFrame:
    """The records the options leave. Without ``--with``, where only ``--with`` sets still differ (one build, one
    Python), the cell without a set: the one its options name. Builds are never chosen for the user."""
    if narrowing.python is not None:
        mine = mine[mine["python"] == narrowing.python]
    if narrowing.variant is not None:
        mine = mine[mine["variant"] == narrowing.variant]
    if narrowing.device is not None:
        mine = mine[[Place.of(row).device == narrowing.device for row in mine.to_dict("records")]]
    sets = mine["with_set"].fillna("")
    if narrowing.with_set:
        return mine[sets == narrowing.with_set]
    one_environment = mine["variant"].nunique() == 1 and mine["python"].nunique() == 1
    return mine[sets == ""] if one_environment and (sets == "").any() else mine


def git_versions(environments: Optional[pd.DataFrame]) -> Dict[str, str]:
    """Each run's ``torch.version.git_version``, by run id, from the environment records that opened the runs."""
    if environments is None or not {"run_id", "torch_git_version"} <= set(environments.columns):
        return {}
    pairs = zip(environments["run_id"], environments["torch_git_version"])
    return {run: git for run, git in pairs if isinstance(run, str) and isinstance(git, str) and git}


def _commits_by_place(mine: pd.DataFrame, commits: Dict[str, str]) -> Dict[Place, List[str]]:
    found: Dict[Place, List[str]] = {}
    for row in mine.reindex(columns=[*WHERE, "run_id"]).to_dict("records"):
        commit = commits.get(row["run_id"]) if isinstance(row["run_id"], str) else None
        if commit and commit not in found.setdefault(Place.of(row), []):
            found[Place.of(row)].append(commit)
    return found


def several(wanted: str, where: str, places: List[Place], commits: Dict[Place, List[str]]) -> str:
    """The message for a cell id that several builds or environments recorded: each with the options that pick it."""
    builds, pythons, sets, devices = (len({getattr(place, name) for place in places}) > 1 for name in WHERE)
    shown = []
    for place in places:
        choice = Narrowing(
            python=place.python if pythons else None, with_set=place.with_set if sets else "",
            variant=place.variant if builds else None, device=place.device if devices else None,
        )  # fmt: skip
        about = " (%s)" % build_text(place.variant, commits.get(place, [])) if builds else ""
        shown.append(choice.text + about)
    return "%s was recorded by several %s in %s; name one with its options: %s" % (
        wanted,
        "builds" if builds else "environments",
        where,
        "; ".join(shown),
    )


def build_text(variant: str, commits: List[str]) -> str:
    """Where a build comes from, in words: ``the test channel's build, from https://...; git 1a2b3c4d5e6f``."""
    known = variant_of(variant)
    index = known.index_url if known is not None else None
    channel = channel_of(variant)
    if channel:
        text = "the %s channel's build, from %s" % (channel, index or "its index")
    elif variant == releases.DEFAULT_VARIANT:
        text = "a release, from PyPI"
    else:
        text = "a release, from %s" % (index or "the %s index" % variant)
    return text + ("; git %s" % ", ".join(c[:12] for c in commits) if commits else "")


def _failing(cell: Cell, wanted: str, where: str) -> Cell:
    if not cell.failing:
        raise ReproError(
            "%s %s in %s, every stage included: nothing to reproduce" % (wanted, _ended(cell), where), FAILED
        )
    if not cell.reproducible:
        raise ReproError(
            "%s ran an ExportDB example bundled with torch (--source exportdb), which has no case file to inline;"
            " its case of the same name under cases/exportdb/ has one" % wanted
        )
    return cell


def _ended(cell: Cell) -> str:
    return "passed" if cell.status == Status.PASS.value else "is %s" % cell.status


def _with_options(with_set: Any) -> str:
    return "".join(" --with %s" % shlex.quote(r) for r in packages.requirements(with_set))


def _nearby(raw: pd.DataFrame, ids: List[str], wanted: str) -> str:
    """The cells of the same case and mode there are, to say what was meant (or that the case is not there)."""
    parts = wanted.split("/", 2)
    if len(parts) < 3:
        return "; a cell id reads torch-RELEASE/MODE/CASE, e.g. torch-2.13.0+cpu/strict/exportdb/cond_predicate"
    same = sorted({i for i, case in zip(ids, raw["case"]) if case == parts[2] and i.split("/", 2)[1] == parts[1]})
    if not same:
        return "; its records have no case %s in %s mode" % (parts[2], parts[1])
    return "; cells of that case and mode there: %s" % ", ".join(same[:8]) + (" …" if len(same) > 8 else "")
